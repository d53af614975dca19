/* SPDX-License-Identifier: MIT */
/*
 * pivot_root() and watches, as kernel/README.md documents it: watches stay
 * with their mounts.  Both moved mounts are reported (MOVE_FROM / MOVE_TO); a
 * watch on the old root keeps watching the old root mount, now under
 * put_old; a watch on the new root sees the whole tree from then on.
 */
#include "vmtest.h"

#define MAXN 32
static struct note n[MAXN];

static unsigned int wid(const struct note *x)
{
	return (x->info & WATCH_INFO_ID) >> WATCH_INFO_ID__SHIFT;
}

static int child(void)
{
	uint64_t oldroot, newroot, xid;
	int r, w, nr;

	/*
	 * The guest's / is the initramfs, which pivot_root() refuses (it has
	 * no parent): make a tmpfs the root of this namespace first.
	 */
	CHECK(mount_tmpfs("pr", 0) == 0);
	CHECK(mkdir("pr/new", 0755) == 0 && mount_tmpfs("pr/new", 0) == 0);
	CHECK(mkdir("pr/new/old", 0755) == 0);
	CHECK(chdir("pr") == 0);
	CHECK(mount(".", "/", NULL, MS_MOVE, NULL) == 0);
	CHECK(chroot(".") == 0 && chdir("/") == 0);

	oldroot = mnt_id("/");
	newroot = mnt_id("/new");
	w = make_queue(32, &r);
	CHECK(watch_mount(AT_FDCWD, "/", 0, w, 1) == 0);
	CHECK(watch_mount(AT_FDCWD, "/new", 0, w, 2) == 0);

	CHECK(syscall(SYS_pivot_root, "/new", "/new/old") == 0);
	CHECK(chdir("/") == 0);
	CHECK(mnt_id("/") == newroot && mnt_id("/old") == oldroot);
	nr = read_notes(r, n, MAXN);
	/* old root's watch: new root moved away from it; new root's watch:
	 * old root moved in under it */
	if (nr != 2 ||
	    n[0].subtype != NOTIFY_MOUNT_MOVE_FROM || wid(&n[0]) != 1 ||
	    n[0].a != oldroot || n[0].b != newroot ||
	    n[1].subtype != NOTIFY_MOUNT_MOVE_TO || wid(&n[1]) != 2 ||
	    n[1].a != newroot || n[1].b != oldroot) {
		dump_notes(n, nr);
		FAILF("pivot_root records");
	}

	/* Under put_old: both watches see it. */
	CHECK(mkdir("/old/x", 0755) == 0 && mount_tmpfs("/old/x", 0) == 0);
	nr = read_notes(r, n, MAXN);
	if (nr != 2 || n[0].a != oldroot || n[1].a != oldroot ||
	    wid(&n[0]) + wid(&n[1]) != 3) {
		dump_notes(n, nr);
		FAILF("mount under put_old");
	}
	/* Elsewhere in the new root: only the new root's watch. */
	CHECK(mkdir("/y", 0755) == 0 && mount_tmpfs("/y", 0) == 0);
	nr = read_notes(r, n, MAXN);
	CHECK(nr == 1 && wid(&n[0]) == 2 && n[0].a == newroot);

	/*
	 * Drop the old root: the new root's watch sees it go, then both
	 * watches see /old/x go with it (the old root's first: the walk goes
	 * rootwards), then the old root's watch is removed with its mount.
	 */
	xid = mnt_id("/old/x");
	CHECK(umount2("/old", MNT_DETACH) == 0);
	nr = read_notes(r, n, MAXN);
	if (nr != 4 ||
	    n[0].subtype != NOTIFY_MOUNT_UNMOUNT || wid(&n[0]) != 2 ||
	    n[0].a != newroot || n[0].b != oldroot ||
	    n[1].subtype != NOTIFY_MOUNT_UNMOUNT || wid(&n[1]) != 1 ||
	    n[1].a != oldroot || n[1].b != xid ||
	    n[2].subtype != NOTIFY_MOUNT_UNMOUNT || wid(&n[2]) != 2 ||
	    n[2].a != oldroot || n[2].b != xid ||
	    n[3].type != WATCH_TYPE_META || wid(&n[3]) != 1 ||
	    n[3].subtype != WATCH_META_REMOVAL_NOTIFICATION || n[3].a != oldroot) {
		dump_notes(n, nr);
		FAILF("unmount of the old root");
	}
	return T_PASS;
}

static int test_pivot_root(void)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child());
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	RUN(test_pivot_root);
	return T_PASS;
}
