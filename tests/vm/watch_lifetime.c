/* SPDX-License-Identifier: MIT */
/*
 * Watches and the death of what they watch: when the watched mount is
 * released after its unmount, each watch on it is removed with a
 * WATCH_META_REMOVAL_NOTIFICATION whose id is the mount's unique ID; the
 * parent-side watchers see NOTIFY_MOUNT_UNMOUNT.  Closing queues, unmounting
 * and removing directories in any order leaves no splat (the runner checks the
 * kernel log after each test) and no leaked superblock.
 */
#include "vmtest.h"

#define MAXN 32
static struct note n[MAXN];

static int removals(int nr, uint64_t id)
{
	int c = 0;

	for (int i = 0; i < nr; i++)
		if (n[i].type == WATCH_TYPE_META &&
		    n[i].subtype == WATCH_META_REMOVAL_NOTIFICATION &&
		    n[i].a == id)
			c++;
	return c;
}

static int test_umount_removes(void)
{
	int r, w = make_queue(16, &r), nr;
	uint64_t m;

	CHECK(mount_tmpfs("lt", 0) == 0);
	CHECK(mkdir("lt/sub", 0755) == 0);
	m = mnt_id("lt");
	CHECK(watch_mount(AT_FDCWD, "lt", 0, w, 1) == 0);
	CHECK(watch_mount(AT_FDCWD, "lt/sub", 0, w, 2) == 0);
	CHECK(watch_mount(AT_FDCWD, ".", 0, w, 3) == 0);
	CHECK(umount("lt") == 0);
	nr = read_notes(r, n, MAXN);
	/* parent side: the unmount; the mount's own watches: removed */
	if (nr != 3 || n[0].subtype != NOTIFY_MOUNT_UNMOUNT || n[0].b != m ||
	    removals(nr, m) != 2) {
		dump_notes(n, nr);
		FAILF("want unmount + 2 removals of %llu", (unsigned long long)m);
	}
	/* Later changes in the parent still reach the watch on "." */
	CHECK(mount_tmpfs("lt", 0) == 0);
	nr = read_notes(r, n, MAXN);
	CHECK(nr == 1 && n[0].subtype == NOTIFY_MOUNT_NEW_MOUNT);
	CHECK(umount("lt") == 0);
	read_notes(r, n, MAXN);
	close(w);
	close(r);
	return T_PASS;
}

/* A lazily detached mount lives, and stays watched, until its last user goes. */
static int test_lazy_detach(void)
{
	int r, w = make_queue(16, &r), nr, fd;
	uint64_t m;

	CHECK(mount_tmpfs("lz", 0) == 0);
	m = mnt_id("lz");
	CHECK(mkdir("lz/d", 0755) == 0);
	fd = open("lz/d", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK(watch_mount(AT_FDCWD, "lz", 0, w, 1) == 0);
	CHECK(umount2("lz", MNT_DETACH) == 0);
	nr = read_notes(r, n, MAXN);
	/* the open directory keeps the mount alive */
	CHECK(removals(nr, m) == 0);
	close(fd);
	nr = read_notes(r, n, MAXN);
	if (removals(nr, m) != 1) {
		dump_notes(n, nr);
		FAILF("no removal after the last user went");
	}
	close(w);
	close(r);
	return T_PASS;
}

/*
 * Close the queue first, then unmount; unmount first, then close; remove
 * the watched directory while watched.  Repeated so that a leaked dentry or
 * superblock reference would show ("Dentry still in use", or busy umount).
 */
static int test_churn(void)
{
	for (int i = 0; i < 200; i++) {
		int r, w = make_queue(8, &r);

		CHECK(mount_tmpfs("ch", 0) == 0);
		CHECK(mkdir("ch/x", 0755) == 0 && mkdir("ch/y", 0755) == 0);
		CHECK(watch_mount(AT_FDCWD, "ch/x", 0, w, 1) == 0);
		CHECK(watch_mount(AT_FDCWD, "ch/y", 0, w, 2) == 0);
		CHECK(watch_mount(AT_FDCWD, "ch", 0, w, 3) == 0);
		CHECK(rmdir("ch/y") == 0);
		if (i & 1) {
			close(w);
			close(r);
		}
		CHECK(umount("ch") == 0);
		if (!(i & 1)) {
			close(w);
			close(r);
		}
	}
	return T_PASS;
}

int main(void)
{
	setup_ns();
	RUN(test_umount_removes);
	RUN(test_lazy_detach);
	RUN(test_churn);
	return T_PASS;
}
