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
 * sweep costs O(mounts) whatever caused it (about 1 us of CPU a mount).  To
 * keep that off the event path, a POLLPRI is first told apart:
 *  - with no record within EXPLAIN_NS on either side, it is most likely a
 *    remount or mount_setattr(2): a flags sweep starts at once, or, in a
 *    storm of them, once the router has had as much time for records as the
 *    last sweep took (sweeps then take at most half of its time).  If that
 *    sweep finds nothing changed, the remount most likely changed
 *    filesystem options only: a full sweep follows, on the same terms;
 *  - among records, it is most likely theirs, but may hide a remount.  The
 *    common one, a bind mount made read-only straight after (MS_BIND, then
 *    MS_REMOUNT|MS_BIND|MS_RDONLY), is caught by looking again at the mounts
 *    that arrived in the last RECENT_NS (at most RECENT_MAX, at most
 *    1/RECENT_DUTY of the router's time).  Any other is caught by a deferred
 *    sweep, and deferred sweeps of each weight take at most 1/DEFER_DUTY of
 *    the router's time: one waits until DEFER_DUTY times its last CPU time
 *    has passed and records paused for its quiet period, or at most its
 *    longest deferral (or DEFER_DUTY times its last CPU time, if longer):
 *    about 2 s for a 10,000-mount flags sweep (6 s for a full one), 50 ms
 *    (1 s) for a 100-mount table.
 * Sweeps come in two weights:
 *  - a flags sweep reads each mount's flags, parent and propagation
 *    (statmount without strings, ~2.5x cheaper) and looks a mount up in
 *    full only when one of them moved: read-only flips, mount_setattr(2) and
 *    propagation changes;
 *  - a full sweep reads everything, options included, for the remount that
 *    changes filesystem options only (tmpfs size=...); deferred, it waits
 *    for FULL_QUIET_NS without any POLLPRI or record.
 * Both run in slices of at most SWEEP_STEP_NS per router step, and a slice
 * ends early when completions wait (looked at every SWEEP_LOOK mounts,
 * about 20 us), so records read meanwhile are routed between slices without
 * waiting for the sweep; a POLLPRI during a sweep asks for another, since
 * the mount that changed may be behind the cursor.  A timer keeps deferred and unfinished
 * sweeps going when nothing else wakes the router.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "internal.h"
#include "mountrouter-uapi.h"

#define EXPLAIN_NS 1000000ull            /* 1 ms */
#define RECENT_NS 10000000ull            /* 10 ms */
#define RECENT_MAX 128
#define RECENT_DUTY 50
#define DEFER_DUTY 200
#define FLAGS_QUIET_NS 1000000ull        /* 1 ms */
#define FLAGS_MAX_DEFER_NS 50000000ull   /* 50 ms */
#define FULL_QUIET_NS 50000000ull        /* 50 ms */
#define FULL_MAX_DEFER_NS 1000000000ull  /* 1 s */
#define SWEEP_STEP_NS 1000000ull         /* 1 ms */
#define SWEEP_LOOK 16

/* A mount that arrived lately, when it did. */
struct recent_mount {
	uint64_t id, at_ns;
};

/* One weight of sweep: when it was asked for and its CPU time last time. */
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
	uint64_t timer_at_ns; /* when the armed timer fires */
	uint64_t last_record_ns, last_pollpri_ns;
	uint64_t suspect_ns; /* a POLLPRI no record has explained yet, or 0 */
	struct recent_mount recent[RECENT_MAX]; /* a ring, oldest overwritten */
	unsigned recent_next;
	bool recent_pending;                    /* an explained POLLPRI came */
	uint64_t recent_done_ns, recent_cost_ns;
	struct sweep_need flags, full;
	struct mr__table sweep;  /* mounts to look at again */
	size_t sweep_cursor;     /* sweeping while < sweep.n */
	bool sweep_full;         /* the sweep under way reads everything */
	bool sweep_suspect;      /* it answers a POLLPRI no record explained */
	size_t sweep_found;      /* mounts it found changed */
	bool full_now;           /* a full sweep is due, not deferred */
	uint64_t sweep_cpu_ns;   /* CPU time of the sweep under way so far */
	uint64_t sweep_ended_ns;
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

	long n = mr__router_records(st->ns, res, buf, len, mr__decode_fanotify);
	if (n <= 0)
		return;
	uint64_t now = mr__now_ns();
	const struct mr__change *c = mr__router_decoded(st->ns->r);

	for (long i = 0; i < n; i++)
		if (c[i].kind == MR__CHANGE_ATTACH) {
			st->recent[st->recent_next] = (struct recent_mount){c[i].mnt_id, now};
			st->recent_next = (st->recent_next + 1) % RECENT_MAX;
		}
	st->last_record_ns = now;
	if (st->suspect_ns && now - st->suspect_ns < EXPLAIN_NS) {
		st->suspect_ns = 0;
		st->recent_pending = true;
	}
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
	if (now - st->last_record_ns < EXPLAIN_NS)
		st->recent_pending = true;
	else if (!st->suspect_ns)
		st->suspect_ns = now;
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
	bool suspect = st->suspect_ns != 0;

	mr__table_clear(&st->sweep);
	st->sweep_cursor = 0;
	st->sweep_full = full;
	/* A full sweep sees everything a flags sweep would. */
	st->suspect_ns = 0;
	st->flags.pending = false;
	if (full)
		st->full.pending = st->full_now = false;
	st->sweep_suspect = !full && suspect;
	st->sweep_found = 0;
	st->sweep_cpu_ns = 0;
	if (mr__mirror_each(&st->ns->mirror, collect, &st->sweep) < 0) {
		/* No memory to list the mounts: a resync reads them all instead. */
		mr__table_clear(&st->sweep);
		mr__router_loss(st->ns);
	}
}

/* Looks at the next slice of the sweep; returns true while mounts are left. */
static bool sweep_slice(struct fan_state *st)
{
	struct mr__reactor *re = mr__router_reactor(st->ns->r);
	uint64_t cpu0 = mr__thread_cpu_ns(), until = mr__now_ns() + SWEEP_STEP_NS;

	mr__router_stamp(st->ns->r);
	for (unsigned n = 0; st->sweep_cursor < st->sweep.n; st->sweep_cursor++, n++) {
		if (n && n % SWEEP_LOOK == 0 &&
		    (mr__reactor_completions_waiting(re) || mr__now_ns() >= until))
			break;
		uint64_t id = st->sweep.v[st->sweep_cursor]->pub.id;
		if (st->sweep_full)
			mr__router_recheck(st->ns, id);
		else
			st->sweep_found += mr__router_recheck_flags(st->ns, id);
	}
	st->sweep_cpu_ns += mr__thread_cpu_ns() - cpu0;
	if (st->sweep_cursor < st->sweep.n)
		return true;
	mr__table_clear(&st->sweep);
	st->sweep_ended_ns = mr__now_ns();
	(st->sweep_full ? &st->full : &st->flags)->cost_ns = st->sweep_cpu_ns;
	mr__router_count_sweep(st->ns->r, st->sweep_cpu_ns);
	/*
	 * A POLLPRI nothing explained, not records nor flags: most likely a
	 * remount that changed filesystem options only.  Look at those too.
	 */
	if (st->sweep_suspect && !st->sweep_found)
		st->full_now = true;
	return false;
}

static void arm_timer(struct fan_state *st, uint64_t ns)
{
	struct mr__reactor *re = mr__router_reactor(st->ns->r);
	uint64_t at = mr__now_ns() + ns;

	if (st->timer_armed) {
		/* Due sooner than the timer in flight: bring that forward. */
		if (at < st->timer_at_ns && mr__reactor_retime(re, &st->timer, ns) == 0)
			st->timer_at_ns = at;
		return;
	}
	st->timer.timeout_ns = ns;
	if (mr__reactor_add(re, &st->timer) == 0) {
		st->timer_armed = true;
		st->timer_at_ns = at;
	}
}

/*
 * How long until a deferred sweep of this weight is due: 0 now, or the
 * nanoseconds to wait.  It is due once DEFER_DUTY times its last cost has
 * passed and activity paused for quiet_ns, or after max_defer_ns (or
 * DEFER_DUTY times its last cost, if longer) however busy the namespace is.
 */
static uint64_t due_in(const struct sweep_need *n, uint64_t now, uint64_t last_activity,
		       uint64_t quiet_ns, uint64_t max_defer_ns)
{
	uint64_t min_wait = n->cost_ns * DEFER_DUTY;
	uint64_t max_wait = min_wait > max_defer_ns ? min_wait : max_defer_ns;
	uint64_t quiet = now - last_activity, waited = now - n->since_ns;

	if (waited >= max_wait || (waited >= min_wait && quiet >= quiet_ns))
		return 0;
	uint64_t until_quiet = quiet < quiet_ns ? quiet_ns - quiet : 0;
	uint64_t until_min = waited < min_wait ? min_wait - waited : 0;
	uint64_t in = until_quiet > until_min ? until_quiet : until_min;

	return in < max_wait - waited ? in : max_wait - waited;
}

/* Looks again at the mounts that arrived in the last RECENT_NS. */
static void recheck_recent(struct fan_state *st, uint64_t now)
{
	uint64_t cpu0 = mr__thread_cpu_ns();

	mr__router_stamp(st->ns->r);
	for (unsigned i = 0; i < RECENT_MAX; i++) {
		const struct recent_mount *m = &st->recent[i];
		if (m->id && now - m->at_ns < RECENT_NS)
			mr__router_recheck_flags(st->ns, m->id);
	}
	st->recent_pending = false;
	st->recent_done_ns = now;
	st->recent_cost_ns = mr__thread_cpu_ns() - cpu0;
}

/*
 * The next sweep: 0 when one is due now (*full says which weight), else the
 * nanoseconds until one is, or UINT64_MAX when none is asked for.
 */
static uint64_t next_sweep(struct fan_state *st, uint64_t now, bool *full)
{
	/* In a storm of remounts, sweeps leave the router as much time as they take. */
	uint64_t free_at = st->sweep_ended_ns + st->flags.cost_ns, at, in, best = UINT64_MAX;

	if (st->full_now) {
		at = st->sweep_ended_ns + st->full.cost_ns;
		if (now >= at) {
			*full = true;
			return 0;
		}
		best = at - now;
	}
	if (st->suspect_ns) {
		/* No record came to explain it: most likely a remount. */
		at = st->suspect_ns + EXPLAIN_NS > free_at ? st->suspect_ns + EXPLAIN_NS : free_at;
		if (now >= at) {
			*full = false;
			return 0;
		}
		best = at - now < best ? at - now : best;
	}
	if (st->full.pending) {
		uint64_t last = st->last_record_ns > st->last_pollpri_ns ? st->last_record_ns
									   : st->last_pollpri_ns;
		in = due_in(&st->full, now, last, FULL_QUIET_NS, FULL_MAX_DEFER_NS);
		if (!in) {
			*full = true;
			return 0;
		}
		best = in < best ? in : best;
	}
	if (st->flags.pending) {
		in = due_in(&st->flags, now, st->last_record_ns, FLAGS_QUIET_NS, FLAGS_MAX_DEFER_NS);
		if (!in) {
			*full = false;
			return 0;
		}
		best = in < best ? in : best;
	}
	return best;
}

static void fan_after_batch(struct mr__ns *ns)
{
	struct fan_state *st = ns->src;
	uint64_t now = mr__now_ns(), wait = UINT64_MAX, in;
	bool swept = false, full;

	if (st->recent_pending) {
		uint64_t at = st->recent_done_ns + st->recent_cost_ns * RECENT_DUTY;
		if (now >= at)
			recheck_recent(st, now);
		else
			wait = at - now;
	}
	if (st->sweep.n) {
		if (sweep_slice(st)) {
			arm_timer(st, 0);
			return;
		}
		swept = true;
		now = mr__now_ns();
	}
	in = next_sweep(st, now, &full);
	if (in == 0 && !swept) {
		/* One slice a step: completions that came meanwhile go first. */
		sweep_start(st, full);
		if (sweep_slice(st)) {
			arm_timer(st, 0);
			return;
		}
		in = next_sweep(st, mr__now_ns(), &full);
	}
	if (in < wait)
		wait = in;
	if (wait != UINT64_MAX)
		arm_timer(st, wait);
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
