/* SPDX-License-Identifier: MIT */
/*
 * The router end to end on the host kernel, in a private mount namespace:
 * real mounts, binds, moves, remounts, setattrs, unmounts and shared-subtree
 * propagation, with the exact event sequence each subscriber must see.
 *
 * Usage: test_router SOURCE   (fanotify | mountinfo | watch_mount)
 *
 * Every operation waits for its events before the next: the mountinfo
 * source diffs whole tables and would otherwise (correctly) coalesce.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"
#include "mountrouter-uapi.h"
#include "testing.h"
#include "testutil.h"

/* The source when none is named: the VM build compiles in watch_mount. */
#ifndef MR_TEST_SOURCE
#define MR_TEST_SOURCE "fanotify"
#endif

#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct mount_attr_arg {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static const char *source;
static char root[256];
static mr_router *router;

#define WAIT_MS 5000

static int setattr(const char *path, uint64_t set, uint64_t clr)
{
	struct mount_attr_arg a = {.attr_set = set, .attr_clr = clr};

	return (int)syscall(__NR_mount_setattr, AT_FDCWD, path, 0, &a, sizeof(a));
}

static mr_sub *subscribe(const char *rel, uint32_t kinds, unsigned flags, uint32_t capacity)
{
	struct mr_sub_opts o = {.size = sizeof(o), .kinds = kinds, .flags = flags,
				.capacity = capacity};
	char p[512];
	mr_sub *s = NULL;

	o.subtree = rel ? tu_path(p, sizeof(p), root, rel) : root;
	if (mr_subscribe(router, &o, &s) < 0)
		return NULL;
	return s;
}

/* Takes the next event and checks its kind and path (relative to root). */
static int expect(mr_sub *s, uint32_t kind, const char *rel, const char *old_rel)
{
	char p[512], op[512];
	const struct mr_event *ev = tu_next(s, WAIT_MS, false);

	if (!ev) {
		fprintf(stderr, "timed out waiting for %s %s\n", mr_event_kind_name(kind), rel);
		return T_EXIT_FAIL;
	}
	if (ev->kind != kind || strcmp(ev->path, tu_path(p, sizeof(p), root, rel)) ||
	    (old_rel && strcmp(ev->old_path, tu_path(op, sizeof(op), root, old_rel)))) {
		fprintf(stderr, "expected %s %s%s%s, got %s %s (old %s)\n", mr_event_kind_name(kind),
			rel, old_rel ? " from " : "", old_rel ? old_rel : "",
			mr_event_kind_name(ev->kind), ev->path, ev->old_path);
		mr_event_unref(ev);
		return T_EXIT_FAIL;
	}
	mr_event_unref(ev);
	return 0;
}

/* Nothing more arrives within a short while. */
static int expect_quiet(mr_sub *s)
{
	const struct mr_event *ev = tu_next(s, 200, false);

	if (ev) {
		fprintf(stderr, "unexpected %s %s\n", mr_event_kind_name(ev->kind), ev->path);
		mr_event_unref(ev);
		return T_EXIT_FAIL;
	}
	return 0;
}

#define EXPECT(...) CHECK(expect(__VA_ARGS__) == 0)
#define QUIET(s) CHECK(expect_quiet(s) == 0)

static const char *at(const char *rel)
{
	static char bufs[4][512];
	static int i;

	i = (i + 1) % 4;
	return tu_path(bufs[i], sizeof(bufs[i]), root, rel);
}

static int test_lifecycle(void)
{
	mr_sub *all = subscribe(NULL, 0, 0, 0);
	mr_sub *a = subscribe("a", 0, 0, 0);
	mr_sub *ab = subscribe("ab", 0, 0, 0);
	const struct mr_event *ev;

	CHECK(all && a && ab);
	CHECK(tu_mkdir(at("a")) == 0 && tu_mkdir(at("ab")) == 0 && tu_mkdir(at("b")) == 0 &&
	      tu_mkdir(at("c")) == 0);

	/* mount */
	CHECK(mount("t1", at("a"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(all, MR_EVENT_MOUNT, "a", NULL);
	EXPECT(a, MR_EVENT_MOUNT, "a", NULL);
	QUIET(ab);

	/* bind: a second mount of the same tree, outside /a */
	CHECK(mount(at("a"), at("b"), NULL, MS_BIND, NULL) == 0);
	EXPECT(all, MR_EVENT_MOUNT, "b", NULL);

	/* move /b to /c: one MOVE with both paths */
	CHECK(mount(at("b"), at("c"), NULL, MS_MOVE, NULL) == 0);
	ev = tu_next(all, WAIT_MS, false);
	if (ev && ev->kind != MR_EVENT_MOVE)
		fprintf(stderr, "got %s %s\n", mr_event_kind_name(ev->kind), ev->path);
	CHECK(ev && ev->kind == MR_EVENT_MOVE);
	CHECK_STR(ev->path, at("c"));
	CHECK_STR(ev->old_path, at("b"));
	mr_event_unref(ev);

	/* read-only and back, by remount */
	CHECK(mount(NULL, at("a"), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	ev = tu_next(a, WAIT_MS, false);
	CHECK(ev && ev->kind == MR_EVENT_READONLY && (ev->flags & MR_EVF_READONLY));
	CHECK(!(ev->old_attr & MOUNT_ATTR_RDONLY) && (ev->attr & MOUNT_ATTR_RDONLY));
	mr_event_unref(ev);
	EXPECT(all, MR_EVENT_READONLY, "a", NULL);
	CHECK(mount(NULL, at("a"), NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
	ev = tu_next(a, WAIT_MS, false);
	CHECK(ev && ev->kind == MR_EVENT_READONLY && !(ev->flags & MR_EVF_READONLY));
	mr_event_unref(ev);
	EXPECT(all, MR_EVENT_READONLY, "a", NULL);

	/*
	 * mount_setattr(2): nosuid is an attribute change, not a read-only
	 * one.  ENOSYS: a kernel before 5.12, or valgrind 3.19, which does
	 * not know the syscall: that step alone is left out.
	 */
	if (setattr(at("a"), MOUNT_ATTR_NOSUID, 0) < 0 && errno == ENOSYS) {
		fprintf(stderr, "  no mount_setattr(2) here: its step left out\n");
	} else {
		ev = tu_next(a, WAIT_MS, false);
		CHECK(ev && ev->kind == MR_EVENT_ATTR && (ev->attr & MOUNT_ATTR_NOSUID) &&
		      !(ev->old_attr & MOUNT_ATTR_NOSUID));
		CHECK(strstr(ev->options, "nosuid") && !strstr(ev->old_options, "nosuid"));
		mr_event_unref(ev);
		EXPECT(all, MR_EVENT_ATTR, "a", NULL);
	}

	/* a remount that changes filesystem options only: ATTR, old and new options */
	CHECK(mount(NULL, at("a"), NULL, MS_REMOUNT, "size=2m") == 0);
	ev = tu_next(a, WAIT_MS, false);
	CHECK(ev && ev->kind == MR_EVENT_ATTR);
	CHECK(strstr(ev->options, "size=2048k") && strstr(ev->old_options, "size=1024k"));
	mr_event_unref(ev);
	/* its bind mount /c shares the superblock: its options changed too (any order) */
	for (int i = 0, seen_a = 0, seen_c = 0; i < 2; i++) {
		ev = tu_next(all, WAIT_MS, false);
		CHECK(ev && ev->kind == MR_EVENT_ATTR);
		seen_a += !strcmp(ev->path, at("a"));
		seen_c += !strcmp(ev->path, at("c"));
		mr_event_unref(ev);
		CHECK(seen_a <= 1 && seen_c <= 1);
	}

	/* unmount */
	CHECK(umount(at("c")) == 0);
	EXPECT(all, MR_EVENT_UNMOUNT, "c", NULL);
	CHECK(umount(at("a")) == 0);
	EXPECT(all, MR_EVENT_UNMOUNT, "a", NULL);
	EXPECT(a, MR_EVENT_UNMOUNT, "a", NULL);

	QUIET(all);
	QUIET(a);
	QUIET(ab);
	mr_unsubscribe(all);
	mr_unsubscribe(a);
	mr_unsubscribe(ab);
	return 0;
}

/* A mount under a shared mount propagates to its peer: two MOUNT events. */
static int test_propagation(void)
{
	mr_sub *s = subscribe("p", 0, 0, 0);
	bool seen_s = false, seen_t = false;

	CHECK(s);
	CHECK(tu_mkdir(at("p")) == 0);
	CHECK(mount("ptmp", at("p"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(s, MR_EVENT_MOUNT, "p", NULL);
	/*
	 * Making /p shared does not bump the namespace's event counter, so no
	 * mainline source hears of it then.  A remount that changes nothing
	 * does bump it: a source that must look at the whole table to find
	 * what a remount changed (fanotify, listmount) finds /p's propagation
	 * by the pass it brings, and the mountinfo source sees it in /p's
	 * line.  The ATTR is waited for before the bind: a bind straight after
	 * could share the remount's POLLPRI (a slow guest makes that likely),
	 * and then the change is only found within the verification bound.
	 */
	CHECK(mount(NULL, at("p"), NULL, MS_SHARED, NULL) == 0);
	CHECK(mount(NULL, at("p"), NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
	const struct mr_event *attr = tu_next(s, WAIT_MS, false);
	CHECK(attr && attr->kind == MR_EVENT_ATTR && !strcmp(attr->path, at("p")) &&
	      (attr->propagation & MS_SHARED) && !(attr->old_propagation & MS_SHARED));
	mr_event_unref(attr);
	CHECK(tu_mkdir(at("p/s")) == 0 && tu_mkdir(at("p/t")) == 0);
	CHECK(mount(at("p"), at("p/t"), NULL, MS_BIND, NULL) == 0);
	EXPECT(s, MR_EVENT_MOUNT, "p/t", NULL);

	/* /p and /p/t are peers: a mount on /p/s appears at /p/t/s too. */
	CHECK(mount("leaf", at("p/s"), "tmpfs", 0, "size=1m") == 0);
	for (int i = 0; i < 2; i++) {
		const struct mr_event *ev = tu_next(s, WAIT_MS, false);
		CHECK(ev && ev->kind == MR_EVENT_MOUNT);
		seen_s |= !strcmp(ev->path, at("p/s"));
		seen_t |= !strcmp(ev->path, at("p/t/s"));
		mr_event_unref(ev);
	}
	CHECK(seen_s && seen_t);
	QUIET(s);

	CHECK(umount2(at("p"), MNT_DETACH) == 0);
	/* Lazy unmount of the tree: one UNMOUNT per mount, children included. */
	int unmounts = 0;
	const struct mr_event *ev;
	while ((ev = tu_next(s, 500, false))) {
		unmounts += ev->kind == MR_EVENT_UNMOUNT;
		mr_event_unref(ev);
	}
	if (unmounts != 4)
		fprintf(stderr, "%d unmounts for the lazily unmounted tree\n", unmounts);
	CHECK(unmounts == 4);
	mr_unsubscribe(s);
	return 0;
}

/* Moving a tree moves every mount in it: each gets its MOVE, parent first. */
static int test_tree_move(void)
{
	mr_sub *s = subscribe("tm", 0, 0, 0);

	CHECK(s);
	CHECK(tu_mkdir(at("tm")) == 0);
	CHECK(mount("tm", at("tm"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(s, MR_EVENT_MOUNT, "tm", NULL);
	CHECK(tu_mkdir(at("tm/a")) == 0 && tu_mkdir(at("tm/b")) == 0);
	CHECK(mount("a", at("tm/a"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(s, MR_EVENT_MOUNT, "tm/a", NULL);
	CHECK(tu_mkdir(at("tm/a/x")) == 0);
	CHECK(mount("x", at("tm/a/x"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(s, MR_EVENT_MOUNT, "tm/a/x", NULL);

	CHECK(mount(at("tm/a"), at("tm/b"), NULL, MS_MOVE, NULL) == 0);
	EXPECT(s, MR_EVENT_MOVE, "tm/b", "tm/a");
	EXPECT(s, MR_EVENT_MOVE, "tm/b/x", "tm/a/x");
	QUIET(s);

	CHECK(umount2(at("tm"), MNT_DETACH) == 0);
	int unmounts = 0;
	const struct mr_event *ev;
	while ((ev = tu_next(s, 500, false))) {
		unmounts += ev->kind == MR_EVENT_UNMOUNT;
		mr_event_unref(ev);
	}
	CHECK(unmounts == 3);
	mr_unsubscribe(s);
	return 0;
}

/*
 * A snapshot comes before any event, even when the router has changes in
 * hand that it has not routed yet (the mountinfo source spaces its reads
 * while changes keep coming, and reads what it put off when a subscriber
 * joins): those changes are in the snapshot, and must not also come first.
 */
static int test_snapshot_first(void)
{
	char rel[64];

	mr_sub *all = subscribe("first", 0, 0, 0);

	CHECK(all);
	CHECK(tu_mkdir(at("first")) == 0);
	CHECK(mount("first", at("first"), "tmpfs", 0, "size=1m") == 0);
	for (int i = 0; i < 40; i++) {
		/* Two changes back to back: the second read may be put off. */
		snprintf(rel, sizeof(rel), "first/a%d", i);
		CHECK(tu_mkdir(at(rel)) == 0);
		CHECK(mount("a", at(rel), "tmpfs", 0, "size=1m") == 0);
		snprintf(rel, sizeof(rel), "first/b%d", i);
		CHECK(tu_mkdir(at(rel)) == 0);
		CHECK(mount("b", at(rel), "tmpfs", 0, "size=1m") == 0);
		mr_sub *s = subscribe("first", 0, MR_SUB_SNAPSHOT, 0);
		CHECK(s);
		const struct mr_event *ev = tu_next(s, WAIT_MS, false);
		if (!ev || ev->kind != MR_EVENT_SNAPSHOT) {
			fprintf(stderr, "round %d: the first event is %s %s, not the snapshot\n", i,
				ev ? mr_event_kind_name(ev->kind) : "none", ev ? ev->path : "");
			return T_EXIT_FAIL;
		}
		CHECK(ev->flags & MR_EVF_LATE_JOIN);
		mr_event_unref(ev);
		mr_unsubscribe(s);
		/* Both mounts seen before the next round: else they may coalesce. */
		if (i == 0)
			EXPECT(all, MR_EVENT_MOUNT, "first", NULL);
		snprintf(rel, sizeof(rel), "first/a%d", i);
		EXPECT(all, MR_EVENT_MOUNT, rel, NULL);
		snprintf(rel, sizeof(rel), "first/b%d", i);
		EXPECT(all, MR_EVENT_MOUNT, rel, NULL);
	}
	/* Gone before the next test, whose mounts may reuse these IDs. */
	CHECK(umount2(at("first"), MNT_DETACH) == 0);
	int unmounts = 0;
	const struct mr_event *ev;
	while (unmounts < 81 && (ev = tu_next(all, WAIT_MS, false))) {
		unmounts += ev->kind == MR_EVENT_UNMOUNT;
		mr_event_unref(ev);
	}
	CHECK(unmounts == 81);
	mr_unsubscribe(all);
	return 0;
}

/* A subscriber joining late gets its subtree first, then what follows. */
static int test_late_join_snapshot(void)
{
	CHECK(tu_mkdir(at("late")) == 0);
	CHECK(mount("late", at("late"), "tmpfs", 0, "size=1m") == 0);
	CHECK(tu_mkdir(at("late/x")) == 0);
	CHECK(mount("x", at("late/x"), "tmpfs", 0, "size=1m,mode=700") == 0);

	/* Let the router see both mounts before subscribing. */
	mr_sub *probe = subscribe("late", 0, MR_SUB_SNAPSHOT, 0);
	CHECK(probe);
	const struct mr_event *ev = tu_next(probe, WAIT_MS, false);
	for (int tries = 0; ev && ev->kind == MR_EVENT_SNAPSHOT && ev->n_mounts < 2 && tries < 50;
	     tries++) {
		mr_event_unref(ev);
		mr_unsubscribe(probe);
		usleep(20000);
		probe = subscribe("late", 0, MR_SUB_SNAPSHOT, 0);
		ev = tu_next(probe, WAIT_MS, false);
	}
	CHECK(ev && ev->kind == MR_EVENT_SNAPSHOT && (ev->flags & MR_EVF_LATE_JOIN));
	CHECK_EQ_U64(ev->n_mounts, 2);
	CHECK_STR(ev->mounts[0].path, at("late"));
	CHECK_STR(ev->mounts[1].path, at("late/x"));
	CHECK_STR(ev->mounts[1].fstype, "tmpfs");
	/* statmount reports no source before STATMOUNT_SB_SOURCE (6.13). */
	if (!strcmp(source, "mountinfo") || mr__probe()->statmount_sb_source)
		CHECK_STR(ev->mounts[1].source, "x");
	CHECK(strstr(ev->mounts[1].options, "mode=700"));
	mr_event_unref(ev);

	CHECK(umount(at("late/x")) == 0);
	EXPECT(probe, MR_EVENT_UNMOUNT, "late/x", NULL);
	CHECK(umount(at("late")) == 0);
	EXPECT(probe, MR_EVENT_UNMOUNT, "late", NULL);
	mr_unsubscribe(probe);
	return 0;
}

/*
 * The kind mask: an unmount-only subscriber sees nothing of mounts.  A
 * second, unfiltered subscriber paces the test: a mount unmounted before
 * the router has looked it up is, by design, reported by neither event.
 */
static int test_kind_mask(void)
{
	mr_sub *s = subscribe("k", MR_KIND(MR_EVENT_UNMOUNT), 0, 0);
	mr_sub *pace = subscribe("k", 0, 0, 0);

	CHECK(s && pace);
	CHECK(tu_mkdir(at("k")) == 0);
	CHECK(mount("k", at("k"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(pace, MR_EVENT_MOUNT, "k", NULL);
	CHECK(mount(NULL, at("k"), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	EXPECT(pace, MR_EVENT_READONLY, "k", NULL);
	CHECK(umount(at("k")) == 0);
	EXPECT(pace, MR_EVENT_UNMOUNT, "k", NULL);
	EXPECT(s, MR_EVENT_UNMOUNT, "k", NULL);
	QUIET(s);
	mr_unsubscribe(s);
	mr_unsubscribe(pace);
	return 0;
}

/* 1,000 subscribers on different subtrees: each sees exactly its own mounts. */
static int test_thousand_subscribers(void)
{
	enum { SUBS = 1000, MOUNTED = 25 };
	static mr_sub *subs[SUBS];
	char rel[64];

	CHECK(tu_mkdir(at("many")) == 0);
	for (int i = 0; i < SUBS; i++) {
		snprintf(rel, sizeof(rel), "many/d%d", i);
		CHECK(tu_mkdir(at(rel)) == 0);
		subs[i] = subscribe(rel, 0, 0, 64);
		CHECK(subs[i]);
	}
	/* Mount into every 40th subtree. */
	for (int i = 0; i < SUBS; i += SUBS / MOUNTED) {
		snprintf(rel, sizeof(rel), "many/d%d", i);
		CHECK(mount("m", at(rel), "tmpfs", 0, "size=1m") == 0);
	}
	for (int i = 0; i < SUBS; i++) {
		snprintf(rel, sizeof(rel), "many/d%d", i);
		if (i % (SUBS / MOUNTED) == 0) {
			EXPECT(subs[i], MR_EVENT_MOUNT, rel, NULL);
			CHECK(umount(at(rel)) == 0);
			EXPECT(subs[i], MR_EVENT_UNMOUNT, rel, NULL);
		}
	}
	for (int i = 0; i < SUBS; i++) {
		const struct mr_event *ev;
		CHECK(mr_sub_next(subs[i], &ev) == -EAGAIN);
		mr_unsubscribe(subs[i]);
	}
	return 0;
}

/*
 * A subscriber that never reads fills its ring; the others keep getting
 * every event; when it reads again it gets an OVERRUN marker and a SNAPSHOT
 * that equals the truth.
 */
static int test_stalled_subscriber(void)
{
	enum { MOUNTS = 60 };
	mr_sub *stalled = subscribe("st", 0, 0, 16);
	mr_sub *live = subscribe("st", 0, 0, 4096);
	char rel[64];

	CHECK(stalled && live);
	CHECK(tu_mkdir(at("st")) == 0);
	for (int i = 0; i < MOUNTS; i++) {
		snprintf(rel, sizeof(rel), "st/m%d", i);
		CHECK(tu_mkdir(at(rel)) == 0);
		CHECK(mount("st", at(rel), "tmpfs", 0, "size=1m") == 0);
	}
	for (int i = 0; i < MOUNTS; i++) {
		snprintf(rel, sizeof(rel), "st/m%d", i);
		EXPECT(live, MR_EVENT_MOUNT, rel, NULL);
	}
	QUIET(live);

	/* The stalled one: what fitted, then the marker, then the whole subtree. */
	int changes = 0;
	const struct mr_event *ev;
	while ((ev = tu_next(stalled, WAIT_MS, false)) && ev->kind == MR_EVENT_MOUNT) {
		changes++;
		mr_event_unref(ev);
	}
	CHECK(ev && ev->kind == MR_EVENT_OVERRUN && (ev->flags & MR_EVF_RING_LOSS));
	CHECK_EQ_U64(ev->lost + (uint64_t)changes, MOUNTS);
	CHECK(changes == 16 - 1 - 4); /* the ring's own slot, four for markers */
	mr_event_unref(ev);
	ev = tu_next(stalled, WAIT_MS, false);
	CHECK(ev && ev->kind == MR_EVENT_SNAPSHOT);
	CHECK_EQ_U64(ev->n_mounts, MOUNTS);
	mr_event_unref(ev);

	struct mr_sub_stats st;
	CHECK(mr_sub_stats(stalled, &st) == 0);
	CHECK(st.overruns == 1 && st.snapshots == 1 && st.dropped == MOUNTS - (16 - 1 - 4));

	for (int i = 0; i < MOUNTS; i++) {
		snprintf(rel, sizeof(rel), "st/m%d", i);
		CHECK(umount(at(rel)) == 0);
		EXPECT(live, MR_EVENT_UNMOUNT, rel, NULL);
		EXPECT(stalled, MR_EVENT_UNMOUNT, rel, NULL);
	}
	mr_unsubscribe(stalled);
	mr_unsubscribe(live);
	return 0;
}

/*
 * The way container runtimes make a read-only bind mount: MS_BIND, then at
 * once MS_REMOUNT|MS_BIND|MS_RDONLY, many in a row.  Each remount lands
 * among attach records; every mount must still end read-only in what the
 * subscriber saw, whether its MOUNT already said so or a READONLY followed.
 */
#define RO_BINDS 40
static int test_readonly_binds(void)
{
	mr_sub *s = subscribe("ro", 0, 0, 0);
	bool seen[RO_BINDS] = {0}, ro[RO_BINDS] = {0};
	unsigned n_ro = 0;
	char p[64];

	CHECK(s);
	CHECK(tu_mkdir(at("src")) == 0 && tu_mkdir(at("ro")) == 0);
	CHECK(mount("src", at("src"), "tmpfs", 0, "size=1m") == 0);
	for (unsigned i = 0; i < RO_BINDS; i++) {
		snprintf(p, sizeof(p), "ro/%u", i);
		CHECK(tu_mkdir(at(p)) == 0);
		CHECK(mount(at("src"), at(p), NULL, MS_BIND, NULL) == 0);
		CHECK(mount(NULL, at(p), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	}
	while (n_ro < RO_BINDS) {
		const struct mr_event *ev = tu_next(s, WAIT_MS, false);
		unsigned i;

		if (!ev) {
			fprintf(stderr, "%u of %u binds seen read-only\n", n_ro, RO_BINDS);
			return T_EXIT_FAIL;
		}
		CHECK(sscanf(ev->path + strlen(at("ro")), "/%u", &i) == 1 && i < RO_BINDS);
		CHECK(ev->kind == MR_EVENT_MOUNT || ev->kind == MR_EVENT_READONLY);
		CHECK(seen[i] == (ev->kind == MR_EVENT_READONLY)); /* MOUNT first, once */
		seen[i] = true;
		if (!ro[i] && (ev->attr & MOUNT_ATTR_RDONLY)) {
			ro[i] = true;
			n_ro++;
		}
		mr_event_unref(ev);
	}
	QUIET(s);
	for (unsigned i = 0; i < RO_BINDS; i++) {
		snprintf(p, sizeof(p), "ro/%u", i);
		CHECK(umount(at(p)) == 0);
		EXPECT(s, MR_EVENT_UNMOUNT, p, NULL);
	}
	/*
	 * Waited for: on mountinfo, the pass that reports this umount, still
	 * reading the table when the next test subscribes and mounts, would
	 * report that mount too, before those subscriptions are in place.
	 */
	mr_sub *gone = subscribe("src", MR_KIND(MR_EVENT_UNMOUNT), 0, 0);
	CHECK(gone);
	CHECK(umount(at("src")) == 0);
	EXPECT(gone, MR_EVENT_UNMOUNT, "src", NULL);
	mr_unsubscribe(gone);
	mr_unsubscribe(s);
	return 0;
}

/*
 * An umount that takes a mount's parent away re-parents the mount on top of
 * it onto the grandparent, at the same path (mainline's mount-notify
 * selftest "reparent"): a subscriber of moves hears of it.
 */
static int test_reparent(void)
{
	mr_sub *moves = subscribe("rp", MR_KIND(MR_EVENT_MOVE), 0, 0);
	mr_sub *all = subscribe("rp", 0, 0, 0);
	const struct mr_event *ev;

	CHECK(moves && all);
	CHECK(tu_mkdir(at("rp")) == 0);
	CHECK(mount("rp", at("rp"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(all, MR_EVENT_MOUNT, "rp", NULL);
	CHECK(tu_mkdir(at("rp/a")) == 0 && tu_mkdir(at("rp/b")) == 0);
	CHECK(mount("a", at("rp/a"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(all, MR_EVENT_MOUNT, "rp/a", NULL);
	/*
	 * Propagation changes tell fanotify and mountinfo nothing (an attr
	 * event comes only if a sweep runs): drain whatever arrives.
	 */
	CHECK(mount(NULL, at("rp/a"), NULL, MS_SHARED, NULL) == 0);
	CHECK(mount(at("rp/a"), at("rp/b"), NULL, MS_BIND, NULL) == 0);
	CHECK(mount(NULL, at("rp/b"), NULL, MS_SLAVE, NULL) == 0);
	CHECK(tu_mkdir(at("rp/a/x")) == 0);
	CHECK(mount("x", at("rp/a/x"), "tmpfs", 0, "size=1m") == 0);
	/* On top of the copy only: rp/b is a slave, nothing goes back. */
	CHECK(mount("top", at("rp/b/x"), "tmpfs", 0, "size=1m") == 0);
	while ((ev = tu_next(all, 500, false)))
		mr_event_unref(ev);
	CHECK(umount(at("rp/a/x")) == 0);
	/* The copy goes with it; the one on top now sits on rp/b. */
	EXPECT(moves, MR_EVENT_MOVE, "rp/b/x", "rp/b/x");
	QUIET(moves);
	CHECK(umount2(at("rp"), MNT_DETACH) == 0);
	while ((ev = tu_next(all, 500, false)))
		mr_event_unref(ev);
	mr_unsubscribe(moves);
	mr_unsubscribe(all);
	return 0;
}

/*
 * Changes made back to back, without waiting: every one is reported once.
 * The mountinfo source spaces its reads (a read waits for the previous
 * one's duration) and so answers most of these POLLPRIs with a later read;
 * nothing may be lost doing so.
 */
#define BURST 64

static int collect_burst(mr_sub *s, uint32_t kind, unsigned n_expected, const char *what)
{
	bool seen[BURST + 1] = {false};
	char p[512];

	for (unsigned got = 0; got < n_expected; got++) {
		const struct mr_event *ev = tu_next(s, WAIT_MS, false);
		int i = -1;

		if (!ev) {
			fprintf(stderr, "%s: timed out after %u of %u events\n", what, got, n_expected);
			return T_EXIT_FAIL;
		}
		if (!strcmp(ev->path, at("burst")))
			i = BURST;
		for (int k = 0; k < BURST && i < 0; k++) {
			snprintf(p, sizeof(p), "burst/b%d", k);
			if (!strcmp(ev->path, at(p)))
				i = k;
		}
		if (ev->kind != kind || i < 0 || seen[i]) {
			fprintf(stderr, "%s: unexpected %s %s\n", what, mr_event_kind_name(ev->kind),
				ev->path);
			mr_event_unref(ev);
			return T_EXIT_FAIL;
		}
		seen[i] = true;
		mr_event_unref(ev);
	}
	return 0;
}

static int test_burst(void)
{
	mr_sub *s = subscribe("burst", MR_KIND(MR_EVENT_MOUNT) | MR_KIND(MR_EVENT_UNMOUNT), 0, 0);
	struct mr_stats before, after;
	char p[512];

	CHECK(s && tu_mkdir(at("burst")) == 0);
	CHECK(mount("burst", at("burst"), "tmpfs", 0, "size=1m") == 0);
	EXPECT(s, MR_EVENT_MOUNT, "burst", NULL);
	for (int k = 0; k < BURST; k++) {
		snprintf(p, sizeof(p), "burst/b%d", k);
		CHECK(tu_mkdir(at(p)) == 0);
	}
	mr_router_stats(router, &before);
	for (int k = 0; k < BURST; k++) {
		snprintf(p, sizeof(p), "burst/b%d", k);
		CHECK(mount("b", at(p), "tmpfs", 0, "size=1m") == 0);
	}
	CHECK(collect_burst(s, MR_EVENT_MOUNT, BURST, "mounts") == 0);
	mr_router_stats(router, &after);
	fprintf(stderr, "%d mounts back to back: %llu table reads\n", BURST,
		(unsigned long long)(after.sweeps - before.sweeps));
	QUIET(s);
	CHECK(umount2(at("burst"), MNT_DETACH) == 0);
	CHECK(collect_burst(s, MR_EVENT_UNMOUNT, BURST + 1, "unmounts") == 0);
	QUIET(s);
	mr_unsubscribe(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct mr_opts o = {.size = sizeof(o)};
	int fail = 0, err;

	source = argc > 1 ? argv[1] : MR_TEST_SOURCE;
	err = tu_private_root(root, sizeof(root));
	if (err)
		return err;
	o.source = source;
	err = mr_router_new(&o, &router);
	if (err == -ENOSYS)
		return tu_skip("the %s source is not available on this kernel", source);
	if (err < 0) {
		fprintf(stderr, "mr_router_new(%s): %s\n", source, strerror(-err));
		return T_EXIT_FAIL;
	}
	CHECK_STR(mr_router_source(router), source);
	/* The backend the source reads best through: epoll for fanotify, io_uring otherwise. */
	CHECK_STR(mr__testing_reactor_backend(router), tu_expected_backend(source, 0));
	CHECK(mr_router_start(router) == 0);

	fail |= RUN(test_lifecycle);
	fail |= RUN(test_propagation);
	fail |= RUN(test_tree_move);
	fail |= RUN(test_late_join_snapshot);
	fail |= RUN(test_snapshot_first);
	fail |= RUN(test_kind_mask);
	fail |= RUN(test_thousand_subscribers);
	fail |= RUN(test_stalled_subscriber);
	fail |= RUN(test_readonly_binds);
	fail |= RUN(test_reparent);
	fail |= RUN(test_burst);

	struct mr_stats st;
	mr_router_stats(router, &st);
	fprintf(stderr, "records %llu routed %llu deliveries %llu drops %llu losses %llu syscalls %llu\n",
		(unsigned long long)st.records_read, (unsigned long long)st.events_routed,
		(unsigned long long)st.deliveries, (unsigned long long)st.ring_drops,
		(unsigned long long)st.kernel_losses, (unsigned long long)st.syscalls);
	mr_router_free(router);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
