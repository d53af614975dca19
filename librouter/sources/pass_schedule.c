/* SPDX-License-Identifier: MIT */

#include "sources/pass_schedule.h"
/*
 * When a source that cannot name the mount an attribute change touched
 * (fanotify, listmount: a remount only makes mountinfo poll with POLLPRI)
 * reads the whole table to find it: a pure function of what the source has
 * seen, so that the rules can be tested without a kernel.
 *
 * The rules (README.md, "What a change costs"):
 *  - never while no subscriber asks for attribute changes, and never on a
 *    timer while nothing changes;
 *  - a POLLPRI that no record explained (a remount, mount_setattr(2)): a
 *    pass at once, except in a storm of them, where passes take at most half
 *    of the router's time (the next waits as long as the last one took);
 *  - POLLPRIs that records explained may still hide a remount that bumped
 *    the namespace's event counter within the router's wake-up latency of
 *    an attach or detach (the two show as one POLLPRI), or that came while
 *    the router was reading a backlog of records.  Both need changes close
 *    together: after a burst of them (two or more POLLPRIs explained, or
 *    records applied, less than BURST_GAP_NS apart), a verification pass
 *    runs once records pause for VERIFY_QUIET_NS, and no sooner than
 *    VERIFY_DUTY times the last pass's cost after it (at most 1/VERIFY_DUTY
 *    of the time: 0.75 s between passes at 10,000 mounts, whose pass takes
 *    ~15 ms).  A change
 *    on its own is never verified so: the one case left (a remount within
 *    the wake-up latency of a lone attach or detach) is caught once the
 *    router has spent VERIFY_DUTY times the last pass's cost on records
 *    since the last pass (when records pause, or at twice that work), at
 *    most 1/VERIFY_DUTY of their time: O(1) per change amortised.
 */

uint64_t mr__pass_due(const struct mr__pass_clock *c, uint64_t now)
{
	uint64_t best = UINT64_MAX;

	if (!c->wanted)
		return best;
	if (c->suspect_ns) {
		uint64_t free_at = c->pass_end_ns + c->pass_cost_ns;
		uint64_t at = c->suspect_ns > free_at ? c->suspect_ns : free_at;
		if (now >= at)
			return 0;
		best = at - now;
	}
	if (c->unverified && c->bursts) {
		/*
		 * Changes came close together: once they pause, and at most
		 * 1/VERIFY_DUTY of the time since the last pass.
		 */
		uint64_t free_at = c->pass_end_ns + c->pass_cost_ns * MR__PASS_VERIFY_DUTY;
		uint64_t quiet_at = c->last_record_ns + MR__PASS_VERIFY_QUIET_NS;
		uint64_t at = quiet_at > free_at ? quiet_at : free_at;
		if (now >= at)
			return 0;
		if (at - now < best)
			best = at - now;
	}
	if (c->unverified) {
		uint64_t budget = c->pass_cost_ns * MR__PASS_VERIFY_DUTY;
		if (c->record_ns >= 2 * budget)
			return 0;
		if (c->record_ns >= budget) {
			uint64_t quiet_at = c->last_record_ns + MR__PASS_VERIFY_QUIET_NS;
			if (now >= quiet_at)
				return 0;
			if (quiet_at - now < best)
				best = quiet_at - now;
		}
	}
	return best;
}

void mr__pass_done(struct mr__pass_clock *c, uint64_t start_ns, uint64_t end_ns)
{
	c->suspect_ns = 0;
	c->unverified = 0;
	c->burst = 0;
	c->bursts = 0;
	c->record_run = 0;
	c->record_ns = 0;
	c->pass_cost_ns = end_ns - start_ns;
	c->pass_end_ns = end_ns;
}

/* A POLLPRI records explained: it may hide a remount, more likely among others. */
static void explained(struct mr__pass_clock *c, uint64_t now)
{
	c->unverified++;
	if (c->burst && now - c->explained_ns < MR__PASS_BURST_GAP_NS)
		c->burst++;
	else
		c->burst = 1;
	if (c->burst == 2)
		c->bursts++;
	c->explained_ns = now;
}

void mr__pass_records(struct mr__pass_clock *c, uint64_t n, uint64_t spent_ns, uint64_t now)
{
	if (!n)
		return;
	/*
	 * Records close together are changes close together, however few
	 * POLLPRIs they came with (a storm coalesces many into one).
	 */
	if (n > 1 || (c->last_record_ns && now - c->last_record_ns < MR__PASS_BURST_GAP_NS)) {
		if (!c->record_run++)
			c->bursts++;
	} else {
		c->record_run = 0;
	}
	c->record_ns += spent_ns;
	c->last_record_ns = now;
	c->credits += n;
	/* Records that follow a POLLPRI explain it. */
	while (c->pending && c->credits) {
		c->pending--;
		c->credits--;
		explained(c, now);
	}
	if (!c->pending)
		c->pending_ns = 0;
}

void mr__pass_pollpri(struct mr__pass_clock *c, uint64_t now)
{
	/* Records just before it in the same batch explain it too. */
	if (c->credits) {
		c->credits--;
		explained(c, now);
		return;
	}
	if (!c->pending++)
		c->pending_ns = now;
}

void mr__pass_batch_end(struct mr__pass_clock *c)
{
	/*
	 * Records left over (an operation that moved several mounts with one
	 * POLLPRI) explain nothing later: a remount straight after them must
	 * not pass for theirs.
	 */
	c->credits = 0;
}

uint64_t mr__pass_unexplained_in(const struct mr__pass_clock *c, uint64_t now)
{
	if (!c->pending)
		return UINT64_MAX;
	uint64_t at = c->pending_ns + MR__PASS_EXPLAIN_NS;
	return now >= at ? 0 : at - now;
}

void mr__pass_judged(struct mr__pass_clock *c, bool explained, uint64_t now)
{
	if (!explained && !c->suspect_ns)
		c->suspect_ns = now;
	c->pending = 0;
	c->pending_ns = 0;
}
