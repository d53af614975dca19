/* SPDX-License-Identifier: MIT */
/*
 * Recovery: after records were lost, a resync reads the whole table and
 * reports the differences between RESYNC markers; a subscriber whose ring
 * overran gets an OVERRUN marker and a SNAPSHOT once it has drained half
 * its ring; a namespace removed tells its subscribers with NS_GONE.
 */
#include <errno.h>
#include <string.h>

#include "router.h"

struct sync_ctx {
	struct mr__ns *ns;
	uint32_t flags;
};

static int sync_one(struct mr__mount *old, struct mr__mount *now, void *arg)
{
	struct sync_ctx *c = arg;
	uint32_t kind = !old ? MR_EVENT_MOUNT : !now ? MR_EVENT_UNMOUNT : mr__event_kind_of(old, now);

	mr__router_emit(c->ns, kind, old, now, c->flags);
	return 0;
}

int mr__router_sync(struct mr__ns *ns, struct mr__table *fresh, uint32_t flags)
{
	struct sync_ctx c = {.ns = ns, .flags = flags};
	int n = mr__mirror_sync(&ns->mirror, fresh, sync_one, &c);

	/* Out of memory before anything was applied: the mirror is behind, resync. */
	if (n < 0)
		mr__router_loss(ns);
	return n;
}

void mr__router_loss(struct mr__ns *ns)
{
	ns->resync_pending = true;
	ns->r->any_resync = true;
	mr__count(&ns->r->kernel_losses, 1);
}

void mr__router_lose_all(mr_router *r)
{
	for (struct mr__ns *ns = r->active; ns; ns = ns->next)
		mr__router_loss(ns);
}

bool mr__recovery_read(struct mr__ns *ns, struct mr__resync *rs)
{
	mr_router *r = ns->r;

	*rs = (struct mr__resync){.t0 = mr__now_ns(), .cpu0 = mr__thread_cpu_ns()};
	ns->resync_pending = false;
	mr__router_reading(ns);
	if (ns->ops->read_table(ns, &rs->fresh) < 0) {
		/* Could not read the table: try again after the next batch. */
		mr__table_clear(&rs->fresh);
		ns->resync_pending = true;
		r->any_resync = true;
		return false;
	}
	return true;
}

void mr__recovery_resync(struct mr__ns *ns, struct mr__resync *rs)
{
	mr_router *r = ns->r;

	r->now_ns = rs->t0;
	mr__route_broadcast(ns, MR_EVENT_RESYNC_BEGIN, MR_EVF_KERNEL_LOSS);
	mr__router_sync(ns, &rs->fresh, MR_EVF_SYNTHETIC);
	mr__route_broadcast(ns, MR_EVENT_RESYNC_END, MR_EVF_KERNEL_LOSS);
	mr__table_clear(&rs->fresh);
	mr__count(&r->resyncs, 1);
	mr__count(&r->resync_ns_total, mr__now_ns() - rs->t0);
	mr__count(&r->resync_cpu_ns_total, mr__thread_cpu_ns() - rs->cpu0);
}

/* ---- overrun subscribers ---- */

struct snap_ctx {
	const char *prefix;
	struct mr__table t;
	int err;
};

static int snap_one(struct mr__mount *m, void *arg)
{
	struct snap_ctx *c = arg;

	if (mr__route_in_subtree(m->pub.path, c->prefix)) {
		/* On failure the push has dropped the reference it was given. */
		int err = mr__table_push(&c->t, mr__mount_ref(m));
		if (err < 0) {
			c->err = err;
			return err;
		}
	}
	return 0;
}

/* The subscriber's subtree as the mirror has it now, parents first. */
static struct mr__event *subtree_snapshot(struct mr_sub *s)
{
	struct snap_ctx c = {.prefix = s->prefix};
	struct mr__event *ev = NULL;

	mr__mirror_each(&s->ns->mirror, snap_one, &c);
	if (!c.err)
		c.err = mr__mirror_sort_parents_first(&s->ns->mirror, c.t.v, c.t.n);
	if (!c.err)
		ev = mr__event_snapshot(c.t.v, c.t.n);
	mr__table_clear(&c.t);
	return ev;
}

/* Room for one in r->match; false when out of memory. */
static bool ensure_match(mr_router *r)
{
	if (!r->cap_match) {
		r->match = mr__malloc(64 * sizeof(*r->match));
		if (r->match)
			r->cap_match = 64;
	}
	return r->cap_match != 0;
}

bool mr__recovery_send_snapshot(mr_router *r, struct mr_sub *s, uint32_t flags)
{
	struct mr__event *ev;

	if (!ensure_match(r))
		return false;
	ev = subtree_snapshot(s);
	if (!ev)
		return false;
	mr__route_stamp(r, s->ns, ev, flags);
	r->match[0] = s;
	mr__route_deliver(r, ev, 1, true);
	mr__count(&s->snapshots, 1);
	return true;
}

/* @s, off the overrun list and still marked, goes back on it. */
static void keep_overrun(mr_router *r, struct mr_sub *s)
{
	s->next_overrun = r->overrun;
	r->overrun = s;
}

/*
 * Catches @s up, taken off the overrun list: an OVERRUN marker saying how
 * much it missed, then a SNAPSHOT of its subtree to rebuild from, both in
 * the reserved slots.  Not yet (ring still over half full, no memory): it
 * goes back on the list.
 */
static void catch_up_one(mr_router *r, struct mr_sub *s)
{
	if (!s->ns || mr__sub_queued(s) > s->capacity / 2) {
		keep_overrun(r, s);
		return;
	}
	/* Subscribed when the trie had no memory for it: attach it now. */
	if (!s->attached) {
		if (mr__trie_add(s->ns->trie, s->prefix, s) < 0) {
			keep_overrun(r, s);
			return;
		}
		s->attached = true;
		/* As add_sub() counts it: else no pass looks for its READONLY and ATTR. */
		mr__ns_count_sub(s->ns, s->kinds, 1);
		mr__router_due(s->ns);
	}
	/*
	 * What the source put off is routed first, while @s is still marked:
	 * for @s it is part of what was lost (the snapshot has it), not events
	 * queued ahead of the marker or a ring filled again mid-recovery.
	 */
	if (s->ns->ops->settle)
		s->ns->ops->settle(s->ns);
	struct mr__event *ev = mr__event_marker(MR_EVENT_OVERRUN);
	if (!ev) {
		keep_overrun(r, s);
		return;
	}
	s->overrun = false;
	ev->pub.lost = s->lost;
	mr__route_stamp(r, s->ns, ev, MR_EVF_RING_LOSS);
	r->match[0] = s;
	mr__route_deliver(r, ev, 1, true);
	mr__count(&s->overruns, 1);
	bool sent = mr__recovery_send_snapshot(r, s, MR_EVF_RING_LOSS | MR_EVF_SYNTHETIC);
	/* Marked again meanwhile (a delivery failed): it is back on the list already. */
	if (s->overrun)
		return;
	if (!sent) {
		s->overrun = true;
		keep_overrun(r, s);
		return;
	}
	s->lost = 0;
	atomic_store_explicit(&s->wants_recovery, 0, memory_order_relaxed);
}

/*
 * Catches up the subscribers that overran, once they have drained half
 * their ring.  The list is taken whole first: catching one up routes
 * events (a source's settle, the snapshot's), and a subscriber they
 * overrun is put on r->overrun by mr__route_mark_overrun(), for the next
 * step, never onto the list being walked.
 */
void mr__recovery_catch_up(mr_router *r)
{
	struct mr_sub *s = r->overrun, *next;

	/* Out of memory: try again after the next batch. */
	if (!ensure_match(r))
		return;
	r->overrun = NULL;
	for (; s; s = next) {
		next = s->next_overrun;
		s->next_overrun = NULL;
		catch_up_one(r, s);
	}
}

/*
 * @ns is no longer watched: each of its subscribers gets an OVERRUN marker
 * if it had overrun and not caught up (what it lost is not coming back),
 * then NS_GONE, made when the namespace was opened so that it cannot be
 * lost to a failed allocation.  Both go into the reserve.
 */
void mr__recovery_tell_ns_gone(mr_router *r, struct mr__ns *ns)
{
	struct mr__event *gone = ns->gone;
	uint32_t n = 0;

	ns->gone = NULL;
	for (struct mr_sub *s = r->subs; s; s = s->next_all) {
		if (s->ns != ns)
			continue;
		n++;
		if (!s->overrun)
			continue;
		struct mr__event *ev = mr__event_marker(MR_EVENT_OVERRUN);
		if (ev) {
			ev->pub.lost = s->lost;
			mr__route_stamp(r, ns, ev, MR_EVF_RING_LOSS);
			atomic_store_explicit(&ev->refs, 1, memory_order_relaxed);
			if (mr__sub_push_reserved(s, ev))
				mr__count(&s->overruns, 1);
			else
				mr_event_unref(&ev->pub);
		}
	}
	if (!n) {
		mr__event_discard(gone);
		return;
	}
	mr__route_stamp(r, ns, gone, 0);
	atomic_store_explicit(&gone->refs, n, memory_order_relaxed);
	for (struct mr_sub *s = r->subs; s; s = s->next_all) {
		if (s->ns != ns)
			continue;
		if (mr__sub_push_reserved(s, gone)) {
			mr__count(&s->delivered, 1);
			mr__route_touch(r, s);
		} else {
			mr_event_unref(&gone->pub); /* the reserve makes this unreachable */
		}
	}
	mr__count(&r->deliveries, n);
}
