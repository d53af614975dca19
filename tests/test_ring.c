/* SPDX-License-Identifier: MIT */
/*
 * Subscriber rings: order, capacity and reserve, the sleep/wake protocol
 * across threads (run under ThreadSanitizer in CI), and event lifetimes
 * shared between rings (run under AddressSanitizer).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "event.h"
#include "sub.h"
#include "testutil.h"

static struct mr__event *numbered(uint64_t seq, uint32_t refs)
{
	struct mr__event *ev = mr__event_marker(MR_EVENT_MOUNT);

	ev->pub.seq = seq;
	atomic_store(&ev->refs, refs);
	return ev;
}

static int test_order_capacity_reserve(void)
{
	struct mr_sub_opts o = {.size = sizeof(o), .capacity = 16};
	struct mr_sub *s;
	const struct mr_event *ev;

	CHECK(mr__sub_alloc(NULL, -1, &o, &s) == 0);
	CHECK(s->capacity == 16);
	/* 15 usable slots in a 16-slot ck_ring, four held back for markers. */
	uint64_t n = 0;
	for (;;) {
		struct mr__event *e = numbered(n, 1);
		if (!mr__sub_push(s, e)) {
			mr__event_discard(e);
			break;
		}
		n++;
	}
	CHECK_EQ_U64(n, 11);
	for (int i = 0; i < 4; i++)
		CHECK(mr__sub_push_reserved(s, numbered(n++, 1)));
	struct mr__event *extra = numbered(n, 1);
	CHECK(!mr__sub_push_reserved(s, extra));
	mr__event_discard(extra);

	for (uint64_t i = 0; i < 15; i++) {
		CHECK(mr_sub_next(s, &ev) == 0);
		CHECK_EQ_U64(ev->seq, i);
		mr_event_unref(ev);
	}
	CHECK(mr_sub_next(s, &ev) == -EAGAIN);
	mr__sub_destroy(s);
	return 0;
}

static int test_shared_event_lifetime(void)
{
	struct mr_sub_opts o = {.size = sizeof(o), .capacity = 8};
	struct mr_sub *a, *b;
	const struct mr_event *ea, *eb;

	CHECK(mr__sub_alloc(NULL, -1, &o, &a) == 0);
	CHECK(mr__sub_alloc(NULL, -1, &o, &b) == 0);
	struct mr__event *ev = numbered(7, 2);
	CHECK(mr__sub_push(a, ev));
	CHECK(mr__sub_push(b, ev));
	CHECK(mr_sub_next(a, &ea) == 0);
	mr_event_unref(ea); /* one reference left: b's */
	CHECK(mr_sub_next(b, &eb) == 0);
	CHECK(eb == ea && eb->seq == 7);
	mr_event_unref(eb); /* freed here; ASan checks nothing touches it after */

	/* Destroying a sub releases what is still queued. */
	CHECK(mr__sub_push(a, numbered(8, 1)));
	mr__sub_destroy(a);
	mr__sub_destroy(b);
	return 0;
}

struct pc {
	struct mr_sub *s;
	uint64_t n;
	uint64_t received;
	int err;
};

static void *consumer(void *arg)
{
	struct pc *pc = arg;
	uint64_t expect = 0;

	while (expect < pc->n) {
		const struct mr_event *ev;
		int r = mr_sub_next(pc->s, &ev);
		if (r == -EAGAIN) {
			/* A lost wake-up would hang here; the ctest timeout catches it. */
			if (mr_sub_wait(pc->s, 10000) == -ETIMEDOUT) {
				pc->err = -ETIMEDOUT;
				return NULL;
			}
			continue;
		}
		if (ev->seq != expect) {
			pc->err = -EPROTO;
			mr_event_unref(ev);
			return NULL;
		}
		expect++;
		mr_event_unref(ev);
	}
	pc->received = expect;
	return NULL;
}

/* One producer, one consumer that sleeps whenever the ring is empty. */
static int test_wake_protocol_threads(void)
{
	struct mr_sub_opts o = {.size = sizeof(o), .capacity = 64};
	struct pc pc = {.n = 200000};
	pthread_t th;

	CHECK(mr__sub_alloc(NULL, -1, &o, &pc.s) == 0);
	CHECK(pthread_create(&th, NULL, consumer, &pc) == 0);
	for (uint64_t i = 0; i < pc.n;) {
		/* Bursts of 1..37 events, then one wake check, as the router does per step. */
		uint64_t burst = 1 + i % 37;
		for (uint64_t k = 0; k < burst && i < pc.n;) {
			struct mr__event *ev = numbered(i, 1);
			if (mr__sub_push(pc.s, ev)) {
				i++;
				k++;
			} else {
				mr__event_discard(ev);
				mr__sub_wake(pc.s);
				sched_yield();
			}
		}
		mr__sub_wake(pc.s);
	}
	pthread_join(th, NULL);
	CHECK(pc.err == 0);
	CHECK_EQ_U64(pc.received, pc.n);
	mr__sub_destroy(pc.s);
	return 0;
}

int main(void)
{
	int fail = 0;

	fail |= RUN(test_order_capacity_reserve);
	fail |= RUN(test_shared_event_lifetime);
	fail |= RUN(test_wake_protocol_threads);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
