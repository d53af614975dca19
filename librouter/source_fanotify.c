/* SPDX-License-Identifier: MIT */
/*
 * The fanotify source (Linux 6.15+): one FAN_REPORT_MNT group per mount
 * namespace, marked with FAN_MARK_MNTNS for FAN_MNT_ATTACH|FAN_MNT_DETACH.
 * Records carry only the 64-bit mount ID; statmount(2) supplies the rest.
 * Attach, detach, move, bind and propagated copies each cost one record and
 * one statmount: O(1), whatever the size of the table.
 *
 * fanotify says nothing about remounts, mount_setattr(2) or propagation
 * changes.  Remounts and mount_setattr(2) still bump the namespace's event
 * counter, which makes /proc/PID/mountinfo poll with POLLPRI (attach and
 * detach bump it too), so the source polls mountinfo, never reading it
 * unless it must:
 *  - a POLLPRI followed by a record within 1 ms (or preceded by one in the
 *    same batch) is that record's, one record for one POLLPRI
 *    (pass_schedule.c);
 *  - one no record explains is first checked against the mounts that
 *    arrived in the last RECENT_NS (a bind made read-only at once, as
 *    container runtimes do): a statmount of their flags each;
 *  - if that finds nothing, the mount that changed could be any: a pass
 *    reads mountinfo once and looks up in full only the mounts whose line
 *    changed (mountinfo_diff.c), no dearer than a poller's re-read.
 * Passes run only while some subscriber asks for READONLY or ATTR events;
 * otherwise what they would have looked for waits until one does, or until
 * a snapshot is taken (settle).  A propagation change (MS_SHARED, ...)
 * bumps nothing: it is seen by the next pass.
 *
 * What can come late: a remount that bumps the counter within the router's
 * wake-up latency (tens of microseconds) of an attach or detach shares its
 * POLLPRI, and its mount is not the attached one (whose statmount, made
 * after the POLLPRI, sees the remount).  It is found by the verification
 * pass, which runs once the router has spent MR__PASS_VERIFY_DUTY times a
 * pass's cost on records since the last pass, or by the next pass of any
 * kind, whichever comes first (pass_schedule.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "internal.h"
#include "mountrouter-uapi.h"

#define RECENT_NS 10000000ull /* 10 ms */
#define RECENT_MAX 32

/* A mount that arrived lately, when it did. */
struct recent_mount {
	uint64_t id, at_ns;
};

struct fan_state {
	struct mr__ns *ns;
	int fan_fd, mi_fd;
	struct mr__watch fan_watch, mi_watch, timer;
	unsigned live; /* watches the reactor still holds */
	bool timer_armed;
	uint64_t timer_at_ns; /* when the armed timer fires */
	struct recent_mount recent[RECENT_MAX]; /* a ring, oldest overwritten */
	unsigned recent_next;
	struct mr__pass_clock clock;
	bool blind;              /* mountinfo went unpolled since the last pass */
	struct mr__mi_diff diff; /* mountinfo as the last pass read it */
	struct mr__mountinfo_scratch scratch;
	bool diff_ok;            /* diff holds a whole read */
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
	mr__mi_diff_free(&st->diff);
	mr__mountinfo_scratch_free(&st->scratch);
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
	uint64_t t0 = mr__now_ns();

	long n = mr__router_records(st->ns, res, buf, len, mr__decode_fanotify);
	if (n <= 0)
		return;
	const struct mr__change *c = mr__router_decoded(st->ns->r);

	for (long i = 0; i < n; i++)
		if (c[i].kind == MR__CHANGE_ATTACH) {
			st->recent[st->recent_next] = (struct recent_mount){c[i].mnt_id, t0};
			st->recent_next = (st->recent_next + 1) % RECENT_MAX;
		}
	uint64_t now = mr__now_ns();
	mr__pass_records(&st->clock, (uint64_t)n, now - t0, now);
}

static void on_mountinfo(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct fan_state *st = w->owner;

	(void)buf;
	(void)len;
	if (res >= 0)
		mr__pass_pollpri(&st->clock, mr__now_ns());
}

static void on_timer(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct fan_state *st = w->owner;

	(void)res;
	(void)buf;
	(void)len;
	st->timer_armed = false;
	/* after_batch of this step does what is due. */
}

/* ---- the pass: mountinfo read once, changed lines looked up ---- */

static int key_of(struct mr__mount *m, void *arg)
{
	struct fan_state *st = arg;

	return m->old_id ? mr__mi_diff_set_key(&st->diff, m->old_id, m->pub.id) : 0;
}

/* Is the mirror's record what @line says, as far as a remount can change it? */
static bool line_matches(struct fan_state *st, const char *line, size_t n, struct mr__mount *m)
{
	struct mr__mount *seen;

	if (mr__mountinfo_parse_line(line, n, &st->scratch, &seen) < 0)
		return false;
	bool same = mr__mount_attrs_same(m, seen);
	mr__mount_unref(seen);
	return same;
}

/*
 * One line of the pass.  @changed: it differs from the last pass's.  The
 * mirror may have moved on since through records or the recent-mount check
 * (slot->rec is then another record), so a line equal to the last one can
 * still disagree with the mirror: a mount made read-only and back.
 */
static int judge_line(struct fan_state *st, const char *line, size_t n, struct mr__mi_slot *slot,
		      bool changed, bool known)
{
	if (!slot->key)
		return 0; /* not in the mirror yet: its attach record is still to come */
	struct mr__mount *m = mr__mirror_get(&st->ns->mirror, slot->key);
	if (!m)
		return 0; /* gone: its detach record says so */
	if (!changed && slot->rec == m)
		return 0;
	/*
	 * A line that moved on since the last pass changed: statmount says to
	 * what.  Otherwise compare it with the record first (a new mount was
	 * looked up when its record came, which may predate a remount).
	 */
	if ((changed && known) || !line_matches(st, line, n, m))
		mr__router_recheck(st->ns, slot->key);
	m = mr__mirror_get(&st->ns->mirror, slot->key);
	if (slot->rec)
		mr__mount_unref(slot->rec);
	slot->rec = m ? mr__mount_ref(m) : NULL;
	return 0;
}

static int line_changed(void *arg, uint32_t id, const char *line, size_t n,
			struct mr__mi_slot *slot, bool known)
{
	(void)id;
	return judge_line(arg, line, n, slot, true, known);
}

static int line_same(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *slot)
{
	(void)id;
	return judge_line(arg, line, n, slot, false, true);
}

static const struct mr__mi_diff_ops pass_ops = {.changed = line_changed, .same = line_same};
static const struct mr__mi_diff_ops baseline_ops; /* learn the lines, report nothing */

/* Reads mountinfo and looks again at each mount whose line changed. */
static void run_pass(struct fan_state *st)
{
	uint64_t t0 = mr__now_ns(), calls = 0;
	int err;

	mr__router_stamp(st->ns->r);
	err = mr__mirror_each(&st->ns->mirror, key_of, st);
	if (!err)
		err = mr__mi_diff_run(&st->diff, st->mi_fd, st->diff_ok ? &pass_ops : &baseline_ops, st,
				      &calls);
	mr__router_count_syscalls(st->ns->r, calls);
	if (err < 0) {
		/* The table could not be compared: a resync reads it all. */
		mr__mi_diff_reset(&st->diff);
		st->diff_ok = false;
		mr__router_loss(st->ns);
	} else {
		st->diff_ok = true;
	}
	uint64_t t1 = mr__now_ns();
	mr__pass_done(&st->clock, t0, t1);
	st->blind = st->mi_watch.paused;
	mr__router_count_sweep(st->ns->r, t1 - t0);
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

static void fan_after_batch(struct mr__ns *ns)
{
	struct fan_state *st = ns->src;
	uint64_t now = mr__now_ns(), wait;

	mr__pass_batch_end(&st->clock);
	st->clock.wanted = ns->n_attr_subs > 0;
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
	if (mr__pass_due(&st->clock, now) == 0)
		run_pass(st);
	now = mr__now_ns();
	wait = mr__pass_unexplained_in(&st->clock, now);
	uint64_t due = mr__pass_due(&st->clock, now);
	if (due < wait)
		wait = due;
	if (wait != UINT64_MAX)
		arm_timer(st, wait);
}

static void fan_settle(struct mr__ns *ns)
{
	struct fan_state *st = ns->src;

	/* While someone asked, verification keeps its schedule and its bound. */
	if (st->clock.pending || st->clock.suspect_ns || st->blind ||
	    (!st->clock.wanted && st->clock.unverified))
		run_pass(st);
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
	/*
	 * The lines as they are before the mirror is read (after this
	 * function): a change in between shows as a changed line later, and
	 * looking that mount up again finds what the mirror already has.  The
	 * read's time is the first estimate of a pass's cost.
	 */
	uint64_t t0 = mr__now_ns();
	err = mr__mi_diff_run(&st->diff, st->mi_fd, &baseline_ops, st, NULL);
	if (err < 0)
		goto fail;
	st->diff_ok = true;
	st->clock.pass_cost_ns = mr__now_ns() - t0;
	st->clock.pass_end_ns = mr__now_ns();
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
	err = mr__reactor_add(re, &st->fan_watch);
	if (err < 0)
		return err;
	return mr__reactor_add(re, &st->mi_watch);
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
	.settle = fan_settle,
	.read_table = mr__ns_listmount,
	.lookup = mr__ns_statmount,
	.close = fan_close,
};
