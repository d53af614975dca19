/* SPDX-License-Identifier: MIT */
/*
 * FAN_MNT_ATTR_CHANGE (kernel patch 0021): every operation that changes a
 * mount's attributes posts exactly one event per mount whose statmount(2)
 * attributes (sb_flags, mnt_attr, propagation, peer group, master, mount
 * options) changed, with its ID, and none for the others: mount(2)
 * MS_REMOUNT with and without MS_BIND, mount_setattr(2) (flags, recursion,
 * propagation), propagation through mount(2) (do_change_type, including
 * the slaves a master hands on), MOVE_MOUNT_SET_GROUP (do_set_group),
 * fsconfig(FSCONFIG_CMD_RECONFIGURE) (every mount of the superblock), and
 * an idmapped mount, which 6.12 only allows on a detached tree, attached
 * afterwards (FAN_MNT_ATTACH, no attribute event), and a private tree
 * moved under a shared mount (each of its mounts is shared now).  Each
 * check compares a
 * statmount snapshot of the whole namespace taken before and after.  A
 * superblock reconfigure also reaches another namespace's marks, for that
 * namespace's own mounts of it.
 */
#include "fanmnt.h"

#ifndef MOVE_MOUNT_SET_GROUP
#define MOVE_MOUNT_SET_GROUP 0x00000100
#endif
#ifndef FSPICK_CLOEXEC
#define FSPICK_CLOEXEC 0x00000001
#endif
#ifndef FSCONFIG_SET_STRING
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_CMD_RECONFIGURE 7
#endif
#ifndef __NR_fspick
#define __NR_fspick 433
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif

static int grp;
static struct snap before, after;

static int begin(void)
{
	struct fev e[8];

	/* Nothing pending from the setup of the step. */
	CHECK(fan_read(grp, e, 8) >= 0);
	CHECK(snap_take(&before) == 0);
	return T_PASS;
}

/*
 * The events since begin() are attribute events only, one per mount, on
 * exactly the mounts whose statmount attributes changed, which are the
 * @nwant mounts at @want paths (NULL-terminated).
 */
static int expect(const char *what, const char *const *want)
{
	struct fev e[SNAP_MAX];
	uint64_t changed[SNAP_MAX], ids[SNAP_MAX];
	int n, nc, nw = 0;

	for (; want[nw]; nw++) {
		ids[nw] = mnt_id(want[nw]);
		if (!ids[nw])
			FAILF("%s: no mount at %s", what, want[nw]);
	}
	n = fan_read(grp, e, SNAP_MAX);
	CHECK(n >= 0 && n <= SNAP_MAX);
	CHECK(snap_take(&after) == 0);
	snap_diff(&before, &after, changed, &nc);
	/* The operation did what the test means it to: no vacuous pass. */
	if (nc != nw)
		goto bad;
	for (int i = 0; i < nw; i++) {
		int seen = 0;

		for (int j = 0; j < nc; j++)
			seen += changed[j] == ids[i];
		if (seen != 1)
			goto bad;
	}
	/* Exactly one attribute event per changed mount, nothing else. */
	if (n != nc)
		goto bad;
	for (int i = 0; i < nc; i++) {
		int seen = 0;

		for (int j = 0; j < n; j++)
			seen += e[j].id == changed[i];
		if (seen != 1)
			goto bad;
	}
	for (int j = 0; j < n; j++)
		if (e[j].mask != FAN_MNT_ATTR_CHANGE)
			goto bad;
	return T_PASS;
bad:
	fprintf(stderr, "%s: %d events, %d mounts changed, %d expected\n", what, n, nc, nw);
	fan_dump(e, n);
	for (int i = 0; i < nc; i++)
		fprintf(stderr, "  changed %llu\n", (unsigned long long)changed[i]);
	for (int i = 0; i < nw; i++)
		fprintf(stderr, "  expected %llu (%s)\n", (unsigned long long)ids[i], want[i]);
	return T_FAIL;
}

#define EXPECT(what, ...) \
	do { \
		if (expect(what, (const char *const[]){ __VA_ARGS__ })) \
			return T_FAIL; \
	} while (0)
#define NONE NULL

/*
 * The tree: t (tmpfs), t/a, t/b, t/b/c (tmpfs each), ab a bind of t/a (same
 * superblock), all private.
 */
static int test_setup(void)
{
	CHECK(mount_tmpfs("t", 0) == 0);
	CHECK(mount_tmpfs("t/a", 0) == 0);
	CHECK(mount_tmpfs("t/b", 0) == 0);
	CHECK(mount_tmpfs("t/b/c", 0) == 0);
	CHECK(mkdir("ab", 0755) == 0);
	CHECK(mount("t/a", "ab", NULL, MS_BIND, NULL) == 0);
	CHECK(mkdir("t/dir", 0755) == 0);
	return T_PASS;
}

static int test_remount_bind(void)
{
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t/a", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	EXPECT("remount,bind,ro", "t/a", NULL);
	/* The same flags again change nothing. */
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t/a", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	EXPECT("remount,bind,ro again", NONE);
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t/a", NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
	EXPECT("remount,bind,rw", "t/a", NULL);
	return T_PASS;
}

/* MS_REMOUNT reconfigures the superblock: every mount of it changed. */
static int test_remount_sb(void)
{
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t/a", NULL, MS_REMOUNT, "size=2m") == 0);
	EXPECT("remount size", "t/a", "ab", NULL);
	CHECK(begin() == 0);
	CHECK(mount(NULL, "ab", NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
	EXPECT("remount ro", "t/a", "ab", NULL);
	CHECK(begin() == 0);
	CHECK(mount(NULL, "ab", NULL, MS_REMOUNT, NULL) == 0);
	EXPECT("remount rw", "t/a", "ab", NULL);
	return T_PASS;
}

static int test_setattr(void)
{
	CHECK(begin() == 0);
	CHECK(set_attr("t/b", MOUNT_ATTR_NOSUID, 0) == 0);
	EXPECT("setattr nosuid", "t/b", NULL);
	/* t/b/c already nodev: the recursive change leaves it alone. */
	CHECK(begin() == 0);
	CHECK(set_attr("t/b/c", MOUNT_ATTR_NODEV, 0) == 0);
	EXPECT("setattr nodev", "t/b/c", NULL);
	{
		struct mount_attr a = { .attr_set = MOUNT_ATTR_NODEV };

		CHECK(begin() == 0);
		CHECK(mount_setattr(AT_FDCWD, "t", AT_RECURSIVE, &a, sizeof(a)) == 0);
		EXPECT("setattr -R nodev", "t", "t/a", "t/b", NULL);
		CHECK(begin() == 0);
		CHECK(mount_setattr(AT_FDCWD, "t", AT_RECURSIVE, &a, sizeof(a)) == 0);
		EXPECT("setattr -R nodev again", NONE);
	}
	CHECK(begin() == 0);
	CHECK(set_attr("t/b", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME) == 0);
	EXPECT("setattr noatime", "t/b", NULL);
	return T_PASS;
}

/* do_change_type(): mount(2) with MS_SHARED, MS_SLAVE, MS_PRIVATE... */
static int test_change_type(void)
{
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t", NULL, MS_SHARED | MS_REC, NULL) == 0);
	EXPECT("make-rshared", "t", "t/a", "t/b", "t/b/c", NULL);
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t", NULL, MS_SHARED | MS_REC, NULL) == 0);
	EXPECT("make-rshared again", NONE);
	/* s: a bind of shared t/a is its peer (an attach, not a change). */
	CHECK(mkdir("s", 0755) == 0);
	CHECK(mount("t/a", "s", NULL, MS_BIND, NULL) == 0);
	CHECK(fan_read(grp, (struct fev[4]){}, 4) == 1);
	CHECK(begin() == 0);
	CHECK(mount(NULL, "s", NULL, MS_SLAVE, NULL) == 0);
	EXPECT("make-slave", "s", NULL);
	/*
	 * t/a private: its slave s has no master left and becomes private
	 * too, a change of s as statmount shows it.
	 */
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t/a", NULL, MS_PRIVATE, NULL) == 0);
	EXPECT("make-private master", "t/a", "s", NULL);
	CHECK(begin() == 0);
	CHECK(mount(NULL, "t/b/c", NULL, MS_UNBINDABLE, NULL) == 0);
	EXPECT("make-unbindable", "t/b/c", NULL);
	return T_PASS;
}

static int test_setattr_propagation(void)
{
	struct mount_attr a = { .propagation = MS_PRIVATE };

	CHECK(begin() == 0);
	CHECK(mount_setattr(AT_FDCWD, "t/b", 0, &a, sizeof(a)) == 0);
	EXPECT("setattr private", "t/b", NULL);
	/* Propagation and a flag at once: still one event. */
	a.propagation = MS_SHARED;
	a.attr_set = MOUNT_ATTR_NOEXEC;
	CHECK(begin() == 0);
	CHECK(mount_setattr(AT_FDCWD, "t/b", 0, &a, sizeof(a)) == 0);
	EXPECT("setattr shared+noexec", "t/b", NULL);
	return T_PASS;
}

/* do_set_group(): g, private, joins t's peer group. */
static int test_set_group(void)
{
	CHECK(mkdir("g", 0755) == 0);
	CHECK(mount("t/dir", "g", NULL, MS_BIND, NULL) == 0);
	CHECK(mount(NULL, "g", NULL, MS_PRIVATE, NULL) == 0);
	CHECK(fan_read(grp, (struct fev[4]){}, 4) == 2);
	CHECK(begin() == 0);
	CHECK(move_mount(AT_FDCWD, "t", AT_FDCWD, "g", MOVE_MOUNT_SET_GROUP) == 0);
	EXPECT("set-group", "g", NULL);
	return T_PASS;
}

/* fsconfig reconfigure: every mount of the superblock (t/a, ab, s). */
static int test_fsconfig(void)
{
	int fd = syscall(__NR_fspick, AT_FDCWD, "t/a", FSPICK_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(syscall(__NR_fsconfig, fd, FSCONFIG_SET_STRING, "size", "3m", 0) == 0);
	CHECK(begin() == 0);
	CHECK(syscall(__NR_fsconfig, fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) == 0);
	EXPECT("fsconfig reconfigure", "t/a", "ab", "s", NULL);
	close(fd);
	return T_PASS;
}

/*
 * An idmapped mount: 6.12 only idmaps detached trees, whose namespace no
 * one can mark, so the change shows when the tree is attached: one
 * FAN_MNT_ATTACH, MOUNT_ATTR_IDMAP in statmount, no attribute event.
 */
static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int test_idmap(void)
{
	int up[2], down[2], usfd, tfd, status, n;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };
	struct fev e[4];
	char p[64], c = 0;
	pid_t pid;

	/* A user namespace to map through, held by a child. */
	CHECK(pipe(up) == 0 && pipe(down) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) < 0 || write(up[1], &c, 1) != 1)
			_exit(2);
		_exit(read(down[0], &c, 1) >= 0 ? 0 : 3);
	}
	CHECK(read(up[0], &c, 1) == 1);
	snprintf(p, sizeof(p), "/proc/%d/uid_map", (int)pid);
	CHECK(write_file(p, "0 10000 1000\n") == 0);
	snprintf(p, sizeof(p), "/proc/%d/gid_map", (int)pid);
	CHECK(write_file(p, "0 10000 1000\n") == 0);
	snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)pid);
	usfd = open(p, O_RDONLY | O_CLOEXEC);
	CHECK(usfd >= 0);

	a.userns_fd = usfd;
	/* (t/b/c is unbindable by now: no clone of it) */
	tfd = open_tree(AT_FDCWD, "t/b", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	CHECK(tfd >= 0);
	CHECK(mount_setattr(tfd, "", AT_EMPTY_PATH, &a, sizeof(a)) == 0);
	CHECK(fan_read(grp, e, 4) == 0);
	CHECK(mkdir("idm", 0755) == 0);
	CHECK(move_mount(tfd, "", AT_FDCWD, "idm", MOVE_MOUNT_F_EMPTY_PATH) == 0);
	n = fan_read(grp, e, 4);
	if (n != 1 || e[0].mask != FAN_MNT_ATTACH || e[0].id != mnt_id("idm")) {
		fan_dump(e, n > 0 ? n : 0);
		FAILF("idmapped attach: %d events", n);
	}
	CHECK(snap_take(&after) == 0);
	CHECK(snap_find(&after, mnt_id("idm")) &&
	      (snap_find(&after, mnt_id("idm"))->attr & MOUNT_ATTR_IDMAP));
	close(tfd);
	close(usfd);
	CHECK(write(down[1], &c, 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	return T_PASS;
}

/*
 * A superblock reconfigure reaches every namespace with marks: a child's
 * copy of our namespace has its own mounts of t/a's superblock, and its
 * group gets one event for each of them; a mount-level change in our
 * namespace sends it nothing.
 */
static int test_other_namespace(void)
{
	const char *paths[] = { "t/a", "ab", "s" };
	int up[2], down[2], g2, nsfd, status, n;
	uint64_t theirs[3];
	struct fev e[8];
	char p[64], c = 0;
	pid_t pid;

	CHECK(pipe(up) == 0 && pipe(down) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			_exit(2);
		for (int i = 0; i < 3; i++)
			theirs[i] = mnt_id(paths[i]);
		if (write(up[1], theirs, sizeof(theirs)) != sizeof(theirs))
			_exit(3);
		_exit(read(down[0], &c, 1) == 1 ? 0 : 4);
	}
	CHECK(read(up[0], theirs, sizeof(theirs)) == sizeof(theirs));
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	nsfd = open(p, O_RDONLY | O_CLOEXEC);
	CHECK(nsfd >= 0);
	g2 = fan_group();
	CHECK(g2 >= 0 && fan_mark_ns(g2, FAN_MARK_ADD, FAN_MNT_ATTR_CHANGE, nsfd) == 0);

	CHECK(begin() == 0);
	CHECK(set_attr("ab", MOUNT_ATTR_NOEXEC, 0) == 0);
	EXPECT("setattr here", "ab", NULL);
	CHECK(fan_read(g2, e, 8) == 0);

	CHECK(begin() == 0);
	CHECK(mount(NULL, "t/a", NULL, MS_REMOUNT, "size=4m") == 0);
	EXPECT("remount, marked twice", "t/a", "ab", "s", NULL);
	n = fan_read(g2, e, 8);
	for (int i = 0; i < 3; i++) {
		int seen = 0;

		CHECK(theirs[i] && theirs[i] != mnt_id(paths[i]));
		for (int j = 0; j < n; j++)
			seen += e[j].id == theirs[i] && e[j].mask == FAN_MNT_ATTR_CHANGE;
		if (seen != 1 || n != 3) {
			fan_dump(e, n > 0 ? n : 0);
			FAILF("other namespace: %d events, %s seen %d times", n, paths[i], seen);
		}
	}
	CHECK(write(down[1], &c, 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	close(nsfd);
	close(g2);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	return T_PASS;
}

/*
 * A private tree moved under a shared mount becomes shared, mount by mount:
 * the root is reported moved and changed, its submount changed.
 */
static int test_move_onto_shared(void)
{
	uint64_t root, kid, changed[SNAP_MAX], want[3][2];
	struct fev e[8];
	int n, nc;

	CHECK(mount_tmpfs("sh", 0) == 0);
	CHECK(mount(NULL, "sh", NULL, MS_SHARED, NULL) == 0);
	CHECK(mkdir("sh/d", 0755) == 0);
	CHECK(mount_tmpfs("mv", 0) == 0);
	CHECK(mount_tmpfs("mv/k", 0) == 0);
	root = mnt_id("mv");
	kid = mnt_id("mv/k");
	CHECK(begin() == 0);
	CHECK(mount("mv", "sh/d", NULL, MS_MOVE, NULL) == 0);
	n = fan_read(grp, e, 8);
	CHECK(snap_take(&after) == 0);
	snap_diff(&before, &after, changed, &nc);
	CHECK(nc == 2 && ((changed[0] == root && changed[1] == kid) ||
			  (changed[0] == kid && changed[1] == root)));
	want[0][0] = FAN_MNT_ATTACH | FAN_MNT_DETACH, want[0][1] = root;
	want[1][0] = FAN_MNT_ATTR_CHANGE, want[1][1] = root;
	want[2][0] = FAN_MNT_ATTR_CHANGE, want[2][1] = kid;
	for (int i = 0; i < 3; i++) {
		int seen = 0;

		for (int j = 0; j < n; j++)
			seen += e[j].mask == want[i][0] && e[j].id == want[i][1];
		if (seen != 1 || n != 3) {
			fan_dump(e, n > 0 ? n : 0);
			FAILF("move onto shared: %d events, want move+attr of %llu, attr of %llu",
			      n, (unsigned long long)root, (unsigned long long)kid);
		}
	}
	return T_PASS;
}

int main(void)
{
	fan_setup_ns();
	grp = fan_group();
	CHECK(grp >= 0);
	if (fan_mark_ns(grp, FAN_MARK_ADD, FAN_MNT_ATTR_CHANGE | ALL_MNT_EVENTS, -1) < 0) {
		if (errno == EINVAL) {
			printf("skip: kernel has no FAN_MNT_ATTR_CHANGE\n");
			return T_SKIP;
		}
		perror("fanotify_mark");
		return T_FAIL;
	}
	RUN(test_setup);
	RUN(test_remount_bind);
	RUN(test_remount_sb);
	RUN(test_setattr);
	RUN(test_change_type);
	RUN(test_setattr_propagation);
	RUN(test_set_group);
	RUN(test_fsconfig);
	RUN(test_idmap);
	RUN(test_other_namespace);
	RUN(test_move_onto_shared);
	return T_PASS;
}
