/* SPDX-License-Identifier: MIT */
/*
 * fanotify mount events as Linux 6.15 has them, backported to 6.12 (kernel
 * patch 0020): FAN_REPORT_MNT groups, FAN_MARK_MNTNS marks, FAN_MNT_ATTACH
 * and FAN_MNT_DETACH (both for a move), one event per mount with its unique
 * ID, only for the marked namespace, and the argument checks.
 */
#include "fanmnt.h"

static int grp; /* marked on our namespace for ATTACH|DETACH */

static int test_attach_detach(void)
{
	uint64_t id;

	CHECK(mount_tmpfs("a", 0) == 0);
	id = mnt_id("a");
	CHECK(id);
	if (fan_expect1(grp, FAN_MNT_ATTACH, id))
		return T_FAIL;
	CHECK(umount("a") == 0);
	return fan_expect1(grp, FAN_MNT_DETACH, id);
}

static int test_move(void)
{
	uint64_t id;

	CHECK(mount_tmpfs("m", 0) == 0);
	CHECK(mkdir("m2", 0755) == 0);
	id = mnt_id("m");
	CHECK(fan_read(grp, (struct fev[4]){}, 4) == 1);
	CHECK(mount("m", "m2", NULL, MS_MOVE, NULL) == 0);
	if (fan_expect1(grp, FAN_MNT_ATTACH | FAN_MNT_DETACH, id))
		return T_FAIL;
	CHECK(umount("m2") == 0);
	return fan_expect1(grp, FAN_MNT_DETACH, id);
}

/* A recursive bind of a tree of three: three attaches, then three detaches. */
static int test_tree(void)
{
	uint64_t want[3];
	struct fev e[8];
	int n;

	CHECK(mount_tmpfs("t", 0) == 0);
	CHECK(mount_tmpfs("t/x", 0) == 0);
	CHECK(mount_tmpfs("t/x/y", 0) == 0);
	CHECK(mkdir("b", 0755) == 0);
	CHECK(fan_read(grp, e, 8) == 3);
	CHECK(mount("t", "b", NULL, MS_BIND | MS_REC, NULL) == 0);
	want[0] = mnt_id("b");
	want[1] = mnt_id("b/x");
	want[2] = mnt_id("b/x/y");
	n = fan_read(grp, e, 8);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t mask = pass ? FAN_MNT_DETACH : FAN_MNT_ATTACH;

		if (n != 3) {
			fan_dump(e, n > 8 ? 8 : n);
			FAILF("%s: %d events, want 3", pass ? "detach" : "attach", n);
		}
		for (int i = 0; i < 3; i++) {
			int found = 0;

			for (int j = 0; j < 3; j++)
				found += e[j].id == want[i] && e[j].mask == mask;
			if (found != 1) {
				fan_dump(e, n);
				FAILF("mount %llu: %d events %#llx", (unsigned long long)want[i],
				      found, (unsigned long long)mask);
			}
		}
		if (!pass) {
			CHECK(umount2("b", MNT_DETACH) == 0);
			n = fan_read(grp, e, 8);
		}
	}
	CHECK(umount2("t", MNT_DETACH) == 0);
	CHECK(fan_read(grp, e, 8) == 3);
	return T_PASS;
}

/* A child's namespace is not ours: nothing here; its own mark sees it. */
static int test_other_ns(void)
{
	int up[2], down[2], status, g2, nsfd;
	uint64_t id;
	struct fev e[4];
	char p[64], c = 0;
	pid_t pid;

	CHECK(pipe(up) == 0 && pipe(down) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(2);
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(3);
		if (mount_tmpfs("o", 0) < 0)
			_exit(4);
		id = mnt_id("o");
		if (write(up[1], &id, sizeof(id)) != sizeof(id))
			_exit(5);
		_exit(read(down[0], &c, 1) == 1 ? 0 : 6);
	}
	CHECK(read(up[0], &c, 1) == 1);
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	nsfd = open(p, O_RDONLY | O_CLOEXEC);
	CHECK(nsfd >= 0);
	g2 = fan_group();
	CHECK(g2 >= 0 && fan_mark_ns(g2, FAN_MARK_ADD, FAN_MNT_ATTACH, nsfd) == 0);
	CHECK(write(down[1], &c, 1) == 1);
	CHECK(read(up[0], &id, sizeof(id)) == sizeof(id) && id);
	CHECK(fan_read(grp, e, 4) == 0);
	if (fan_expect1(g2, FAN_MNT_ATTACH, id))
		return T_FAIL;
	/* The child leaves: its namespace dies, taking the mark with it. */
	CHECK(write(down[1], &c, 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	close(nsfd);
	close(g2);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	CHECK(fan_read(grp, e, 4) == 0);
	return T_PASS;
}

/* Only the events asked for; removing the mark stops them. */
static int test_mask_and_remove(void)
{
	int g = fan_group();
	uint64_t id;

	CHECK(g >= 0 && fan_mark_ns(g, FAN_MARK_ADD, FAN_MNT_DETACH, -1) == 0);
	CHECK(mount_tmpfs("r", 0) == 0);
	id = mnt_id("r");
	CHECK(fan_read(g, (struct fev[4]){}, 4) == 0);
	CHECK(umount("r") == 0);
	if (fan_expect1(g, FAN_MNT_DETACH, id))
		return T_FAIL;
	CHECK(fan_mark_ns(g, FAN_MARK_REMOVE, FAN_MNT_DETACH, -1) == 0);
	CHECK(mount_tmpfs("r", 0) == 0);
	CHECK(umount("r") == 0);
	CHECK(fan_read(g, (struct fev[4]){}, 4) == 0);
	close(g);
	CHECK(fan_read(grp, (struct fev[4]){}, 4) == 4);
	return T_PASS;
}

static int test_errors(void)
{
	int g = fan_group(), plain, f;

	CHECK(g >= 0);
	f = open("file", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	CHECK(f >= 0);
	/* Not an nsfs file of a mount namespace. */
	errno = 0;
	CHECK(fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH, f, NULL) < 0 &&
	      errno == EINVAL);
	errno = 0;
	CHECK(fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH, AT_FDCWD,
			    "/proc/self/ns/pid") < 0 && errno == EINVAL);
	/* Mount namespace marks take mount events only. */
	errno = 0;
	CHECK(fan_mark_ns(g, FAN_MARK_ADD, FAN_MNT_ATTACH | FAN_OPEN, -1) < 0 &&
	      errno == EINVAL);
	errno = 0;
	CHECK(fan_mark_ns(g, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK, FAN_MNT_ATTACH, -1) < 0 &&
	      errno == EINVAL);
	/* A mount event group takes no other mark... */
	errno = 0;
	CHECK(fanotify_mark(g, FAN_MARK_ADD, FAN_MNT_ATTACH, f, NULL) < 0 && errno == EINVAL);
	/* ...and no other group takes a mount namespace mark. */
	plain = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY);
	CHECK(plain >= 0);
	errno = 0;
	CHECK(fan_mark_ns(plain, FAN_MARK_ADD, FAN_MNT_ATTACH, -1) < 0 && errno == EINVAL);
	errno = 0;
	CHECK(fanotify_mark(plain, FAN_MARK_ADD, FAN_MNT_ATTACH, f, NULL) < 0 &&
	      errno == EINVAL);
	/* Mount events come without file handles or fds. */
	errno = 0;
	CHECK(fanotify_init(FAN_REPORT_MNT | FAN_REPORT_FID, 0) < 0 && errno == EINVAL);
	errno = 0;
	CHECK(fanotify_init(FAN_REPORT_MNT | FAN_CLASS_CONTENT, 0) < 0 && errno == EINVAL);
	/* Flushing mount namespace marks is allowed and empties the group. */
	CHECK(fan_mark_ns(g, FAN_MARK_ADD, FAN_MNT_ATTACH, -1) == 0);
	CHECK(fanotify_mark(g, FAN_MARK_FLUSH | FAN_MARK_MNTNS, 0, AT_FDCWD, NULL) == 0);
	CHECK(mount_tmpfs("e", 0) == 0 && umount("e") == 0);
	CHECK(fan_read(g, (struct fev[4]){}, 4) == 0);
	CHECK(fan_read(grp, (struct fev[4]){}, 4) == 2);
	close(plain);
	close(f);
	close(g);
	return T_PASS;
}

int main(void)
{
	fan_setup_ns();
	grp = fan_group();
	if (grp < 0 || fan_mark_ns(grp, FAN_MARK_ADD, ALL_MNT_EVENTS, -1) < 0) {
		perror("fanotify group on our namespace");
		return T_FAIL;
	}
	RUN(test_attach_detach);
	RUN(test_move);
	RUN(test_tree);
	RUN(test_other_ns);
	RUN(test_mask_and_remove);
	RUN(test_errors);
	return T_PASS;
}
