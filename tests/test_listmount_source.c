/* SPDX-License-Identifier: MIT */
/*
 * The listmount source's own cases, in a private mount namespace:
 *  - a mount made earlier and attached later (open_tree(OPEN_TREE_CLONE),
 *    then move_mount(2)) has an ID older than the newest known one, so a
 *    listing of new IDs misses it; made together with an unmount, the
 *    mount counts agree and only the later whole listing finds both;
 *  - a remount read-only (the ID set unchanged) is reported to a subscriber
 *    that wants READONLY, and costs nothing to one that wants only mounts.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mountrouter-uapi.h"
#include "testutil.h"

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

static char root[256];
static mr_router *router;

static mr_sub *subscribe(uint32_t kinds)
{
	struct mr_sub_opts o = {.size = sizeof(o), .subtree = root, .kinds = kinds};
	mr_sub *s = NULL;

	return mr_subscribe(router, &o, &s) < 0 ? NULL : s;
}

/* The next event must be @kind at @rel; 3 s covers the deferred listing (1 s). */
static int expect(mr_sub *s, uint32_t kind, const char *rel)
{
	char p[512];
	const struct mr_event *ev = tu_next(s, 3000, false);

	if (!ev) {
		fprintf(stderr, "timed out waiting for %s %s\n", mr_event_kind_name(kind), rel);
		return T_EXIT_FAIL;
	}
	int ok = ev->kind == kind && !strcmp(ev->path, tu_path(p, sizeof(p), root, rel));
	if (!ok)
		fprintf(stderr, "expected %s %s, got %s %s\n", mr_event_kind_name(kind), rel,
			mr_event_kind_name(ev->kind), ev->path);
	mr_event_unref(ev);
	return ok ? 0 : T_EXIT_FAIL;
}

static int test_old_id_attach_with_unmount(void)
{
	char src[512], a[512], b[512], c[512];
	mr_sub *s = subscribe(MR_KIND(MR_EVENT_MOUNT) | MR_KIND(MR_EVENT_UNMOUNT));

	CHECK(s);
	tu_path(src, sizeof(src), root, "src");
	tu_path(a, sizeof(a), root, "a");
	tu_path(b, sizeof(b), root, "b");
	tu_path(c, sizeof(c), root, "c");
	CHECK(tu_mkdir(src) == 0 && tu_mkdir(a) == 0 && tu_mkdir(b) == 0 && tu_mkdir(c) == 0);
	CHECK(mount("src", src, "tmpfs", 0, NULL) == 0);
	CHECK(expect(s, MR_EVENT_MOUNT, "src") == 0);

	/* The clone's ID is taken now, before the mounts made next. */
	int tree = (int)syscall(__NR_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE | O_CLOEXEC);
	if (tree < 0) {
		mr_unsubscribe(s);
		return tu_skip("open_tree(OPEN_TREE_CLONE): %s", strerror(errno));
	}
	CHECK(mount(src, a, NULL, MS_BIND, NULL) == 0);
	CHECK(expect(s, MR_EVENT_MOUNT, "a") == 0);
	/* One away, one in with an older ID: the count stays as it was. */
	CHECK(umount(a) == 0);
	CHECK(syscall(__NR_move_mount, tree, "", AT_FDCWD, b, MOVE_MOUNT_F_EMPTY_PATH) == 0);
	close(tree);
	CHECK(expect(s, MR_EVENT_UNMOUNT, "a") == 0);
	CHECK(expect(s, MR_EVENT_MOUNT, "b") == 0);

	/* And the next change finds the table as it is. */
	CHECK(mount(src, c, NULL, MS_BIND, NULL) == 0);
	CHECK(expect(s, MR_EVENT_MOUNT, "c") == 0);
	/* One at a time: changes read together come in ID order, not the kernel's. */
	CHECK(umount(c) == 0);
	CHECK(expect(s, MR_EVENT_UNMOUNT, "c") == 0);
	CHECK(umount(b) == 0);
	CHECK(expect(s, MR_EVENT_UNMOUNT, "b") == 0);
	CHECK(umount(src) == 0);
	CHECK(expect(s, MR_EVENT_UNMOUNT, "src") == 0);
	mr_unsubscribe(s);
	return 0;
}

static int test_readonly_remount(void)
{
	char p[512];
	mr_sub *ro = subscribe(MR_KIND(MR_EVENT_READONLY));
	mr_sub *mnt = subscribe(MR_KIND(MR_EVENT_MOUNT));
	struct mr_stats before, after;

	CHECK(ro && mnt);
	tu_path(p, sizeof(p), root, "r");
	CHECK(tu_mkdir(p) == 0);
	CHECK(mount("r", p, "tmpfs", 0, NULL) == 0);
	const struct mr_event *ev = tu_next(mnt, 3000, false);
	CHECK(ev && ev->kind == MR_EVENT_MOUNT);
	mr_event_unref(ev);
	/* Let the check of the mount's arrival pass before counting. */
	usleep(1500 * 1000);
	CHECK(mr_router_stats(router, &before) == 0);
	CHECK(mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	CHECK(expect(ro, MR_EVENT_READONLY, "r") == 0);
	CHECK(mr_router_stats(router, &after) == 0);
	CHECK(after.sweeps > before.sweeps);

	/* Nobody wants READONLY any more: a remount costs no pass. */
	mr_unsubscribe(ro);
	usleep(100 * 1000);
	CHECK(mr_router_stats(router, &before) == 0);
	CHECK(mount(NULL, p, NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
	usleep(300 * 1000);
	CHECK(mr_router_stats(router, &after) == 0);
	CHECK_EQ_U64(after.sweeps, before.sweeps);
	CHECK(umount(p) == 0);
	mr_unsubscribe(mnt);
	return 0;
}

int main(void)
{
	struct mr_opts o = {.size = sizeof(o), .source = "listmount"};
	int fail = 0, err;

	err = tu_private_root(root, sizeof(root));
	if (err)
		return err;
	err = mr_router_new(&o, &router);
	if (err == -ENOSYS)
		return tu_skip("no listmount(2) on this kernel");
	if (err < 0) {
		fprintf(stderr, "mr_router_new(listmount): %s\n", strerror(-err));
		return T_EXIT_FAIL;
	}
	CHECK(mr_router_start(router) == 0);
	fail |= RUN(test_old_id_attach_with_unmount) == T_EXIT_FAIL;
	fail |= RUN(test_readonly_remount) == T_EXIT_FAIL;
	mr_router_free(router);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
