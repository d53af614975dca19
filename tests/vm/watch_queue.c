/* SPDX-License-Identifier: MIT */
/*
 * The watch-queue side of mount watches: the watch ID in info, subtype
 * filtering with IOC_WATCH_QUEUE_SET_FILTER, removal with watch ID -1, and
 * WATCH_META_LOSS_NOTIFICATION when the queue overflows.
 */
#include "vmtest.h"

#define MAXN 128
static struct note n[MAXN];

static unsigned int wid(const struct note *x)
{
	return (x->info & WATCH_INFO_ID) >> WATCH_INFO_ID__SHIFT;
}

/* Two watches, one queue: each record carries the ID of its watch. */
static int test_watch_id(void)
{
	int r, w = make_queue(16, &r), nr;

	CHECK(mkdir("q1", 0755) == 0 && mkdir("q2", 0755) == 0);
	CHECK(watch_mount(AT_FDCWD, "q1", 0, w, 1) == 0);
	CHECK(watch_mount(AT_FDCWD, "q2", 0, w, 255) == 0);
	CHECK(mount_tmpfs("q1/m", 0) == 0);
	CHECK(mount_tmpfs("q2/m", 0) == 0);
	nr = read_notes(r, n, MAXN);
	CHECK(nr == 2 && wid(&n[0]) == 1 && wid(&n[1]) == 255);
	CHECK(n[0].b == mnt_id("q1/m") && n[1].b == mnt_id("q2/m"));
	close(w);
	close(r);
	return T_PASS;
}

static int test_filter(void)
{
	int r, w = make_queue(16, &r), nr;

	CHECK(mkdir("f", 0755) == 0);
	CHECK(set_filter(w, 1u << NOTIFY_MOUNT_NEW_MOUNT |
			    1u << NOTIFY_MOUNT_UNMOUNT) == 0);
	CHECK(watch_mount(AT_FDCWD, "f", 0, w, 2) == 0);
	CHECK(mount_tmpfs("f/m", 0) == 0);
	CHECK(set_attr("f/m", MOUNT_ATTR_RDONLY, 0) == 0);       /* filtered */
	CHECK(set_attr("f/m", MOUNT_ATTR_NOEXEC, 0) == 0);       /* filtered */
	CHECK(umount("f/m") == 0);
	nr = read_notes(r, n, MAXN);
	if (nr != 2 || n[0].subtype != NOTIFY_MOUNT_NEW_MOUNT ||
	    n[1].subtype != NOTIFY_MOUNT_UNMOUNT) {
		dump_notes(n, nr);
		FAILF("want new + unmount only, got %d records", nr);
	}
	close(w);
	close(r);
	return T_PASS;
}

static int test_remove(void)
{
	int r, w = make_queue(128, &r), nr;

	CHECK(mkdir("rm", 0755) == 0);
	CHECK(watch_mount(AT_FDCWD, "rm", 0, w, 6) == 0);
	CHECK(watch_mount(AT_FDCWD, "rm", 0, w, -1) == 0);
	nr = read_notes(r, n, MAXN);
	CHECK(nr == 1 && n[0].type == WATCH_TYPE_META &&
	      n[0].subtype == WATCH_META_REMOVAL_NOTIFICATION && wid(&n[0]) == 6);
	CHECK(mount_tmpfs("rm/m", 0) == 0);
	CHECK(read_notes(r, n, MAXN) == 0);
	/* The same directory can be watched again, any number of times. */
	for (int i = 0; i < 50; i++) {
		CHECK(watch_mount(AT_FDCWD, "rm", 0, w, 6) == 0);
		CHECK(watch_mount(AT_FDCWD, "rm", 0, w, -1) == 0);
	}
	CHECK(watch_mount(AT_FDCWD, "rm", 0, w, 8) == 0);
	CHECK(umount("rm/m") == 0);
	nr = read_notes(r, n, MAXN);
	/* 50 removal records, then the unmount. */
	CHECK(nr == 51);
	CHECK(find_note(n, nr, 0, NOTIFY_MOUNT_UNMOUNT) >= 0);
	close(w);
	close(r);
	return T_PASS;
}

/*
 * One directory watched through two bind mounts: removing the watch through
 * one must leave the other working (watched dentries are counted).
 */
static int test_shared_dentry(void)
{
	int r1, w1 = make_queue(16, &r1), r2, w2 = make_queue(16, &r2), nr;

	CHECK(mount_tmpfs("sd", 0) == 0);
	CHECK(mkdir("sd/dir", 0755) == 0 && mkdir("sb", 0755) == 0);
	CHECK(mount("sd", "sb", NULL, MS_BIND, NULL) == 0);
	CHECK(watch_mount(AT_FDCWD, "sd/dir", 0, w1, 1) == 0);
	CHECK(watch_mount(AT_FDCWD, "sb/dir", 0, w2, 2) == 0);
	CHECK(watch_mount(AT_FDCWD, "sd/dir", 0, w1, -1) == 0);
	read_notes(r1, n, MAXN);
	CHECK(mount_tmpfs("sb/dir", 0) == 0);
	nr = read_notes(r2, n, MAXN);
	CHECK(nr == 1 && n[0].subtype == NOTIFY_MOUNT_NEW_MOUNT &&
	      n[0].a == mnt_id("sb") && !(n[0].info & NOTIFY_MOUNT_IN_SUBTREE));
	CHECK(mount_tmpfs("sd/dir", 0) == 0);
	CHECK(read_notes(r1, n, MAXN) == 0);
	CHECK(read_notes(r2, n, MAXN) == 0);
	close(w1); close(r1); close(w2); close(r2);
	return T_PASS;
}

static int test_overflow(void)
{
	int r, w = make_queue(4, &r), nr, loss = 0, mounts = 0;

	CHECK(mkdir("ov", 0755) == 0);
	CHECK(watch_mount(AT_FDCWD, "ov", 0, w, 9) == 0);
	/* 4 notes round up to one page of them: a 32-slot ring. */
	for (int i = 0; i < 40; i++) {
		char p[32];

		snprintf(p, sizeof(p), "ov/%d", i);
		CHECK(mount_tmpfs(p, 0) == 0);
	}
	nr = read_notes(r, n, MAXN);
	for (int i = 0; i < nr; i++) {
		if (n[i].type == WATCH_TYPE_META &&
		    n[i].subtype == WATCH_META_LOSS_NOTIFICATION)
			loss++;
		else if (n[i].type == WATCH_TYPE_MOUNT_NOTIFY)
			mounts++;
	}
	if (loss != 1 || mounts < 1 || mounts > 32) {
		dump_notes(n, nr);
		FAILF("want 1 loss record and 1-32 mount records, got %d and %d",
		      loss, mounts);
	}
	/* The queue works again once drained. */
	CHECK(umount("ov/0") == 0);
	nr = read_notes(r, n, MAXN);
	CHECK(nr == 1 && n[0].subtype == NOTIFY_MOUNT_UNMOUNT);
	close(w);
	close(r);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	RUN(test_watch_id);
	RUN(test_filter);
	RUN(test_remove);
	RUN(test_shared_dentry);
	RUN(test_overflow);
	return T_PASS;
}
