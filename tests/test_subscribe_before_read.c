/* SPDX-License-Identifier: MIT */
/*
 * A subscription made before a change sees that change, on the sources
 * that read the table when told it changed (listmount, mountinfo, and
 * fanotify's pass for attribute changes).  Such a source is woken by a
 * POLLPRI that an earlier change queued; a caller may subscribe and change
 * the table after the router took the commands in hand and before the
 * source reads: the read then finds the change, and routing it before the
 * subscription is in place would lose it for good (the next read finds
 * nothing new).  A hook (mr__testing_before_read) makes that gap certain:
 * it subscribes and changes the table at the moment the source reads.
 * The same holds for the read of a resync after a kernel loss, on every
 * source (mr__testing_lose makes the loss).
 *
 * Usage: test_subscribe_before_read SOURCE   (listmount | mountinfo | fanotify)
 * Labels: kernel, root.  MR_TEST_REACTOR picks the backend.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "testing.h"
#include "testutil.h"

#define WAIT_MS 5000

static char root[256];
static const char *source;
static mr_router *router;
static mr_sub *all; /* on the whole root, from the start */

/* What the hook does, on the router's thread, as a caller's thread would. */
static struct late {
	const char *subtree_rel; /* subscribes here ... */
	const char *mount_rel;   /* ... then mounts a tmpfs here, or */
	const char *ro_rel;      /* ... makes this mount read-only */
	mr_sub *sub;
	int err;
} late;

static const char *at(char *buf, size_t n, const char *rel)
{
	return tu_path(buf, n, root, rel);
}

static void subscribe_then_change(void *arg)
{
	struct late *l = arg;
	char sub_at[512], p[512];
	struct mr_sub_opts so = {.size = sizeof(so), .subtree = at(sub_at, sizeof(sub_at),
								    l->subtree_rel)};

	l->err = mr_subscribe(router, &so, &l->sub);
	if (l->err < 0)
		return;
	if (l->mount_rel)
		l->err = mount("late", at(p, sizeof(p), l->mount_rel), "tmpfs", 0, "size=64k");
	else
		l->err = mount(NULL, at(p, sizeof(p), l->ro_rel), NULL,
			       MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
	if (l->err < 0)
		l->err = -errno;
}

/* Runs the router on this thread until @s holds an event or @ms pass. */
static const struct mr_event *pump(mr_sub *s, int ms)
{
	const struct mr_event *ev;

	for (int waited = 0; waited < ms; waited += 10) {
		struct pollfd p = {.fd = mr_router_fd(router), .events = POLLIN};
		if (mr_sub_next(s, &ev) == 0)
			return ev;
		poll(&p, 1, 10);
		mr_router_dispatch(router);
	}
	return mr_sub_next(s, &ev) == 0 ? ev : NULL;
}

/*
 * Runs the router until nothing comes for 300 ms, so that a read the last
 * changes left queued (a POLLPRI, a read put off in a burst) is done before
 * a test sets the hook: the hook must meet the read that test causes.
 */
static void settle(void)
{
	const struct mr_event *ev;

	while ((ev = pump(all, 300)))
		mr_event_unref(ev);
}

/* The next event of @s, with markers and snapshots passed over, is @kind at @rel. */
static int expect(mr_sub *s, uint32_t kind, const char *rel)
{
	char p[512];
	const struct mr_event *ev;

	while ((ev = pump(s, WAIT_MS)) &&
	       (ev->kind == MR_EVENT_RESYNC_BEGIN || ev->kind == MR_EVENT_RESYNC_END))
		mr_event_unref(ev);
	if (!ev) {
		fprintf(stderr, "timed out waiting for %s %s\n", mr_event_kind_name(kind), rel);
		return T_EXIT_FAIL;
	}
	int ok = ev->kind == kind && !strcmp(ev->path, at(p, sizeof(p), rel));
	if (!ok)
		fprintf(stderr, "expected %s %s, got %s %s\n", mr_event_kind_name(kind), rel,
			mr_event_kind_name(ev->kind), ev->path);
	mr_event_unref(ev);
	return ok ? 0 : T_EXIT_FAIL;
}

/* The next two events of @s are @kind at @rel1 and at @rel2, in either order. */
static int expect_both(mr_sub *s, uint32_t kind, const char *rel1, const char *rel2)
{
	char p1[512], p2[512];
	bool seen1 = false, seen2 = false;

	at(p1, sizeof(p1), rel1);
	at(p2, sizeof(p2), rel2);
	while (!seen1 || !seen2) {
		const struct mr_event *ev = pump(s, WAIT_MS);
		if (!ev) {
			fprintf(stderr, "timed out waiting for %s %s\n", mr_event_kind_name(kind),
				seen1 ? rel2 : rel1);
			return T_EXIT_FAIL;
		}
		bool marker = ev->kind == MR_EVENT_RESYNC_BEGIN || ev->kind == MR_EVENT_RESYNC_END;
		bool is1 = ev->kind == kind && !strcmp(ev->path, p1) && !seen1;
		bool is2 = ev->kind == kind && !strcmp(ev->path, p2) && !seen2;
		if (!marker && !is1 && !is2) {
			fprintf(stderr, "expected %s %s and %s, got %s %s\n", mr_event_kind_name(kind),
				rel1, rel2, mr_event_kind_name(ev->kind), ev->path);
			mr_event_unref(ev);
			return T_EXIT_FAIL;
		}
		seen1 |= is1;
		seen2 |= is2;
		mr_event_unref(ev);
	}
	return 0;
}

/*
 * An attach wakes the source; before its read, a subscriber joins on
 * another subtree and mounts there.  The read finds both mounts.  Not on
 * fanotify: attaches come as records, read before commands are applied.
 */
static int test_mount_after_subscribe(void)
{
	char p[512];

	if (!strcmp(source, "fanotify"))
		return T_EXIT_SKIP;

	CHECK(tu_mkdir(at(p, sizeof(p), "wake")) == 0);
	CHECK(tu_mkdir(at(p, sizeof(p), "late")) == 0);
	CHECK(tu_mkdir(at(p, sizeof(p), "late/m")) == 0);
	late = (struct late){.subtree_rel = "late", .mount_rel = "late/m"};
	mr__testing_before_read(router, subscribe_then_change, &late);
	CHECK(mount("wake", at(p, sizeof(p), "wake"), "tmpfs", 0, "size=64k") == 0);
	CHECK(expect_both(all, MR_EVENT_MOUNT, "wake", "late/m") == 0);
	CHECK(late.sub && late.err == 0);
	CHECK(expect(late.sub, MR_EVENT_MOUNT, "late/m") == 0);
	mr_unsubscribe(late.sub);
	return 0;
}

/*
 * A remount wakes the source (fanotify: its pass); before the read, a
 * subscriber joins and makes a mount read-only.  The read finds both.
 */
static int test_remount_after_subscribe(void)
{
	char p[512];

	CHECK(tu_mkdir(at(p, sizeof(p), "wake")) == 0 || errno == EEXIST);
	if (!strcmp(source, "fanotify")) {
		CHECK(mount("wake", at(p, sizeof(p), "wake"), "tmpfs", 0, "size=64k") == 0);
		CHECK(expect(all, MR_EVENT_MOUNT, "wake") == 0);
	}
	CHECK(tu_mkdir(at(p, sizeof(p), "ro")) == 0);
	CHECK(tu_mkdir(at(p, sizeof(p), "ro/m")) == 0);
	CHECK(mount("m", at(p, sizeof(p), "ro/m"), "tmpfs", 0, "size=64k") == 0);
	CHECK(expect(all, MR_EVENT_MOUNT, "ro/m") == 0);
	late = (struct late){.subtree_rel = "ro", .ro_rel = "ro/m"};
	mr__testing_before_read(router, subscribe_then_change, &late);
	CHECK(mount(NULL, at(p, sizeof(p), "wake"), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) ==
	      0);
	CHECK(expect_both(all, MR_EVENT_READONLY, "wake", "ro/m") == 0);
	CHECK(late.sub && late.err == 0);
	CHECK(expect(late.sub, MR_EVENT_READONLY, "ro/m") == 0);
	mr_unsubscribe(late.sub);
	return 0;
}

/*
 * After a kernel loss the router reads the whole table (a resync); before
 * that read, a subscriber joins and mounts.  The read finds the mount, and
 * the resync must route it to the new subscriber: RESYNC_BEGIN, the mount
 * as a synthetic MOUNT, RESYNC_END, and nothing after (a record of the same
 * mount read later finds it known).  Every source resyncs the same way.
 */
static int test_mount_during_resync(void)
{
	static const uint32_t order[] = {MR_EVENT_RESYNC_BEGIN, MR_EVENT_MOUNT,
					 MR_EVENT_RESYNC_END};
	char p[512];
	const struct mr_event *ev;

	CHECK(tu_mkdir(at(p, sizeof(p), "lost")) == 0);
	CHECK(tu_mkdir(at(p, sizeof(p), "lost/m")) == 0);
	late = (struct late){.subtree_rel = "lost", .mount_rel = "lost/m"};
	mr__testing_before_read(router, subscribe_then_change, &late);
	mr__testing_lose(router);
	CHECK(expect(all, MR_EVENT_MOUNT, "lost/m") == 0);
	CHECK(late.sub && late.err == 0);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		ev = pump(late.sub, WAIT_MS);
		CHECK(ev);
		if (ev->kind != order[i])
			fprintf(stderr, "event %zu: expected %s, got %s %s\n", i,
				mr_event_kind_name(order[i]), mr_event_kind_name(ev->kind),
				ev->path ? ev->path : "");
		bool ok = ev->kind == order[i] &&
			  (ev->kind != MR_EVENT_MOUNT || (!strcmp(ev->path, at(p, sizeof(p), "lost/m")) &&
							  (ev->flags & MR_EVF_SYNTHETIC)));
		mr_event_unref(ev);
		CHECK(ok);
	}
	ev = pump(late.sub, 300);
	if (ev)
		fprintf(stderr, "after the resync: %s %s\n", mr_event_kind_name(ev->kind),
			ev->path ? ev->path : "");
	CHECK(!ev);
	mr_unsubscribe(late.sub);
	return 0;
}

int main(int argc, char **argv)
{
	int fail = 0, err;

	source = argc > 1 ? argv[1] : "listmount";
	err = tu_router_on_private_root(source, root, sizeof(root), &router, &all);
	if (err)
		return err;
	/* Before each test: the start-up work (a first pass) or the last test's reads done. */
	settle();
	fail |= RUN(test_mount_after_subscribe) == T_EXIT_FAIL;
	settle();
	fail |= RUN(test_remount_after_subscribe) == T_EXIT_FAIL;
	settle();
	fail |= RUN(test_mount_during_resync) == T_EXIT_FAIL;

	mr_unsubscribe(all);
	mr_router_free(router);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
