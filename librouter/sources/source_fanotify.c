/* SPDX-License-Identifier: MIT */
/*
 * The fanotify source (Linux 6.15+): each mount namespace is a
 * FAN_MARK_MNTNS mark for FAN_MNT_ATTACH|FAN_MNT_DETACH on the router's one
 * FAN_REPORT_MNT group (fanotify_group.c), which hands each record to its
 * namespace.  Records carry only the 64-bit mount ID; statmount(2)
 * supplies the rest.
 * Attach, detach, move, bind and propagated copies each cost one record and
 * one statmount: O(1), whatever the size of the table.
 *
 * On the project's kernel, the mark also asks for FAN_MNT_ATTR_CHANGE
 * (kernel/patches/0021), which names the mount of every remount,
 * mount_setattr(2), propagation and idmapping change: then every change is
 * one record and one statmount, and nothing below is needed.
 *
 * Mainline fanotify says nothing about remounts, mount_setattr(2) or
 * propagation changes.  Remounts and mount_setattr(2) still bump the
 * namespace's event counter, which makes /proc/PID/mountinfo poll with
 * POLLPRI (attach and detach bump it too), so the source polls mountinfo,
 * never reading it unless it must:
 *  - a POLLPRI followed by a record within 1 ms (or preceded by one in the
 *    same batch) is that record's, one record for one POLLPRI
 *    (pass_schedule.c);
 *  - one no record explains is first checked against the mounts that
 *    arrived in the last RECENT_NS (a bind made read-only at once, as
 *    container runtimes do): a statmount of their flags each;
 *  - if that finds nothing, the mount that changed could be any: a pass
 *    (attr_pass.c) reads mountinfo once and looks up in full only the
 *    mounts whose line changed, no dearer than a poller's re-read.
 * Passes run only while some subscriber asks for READONLY or ATTR events;
 * while none does, mountinfo is not even polled (a change then costs one
 * wake-up, not two) and a snapshot is settled by a pass first.  A
 * propagation change (MS_SHARED, ...) bumps nothing: the next pass sees it.
 *
 * What can come late, and how late, is stated in mountrouter.h above
 * struct mr_sub_opts: a remount that shares its POLLPRI with an attach or
 * detach on another mount is found by the verification pass that follows a
 * burst of changes, or, after a lone one, within MR__PASS_VERIFY_DUTY times
 * a pass's cost of work on records (pass_schedule.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "io/reactor.h"
#include "namespace.h"
#include "probe.h"
#include "router/upcalls.h"
#include "sources/attr_pass.h"
#include "sources/decode.h"
#include "sources/fanotify_group.h"
#include "sources/pass_schedule.h"
#include "sources/source.h"
#include "mountrouter-uapi.h"

#define RECENT_NS 10000000ull /* 10 ms */
#define RECENT_MAX 32

/* A mount that arrived lately, when it did. */
struct recent_mount {
	uint64_t id, at_ns;
};

struct fan_state {
	struct mr__source_base base; /* first: the reactor's release finds it */
	struct mr__ns *ns;
	struct mr__fan_member member;
	struct mr__watch mi_watch;
	struct mr__source_timer timer;
	struct recent_mount recent[RECENT_MAX]; /* a ring, oldest overwritten */
	unsigned recent_next;
	struct mr__pass_clock clock;
	bool blind;              /* mountinfo went unpolled since the last pass */
	struct mr__attr_pass pass; /* mountinfo as passes read it */
	int bell_fd;               /* mountinfo again, only polled */
};

static int fan_probe(void)
{
	const struct mr__features *f = mr__probe();

	if (!f->fanotify_mnt)
		return f->fanotify_err ? f->fanotify_err : -ENOSYS;
	if (!f->listmount)
		return -ENOSYS;
	return 0;
}

static void state_free(void *p)
{
	struct fan_state *st = p;

	mr__attr_pass_free(&st->pass);
	if (st->bell_fd >= 0)
		close(st->bell_fd);
	mr__free(st);
}

/* A record of this namespace was applied (fanotify_group.c). */
static void on_applied(struct mr__fan_member *m, const struct mr__change *c, uint64_t spent_ns,
		       uint64_t now)
{
	struct fan_state *st = (struct fan_state *)((char *)m - offsetof(struct fan_state, member));

	if (c->kind == MR__CHANGE_ATTACH) {
		st->recent[st->recent_next] = (struct recent_mount){c->mnt_id, now};
		st->recent_next = (st->recent_next + 1) % RECENT_MAX;
	}
	mr__pass_records(&st->clock, 1, spent_ns, now);
	mr__router_due(st->ns);
}

static void on_mountinfo(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct fan_state *st = w->owner;

	(void)buf;
	(void)len;
	if (res >= 0)
		mr__pass_pollpri(&st->clock, mr__now_ns());
	mr__router_due(st->ns);
}

/* The pass (attr_pass.c), and what the schedule must know of it. */
static void run_pass(struct fan_state *st)
{
	uint64_t t0 = mr__now_ns();

	mr__attr_pass_run(&st->pass, st->ns);
	mr__pass_done(&st->clock, t0, mr__now_ns());
	st->blind = st->mi_watch.paused;
}

/* Looks again at the mounts that arrived in the last RECENT_NS; true if one changed. */
static bool recheck_recent(struct fan_state *st, uint64_t now)
{
	bool found = false;

	mr__router_stamp(st->ns->r);
	for (unsigned i = 0; i < RECENT_MAX; i++) {
		const struct recent_mount *m = &st->recent[i];
		if (m->id && now - m->at_ns < RECENT_NS)
			found |= mr__router_recheck_flags(st->ns, m->id);
	}
	return found;
}

static void arm_timer(struct fan_state *st, uint64_t ns, uint64_t now)
{
	mr__source_timer_arm(&st->timer, mr__router_reactor(st->ns->r), ns, now);
}

/* Joins the group's readers and, unless the kernel names attribute changes, polls mountinfo. */
static int start_reading(struct fan_state *st, struct mr__reactor *re)
{
	int err = mr__fan_group_start(&st->member, re);

	if (err < 0)
		return err;
	/* With FAN_MNT_ATTR_CHANGE, mountinfo has nothing to tell. */
	if (st->member.attr_events)
		return 0;
	return mr__reactor_add(re, &st->mi_watch);
}

static void fan_after_batch(struct mr__ns *ns)
{
	struct fan_state *st = ns->src;
	uint64_t now = mr__now_ns(), wait;

	/*
	 * A start that failed (ENOMEM growing the group's member list) left
	 * the namespace unread: try again each step, and once it holds, read
	 * the table again for what came meanwhile (tests/test_faults_host.c).
	 */
	if (!st->member.started) {
		if (start_reading(st, mr__router_reactor(ns->r)) < 0) {
			mr__router_due(ns);
			return;
		}
		mr__router_loss(ns);
	}
	if (st->member.attr_events)
		return; /* the kernel names every change: nothing to look for */

	mr__pass_batch_end(&st->clock);
	st->clock.wanted = (mr__router_kinds_wanted(ns) & MR__ATTR_KINDS) != 0;
	/*
	 * Nobody asks for what a POLLPRI could tell: stop polling, so that a
	 * change costs one wake-up, not two.  Polling again later reports a
	 * POLLPRI at once if the table changed meanwhile (the poll compares
	 * the namespace's event counter with the one it last saw), and nothing
	 * explains it: a pass finds what was missed.
	 */
	if (!st->clock.wanted && !st->mi_watch.paused) {
		mr__reactor_pause(&st->mi_watch);
		st->blind = true;
	} else if (st->clock.wanted && st->mi_watch.paused &&
		   mr__reactor_resume(mr__router_reactor(ns->r), &st->mi_watch) < 0) {
		mr__router_loss(ns); /* cannot poll: a resync, and another try next batch */
	}
	/* Nobody asks for what the recent mounts could explain: put it off whole. */
	if (mr__pass_unexplained_in(&st->clock, now) == 0)
		mr__pass_judged(&st->clock, st->clock.wanted && recheck_recent(st, now), now);
	if (mr__pass_due(&st->clock, now) == 0) {
		run_pass(st);
		now = mr__now_ns();
	}
	wait = mr__pass_unexplained_in(&st->clock, now);
	uint64_t due = mr__pass_due(&st->clock, now);
	if (due < wait)
		wait = due;
	if (wait != UINT64_MAX)
		arm_timer(st, wait, now);
}

static void fan_settle(struct mr__ns *ns)
{
	struct fan_state *st = ns->src;

	if (st->member.attr_events)
		return;

	/* While someone asked, verification keeps its schedule and its bound. */
	if (st->clock.pending || st->clock.suspect_ns || st->blind ||
	    (!st->clock.wanted && st->clock.unverified))
		run_pass(st);
}

static void fan_warm(const struct mr__ns *ns, struct mr__warm *w)
{
	const struct fan_state *st = ns->src;
	const size_t to_recent = offsetof(struct fan_state, recent),
		     from_next = offsetof(struct fan_state, recent_next),
		     to_pass = offsetof(struct fan_state, pass);

	/* What a record and its POLLPRI use: not the pass's state, one slot of the recent mounts. */
	mr__warm_add(w, st, to_recent);
	mr__warm_add(w, &st->recent[st->recent_next], sizeof(st->recent[0]));
	mr__warm_add(w, &st->recent_next, to_pass - from_next);
	mr__fan_group_warm(&st->member, w);
}

static int fan_open(struct mr__ns *ns)
{
	struct fan_state *st = mr__calloc(1, sizeof(*st));
	int err;

	if (!st)
		return -ENOMEM;
	st->base.free_state = state_free;
	st->ns = ns;
	st->pass.fd = -1;
	st->bell_fd = -1;
	st->member = (struct mr__fan_member){.ns = ns, .applied = on_applied};
	err = mr__fan_group_join(ns->r, &st->member);
	if (err < 0)
		goto fail;
	/* The first read of mountinfo's lines is the first estimate of a pass's cost. */
	uint64_t t0 = mr__now_ns();
	err = mr__attr_pass_open(&st->pass, ns);
	if (err < 0)
		goto fail;
	st->clock.pass_cost_ns = mr__now_ns() - t0;
	st->clock.pass_end_ns = mr__now_ns();
	/* The POLLPRI doorbell is a file of its own, apart from the one passes read. */
	st->bell_fd = mr__attr_pass_doorbell_open(ns);
	if (st->bell_fd < 0) {
		err = st->bell_fd;
		st->bell_fd = -1;
		goto fail;
	}
	ns->src = st;
	return 0;
fail:
	mr__fan_group_leave(&st->member, NULL);
	state_free(st);
	return err;
}

static int fan_start(struct mr__ns *ns, struct mr__reactor *re)
{
	struct fan_state *st = ns->src;

	st->mi_watch = (struct mr__watch){.fd = st->bell_fd, .mode = MR__WATCH_POLLPRI,
					  .fn = on_mountinfo, .owner = st, .release = mr__source_watch_released};
	mr__source_timer_init(&st->timer, st, ns);
	st->base.live = 2;
	return start_reading(st, re);
}

static void fan_close(struct mr__ns *ns, struct mr__reactor *re)
{
	struct fan_state *st = ns->src;

	if (!st)
		return;
	ns->src = NULL;
	mr__fan_group_leave(&st->member, re);
	st->ns = NULL;
	mr__source_end(&st->base, re, (struct mr__watch *const[]){&st->mi_watch, &st->timer.watch}, 2);
}

const struct mr__source_ops mr__source_fanotify = {
	.name = "fanotify",
	.probe = fan_probe,
	.open = fan_open,
	.start = fan_start,
	.after_batch = fan_after_batch,
	.settle = fan_settle,
	.read_table = mr__ns_listmount,
	.lookup = mr__ns_statmount,
	.close = fan_close,
	.warm = fan_warm,
};
