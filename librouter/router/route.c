/* SPDX-License-Identifier: MIT */
/*
 * Routing: an event goes to the rings of the subscribers whose subtree it
 * touches (the namespace's trie), once each, in order; a subscriber whose
 * ring is full is marked overrun instead, and caught up later (recovery.c).
 */
#include <errno.h>
#include <string.h>

#include "router.h"

bool mr__route_in_subtree(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1)
		return true; /* "/" */
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

void mr__route_touch(mr_router *r, struct mr_sub *s)
{
	if (!s->in_touched) {
		s->in_touched = true;
		s->next_touched = r->touched;
		r->touched = s;
	}
}

void mr__route_mark_overrun(mr_router *r, struct mr_sub *s)
{
	if (!s->overrun) {
		s->overrun = true;
		s->next_overrun = r->overrun;
		r->overrun = s;
		atomic_store_explicit(&s->wants_recovery, 1, memory_order_relaxed);
	}
	s->lost++;
	mr__count(&s->dropped, 1);
	mr__count(&r->ring_drops, 1);
}

struct match_ctx {
	mr_router *r;
	uint32_t kind_bit;
	size_t n;
	int err;
};

static void collect(struct mr_sub *s, void *arg)
{
	struct match_ctx *m = arg;
	mr_router *r = m->r;

	if (!(s->kinds & m->kind_bit) || s->route_mark == r->route_mark)
		return;
	s->route_mark = r->route_mark;
	if (m->n == r->cap_match) {
		size_t cap = r->cap_match ? r->cap_match * 2 : 64;
		struct mr_sub **v = mr__realloc(r->match, cap * sizeof(*v));
		if (!v) {
			m->err = -ENOMEM;
			return;
		}
		r->match = v;
		r->cap_match = cap;
	}
	r->match[m->n++] = s;
}

/*
 * Hands @ev to the @n subscribers in r->match.  The reference count is set
 * before the first enqueue: a subscriber may release its reference the
 * moment the event is in its ring.
 */
void mr__route_deliver(mr_router *r, struct mr__event *ev, size_t n, bool reserved)
{
	if (!n) {
		mr__event_discard(ev);
		return;
	}
	atomic_store_explicit(&ev->refs, (uint32_t)n, memory_order_relaxed);
	for (size_t i = 0; i < n; i++) {
		struct mr_sub *s = r->match[i];
		bool ok;

		if (MR__UNLIKELY(s->overrun))
			ok = false; /* keep order: nothing new until it has caught up */
		else
			ok = reserved ? mr__sub_push_reserved(s, ev) : mr__sub_push(s, ev);
		if (ok) {
			mr__count(&s->delivered, 1);
			mr__route_touch(r, s);
		} else {
			mr__route_mark_overrun(r, s);
			mr_event_unref(&ev->pub);
		}
	}
	mr__count(&r->deliveries, n);
}

void mr__route_stamp(mr_router *r, struct mr__ns *ns, struct mr__event *ev, uint32_t flags)
{
	ev->pub.flags |= flags;
	ev->pub.ns_id = ns->id;
	ev->pub.seq = ++r->seq;
	ev->pub.time_ns = r->now_ns ? r->now_ns : mr__now_ns();
}

/*
 * An event some subscribers of @ns should have had could not be made or
 * routed (out of memory).  The mirror has the change, so no resync would
 * find it: each subscriber of @ns is treated as overrun instead, and gets
 * an OVERRUN marker and a snapshot of its subtree.
 */
static void lose_event(struct mr__ns *ns)
{
	for (struct mr_sub *s = ns->r->subs; s; s = s->next_all)
		if (s->ns == ns && s->attached)
			mr__route_mark_overrun(ns->r, s);
}

/* Routes a change event to the subscribers of every subtree it touches. */
static void route(struct mr__ns *ns, struct mr__event *ev)
{
	mr_router *r = ns->r;
	struct match_ctx m = {.r = r, .kind_bit = MR_KIND(ev->pub.kind)};

	r->route_mark++;
	mr__trie_match(ns->trie, ev->pub.path, strlen(ev->pub.path), collect, &m);
	if (ev->pub.kind == MR_EVENT_MOVE)
		mr__trie_match(ns->trie, ev->pub.old_path, strlen(ev->pub.old_path), collect, &m);
	mr__count(&r->events_routed, 1);
	if (MR__UNLIKELY(m.err)) {
		/* Some matching subscribers were not collected. */
		lose_event(ns);
		mr__event_discard(ev);
		return;
	}
	mr__route_deliver(r, ev, m.n, false);
}

/* Sends a marker to every subscriber of @ns, whatever its subtree. */
void mr__route_broadcast(struct mr__ns *ns, uint32_t kind, uint32_t flags)
{
	mr_router *r = ns->r;
	size_t n = 0;

	struct match_ctx m = {.r = r, .kind_bit = ~0u};
	r->route_mark++;
	for (struct mr_sub *s = r->subs; s; s = s->next_all)
		if (s->ns == ns && s->attached)
			collect(s, &m);
	n = m.n;
	struct mr__event *ev = mr__event_marker(kind);
	if (!ev)
		return;
	mr__route_stamp(r, ns, ev, flags);
	mr__route_deliver(r, ev, n, true);
}

void mr__router_emit(struct mr__ns *ns, uint32_t kind, struct mr__mount *old,
		     struct mr__mount *now, uint32_t flags)
{
	struct mr__event *ev = mr__event_new(kind, old, now);

	if (!ev) {
		lose_event(ns);
		return;
	}
	mr__route_stamp(ns->r, ns, ev, flags);
	route(ns, ev);
}
