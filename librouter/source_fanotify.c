/* SPDX-License-Identifier: MIT */
/*
 * The fanotify source (Linux 6.15+): one FAN_REPORT_MNT group per mount
 * namespace, marked with FAN_MARK_MNTNS for FAN_MNT_ATTACH|FAN_MNT_DETACH.
 * Records carry only the 64-bit mount ID; statmount(2) supplies the rest.
 *
 * fanotify says nothing about remounts or mount_setattr(2).  Those still
 * bump the namespace's event counter, which makes /proc/PID/mountinfo poll
 * with POLLPRI, so the source also polls mountinfo (never reading it) and
 * answers a POLLPRI with a sweep over every mirrored mount.  POLLPRI cannot
 * say which mount changed, and attach/detach bump the same counter, so a
 * sweep costs O(mounts) whatever caused it.  To keep that off the event
 * path, sweeps come in two weights:
 *  - a flags sweep reads each mount's flags, parent and propagation
 *    (statmount without strings, ~4x cheaper) and looks a mount up in full
 *    only when one of them moved: read-only flips, mount_setattr(2) and
 *    propagation changes, soon.  It waits while attach/detach records keep
 *    coming (they explain their own POLLPRIs) until none came for
 *    FLAGS_QUIET_NS, or at most FLAGS_MAX_DEFER_NS (or 4x its last cost)
 *    during an endless burst; a POLLPRI with no record around it is most
 *    likely a remount and is swept at once;
 *  - a full sweep reads everything, options included, for the remount that
 *    changes filesystem options only (tmpfs size=...): after FULL_QUIET_NS
 *    without any POLLPRI or record, or at most FULL_MAX_DEFER_NS (or 4x its
 *    last cost) after the first POLLPRI it answers.
 * Both run in chunks of SWEEP_CHUNK mounts, one per router step, so records
 * read meanwhile are routed between chunks; a POLLPRI during a sweep asks
 * for another, since the mount that changed may be behind the cursor.  A
 * timer keeps deferred and unfinished sweeps going when nothing else wakes
 * the router.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "internal.h"
#include "mountrouter-uapi.h"

#define FLAGS_QUIET_NS 1000000ull        /* 1 ms */
#define FLAGS_MAX_DEFER_NS 50000000ull   /* 50 ms */
#define FULL_QUIET_NS 50000000ull        /* 50 ms */
#define FULL_MAX_DEFER_NS 1000000000ull  /* 1 s */
#define SWEEP_CHUNK 256

/* One weight of sweep: when it was asked for and what it cost last time. */
struct sweep_need {
	bool pending;
	uint64_t since_ns, cost_ns;
};

struct fan_state {
	struct mr__ns *ns;
	int fan_fd, mi_fd;
	struct mr__watch fan_watch, mi_watch, timer;
	unsigned live; /* watches the reactor still holds */
	bool timer_armed;
	uint64_t last_record_ns, last_pollpri_ns;
	struct sweep_need flags, full;
	struct mr__table sweep;  /* mounts to look at again */
	size_t sweep_cursor;     /* sweeping while < sweep.n */
	bool sweep_full;         /* the sweep under way reads everything */
	uint64_t sweep_started_ns;
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

static void state_free(struct fan_state *st)
{
	if (st->fan_fd >= 0)
		close(st->fan_fd);
	if (st->mi_fd >= 0)
		close(st->mi_fd);
	mr__table_clear(&st->sweep);
	mr__free(st->sweep.v);
	mr__free(st);
}

static void watch_released(struct mr__watch *w)
{
	struct fan_state *st = w->owner;

	if (--st->live == 0)
		state_free(st);
}

static void on_fanotify(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct fan_state *st = w->owner;

	if (mr__router_records(st->ns, res, buf, len, mr__decode_fanotify) >= 0)
		st->last_record_ns = mr__now_ns();
}

static void on_mountinfo(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct fan_state *st = w->owner;

	(void)buf;
	(void)len;
	if (res < 0)
		return;
	uint64_t now = mr__now_ns();

	st->last_pollpri_ns = now;
	for (struct sweep_need *n = &st->flags; n; n = n == &st->flags ? &st->full : NULL)
		if (!n->pending) {
			n->pending = true;
			n->since_ns = now;
		}
}

static void on_timer(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct fan_state *st = w->owner;

	(void)res;
	(void)buf;
	(void)len;
	st->timer_armed = false;
	/* after_batch of this step runs the sweep. */
}

static int fan_open(struct mr__ns *ns)
{
	struct fan_state *st = mr__calloc(1, sizeof(*st));
	char path[64];
	int err;

	if (!st)
		return -ENOMEM;
	st->ns = ns;
	st->mi_fd = -1;
	/* Non-blocking: io_uring retries a read that would block by polling. */
	st->fan_fd = fanotify_init(FAN_REPORT_MNT | FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, 0);
	if (st->fan_fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fanotify_mark(st->fan_fd, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH | FAN_MNT_DETACH,
			  ns->nsfd, NULL) < 0) {
		err = -errno;
		goto fail;
	}
	if (ns->pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)ns->pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	st->mi_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (st->mi_fd < 0) {
		err = -errno;
		goto fail;
	}
	ns->src = st;
	return 0;
fail:
	state_free(st);
	return err;
}

static int fan_start(struct mr__ns *ns, struct mr__reactor *re)
{
	struct fan_state *st = ns->src;
	int err;

	st->fan_watch = (struct mr__watch){.fd = st->fan_fd, .mode = MR__WATCH_READ,
					   .fn = on_fanotify, .owner = st, .release = watch_released};
	st->mi_watch = (struct mr__watch){.fd = st->mi_fd, .mode = MR__WATCH_POLLPRI,
					  .fn = on_mountinfo, .owner = st, .release = watch_released};
	st->timer = (struct mr__watch){.mode = MR__WATCH_TIMER, .fd = -1, .fn = on_timer,
				       .owner = st, .release = watch_released};
	st->live = 3;
	st->ns->src = st;
	err = mr__reactor_add(re, &st->fan_watch);
	if (err < 0)
		return err;
	return mr__reactor_add(re, &st->mi_watch);
}

static int collect(struct mr__mount *m, void *arg)
{
	return mr__table_push(arg, mr__mount_ref(m));
}

static void sweep_start(struct fan_state *st, bool full)
{
	mr__table_clear(&st->sweep);
	st->sweep_cursor = 0;
	st->sweep_full = full;
	/* A full sweep sees everything a flags sweep would. */
	st->flags.pending = false;
	if (full)
		st->full.pending = false;
	st->sweep_started_ns = mr__now_ns();
	if (mr__mirror_each(&st->ns->mirror, collect, &st->sweep) < 0) {
		/* No memory to list the mounts: a resync reads them all instead. */
		mr__table_clear(&st->sweep);
		mr__router_loss(st->ns);
	}
}

/* Looks at the next chunk; returns true while mounts are left. */
static bool sweep_chunk(struct fan_state *st)
{
	size_t end = st->sweep_cursor + SWEEP_CHUNK;

	if (end > st->sweep.n)
		end = st->sweep.n;
	mr__router_stamp(st->ns->r);
	for (; st->sweep_cursor < end; st->sweep_cursor++) {
		uint64_t id = st->sweep.v[st->sweep_cursor]->pub.id;
		if (st->sweep_full)
			mr__router_recheck(st->ns, id);
		else
			mr__router_recheck_flags(st->ns, id);
	}
	if (st->sweep_cursor < st->sweep.n)
		return true;
	mr__table_clear(&st->sweep);
	(st->sweep_full ? &st->full : &st->flags)->cost_ns = mr__now_ns() - st->sweep_started_ns;
	return false;
}

static void arm_timer(struct fan_state *st, uint64_t ns)
{
	if (st->timer_armed)
		return;
	st->timer.timeout_ns = ns;
	if (mr__reactor_add(mr__router_reactor(st->ns->r), &st->timer) == 0)
		st->timer_armed = true;
}

/*
 * How long until a pending sweep of this weight is due: 0 now, or the
 * nanoseconds to wait (the quiet period, capped by the longest deferral).
 */
static uint64_t due_in(const struct sweep_need *n, uint64_t now, uint64_t last_activity,
		       uint64_t quiet_ns, uint64_t max_defer_ns)
{
	uint64_t max_defer = n->cost_ns * 4 > max_defer_ns ? n->cost_ns * 4 : max_defer_ns;
	uint64_t quiet = now - last_activity, waited = now - n->since_ns;

	if (quiet >= quiet_ns || waited >= max_defer)
		return 0;
	return quiet_ns - quiet < max_defer - waited ? quiet_ns - quiet : max_defer - waited;
}

static void fan_after_batch(struct mr__ns *ns)
{
	struct fan_state *st = ns->src;
	uint64_t now = mr__now_ns(), wait = UINT64_MAX;

	if (st->sweep.n) {
		if (sweep_chunk(st))
			arm_timer(st, 0);
		return;
	}
	if (st->full.pending) {
		uint64_t last = st->last_record_ns > st->last_pollpri_ns ? st->last_record_ns
									   : st->last_pollpri_ns;
		uint64_t in = due_in(&st->full, now, last, FULL_QUIET_NS, FULL_MAX_DEFER_NS);
		if (!in) {
			sweep_start(st, true);
			goto run;
		}
		wait = in;
	}
	if (st->flags.pending) {
		uint64_t in = due_in(&st->flags, now, st->last_record_ns, FLAGS_QUIET_NS,
				     FLAGS_MAX_DEFER_NS);
		if (!in) {
			sweep_start(st, false);
			goto run;
		}
		wait = in < wait ? in : wait;
	}
	if (wait != UINT64_MAX)
		arm_timer(st, wait);
	return;
run:
	if (sweep_chunk(st))
		arm_timer(st, 0);
	else if (st->full.pending)
		arm_timer(st, FULL_QUIET_NS);
}

static void fan_close(struct mr__ns *ns, struct mr__reactor *re)
{
	struct fan_state *st = ns->src;

	if (!st)
		return;
	ns->src = NULL;
	if (!re || !st->live) {
		state_free(st);
		return;
	}
	st->ns = NULL;
	/* Each watch is released once the kernel lets go; the last frees st. */
	mr__reactor_remove(re, &st->fan_watch);
	mr__reactor_remove(re, &st->mi_watch);
	mr__reactor_remove(re, &st->timer);
}

const struct mr__source_ops mr__source_fanotify = {
	.name = "fanotify",
	.probe = fan_probe,
	.open = fan_open,
	.start = fan_start,
	.after_batch = fan_after_batch,
	.read_table = mr__ns_listmount,
	.lookup = mr__ns_statmount,
	.close = fan_close,
};
