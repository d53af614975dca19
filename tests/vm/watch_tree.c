/* SPDX-License-Identifier: MIT */
/*
 * Attaching a tree of mounts reports every mount in it: a recursive bind of
 * a tree of 3 mounts posts exactly 3 NEW_MOUNT records, parent first
 * (next_mnt() pre-order), each naming its parent in triggered_on and itself
 * in auxiliary_mount (statx(STATX_MNT_ID_UNIQUE)); so does attaching a
 * detached tree (open_tree(OPEN_TREE_CLONE|AT_RECURSIVE) + move_mount()),
 * and so does each copy propagated into a shared peer.  Moving a tree still
 * reports its root only (MOVE_FROM, MOVE_TO).  Unmounting a tree reports
 * every mount in it to the watches above, parent first.
 */
#include "vmtest.h"

#define MAXN 64
static struct note n[MAXN];
static int wfd, rfd;
static uint64_t top;

#define WID 5

/* Expect record @i to be @subtype on @on with aux @aux, in the subtree. */
static int expect(int nr, int i, unsigned int subtype, uint64_t on,
		  uint64_t aux)
{
	return expect_note(n, nr, i, subtype, on, aux, NOTIFY_MOUNT_IN_SUBTREE, WID);
}

/*
 * The 3 records of the tree @dir (a mount), @dir/x, @dir/x/y, attached to
 * @parent, starting at record @i.
 */
static int expect_tree(int nr, int i, const char *dir, uint64_t parent)
{
	char x[256], y[256];
	uint64_t r, mx, my;

	snprintf(x, sizeof(x), "%s/x", dir);
	snprintf(y, sizeof(y), "%s/x/y", dir);
	r = mnt_id(dir);
	mx = mnt_id(x);
	my = mnt_id(y);
	CHECK(r && mx && my && r != parent && mx != r && my != mx);
	if (expect(nr, i, NOTIFY_MOUNT_NEW_MOUNT, parent, r) ||
	    expect(nr, i + 1, NOTIFY_MOUNT_NEW_MOUNT, r, mx) ||
	    expect(nr, i + 2, NOTIFY_MOUNT_NEW_MOUNT, mx, my))
		return T_FAIL;
	return T_PASS;
}

/* tr/src: a tmpfs with a tmpfs on x and another on x/y (3 mounts). */
static int make_src(void)
{
	CHECK(mount_tmpfs("tr/src", 0) == 0);
	CHECK(mount_tmpfs("tr/src/x", 0) == 0);
	CHECK(mount_tmpfs("tr/src/x/y", 0) == 0);
	CHECK(read_notes(rfd, n, MAXN) == 3);
	return expect_tree(3, 0, "tr/src", top);
}

static int test_rbind(void)
{
	int nr;

	CHECK(mkdir("tr/dst", 0755) == 0);
	CHECK(mount("tr/src", "tr/dst", NULL, MS_BIND | MS_REC, NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	if (nr != 3)
		dump_notes(n, nr);
	CHECK(nr == 3);
	if (expect_tree(nr, 0, "tr/dst", top))
		return T_FAIL;
	/* A plain bind still reports the one mount it makes. */
	CHECK(mkdir("tr/one", 0755) == 0);
	CHECK(mount("tr/src", "tr/one", NULL, MS_BIND, NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 1);
	return expect(nr, 0, NOTIFY_MOUNT_NEW_MOUNT, top, mnt_id("tr/one"));
}

/* Moving the tree: root only, submounts keep their parent. */
static int test_move_tree(void)
{
	uint64_t r = mnt_id("tr/dst"), dst, mx, my;
	int nr;

	CHECK(mount_tmpfs("tr/to", 0) == 0);
	dst = mnt_id("tr/to");
	CHECK(mkdir("tr/to/in", 0755) == 0);
	read_notes(rfd, n, MAXN);
	CHECK(mount("tr/dst", "tr/to/in", NULL, MS_MOVE, NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	CHECK(nr == 2);
	if (expect(nr, 0, NOTIFY_MOUNT_MOVE_FROM, top, r) ||
	    expect(nr, 1, NOTIFY_MOUNT_MOVE_TO, dst, r))
		return T_FAIL;
	/*
	 * umount_tree() reports each mount of the tree to the watch above it,
	 * parent first (all are reported before the root is disconnected).
	 */
	mx = mnt_id("tr/to/in/x");
	my = mnt_id("tr/to/in/x/y");
	CHECK(umount2("tr/to/in", MNT_DETACH) == 0);
	nr = read_notes(rfd, n, MAXN);
	if (nr != 3)
		dump_notes(n, nr);
	CHECK(nr == 3);
	if (expect(nr, 0, NOTIFY_MOUNT_UNMOUNT, dst, r) ||
	    expect(nr, 1, NOTIFY_MOUNT_UNMOUNT, r, mx) ||
	    expect(nr, 2, NOTIFY_MOUNT_UNMOUNT, mx, my))
		return T_FAIL;
	return T_PASS;
}

/* A detached recursive clone attached with move_mount(). */
static int test_detached_tree(void)
{
	int fd, nr;

	fd = open_tree(AT_FDCWD, "tr/src", OPEN_TREE_CLONE | AT_RECURSIVE |
			OPEN_TREE_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(read_notes(rfd, n, MAXN) == 0);
	CHECK(mkdir("tr/det", 0755) == 0);
	CHECK(move_mount(fd, "", AT_FDCWD, "tr/det",
			 MOVE_MOUNT_F_EMPTY_PATH) == 0);
	close(fd);
	nr = read_notes(rfd, n, MAXN);
	if (nr != 3)
		dump_notes(n, nr);
	CHECK(nr == 3);
	return expect_tree(nr, 0, "tr/det", top);
}

/*
 * tr/p1 is shared, tr/p2 its peer (a bind of it); a recursive bind of the
 * private tree tr/src on tr/p1/in is propagated to tr/p2/in: 3 records for
 * the tree itself, then 3 for the copy, each in pre-order.
 */
static int test_propagated(void)
{
	uint64_t p1, p2;
	int nr;

	CHECK(mount_tmpfs("tr/p1", 0) == 0);
	CHECK(mount(NULL, "tr/p1", NULL, MS_SHARED, NULL) == 0);
	CHECK(mkdir("tr/p2", 0755) == 0);
	CHECK(mount("tr/p1", "tr/p2", NULL, MS_BIND, NULL) == 0);
	CHECK(mkdir("tr/p1/in", 0755) == 0);
	p1 = mnt_id("tr/p1");
	p2 = mnt_id("tr/p2");
	CHECK(p1 && p2 && p1 != p2);
	read_notes(rfd, n, MAXN);

	CHECK(mount("tr/src", "tr/p1/in", NULL, MS_BIND | MS_REC, NULL) == 0);
	nr = read_notes(rfd, n, MAXN);
	if (nr != 6)
		dump_notes(n, nr);
	CHECK(nr == 6);
	if (expect_tree(nr, 0, "tr/p1/in", p1) ||
	    expect_tree(nr, 3, "tr/p2/in", p2))
		return T_FAIL;
	/* The copy is a different tree of mounts. */
	CHECK(mnt_id("tr/p1/in/x/y") != mnt_id("tr/p2/in/x/y"));

	/* Unmounting it takes all 6 away, one record each. */
	CHECK(umount2("tr/p1/in", MNT_DETACH) == 0);
	nr = read_notes(rfd, n, MAXN);
	if (nr != 6)
		dump_notes(n, nr);
	CHECK(nr == 6);
	for (int i = 0; i < nr; i++)
		CHECK(n[i].subtype == NOTIFY_MOUNT_UNMOUNT);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	CHECK(mkdir("tr", 0755) == 0);
	top = mnt_id("tr");
	CHECK(top != 0);
	wfd = make_queue(64, &rfd);
	CHECK(watch_mount(AT_FDCWD, "tr", 0, wfd, WID) == 0);

	RUN(make_src);
	RUN(test_rbind);
	RUN(test_move_tree);
	RUN(test_detached_tree);
	RUN(test_propagated);
	return T_PASS;
}
