/* SPDX-License-Identifier: MIT */
/*
 * The step and who runs it: a step reaps every completion the reactor has
 * (decode, look up, update the mirror, route), wakes each subscriber that
 * got something, then does what the batch left pending: source work after
 * the batch, resyncs after kernel losses, catch-up of overrun subscribers.
 * A step costs what its completions brought, not the number of namespaces:
 * only those whose source asked (due.c) do work after the batch.
 * The caller's thread runs it through mr_router_dispatch(), or the router's
 * own thread through mr_router_start().
 */
#include <errno.h>
#include <pthread.h>

#include "router.h"

/* The eventfd read itself is the point: it woke the router.  step() clears the flag. */
void mr__loop_wake_cb(struct mr__watch *w, int res, const void *buf, size_t len)
{
	(void)w;
	(void)res;
	(void)buf;
	(void)len;
}

/* Wakes the subscribers that got events since the last call, if they wait. */
static void wake_touched(mr_router *r)
{
	uint64_t wakes = 0;

	for (struct mr_sub *s = r->touched; s; s = s->next_touched) {
		s->in_touched = false;
		wakes += mr__sub_wake(s);
	}
	if (wakes)
		mr__count(&r->syscalls, wakes);
	r->touched = NULL;
}

static int step(mr_router *r)
{
	uint64_t routed = atomic_load_explicit(&r->events_routed, memory_order_relaxed);
	struct mr__reactor_stats rs;

	/*
	 * First, before any system call: the misses on what the last change
	 * used are taken while the kernel reads the record (warm.h).
	 */
	mr__warm_prefetch(&r->warm);
	r->now_ns = 0;
	/*
	 * Commands before each batch of completions is handled: a subscription
	 * made before a mount(2) call must see that mount's record, and once
	 * the record's completion is visible, so is the command pushed before
	 * the call.
	 */
	mr__commands_run(r);
	mr__reactor_reap(r->re, mr__commands_run_cb, r);
	if (r->touched)
		mr__warm_note(r);
	/*
	 * What the kernel's records said goes out now, not after the work
	 * below: a sweep slice takes up to 1 ms, a resync or a catch-up of
	 * 10,000 mounts tens of milliseconds.
	 */
	wake_touched(r);
	mr__due_run(r);
	/* A namespace command a source's read left queued is not kept to the next wake-up. */
	if (mr__commands_queued(r)) {
		mr__commands_run(r);
		mr__due_run(r);
	}
	if (r->any_resync) {
		r->any_resync = false;
		for (struct mr__ns *ns = r->active; ns; ns = ns->next)
			if (ns->resync_pending) {
				struct mr__resync resync;
				if (mr__recovery_read(ns, &resync)) {
					mr__router_observed(ns);
					mr__recovery_resync(ns, &resync);
				}
				mr__router_due(ns); /* the source's schedule starts again */
			}
	}
	if (r->overrun)
		mr__recovery_catch_up(r);
	wake_touched(r);

	mr__reactor_stats(r->re, &rs);
	atomic_store_explicit(&r->enters, rs.enters, memory_order_relaxed);
	atomic_store_explicit(&r->reactor_calls, rs.calls, memory_order_relaxed);
	return (int)(atomic_load_explicit(&r->events_routed, memory_order_relaxed) - routed);
}

int mr_router_dispatch(mr_router *r)
{
	int n, err;

	if (!r)
		return -EINVAL;
	if (r->threaded)
		return -EBUSY;
	n = step(r);
	err = mr__reactor_submit(r->re, false);
	return err < 0 ? err : n;
}

int mr_router_wait(mr_router *r, int timeout_ms)
{
	if (!r)
		return -EINVAL;
	if (r->threaded)
		return -EBUSY;
	return mr__reactor_wait(r->re, timeout_ms);
}

int mr_router_fd(const mr_router *r)
{
	return r ? mr__reactor_fd(r->re) : -EINVAL;
}

static void *router_main(void *arg)
{
	mr_router *r = arg;

	while (!atomic_load(&r->stop)) {
		int err = mr__reactor_submit(r->re, true);
		if (err < 0 && err != -EINTR && err != -ETIME && err != -EAGAIN && err != -EBUSY)
			break;
		step(r);
	}
	return NULL;
}

int mr_router_start(mr_router *r)
{
	int err;

	if (!r)
		return -EINVAL;
	if (r->threaded)
		return -EALREADY;
	atomic_store(&r->stop, false);
	/* Submit what add_ns queued on this thread before the router's takes over. */
	mr__reactor_submit(r->re, false);
	r->threaded = true;
	err = pthread_create(&r->thread, NULL, router_main, r);
	if (err) {
		r->threaded = false;
		return -err;
	}
	return 0;
}

int mr_router_stop(mr_router *r)
{
	if (!r)
		return -EINVAL;
	if (!r->threaded)
		return -EALREADY;
	atomic_store(&r->stop, true);
	mr__router_kick(r);
	pthread_join(r->thread, NULL);
	r->threaded = false;
	return 0;
}
