/* SPDX-License-Identifier: MIT */
/*
 * What every source shares: a read of kernel records decoded and handed to
 * the router change by change, the one-shot timer sources arm, and the
 * state's lifetime (it ends with the last watch the reactor releases).
 * Choosing a source is source_pick.c's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "sources/source.h"
#include "io/reactor.h"
#include "namespace.h"
#include "router/upcalls.h"
#include "sources/decode.h"

long mr__source_records(struct mr__ns *ns, int res, const void *buf, size_t len,
			mr__decode_fn decode, struct mr__change *out, size_t max)
{
	uint64_t bad = 0;

	if (res < 0) {
		if (res != -EAGAIN && res != -EINTR)
			mr__router_loss(ns);
		return -1;
	}
	mr__router_stamp(ns->r);
	size_t n = decode(buf, len, out, max, &bad);
	if (bad) {
		/* A record skipped is a change missed: counted, and the resync finds it. */
		mr__router_count_bad(ns->r, bad);
		mr__router_loss(ns);
	}
	for (size_t i = 0; i < n; i++)
		mr__router_change(ns, &out[i]);
	return (long)n;
}

void mr__source_watch_released(struct mr__watch *w)
{
	struct mr__source_base *b = w->owner; /* each state begins with its base */

	if (--b->live == 0)
		b->free_state(b);
}

static void timer_fired(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct mr__source_timer *t =
		(struct mr__source_timer *)((char *)w - offsetof(struct mr__source_timer, watch));

	(void)res;
	(void)buf;
	(void)len;
	t->armed = false;
	mr__router_due(t->ns);
}

void mr__source_timer_init(struct mr__source_timer *t, void *st, struct mr__ns *ns)
{
	*t = (struct mr__source_timer){
		.watch = {.mode = MR__WATCH_TIMER, .fd = -1, .fn = timer_fired, .owner = st,
			  .release = mr__source_watch_released},
		.ns = ns,
	};
}

void mr__source_timer_arm(struct mr__source_timer *t, struct mr__reactor *re, uint64_t in_ns,
			  uint64_t now)
{
	uint64_t at = now + in_ns;

	if (t->armed) {
		/* Due sooner than the timer in flight: bring that forward. */
		if (at < t->at_ns && mr__reactor_retime(re, &t->watch, in_ns) == 0)
			t->at_ns = at;
		return;
	}
	t->watch.timeout_ns = in_ns;
	if (mr__reactor_add(re, &t->watch) == 0) {
		t->armed = true;
		t->at_ns = at;
	}
}

void mr__source_end(struct mr__source_base *b, struct mr__reactor *re,
		    struct mr__watch *const *watches, size_t n)
{
	if (!re || !b->live) {
		b->free_state(b);
		return;
	}
	/* Each watch is released once the kernel lets go; the last frees the state. */
	for (size_t i = 0; i < n; i++)
		mr__reactor_remove(re, watches[i]);
}
