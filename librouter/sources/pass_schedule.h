/* SPDX-License-Identifier: MIT */
/*
 * pass_schedule.c: when to read the whole table for attribute changes.
 */
#ifndef MR_PASS_SCHEDULE_H
#define MR_PASS_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#define MR__PASS_EXPLAIN_NS 1000000ull     /* records within 1 ms after explain a POLLPRI */
#define MR__PASS_VERIFY_DUTY 50            /* verification: <= 2% of the records' time */
#define MR__PASS_VERIFY_QUIET_NS 1000000ull
#define MR__PASS_BURST_GAP_NS 1000000ull   /* explained POLLPRIs closer than this: a burst */

/* What a source has seen since its last pass (router thread only). */
struct mr__pass_clock {
	bool wanted;             /* some subscriber asks for attribute changes */
	uint64_t suspect_ns;     /* first POLLPRI nothing explained since the last pass, or 0 */
	uint64_t pending;        /* POLLPRIs waiting up to EXPLAIN_NS for records */
	uint64_t pending_ns;     /* when the first of them came */
	uint64_t credits;        /* records of this batch not yet matched with a POLLPRI */
	uint64_t unverified;     /* POLLPRIs records explained since the last pass */
	uint64_t burst;          /* of which came in the last burst */
	uint64_t bursts;         /* bursts (two or more) since the last pass */
	uint64_t record_run;     /* records in a row closer than BURST_GAP_NS */
	uint64_t explained_ns;   /* when the last was explained */
	uint64_t record_ns;      /* router time spent on records since the last pass */
	uint64_t last_record_ns;
	uint64_t pass_cost_ns;   /* what the last pass took (an estimate before one ran) */
	uint64_t pass_end_ns;
};

/* @n records were applied, taking @spent_ns of the router's time. */
void mr__pass_records(struct mr__pass_clock *c, uint64_t n, uint64_t spent_ns, uint64_t now);
/* mountinfo polled with POLLPRI. */
void mr__pass_pollpri(struct mr__pass_clock *c, uint64_t now);
/* A batch of completions was handled. */
void mr__pass_batch_end(struct mr__pass_clock *c);
/*
 * 0 when POLLPRIs have waited EXPLAIN_NS for records in vain (look at the
 * recent mounts, then call mr__pass_judged()), else the ns until they have
 * (UINT64_MAX: none waits).
 */
uint64_t mr__pass_unexplained_in(const struct mr__pass_clock *c, uint64_t now);
/* The waiting POLLPRIs were explained after all (a recent mount changed), or not. */
void mr__pass_judged(struct mr__pass_clock *c, bool explained, uint64_t now);
/* 0 when a pass is due now, else the ns until one may be, UINT64_MAX: none asked for. */
uint64_t mr__pass_due(const struct mr__pass_clock *c, uint64_t now);
/* A pass ran from @start_ns to @end_ns: it saw everything that came before it. */
void mr__pass_done(struct mr__pass_clock *c, uint64_t start_ns, uint64_t end_ns);

#endif /* MR_PASS_SCHEDULE_H */
