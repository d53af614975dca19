/* SPDX-License-Identifier: MIT */
/*
 * The scenarios of the kernel's mount-notification selftests (bind, move,
 * propagation to peers and slaves, umount -l of trees, fsmount/move_mount,
 * rmdir in another namespace, reparenting, mount beneath) and
 * the changes patch 0009 reports (fsconfig reconfigure, a remounted
 * superblock's other mounts, set_group, nothing for mounts whose attach
 * failed), each step followed by the truth check of truth.h: the records,
 * applied to a mirror of the namespace, give what listmount/statmount say.
 * Also in an unprivileged user's own user and mount namespace, and the
 * EACCES of a directory the caller may not search.
 * pivot_root is in watch_pivot: after it no single watch sees the whole
 * namespace (a watch stays with its mount), so a mirror needs two.
 */
#include <sys/prctl.h>

#include "truth.h"

#ifndef MOVE_MOUNT_SET_GROUP
#define MOVE_MOUNT_SET_GROUP 0x00000100 /* include/uapi/linux/mount.h, 5.15 */
#endif
#ifndef MOVE_MOUNT_BENEATH
#define MOVE_MOUNT_BENEATH 0x00000200 /* 6.5 */
#endif
#define MOVE_MOUNT_T_EMPTY_PATH_ 0x00000040

static struct truth t;

static int mkdirs(const char *a, const char *b, const char *c)
{
	mkdir(a, 0755);
	if (b)
		mkdir(b, 0755);
	if (c)
		mkdir(c, 0755);
	return 0;
}

static int test_bind_move(void)
{
	mkdirs("bm", "bm/a", "bm/b");
	mkdirs("bm/c", NULL, NULL);
	STEP(&t, mount_tmpfs("bm/a", 0) == 0);
	STEP(&t, mkdir("bm/a/s", 0755) == 0 && mount_tmpfs("bm/a/s", 0) == 0);
	STEP(&t, mount("bm/a", "bm/b", NULL, MS_BIND, NULL) == 0);
	STEP(&t, umount("bm/b") == 0);
	STEP(&t, mount("bm/a", "bm/b", NULL, MS_BIND | MS_REC, NULL) == 0);
	STEP(&t, mount("bm/b", "bm/c", NULL, MS_MOVE, NULL) == 0);
	STEP(&t, umount2("bm/c", MNT_DETACH) == 0);
	STEP(&t, umount2("bm/a", MNT_DETACH) == 0);
	return T_PASS;
}

static int test_propagation(void)
{
	mkdirs("pr", "pr/a", "pr/b");
	mkdirs("pr/s", NULL, NULL);
	STEP(&t, mount_tmpfs("pr/a", 0) == 0);
	STEP(&t, mount(NULL, "pr/a", NULL, MS_SHARED, NULL) == 0);
	STEP(&t, mount("pr/a", "pr/b", NULL, MS_BIND, NULL) == 0);
	STEP(&t, mount("pr/a", "pr/s", NULL, MS_BIND, NULL) == 0);
	STEP(&t, mount(NULL, "pr/s", NULL, MS_SLAVE, NULL) == 0);
	/* To both peers and the slave. */
	STEP(&t, mkdir("pr/a/x", 0755) == 0 && mount_tmpfs("pr/a/x", 0) == 0);
	/* A mount in the slave does not go back. */
	STEP(&t, mkdir("pr/s/y", 0755) == 0 && mount_tmpfs("pr/s/y", 0) == 0);
	/* A tree propagated. */
	STEP(&t, mkdir("pr/a/x/z", 0755) == 0 && mount_tmpfs("pr/a/x/z", 0) == 0);
	STEP(&t, mkdir("pr/a/r", 0755) == 0 &&
		 mount("pr/a/x", "pr/a/r", NULL, MS_BIND | MS_REC, NULL) == 0);
	/* umount propagates to the copies; -l of a tree. */
	STEP(&t, umount2("pr/b/r", MNT_DETACH) == 0);
	STEP(&t, umount2("pr/a/x", MNT_DETACH) == 0);
	STEP(&t, umount2("pr/s", MNT_DETACH) == 0);
	STEP(&t, umount2("pr/b", MNT_DETACH) == 0);
	STEP(&t, umount2("pr/a", MNT_DETACH) == 0);
	return T_PASS;
}

static int test_fsmount(void)
{
	int fs, mfd, tfd;

	mkdirs("fm", "fm/a", "fm/b");
	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	CHECK(fs >= 0);
	CHECK(fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0);
	mfd = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	CHECK(mfd >= 0);
	close(fs);
	/* A detached mount is in no namespace: nothing until it is attached. */
	STEP(&t, 1);
	STEP(&t, mkdirat(mfd, "sub", 0755) == 0);
	STEP(&t, move_mount(mfd, "", AT_FDCWD, "fm/a", MOVE_MOUNT_F_EMPTY_PATH) == 0);
	close(mfd);
	/* open_tree clone of a tree, attached elsewhere. */
	STEP(&t, mount_tmpfs("fm/a/sub", 0) == 0);
	tfd = open_tree(AT_FDCWD, "fm/a", OPEN_TREE_CLONE | AT_RECURSIVE);
	CHECK(tfd >= 0);
	STEP(&t, move_mount(tfd, "", AT_FDCWD, "fm/b", MOVE_MOUNT_F_EMPTY_PATH) == 0);
	close(tfd);
	/* move_mount of an attached mount is a move. */
	STEP(&t, mkdir("fm/c", 0755) == 0 &&
		 move_mount(AT_FDCWD, "fm/b", AT_FDCWD, "fm/c", 0) == 0);
	/* A clone closed without being attached: nothing. */
	tfd = open_tree(AT_FDCWD, "fm/a", OPEN_TREE_CLONE | AT_RECURSIVE);
	CHECK(tfd >= 0);
	STEP(&t, close(tfd) == 0);
	STEP(&t, umount2("fm/c", MNT_DETACH) == 0);
	STEP(&t, umount2("fm/a", MNT_DETACH) == 0);
	return T_PASS;
}

/*
 * Reparenting: a mount on the root of a propagated copy survives the
 * copy's propagated umount and moves down onto the copy's parent.
 */
static int test_reparent(void)
{
	uint64_t top;

	mkdirs("rp", "rp/a", "rp/b");
	STEP(&t, mount_tmpfs("rp/a", 0) == 0);
	STEP(&t, mount(NULL, "rp/a", NULL, MS_SHARED, NULL) == 0);
	STEP(&t, mount("rp/a", "rp/b", NULL, MS_BIND, NULL) == 0);
	STEP(&t, mount(NULL, "rp/b", NULL, MS_SLAVE, NULL) == 0);
	STEP(&t, mkdir("rp/a/x", 0755) == 0 && mount_tmpfs("rp/a/x", 0) == 0);
	/* On top of the copy in the slave rp/b: it does not go back. */
	STEP(&t, mount_tmpfs("rp/b/x", 0) == 0);
	top = mnt_id("rp/b/x");
	/* The copy goes with rp/a/x; the one on top moves down onto rp/b. */
	STEP(&t, umount("rp/a/x") == 0);
	CHECK(mnt_id("rp/b/x") == top);
	STEP(&t, umount2("rp/b", MNT_DETACH) == 0);
	STEP(&t, umount2("rp/a", MNT_DETACH) == 0);
	return T_PASS;
}

static int test_beneath(void)
{
	int fs, mfd;

	mkdirs("mb", "mb/a", NULL);
	STEP(&t, mount_tmpfs("mb/a", 0) == 0);
	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	CHECK(fs >= 0);
	CHECK(fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0);
	mfd = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	CHECK(mfd >= 0);
	close(fs);
	if (move_mount(mfd, "", AT_FDCWD, "mb/a",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_BENEATH) < 0) {
		CHECK(errno == EINVAL);
		fprintf(stderr, "     (no MOVE_MOUNT_BENEATH)\n");
		close(mfd);
		return T_PASS;
	}
	close(mfd);
	CHECK(tr_sync(&t, "move_mount beneath") == T_PASS);
	/* Unmounting the top one uncovers the one beneath. */
	STEP(&t, umount("mb/a") == 0);
	STEP(&t, umount("mb/a") == 0);
	return T_PASS;
}

/* The changes that went unreported before patch 0009. */
static int test_superblock(void)
{
	int fd;

	mkdirs("sb", "sb/a", "sb/b");
	STEP(&t, mount_tmpfs("sb/a", 0) == 0);
	STEP(&t, mount("sb/a", "sb/b", NULL, MS_BIND, NULL) == 0);
	/* A remount through sb/a makes sb/b read-only as well. */
	STEP(&t, mount(NULL, "sb/a", NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
	STEP(&t, mount(NULL, "sb/b", NULL, MS_REMOUNT, NULL) == 0);
	/* fsconfig(FSCONFIG_CMD_RECONFIGURE) on the superblock. */
	fd = fspick(AT_FDCWD, "sb/b", FSPICK_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(fsconfig(fd, FSCONFIG_SET_FLAG, "rw", NULL, 0) == 0);
	STEP(&t, fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) == 0);
	CHECK(fsconfig(fd, FSCONFIG_SET_FLAG, "ro", NULL, 0) == 0);
	STEP(&t, fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) == 0);
	close(fd);
	/* Bind remount: that mount only. */
	STEP(&t, mount(NULL, "sb/b", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID, NULL) == 0);
	STEP(&t, umount("sb/b") == 0);
	STEP(&t, umount("sb/a") == 0);
	return T_PASS;
}

static int test_set_group(void)
{
	mkdirs("sg", "sg/a", "sg/b");
	STEP(&t, mount_tmpfs("sg/a", 0) == 0);
	STEP(&t, mount(NULL, "sg/a", NULL, MS_SHARED, NULL) == 0);
	STEP(&t, mount("sg/a", "sg/b", NULL, MS_BIND, NULL) == 0);
	STEP(&t, mount(NULL, "sg/b", NULL, MS_PRIVATE, NULL) == 0);
	STEP(&t, move_mount(AT_FDCWD, "sg/a", AT_FDCWD, "sg/b", MOVE_MOUNT_SET_GROUP) == 0);
	STEP(&t, umount("sg/b") == 0);
	STEP(&t, umount("sg/a") == 0);
	return T_PASS;
}

/*
 * An attach that fails after propagate_mnt() made copies (mount-max
 * reached by the copies): the copies were never attached, so nothing may
 * be reported for them.
 */
static int test_attach_error(void)
{
	char old[32] = "";
	int fd, nr, len, r, err;
	uint64_t ids[TR_MAX];

	mkdirs("ae", "ae/a", "ae/b");
	mkdirs("ae/c", NULL, NULL);
	STEP(&t, mount_tmpfs("ae/a", 0) == 0);
	STEP(&t, mount(NULL, "ae/a", NULL, MS_SHARED, NULL) == 0);
	STEP(&t, mount("ae/a", "ae/b", NULL, MS_BIND, NULL) == 0);
	STEP(&t, mount("ae/a", "ae/c", NULL, MS_BIND, NULL) == 0);
	CHECK(mkdir("ae/a/x", 0755) == 0);
	nr = tr_list(ids, TR_MAX);
	CHECK(nr > 0);
	fd = open("/proc/sys/fs/mount-max", O_RDWR);
	CHECK(fd >= 0);
	len = read(fd, old, sizeof(old) - 1);
	CHECK(len > 0);
	/* Room for the mount and one copy, not for the second copy. */
	CHECK(lseek(fd, 0, SEEK_SET) == 0 && dprintf(fd, "%d\n", nr + 2) > 0);
	errno = 0;
	r = mount_tmpfs("ae/a/x", 0);
	err = errno;
	/* Put the limit back before anything can fail. */
	CHECK(lseek(fd, 0, SEEK_SET) == 0 && write(fd, old, len) == len);
	close(fd);
	STEP(&t, r < 0 && err == ENOSPC);
	STEP(&t, mount_tmpfs("ae/a/x", 0) == 0);
	STEP(&t, umount2("ae/c", MNT_DETACH) == 0);
	STEP(&t, umount2("ae/b", MNT_DETACH) == 0);
	STEP(&t, umount2("ae/a", MNT_DETACH) == 0);
	return T_PASS;
}

static int test_expiry(void)
{
	mkdirs("ex", NULL, NULL);
	STEP(&t, mount_tmpfs("ex", 0) == 0);
	errno = 0;
	STEP(&t, umount2("ex", MNT_EXPIRE) < 0 && errno == EAGAIN);
	STEP(&t, umount2("ex", MNT_EXPIRE) == 0);
	return T_PASS;
}

/* rmdir of a mount point in another namespace detaches the mounts on it here. */
static int test_rmdir_other_ns(void)
{
	pid_t pid;
	int st;

	mkdirs("rd", "rd/d", NULL);
	STEP(&t, mount_tmpfs("rd/d", 0) == 0);
	STEP(&t, mkdir("rd/d/in", 0755) == 0 && mount_tmpfs("rd/d/in", 0) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* There rd/d is no mount point once unmounted; rmdir works. */
		if (unshare(CLONE_NEWNS) < 0 || umount2("rd/d", MNT_DETACH) < 0 ||
		    rmdir("rd/d") < 0)
			_exit(1);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	STEP(&t, 1);
	return T_PASS;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* In the child: become uid 65534, root of a new user and mount namespace. */
static int enter_userns(void)
{
	if (setgid(65534) < 0 || setuid(65534) < 0)
		FAILF("setuid: %s", strerror(errno));
	/* setuid() made us undumpable: /proc/self would stay root's. */
	CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
	CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
	CHECK(write_file("/proc/self/setgroups", "deny") == 0);
	CHECK(write_file("/proc/self/uid_map", "0 65534 1") == 0);
	CHECK(write_file("/proc/self/gid_map", "0 65534 1") == 0);
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	return T_PASS;
}

/*
 * An unprivileged user's own user and mount namespace: watches, records
 * and the truth check work there as they do for root, for the mounts that
 * user may make.
 */
static int userns_child(void)
{
	static struct truth tu;

	CHECK(enter_userns() == T_PASS);
	/* The scratch tmpfs, mounted by root, is ours to mount on now. */
	CHECK(tr_init(&tu, 256) == T_PASS);
	mkdirs("un/a", "un/b", "un/c");
	STEP(&tu, mount_tmpfs("un/a", 0) == 0);
	STEP(&tu, mkdir("un/a/s", 0755) == 0 && mount_tmpfs("un/a/s", 0) == 0);
	STEP(&tu, mount("un/a", "un/b", NULL, MS_BIND | MS_REC, NULL) == 0);
	STEP(&tu, mount(NULL, "un/a", NULL, MS_SHARED, NULL) == 0);
	STEP(&tu, mount("un/a", "un/c", NULL, MS_BIND, NULL) == 0);
	STEP(&tu, mkdir("un/a/p", 0755) == 0 && mount_tmpfs("un/a/p", 0) == 0);
	STEP(&tu, mount(NULL, "un/a", NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
	STEP(&tu, mount("un/b", "un/c/p", NULL, MS_MOVE, NULL) == 0);
	STEP(&tu, umount2("un/c", MNT_DETACH) == 0);
	STEP(&tu, umount2("un/a", MNT_DETACH) == 0);
	/* The mounts root made are locked here: not ours to unmount. */
	errno = 0;
	STEP(&tu, umount("/tmp/vt") < 0 && errno == EINVAL);
	tr_fini(&tu);
	return T_PASS;
}

static int run_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(fn());
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAILF("child: %s %d", WIFEXITED(st) ? "exit" : "signal",
		      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return T_PASS;
}

static int test_userns(void)
{
	mkdirs("un", NULL, NULL);
	CHECK(chown("un", 65534, 65534) == 0);
	CHECK(run_child(userns_child) == T_PASS);
	/* What happened in the child's namespace is not ours to hear. */
	STEP(&t, 1);
	return T_PASS;
}

/* watch_mount() needs search permission on the directory watched. */
static int eacces_child(void)
{
	int rfd, wfd = make_queue(8, &rfd);

	if (setgid(65534) < 0 || setuid(65534) < 0)
		FAILF("setuid: %s", strerror(errno));
	errno = 0;
	CHECK(watch_mount(AT_FDCWD, "ea/closed", 0, wfd, 1) < 0 && errno == EACCES);
	errno = 0;
	CHECK(watch_mount(AT_FDCWD, "ea/closed/in", 0, wfd, 1) < 0 && errno == EACCES);
	/* Readable but not searchable is not enough either. */
	errno = 0;
	CHECK(watch_mount(AT_FDCWD, "ea/readonly", 0, wfd, 1) < 0 && errno == EACCES);
	CHECK(watch_mount(AT_FDCWD, "ea/open", 0, wfd, 1) == 0);
	close(wfd);
	close(rfd);
	return T_PASS;
}

static int test_eacces(void)
{
	mkdirs("ea", "ea/closed", "ea/open");
	mkdirs("ea/closed/in", "ea/readonly", NULL);
	CHECK(chmod("ea", 0755) == 0 && chmod("ea/closed", 0700) == 0 &&
	      chmod("ea/readonly", 0744) == 0 && chmod("ea/open", 0711) == 0);
	return run_child(eacces_child);
}

/* With arguments, only the tests named (e.g. test_set_group). */
static int only(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return argc < 2;
}

#define RUN_IF(fn)                                                         \
	do {                                                               \
		if (only(argc, argv, #fn))                                 \
			RUN(fn);                                           \
	} while (0)

int main(int argc, char **argv)
{
	setup_ns();
	if (tr_init(&t, 512) != T_PASS)
		return T_FAIL;
	RUN_IF(test_bind_move);
	RUN_IF(test_propagation);
	RUN_IF(test_fsmount);
	RUN_IF(test_reparent);
	RUN_IF(test_beneath);
	RUN_IF(test_superblock);
	RUN_IF(test_set_group);
	RUN_IF(test_attach_error);
	RUN_IF(test_expiry);
	RUN_IF(test_rmdir_other_ns);
	RUN_IF(test_userns);
	RUN_IF(test_eacces);
	fprintf(stderr, "     %lu records applied, %d mounts at the end\n",
		t.records, t.n);
	tr_fini(&t);
	return T_PASS;
}
