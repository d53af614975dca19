/* SPDX-License-Identifier: MIT */
/*
 * mr_router_wait() as mountrouter.h states it: 0 when nothing came within
 * the timeout, 1 when something did, and what it found is left to the
 * next mr_router_dispatch(), which routes it without another wait.  A
 * thread run as "wait, dispatch, read the ring" must get every change, in
 * order, and nothing while the table is quiet.  A command pushed from
 * another thread (a subscription) ends a wait without a change.
 *
 * Usage: test_router_wait SOURCE   (fanotify | listmount | mountinfo)
 * Labels: kernel, root.  MR_TEST_REACTOR picks the backend.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "testutil.h"

#define WAIT_MS 5000

static char root[256];
static mr_router *router;
static mr_sub *all; /* on the whole root, every kind */

/* Waits and dispatches until @s has an event (markers too), or @timeout_ms of waits pass. */
static const struct mr_event *next_event(mr_sub *s, int timeout_ms)
{
	const struct mr_event *ev;

	for (int waited = 0; waited < timeout_ms; waited += 50) {
		if (mr_sub_next(s, &ev) == 0)
			return ev;
		int n = mr_router_wait(router, 50);
		if (n < 0 && n != -EINTR)
			return NULL;
		if (n > 0 && mr_router_dispatch(router) < 0)
			return NULL;
	}
	return mr_sub_next(s, &ev) == 0 ? ev : NULL;
}

/* Routes the start-up work (a first pass, the doorbell's first report) and reads it away. */
static void settle(mr_sub *s)
{
	const struct mr_event *ev;

	while ((ev = next_event(s, 300)))
		mr_event_unref(ev);
}

static int expect(mr_sub *s, uint32_t kind, const char *path)
{
	const struct mr_event *ev = next_event(s, WAIT_MS);

	CHECK(ev != NULL);
	if (ev->kind != kind || strcmp(ev->path, path)) {
		fprintf(stderr, "  expected %s %s, got %s %s\n", mr_event_kind_name(kind), path,
			mr_event_kind_name(ev->kind), ev->path);
		mr_event_unref(ev);
		return T_EXIT_FAIL;
	}
	mr_event_unref(ev);
	return 0;
}

/*
 * A quiet table: nothing is routed, and the waits soon time out (a
 * verification pass the last changes scheduled may still end one).
 */
static int quiet(mr_sub *s)
{
	const struct mr_event *ev;
	int timeouts = 0;

	for (int i = 0; i < 20 && !timeouts; i++) {
		int n = mr_router_wait(router, 100);
		CHECK(n >= 0 || n == -EINTR);
		if (n == 0)
			timeouts++;
		else
			CHECK(mr_router_dispatch(router) == 0);
	}
	CHECK(timeouts == 1);
	CHECK(mr_router_wait(router, 0) == 0);
	CHECK(mr_sub_next(s, &ev) == -EAGAIN);
	return 0;
}

static int test_quiet(void)
{
	return quiet(all);
}

/* What a wait found is the dispatch's: a second wait returns at once, and no change is lost. */
static int test_found_is_kept(void)
{
	mr_sub *s = all;
	char p[512];
	const struct mr_event *ev;

	tu_path(p, sizeof(p), root, "kept");
	CHECK(tu_mkdir(p) == 0);
	CHECK(mount("kept", p, "tmpfs", 0, "size=64k") == 0);
	/* Something comes (the record, or mountinfo's doorbell for the reading sources). */
	CHECK(mr_router_wait(router, WAIT_MS) == 1);
	CHECK(mr_router_wait(router, 0) == 1);
	CHECK(mr_router_wait(router, WAIT_MS) == 1);
	CHECK(mr_sub_next(s, &ev) == -EAGAIN);
	CHECK(expect(s, MR_EVENT_MOUNT, p) == 0);
	CHECK(umount(p) == 0);
	CHECK(expect(s, MR_EVENT_UNMOUNT, p) == 0);
	return quiet(s);
}

/* Changes one after another, each seen once, in order. */
static int test_changes_in_order(void)
{
	mr_sub *s = all;
	char a[512], b[512], moved[512];

	tu_path(a, sizeof(a), root, "a");
	tu_path(b, sizeof(b), root, "b");
	tu_path(moved, sizeof(moved), root, "b/a");
	CHECK(tu_mkdir(a) == 0 && tu_mkdir(b) == 0);
	CHECK(mount("a", a, "tmpfs", 0, "size=64k") == 0);
	CHECK(expect(s, MR_EVENT_MOUNT, a) == 0);
	CHECK(mount("b", b, "tmpfs", 0, "size=64k") == 0);
	CHECK(expect(s, MR_EVENT_MOUNT, b) == 0);
	CHECK(tu_mkdir(moved) == 0);
	CHECK(mount(a, moved, NULL, MS_MOVE, NULL) == 0);
	CHECK(expect(s, MR_EVENT_MOVE, moved) == 0);
	CHECK(umount(moved) == 0);
	CHECK(expect(s, MR_EVENT_UNMOUNT, moved) == 0);
	CHECK(umount(b) == 0);
	CHECK(expect(s, MR_EVENT_UNMOUNT, b) == 0);
	return quiet(s);
}

static void *subscribe_later(void *arg)
{
	mr_sub **late = arg;
	struct mr_sub_opts so = {.size = sizeof(so), .subtree = root};

	usleep(100 * 1000);
	return (void *)(intptr_t)mr_subscribe(router, &so, late);
}

/* A subscription from another thread ends a wait with no change, and is in place after the dispatch. */
static int test_command_wakes(void)
{
	mr_sub *s = all;
	mr_sub *late = NULL;
	pthread_t t;
	void *rc;
	char p[512];

	CHECK(pthread_create(&t, NULL, subscribe_later, &late) == 0);
	CHECK(mr_router_wait(router, WAIT_MS) == 1);
	CHECK(pthread_join(t, &rc) == 0 && rc == NULL && late);
	CHECK(mr_router_dispatch(router) >= 0);
	tu_path(p, sizeof(p), root, "late");
	CHECK(tu_mkdir(p) == 0);
	CHECK(mount("late", p, "tmpfs", 0, "size=64k") == 0);
	CHECK(expect(s, MR_EVENT_MOUNT, p) == 0);
	CHECK(expect(late, MR_EVENT_MOUNT, p) == 0);
	CHECK(umount(p) == 0);
	CHECK(expect(s, MR_EVENT_UNMOUNT, p) == 0);
	CHECK(expect(late, MR_EVENT_UNMOUNT, p) == 0);
	mr_unsubscribe(late);
	settle(s);
	return quiet(s);
}

int main(int argc, char **argv)
{
	int fail = 0;
	int err = tu_router_on_private_root(argc > 1 ? argv[1] : "fanotify", root, sizeof(root),
					    &router, &all);

	if (err)
		return err;
	CHECK(mr_router_wait(NULL, 0) == -EINVAL);
	settle(all);

	fail |= RUN(test_quiet) == T_EXIT_FAIL;
	fail |= RUN(test_found_is_kept) == T_EXIT_FAIL;
	fail |= RUN(test_changes_in_order) == T_EXIT_FAIL;
	fail |= RUN(test_command_wakes) == T_EXIT_FAIL;

	/* Never beside the router's own thread. */
	CHECK(mr_router_start(router) == 0);
	CHECK(mr_router_wait(router, 0) == -EBUSY);
	CHECK(mr_router_stop(router) == 0);

	mr_unsubscribe(all);
	mr_router_free(router);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
