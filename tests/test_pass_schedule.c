/* SPDX-License-Identifier: MIT */
/*
 * pass_schedule.c: when a source that cannot name the mount a remount
 * changed reads the whole table, and order.c, which puts parents before
 * their children.  No kernel: times are given.  Label: unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror/mount.h"
#include "sources/pass_schedule.h"
#include "testutil.h"

#define MS 1000000ull
#define NEVER UINT64_MAX

/* A clock as a source has it after its first table read, which took @cost. */
static struct mr__pass_clock clock_at(uint64_t now, uint64_t cost)
{
	return (struct mr__pass_clock){.wanted = true, .pass_cost_ns = cost, .pass_end_ns = now};
}

/* An attach on its own: its POLLPRI, then its record.  No pass, ever. */
static int test_attach_alone(void)
{
	struct mr__pass_clock c = clock_at(0, 10 * MS);
	uint64_t t = 1000 * MS;

	for (int i = 0; i < 100; i++, t += 30 * MS) {
		mr__pass_pollpri(&c, t);
		CHECK(mr__pass_unexplained_in(&c, t) == MR__PASS_EXPLAIN_NS);
		mr__pass_records(&c, 1, 50000, t + 20000);
		mr__pass_batch_end(&c);
		CHECK(mr__pass_unexplained_in(&c, t + 20000) == NEVER);
		CHECK(mr__pass_due(&c, t + 29 * MS) == NEVER);
	}
	/* The same when the record comes first in the batch. */
	mr__pass_records(&c, 1, 50000, t);
	mr__pass_pollpri(&c, t + 1000);
	mr__pass_batch_end(&c);
	CHECK(mr__pass_unexplained_in(&c, t + 1000) == NEVER);
	CHECK(mr__pass_due(&c, t + 10 * MS) == NEVER);
	return 0;
}

/* A remount: a POLLPRI nothing explains, judged after EXPLAIN_NS, a pass at once. */
static int test_remount_alone(void)
{
	struct mr__pass_clock c = clock_at(0, 10 * MS);
	uint64_t t = 1000 * MS;

	mr__pass_pollpri(&c, t);
	mr__pass_batch_end(&c);
	CHECK(mr__pass_due(&c, t) == NEVER); /* not judged yet */
	CHECK(mr__pass_unexplained_in(&c, t + MS / 2) == MS / 2);
	CHECK(mr__pass_unexplained_in(&c, t + MS) == 0);
	mr__pass_judged(&c, false, t + MS);
	CHECK(mr__pass_due(&c, t + MS) == 0);
	mr__pass_done(&c, t + MS, t + 3 * MS);
	CHECK(mr__pass_due(&c, t + 4 * MS) == NEVER);
	CHECK(c.pass_cost_ns == 2 * MS);

	/* The recent mounts explained it (a bind made read-only): no pass. */
	mr__pass_pollpri(&c, t + 10 * MS);
	mr__pass_judged(&c, true, t + 11 * MS);
	CHECK(mr__pass_due(&c, t + 11 * MS) == NEVER);
	return 0;
}

/* Records left over from one operation explain nothing in a later batch. */
static int test_leftover_records(void)
{
	struct mr__pass_clock c = clock_at(0, MS);
	uint64_t t = 1000 * MS;

	mr__pass_pollpri(&c, t);
	mr__pass_records(&c, 5, 50000, t + 1000); /* a mount propagated to five peers */
	mr__pass_batch_end(&c);
	mr__pass_pollpri(&c, t + 100000);          /* a remount right after */
	CHECK(mr__pass_unexplained_in(&c, t + 100000) != NEVER);
	return 0;
}

/* Nobody asks for attribute changes: never a pass, whatever happens. */
static int test_not_wanted(void)
{
	struct mr__pass_clock c = clock_at(0, MS);

	c.wanted = false;
	mr__pass_pollpri(&c, 10 * MS);
	mr__pass_judged(&c, false, 11 * MS);
	for (int i = 0; i < 1000; i++) {
		mr__pass_pollpri(&c, 20 * MS + (uint64_t)i * 1000);
		mr__pass_records(&c, 1, 1 * MS, 20 * MS + (uint64_t)i * 1000 + 10);
	}
	CHECK(mr__pass_due(&c, 10000 * MS) == NEVER);
	c.wanted = true; /* someone asks: what was put off is due */
	CHECK(mr__pass_due(&c, 10000 * MS) == 0);
	return 0;
}

/* In a storm of remounts, passes leave the router as much time as they take. */
static int test_remount_storm(void)
{
	struct mr__pass_clock c = clock_at(0, MS);
	uint64_t t = 1000 * MS;

	mr__pass_pollpri(&c, t);
	mr__pass_judged(&c, false, t + MS);
	CHECK(mr__pass_due(&c, t + MS) == 0);
	mr__pass_done(&c, t + MS, t + 9 * MS); /* a pass of 8 ms */
	mr__pass_pollpri(&c, t + 9 * MS);
	mr__pass_judged(&c, false, t + 10 * MS);
	CHECK(mr__pass_due(&c, t + 10 * MS) == 7 * MS);
	CHECK(mr__pass_due(&c, t + 17 * MS) == 0);
	return 0;
}

/* A burst of explained POLLPRIs: verified once records pause; a lone one is not. */
static int test_burst_verified(void)
{
	struct mr__pass_clock c = clock_at(0, 10 * MS);
	uint64_t t = 1000 * MS;

	for (int i = 0; i < 3; i++) {
		mr__pass_pollpri(&c, t + (uint64_t)i * 100000);
		mr__pass_records(&c, 1, 20000, t + (uint64_t)i * 100000 + 5000);
		mr__pass_batch_end(&c);
	}
	uint64_t last = t + 2 * 100000 + 5000;
	CHECK(mr__pass_due(&c, last + 1000) != 0); /* records may still come */
	/* A lone change after the burst does not make it forgotten. */
	mr__pass_pollpri(&c, last + 500000);
	mr__pass_records(&c, 1, 20000, last + 505000);
	mr__pass_batch_end(&c);
	last += 505000;
	CHECK(mr__pass_due(&c, last + MR__PASS_VERIFY_QUIET_NS) == 0);
	mr__pass_done(&c, last + MS, last + 2 * MS);
	CHECK(c.unverified == 0 && c.burst == 0 && c.bursts == 0);
	/* Another burst soon after: verified no sooner than VERIFY_DUTY passes' time. */
	t = last + 3 * MS;
	for (int i = 0; i < 3; i++) {
		mr__pass_pollpri(&c, t + (uint64_t)i * 100000);
		mr__pass_records(&c, 1, 20000, t + (uint64_t)i * 100000 + 5000);
		mr__pass_batch_end(&c);
	}
	uint64_t free_at = last + 2 * MS + MS * MR__PASS_VERIFY_DUTY;
	CHECK(mr__pass_due(&c, t + 10 * MS) == free_at - (t + 10 * MS));
	CHECK(mr__pass_due(&c, free_at) == 0);
	return 0;
}

/* A storm the kernel coalesced into one POLLPRI: its records make the burst. */
static int test_coalesced_storm(void)
{
	struct mr__pass_clock c = clock_at(0, MS);
	uint64_t t = 1000 * MS;

	mr__pass_pollpri(&c, t);
	for (int i = 0; i < 40; i++)
		mr__pass_records(&c, 1, 20000, t + 1000 + (uint64_t)i * 30000);
	mr__pass_batch_end(&c);
	uint64_t last = t + 1000 + 39 * 30000;
	CHECK(c.unverified == 1 && c.bursts == 1);
	CHECK(mr__pass_due(&c, last + MR__PASS_VERIFY_QUIET_NS) == 0);
	return 0;
}

/* The lone coalesced case: verified after VERIFY_DUTY times a pass's cost of records. */
static int test_duty_bound(void)
{
	struct mr__pass_clock c = clock_at(0, 2 * MS);
	uint64_t t = 1000 * MS, spent = 0, per = 100000; /* 100 us a change */
	int changes = 0;

	while (mr__pass_due(&c, t + MR__PASS_VERIFY_QUIET_NS) != 0) {
		mr__pass_pollpri(&c, t);
		mr__pass_records(&c, 1, per, t + 1000);
		mr__pass_batch_end(&c);
		spent += per;
		t += 30 * MS;
		changes++;
		CHECK(changes < 100000);
	}
	CHECK(spent >= 2 * MS * MR__PASS_VERIFY_DUTY);
	CHECK(changes == (int)(2 * MS * MR__PASS_VERIFY_DUTY / per));
	return 0;
}

/* ---- parents first ---- */

static struct mr__mount *mk(uint64_t id, uint64_t parent, const char *path)
{
	return mr__mount_new(&(struct mr_mount){.id = id, .parent_id = parent, .path = path}, 0, 0,
			     0);
}

static int test_order(void)
{
	/* A child with the lower ID and the same path as its parent (stacked). */
	struct mr__mount *v[4] = {mk(5, 9, "/a"), mk(9, 1, "/a"), mk(7, 5, "/a/b"), mk(3, 1, "/z")};
	struct mr__mount *keep[4];

	memcpy(keep, v, sizeof(v));
	CHECK(mr__order_parents_first(v, 4, false) == 0);
	CHECK(v[0]->pub.id == 9 && v[1]->pub.id == 3 && v[2]->pub.id == 5 && v[3]->pub.id == 7);
	CHECK(mr__order_parents_first(v, 4, true) == 0);
	CHECK(v[0]->pub.id == 7 && v[1]->pub.id == 5);
	for (int i = 0; i < 4; i++)
		mr__mount_unref(keep[i]);
	return 0;
}

int main(void)
{
	int fail = 0;

	fail |= RUN(test_attach_alone);
	fail |= RUN(test_remount_alone);
	fail |= RUN(test_leftover_records);
	fail |= RUN(test_not_wanted);
	fail |= RUN(test_remount_storm);
	fail |= RUN(test_burst_verified);
	fail |= RUN(test_coalesced_storm);
	fail |= RUN(test_duty_bound);
	fail |= RUN(test_order);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
