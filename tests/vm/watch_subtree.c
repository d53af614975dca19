/* SPDX-License-Identifier: MIT */
/*
 * Subtree semantics: a watch on st/a sees mounts anywhere below st/a, across
 * nested mounts, flagged NOTIFY_MOUNT_IN_SUBTREE, and nothing under st/ab,
 * st/x or a directory renamed out from under st/a.
 */
#include "vmtest.h"

#define MAXN 32
static struct note n[MAXN];
static int wfd, rfd;
static uint64_t top;

static int seen(uint64_t on, uint64_t aux)
{
	int nr = read_notes(rfd, n, MAXN);

	if (nr == 1 && n[0].subtype == NOTIFY_MOUNT_NEW_MOUNT && n[0].a == on &&
	    n[0].b == aux && (n[0].info & NOTIFY_MOUNT_IN_SUBTREE) &&
	    ((n[0].info & WATCH_INFO_ID) >> WATCH_INFO_ID__SHIFT) == 3)
		return 1;
	dump_notes(n, nr);
	return 0;
}

static int test_deep(void)
{
	CHECK(mkdir("st/a/b", 0755) == 0 && mkdir("st/a/b/c", 0755) == 0);
	CHECK(mount_tmpfs("st/a/b/c", 0) == 0);
	CHECK(seen(top, mnt_id("st/a/b/c")));
	return T_PASS;
}

static int test_siblings_not_seen(void)
{
	CHECK(mount_tmpfs("st/ab", 0) == 0);
	CHECK(mount_tmpfs("st/x", 0) == 0);
	CHECK(mkdir("st/ab/a", 0755) == 0);
	CHECK(mount_tmpfs("st/ab/a", 0) == 0);
	CHECK(read_notes(rfd, n, MAXN) == 0);
	return T_PASS;
}

/* Across a mount boundary: st/a/m is a mount, st/a/m/n a mount inside it. */
static int test_nested_mount(void)
{
	uint64_t m;

	CHECK(mount_tmpfs("st/a/m", 0) == 0);
	m = mnt_id("st/a/m");
	CHECK(seen(top, m));
	CHECK(mkdir("st/a/m/d", 0755) == 0 && mkdir("st/a/m/d/n", 0755) == 0);
	CHECK(mount_tmpfs("st/a/m/d/n", 0) == 0);
	CHECK(seen(m, mnt_id("st/a/m/d/n")));
	/* Attribute changes deep down are in the subtree too. */
	CHECK(set_attr("st/a/m/d/n", MOUNT_ATTR_NODEV, 0) == 0);
	CHECK(read_notes(rfd, n, MAXN) == 1 &&
	      n[0].subtype == NOTIFY_MOUNT_SETATTR &&
	      n[0].a == mnt_id("st/a/m/d/n") &&
	      (n[0].info & NOTIFY_MOUNT_IN_SUBTREE));
	return T_PASS;
}

/* The walk follows the dentry tree as it is now, not as it was. */
static int test_renamed_out(void)
{
	CHECK(mkdir("st/a/mv", 0755) == 0 && mkdir("st/a/mv/p", 0755) == 0);
	CHECK(rename("st/a/mv", "st/gone") == 0);
	CHECK(mount_tmpfs("st/gone/p", 0) == 0);
	CHECK(read_notes(rfd, n, MAXN) == 0);
	CHECK(rename("st/gone", "st/a/back") == 0);
	CHECK(mkdir("st/a/back/q", 0755) == 0);
	CHECK(mount_tmpfs("st/a/back/q", 0) == 0);
	CHECK(seen(top, mnt_id("st/a/back/q")));
	return T_PASS;
}

/* A watch on a mount's root sees inside that mount, and mounts stacked on it. */
static int test_watch_mount_root(void)
{
	int r2, w2 = make_queue(16, &r2), nr;
	uint64_t r, s;

	CHECK(mount_tmpfs("st/r", 0) == 0);
	r = mnt_id("st/r");
	read_notes(rfd, n, MAXN);
	CHECK(watch_mount(AT_FDCWD, "st/r", 0, w2, 4) == 0);
	CHECK(mount_tmpfs("st/r/q", 0) == 0);
	nr = read_notes(r2, n, MAXN);
	CHECK(nr == 1 && n[0].a == r && (n[0].info & NOTIFY_MOUNT_IN_SUBTREE));
	CHECK(mount("vt", "st/r", "tmpfs", 0, NULL) == 0); /* stacked on st/r */
	s = mnt_id("st/r");
	nr = read_notes(r2, n, MAXN);
	CHECK(nr == 1 && n[0].subtype == NOTIFY_MOUNT_NEW_MOUNT && n[0].a == r &&
	      n[0].b == s && !(n[0].info & NOTIFY_MOUNT_IN_SUBTREE));
	close(w2);
	close(r2);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	CHECK(mkdir("st", 0755) == 0 && mkdir("st/a", 0755) == 0);
	top = mnt_id("st");
	wfd = make_queue(32, &rfd);
	CHECK(watch_mount(AT_FDCWD, "st/a", 0, wfd, 3) == 0);
	RUN(test_deep);
	RUN(test_siblings_not_seen);
	RUN(test_nested_mount);
	RUN(test_renamed_out);
	RUN(test_watch_mount_root);
	return T_PASS;
}
