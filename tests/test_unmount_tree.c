/* SPDX-License-Identifier: MIT */
/*
 * A moved mount gone before its move record was read takes its mirrored
 * tree with it (refresh.c, mr__unmount_tree()): every mount below it is
 * reported unmounted, children before parents, and nothing else, however
 * deep the tree.  A stack of 20,000 mounts on one mount point is one
 * chain 20,000 deep.  No kernel: a namespace fed from memory.  Label: unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "testing.h"
#include "testutil.h"

enum { STACK = 20000, BOTTOM = 100, SUB = 900000, SIDE = 2 };

/* Every mount is gone when the router looks: its move record came too late. */
static int gone(void *arg, uint64_t id, struct mr__mount **ret)
{
	(void)arg;
	(void)id;
	(void)ret;
	return -ENOENT;
}

static int put(struct mr__testing_ns *ns, uint64_t id, uint64_t parent, const char *path)
{
	struct mr_mount f = {.id = id, .parent_id = parent, .path = path, .root = "/",
			     .source = "t", .fstype = "tmpfs", .options = "rw"};
	struct mr__mount *m = mr__testing_mount_new(&f);

	return m ? mr__testing_ns_put(ns, m) : -ENOMEM;
}

static int test_deep_stack_gone(void)
{
	struct mr_opts o = {.size = sizeof(o), .flags = MR_OPT_NO_SELF_NS, .source = "mountinfo"};
	struct mr_sub_opts so = {.size = sizeof(so), .subtree = "/", .capacity = 1u << 16};
	static unsigned char unmounted[BOTTOM + STACK];
	struct mr__testing_ns *ns;
	const struct mr_event *ev;
	mr_router *r;
	mr_sub *s;

	CHECK(mr_router_new(&o, &r) == 0);
	CHECK(mr__testing_ns_new(r, gone, NULL, &ns) == 0);
	/* /, /side, and on /s a stack with a submount halfway up. */
	CHECK(put(ns, 1, 1, "/") == 0);
	CHECK(put(ns, SIDE, 1, "/side") == 0);
	for (uint64_t i = 0; i < STACK; i++)
		CHECK(put(ns, BOTTOM + i, i ? BOTTOM + i - 1 : 1, "/s") == 0);
	CHECK(put(ns, SUB, BOTTOM + STACK / 2, "/s/sub") == 0);
	CHECK(mr__testing_ns_subscribe(ns, &so, &s) == 0);

	CHECK(mr__testing_ns_change(ns, MR_EVENT_MOVE, BOTTOM) == 0);
	/* Children first: a mount goes after everything above it in the stack. */
	uint64_t n = 0, next_stack = BOTTOM + STACK - 1;
	bool sub_gone = false;
	while (mr_sub_next(s, &ev) == 0) {
		CHECK_EQ_U64(ev->kind, MR_EVENT_UNMOUNT);
		if (ev->mnt_id == SUB) {
			CHECK(!sub_gone && next_stack >= BOTTOM + STACK / 2);
			sub_gone = true;
		} else {
			CHECK_EQ_U64(ev->mnt_id, next_stack);
			CHECK(!unmounted[ev->mnt_id]);
			unmounted[ev->mnt_id] = 1;
			next_stack--;
		}
		n++;
		mr_event_unref(ev);
	}
	CHECK_EQ_U64(n, STACK + 1);
	CHECK(sub_gone && next_stack == BOTTOM - 1);
	/* /side stayed: its own detach is reported. */
	CHECK(mr__testing_ns_change(ns, MR_EVENT_UNMOUNT, SIDE) == 0);
	CHECK(mr_sub_next(s, &ev) == 0);
	CHECK(ev->kind == MR_EVENT_UNMOUNT && ev->mnt_id == SIDE);
	mr_event_unref(ev);
	CHECK(mr_sub_next(s, &ev) == -EAGAIN);

	mr__testing_ns_unsubscribe(ns, s);
	mr__testing_ns_free(ns);
	mr_router_free(r);
	return 0;
}

int main(void)
{
	int fails = 0;

	fails += RUN(test_deep_stack_gone) != T_EXIT_PASS;
	return fails ? 1 : 0;
}
