/* SPDX-License-Identifier: MIT */
/*
 * The router's apply path against the model kernel (model.h), for each
 * source's records: the sequences that once left the mirror wrong, each
 * checked with the invariants every batch must keep (mirror == model, a
 * tree, parents first, children gone first, nothing outside a subtree,
 * seq increasing, every view equal to the model).
 */
#include <string.h>

#include "model.h"
#include "testutil.h"

static struct model k;
static struct view views[3];
static const char *const prefixes[] = { "/", "/a", "/x" };

static int open_model(enum model_source src, mr_router **r)
{
	model_init(&k, src);
	CHECK(model_router(&k, r, views, 3, prefixes, 0) == 0);
	CHECK(model_batch(&k, *r, views, 3) == 0);
	return 0;
}

/*
 * A bind mount and a remount through it, read in one batch: the new mount
 * is looked up already remounted; the other mounts of its superblock must
 * be refreshed all the same.
 */
static int test_bind_then_remount(enum model_source src)
{
	mr_router *r;
	uint64_t s, b;

	CHECK(open_model(src, &r) == 0);
	CHECK(model_mount_new(&k, 1, "x", &s) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_bind(&k, s, 1, "b", &b) == 0);
	CHECK(model_remount(&k, b, 64, false) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	/* and a read-only remount the same way */
	CHECK(model_bind(&k, s, 1, "c", &b) == 0);
	CHECK(model_remount(&k, b, 65, true) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	mr_router_free(r);
	return 0;
}

/*
 * In one batch: a remount of a superblock shared with a bind mount, then a
 * move of that bind mount.  The superblock refresh meets the moved mount
 * first; its submounts must move with it.
 */
static int test_remount_then_move(enum model_source src)
{
	mr_router *r;
	uint64_t s, b, c;

	CHECK(open_model(src, &r) == 0);
	CHECK(model_mount_new(&k, 1, "s", &s) == 0);
	CHECK(model_bind(&k, s, 1, "a b", &b) == 0);
	CHECK(model_mount_new(&k, b, "ab", &c) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_remount(&k, s, 7, false) == 0);
	CHECK(model_move(&k, b, 1, "a") == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	/* A mount both moved and remounted, in that order. */
	CHECK(model_move(&k, b, 1, "x") == 0);
	CHECK(model_remount(&k, b, 8, true) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	mr_router_free(r);
	return 0;
}

/*
 * mount --move onto an existing mount: the moved (older, lower ID) mount
 * becomes the child of the one it covers, at the same path.  A snapshot
 * must list the parent first, and an umount -l of the tree must report the
 * child gone first.
 */
static int test_move_onto_mount(enum model_source src)
{
	mr_router *r;
	uint64_t older, newer, deep;

	CHECK(open_model(src, &r) == 0);
	CHECK(model_mount_new(&k, 1, "y", &older) == 0);
	CHECK(model_mount_new(&k, 1, "x", &newer) == 0);
	CHECK(model_mount_new(&k, older, "d", &deep) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_move(&k, older, newer, "") == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);

	/* A late subscriber's snapshot: parents first. */
	struct mr_sub_opts so = { .size = sizeof(so), .subtree = "/x", .flags = MR_SUB_SNAPSHOT };
	struct view late = { .prefix = "/x" };
	CHECK(mr_subscribe(r, &so, &late.s) == 0);
	CHECK(model_batch(&k, r, &late, 1) == 0);
	CHECK(late.snapshots == 1 && late.n == 3);

	CHECK(model_umount(&k, newer, true) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_batch(&k, r, &late, 1) == 0);
	CHECK(late.n == 0);
	mr_unsubscribe(late.s);
	mr_router_free(r);
	return 0;
}

/*
 * Found by fuzz_router.  In one batch: a bind, a read-only remount through
 * it, and its unmount.  The remount's record names a mount gone by the time
 * it is read; the superblock's other mounts changed all the same.
 */
static int test_remount_through_vanished(enum model_source src)
{
	mr_router *r;
	uint64_t b;

	CHECK(open_model(src, &r) == 0);
	CHECK(model_bind(&k, 1, 1, "n\nl", &b) == 0);
	CHECK(model_remount(&k, b, 3, true) == 0);
	CHECK(model_umount(&k, b, false) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	/* and through a mount the mirror knows */
	CHECK(model_bind(&k, 1, 1, "a", &b) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_remount(&k, b, 4, false) == 0);
	CHECK(model_umount(&k, b, false) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	mr_router_free(r);
	return 0;
}

/*
 * Found by fuzz_router.  In one batch: a tree moved, then unmounted with
 * umount -l.  The move's record finds the mount gone: the whole tree is
 * reported gone, children first.
 */
static int test_move_then_umount_tree(enum model_source src)
{
	mr_router *r;
	uint64_t a, b, c;

	CHECK(open_model(src, &r) == 0);
	CHECK(model_mount_new(&k, 1, "x", &a) == 0);
	CHECK(model_mount_new(&k, 1, "y", &b) == 0);
	CHECK(model_mount_new(&k, b, "z", &c) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_move(&k, b, a, "") == 0);
	CHECK(model_umount(&k, b, true) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);

	/*
	 * Found by fuzz_router: a mount moved, a submount moved out from
	 * under it, then the first unmounted, in one batch.  The submount
	 * (and what it carries) stays.
	 */
	CHECK(model_mount_new(&k, 1, "p", &a) == 0);
	CHECK(model_mount_new(&k, a, "q", &b) == 0);
	CHECK(model_mount_new(&k, b, "c", &c) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_move(&k, a, 1, "s") == 0);
	CHECK(model_move(&k, b, 1, "r") == 0);
	CHECK(model_umount(&k, a, true) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);

	/*
	 * Found by fuzz_router: a submount moved out, then its old parent and
	 * it unmounted, in one batch.  Its old parent must not be reported
	 * gone while the mirror still holds it there.
	 */
	CHECK(model_mount_new(&k, 1, "p", &a) == 0);
	CHECK(model_mount_new(&k, a, "c", &b) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_move(&k, b, 1, "d") == 0);
	CHECK(model_umount(&k, a, false) == 0);
	CHECK(model_umount(&k, b, false) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	mr_router_free(r);
	return 0;
}

/* A kernel loss in the middle of changes: the resync makes everything right. */
static int test_loss_resync(enum model_source src)
{
	mr_router *r;
	uint64_t a, b;

	CHECK(open_model(src, &r) == 0);
	CHECK(model_mount_new(&k, 1, "a", &a) == 0);
	CHECK(model_mount_new(&k, a, "b", &b) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	/* The records of these are lost; the loss record says so. */
	size_t keep = k.rec_len;
	CHECK(model_move(&k, b, 1, "x") == 0);
	CHECK(model_remount(&k, a, 9, true) == 0);
	k.rec_len = keep;
	model_loss(&k);
	CHECK(model_batch(&k, r, views, 3) == 0);

	/*
	 * Found by fuzz_router: a child's unmount lost, its parent's read
	 * after the loss record.  Applied before the resync, the parent
	 * would be reported gone while its child still stood.
	 */
	CHECK(model_mount_new(&k, 1, "p", &a) == 0);
	CHECK(model_mount_new(&k, a, "c", &b) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_umount(&k, b, false) == 0);
	k.rec_len = 0;
	model_loss(&k);
	CHECK(model_umount(&k, a, false) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	mr_router_free(r);
	return 0;
}

static int run(const char *name, int rc)
{
	fprintf(stderr, "%-40s %s\n", name, rc ? "FAIL" : "ok");
	return rc;
}

int main(void)
{
	int rc = 0;

	for (int src = MODEL_WATCH_MOUNT; src <= MODEL_MOUNTINFO; src++) {
		fprintf(stderr, "-- %s records\n", model_source_name(src));
		rc |= run("test_bind_then_remount", test_bind_then_remount(src));
		rc |= run("test_remount_then_move", test_remount_then_move(src));
		rc |= run("test_move_onto_mount", test_move_onto_mount(src));
		rc |= run("test_loss_resync", test_loss_resync(src));
		rc |= run("test_remount_through_vanished", test_remount_through_vanished(src));
		rc |= run("test_move_then_umount_tree", test_move_then_umount_tree(src));
	}
	return rc ? T_EXIT_FAIL : T_EXIT_PASS;
}
