/* SPDX-License-Identifier: MIT */
/*
 * Every watch_mount() subtype arrives with the right mount IDs (compared with
 * statx(STATX_MNT_ID_UNIQUE)), the watch ID and the right info flags.
 */
#include "vmtest.h"

#define MAXN 64
static struct note n[MAXN];

/* Expect record @i to be @subtype on @on with aux @aux and exactly @flags. */
static int expect(int nr, int i, unsigned int subtype, uint64_t on,
		  uint64_t aux, unsigned int flags, unsigned int wid)
{
	return expect_note(n, nr, i, subtype, on, aux, flags, wid);
}

static int wfd, rfd;
static uint64_t top;

static int test_new_mount(void)
{
	uint64_t m;
	int nr;

	CHECK(mount_tmpfs("ev/a", 0) == 0);
	m = mnt_id("ev/a");
	CHECK(m != 0 && m != top);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	return expect(nr, 0, NOTIFY_MOUNT_NEW_MOUNT, top, m,
		      NOTIFY_MOUNT_IN_SUBTREE, 7);
}

static int test_new_mount_ro(void)
{
	uint64_t m;
	int nr;

	CHECK(mount_tmpfs("ev/ro", MS_RDONLY) == 0);
	m = mnt_id("ev/ro");
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	return expect(nr, 0, NOTIFY_MOUNT_NEW_MOUNT, top, m,
		      NOTIFY_MOUNT_IN_SUBTREE | NOTIFY_MOUNT_IS_NOW_RO, 7);
}

/* A mount on the watched directory itself: no NOTIFY_MOUNT_IN_SUBTREE. */
static int test_at_watch(void)
{
	int r2, w2 = make_queue(16, &r2), nr;
	uint64_t m;

	CHECK(mkdir("ev/w", 0755) == 0);
	CHECK(watch_mount(AT_FDCWD, "ev/w", 0, w2, 9) == 0);
	CHECK(mount_tmpfs("ev/w", 0) == 0);
	m = mnt_id("ev/w");
	nr = read_notes(r2, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_NEW_MOUNT, top, m, 0, 9))
		return T_FAIL;
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_NEW_MOUNT, top, m,
		   NOTIFY_MOUNT_IN_SUBTREE, 7))
		return T_FAIL;
	CHECK(umount("ev/w") == 0);
	nr = read_notes(r2, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_UNMOUNT, top, m, 0, 9))
		return T_FAIL;
	read_notes(rfd, n, MAXN);
	close(w2);
	close(r2);
	return T_PASS;
}

static int test_readonly_remount(void)
{
	uint64_t m = mnt_id("ev/a");
	int nr;

	/* mount -o remount,ro: superblock reconfigured and mount made R/O */
	CHECK(mount(NULL, "ev/a", NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 2);
	if (expect(nr, 0, NOTIFY_MOUNT_READONLY, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE | NOTIFY_MOUNT_IS_NOW_RO, 7) ||
	    expect(nr, 1, NOTIFY_MOUNT_SETATTR, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE | NOTIFY_MOUNT_IS_NOW_RO, 7))
		return T_FAIL;
	CHECK(mount(NULL, "ev/a", NULL, MS_REMOUNT, NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 2);
	if (expect(nr, 0, NOTIFY_MOUNT_READONLY, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE, 7) ||
	    expect(nr, 1, NOTIFY_MOUNT_SETATTR, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE, 7))
		return T_FAIL;
	/* mount -o remount,bind,ro: the mount only (change_mount_ro_state) */
	CHECK(mount(NULL, "ev/a", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
		    NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_READONLY, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE | NOTIFY_MOUNT_IS_NOW_RO, 7))
		return T_FAIL;
	CHECK(mount(NULL, "ev/a", NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	return expect(nr, 0, NOTIFY_MOUNT_READONLY, m, 0,
		      NOTIFY_MOUNT_IN_SUBTREE, 7);
}

static int test_readonly_setattr(void)
{
	uint64_t m = mnt_id("ev/a");
	int nr;

	CHECK(set_attr("ev/a", MOUNT_ATTR_RDONLY, 0) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_READONLY, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE | NOTIFY_MOUNT_IS_NOW_RO, 7))
		return T_FAIL;
	CHECK(set_attr("ev/a", 0, MOUNT_ATTR_RDONLY) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	return expect(nr, 0, NOTIFY_MOUNT_READONLY, m, 0,
		      NOTIFY_MOUNT_IN_SUBTREE, 7);
}

/*
 * MNT_NOSUID is 0x01, the value of SB_RDONLY: a mount made nosuid must not be
 * reported read-only.
 */
static int test_setattr(void)
{
	uint64_t m = mnt_id("ev/a");
	int nr;

	CHECK(set_attr("ev/a", MOUNT_ATTR_NOSUID, 0) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_SETATTR, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE, 7))
		return T_FAIL;
	CHECK(mount(NULL, "ev/a", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV,
		    NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_SETATTR, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE, 7))
		return T_FAIL;
	/* Nothing changes: nothing reported. */
	CHECK(set_attr("ev/a", MOUNT_ATTR_NOSUID, 0) == 0);
	CHECK(read_notes(rfd, n, MAXN) == 0);
	return T_PASS;
}

static int test_move(void)
{
	uint64_t m = mnt_id("ev/a"), dst;
	int nr;

	CHECK(mount_tmpfs("ev/dst", 0) == 0);
	dst = mnt_id("ev/dst");
	CHECK(mkdir("ev/dst/in", 0755) == 0);
	read_notes(rfd, n, MAXN);
	CHECK(mount("ev/a", "ev/dst/in", NULL, MS_MOVE, NULL) == 0);
	CHECK(mnt_id("ev/dst/in") == m);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 2);
	if (expect(nr, 0, NOTIFY_MOUNT_MOVE_FROM, top, m,
		   NOTIFY_MOUNT_IN_SUBTREE, 7) ||
	    expect(nr, 1, NOTIFY_MOUNT_MOVE_TO, dst, m,
		   NOTIFY_MOUNT_IN_SUBTREE, 7))
		return T_FAIL;
	return T_PASS;
}

static int test_unmount(void)
{
	uint64_t m = mnt_id("ev/dst/in"), dst = mnt_id("ev/dst");
	int nr;

	CHECK(umount("ev/dst/in") == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	return expect(nr, 0, NOTIFY_MOUNT_UNMOUNT, dst, m,
		      NOTIFY_MOUNT_IN_SUBTREE, 7);
}

/* umount2(MNT_EXPIRE) twice: the first marks, the second expires. */
static int test_expiry(void)
{
	uint64_t m = mnt_id("ev/ro");
	int nr;

	CHECK(umount2("ev/ro", MNT_EXPIRE) < 0 && errno == EAGAIN);
	CHECK(read_notes(rfd, n, MAXN) == 0);
	CHECK(umount2("ev/ro", MNT_EXPIRE) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 2);
	if (expect(nr, 0, NOTIFY_MOUNT_EXPIRY, m, 0,
		   NOTIFY_MOUNT_IN_SUBTREE, 7) ||
	    expect(nr, 1, NOTIFY_MOUNT_UNMOUNT, top, m,
		   NOTIFY_MOUNT_IN_SUBTREE, 7))
		return T_FAIL;
	return T_PASS;
}

/* A bind mount goes through the same attach path as a new mount. */
static int test_bind(void)
{
	uint64_t m;
	int nr;

	CHECK(mkdir("ev/src", 0755) == 0 && mkdir("ev/b", 0755) == 0);
	CHECK(mount("ev/src", "ev/b", NULL, MS_BIND, NULL) == 0);
	m = mnt_id("ev/b");
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	if (expect(nr, 0, NOTIFY_MOUNT_NEW_MOUNT, top, m,
		   NOTIFY_MOUNT_IN_SUBTREE, 7))
		return T_FAIL;
	CHECK(umount("ev/b") == 0);
	read_notes(rfd, n, MAXN);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	CHECK(mkdir("ev", 0755) == 0);
	top = mnt_id("ev");
	CHECK(top != 0);
	wfd = make_queue(64, &rfd);
	CHECK(watch_mount(AT_FDCWD, "ev", 0, wfd, 7) == 0);

	RUN(test_new_mount);
	RUN(test_new_mount_ro);
	RUN(test_at_watch);
	RUN(test_readonly_remount);
	RUN(test_readonly_setattr);
	RUN(test_setattr);
	RUN(test_move);
	RUN(test_unmount);
	RUN(test_expiry);
	RUN(test_bind);
	/* NOTIFY_MOUNT_IS_SUBMOUNT needs an automounting filesystem (NFS,
	 * AFS, autofs); the minimal guest has none. */
	fprintf(stderr, "note: NOTIFY_MOUNT_IS_SUBMOUNT not producible here\n");
	return T_PASS;
}
