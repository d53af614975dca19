/* SPDX-License-Identifier: MIT */
/*
 * Commands: other threads change what the router serves (namespaces,
 * subscribers) by pushing onto a lock-free stack, which the router thread
 * drains at the start of each step and of each batch of completions, and
 * whenever a source has read the table (mr__router_observed()), oldest
 * first.
 */
#include <unistd.h>

#include "router.h"

void mr__router_kick(mr_router *r)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is already non-zero, the router wakes anyway. */
	(void)!write(r->wake_efd, &one, sizeof(one));
}

/*
 * Only the push that finds the stack empty wakes the router: the router
 * takes the whole stack at once, so a later push onto a non-empty stack is
 * covered by the wake-up of the push that started it.
 *
 * Not ck_stack: its pushes (ck_stack_push_upmc and the others, libck 0.7)
 * return nothing, and the entry's next field cannot be read back after the
 * push because the router may already have run and freed the command; this
 * rule needs the head the CAS replaced.  Without it every command would
 * cost a write(2).  And C11 atomics here are seen by ThreadSanitizer, which
 * cannot see ck_pr's inline assembly (sub.c states what that costs).
 */
void mr__commands_push(mr_router *r, struct mr__cmd *c)
{
	struct mr__cmd *head = atomic_load_explicit(&r->cmds, memory_order_relaxed);

	do
		c->next = head;
	while (!atomic_compare_exchange_weak_explicit(&r->cmds, &head, c, memory_order_release,
						      memory_order_relaxed));
	if (!head)
		mr__router_kick(r);
}

static void unlink_overrun(mr_router *r, struct mr_sub *s)
{
	for (struct mr_sub **pp = &r->overrun; *pp; pp = &(*pp)->next_overrun)
		if (*pp == s) {
			*pp = s->next_overrun;
			return;
		}
}

static void unlink_touched(mr_router *r, struct mr_sub *s)
{
	for (struct mr_sub **pp = &r->touched; *pp; pp = &(*pp)->next_touched)
		if (*pp == s) {
			*pp = s->next_touched;
			s->in_touched = false;
			return;
		}
}

static void detach_sub(mr_router *r, struct mr_sub *s)
{
	if (s->attached) {
		mr__trie_remove(s->ns->trie, s->prefix, s);
		mr__ns_count_sub(s->ns, s->kinds, -1);
		s->attached = false;
		mr__router_due(s->ns); /* its source may now look for less */
	}
	if (s->overrun) {
		unlink_overrun(r, s);
		s->overrun = false;
	}
}

static void add_sub(mr_router *r, struct mr_sub *s, bool settle)
{
	s->next_all = r->subs;
	if (r->subs)
		r->subs->prev_all = s;
	r->subs = s;
	mr__count(&r->n_subs, 1);
	if (!s->ns)
		return;
	/*
	 * A source that put off looking for changes looks now, while @s is
	 * not yet in the trie: what it finds goes to the others, and to @s in
	 * its snapshot, which comes before anything else.
	 */
	if (settle && (s->flags & MR_SUB_SNAPSHOT) && s->ns->ops->settle)
		s->ns->ops->settle(s->ns);
	if (mr__trie_add(s->ns->trie, s->prefix, s) < 0) {
		/* No memory for the trie node: the subscriber learns it lost everything. */
		mr__route_mark_overrun(r, s);
		return;
	}
	s->attached = true;
	mr__ns_count_sub(s->ns, s->kinds, 1);
	mr__router_due(s->ns); /* its source may now look for more */
	if (!(s->flags & MR_SUB_SNAPSHOT))
		return;
	if (!mr__recovery_send_snapshot(r, s, MR_EVF_LATE_JOIN))
		mr__route_mark_overrun(r, s);
}

void mr__commands_del_sub(mr_router *r, struct mr_sub *s)
{
	detach_sub(r, s);
	unlink_touched(r, s);
	r->warm.n = 0; /* lines of @s: harmless to prefetch once freed, but no longer worth it */
	if (s->prev_all)
		s->prev_all->next_all = s->next_all;
	else if (r->subs == s)
		r->subs = s->next_all;
	if (s->next_all)
		s->next_all->prev_all = s->prev_all;
	atomic_store_explicit(&r->n_subs, atomic_load(&r->n_subs) - 1, memory_order_relaxed);
	mr__sub_destroy(s);
}

static void add_ns(mr_router *r, struct mr__ns *ns)
{
	ns->next = r->active;
	r->active = ns;
	ns->active = true;
	mr__mirror_count_into(&ns->mirror, &r->n_mounts);
	if (ns->ops->start(ns, r->re) < 0)
		mr__router_loss(ns);
	mr__router_due(ns);
}

void mr__commands_del_ns(mr_router *r, struct mr__ns *ns)
{
	for (struct mr__ns **pp = &r->active; *pp; pp = &(*pp)->next)
		if (*pp == ns) {
			*pp = ns->next;
			break;
		}
	ns->active = false;
	r->warm.n = 0;
	mr__due_forget(r, ns);
	mr__mirror_count_into(&ns->mirror, NULL);
	mr__recovery_tell_ns_gone(r, ns);
	for (struct mr_sub *s = r->subs; s; s = s->next_all)
		if (s->ns == ns) {
			detach_sub(r, s);
			s->ns = NULL;
		}
	mr__ns_close(ns, r->re);
}

/* Moves what was pushed since the last call to the end of r->queued, in the order pushed. */
static void take_pushed(mr_router *r)
{
	struct mr__cmd *c = atomic_exchange_explicit(&r->cmds, NULL, memory_order_acquire);
	struct mr__cmd *fifo = NULL, **tail = &r->queued;

	/* The stack is newest first: reverse it to apply in the order issued. */
	while (c) {
		struct mr__cmd *next = c->next;
		c->next = fifo;
		fifo = c;
		c = next;
	}
	while (*tail)
		tail = &(*tail)->next;
	*tail = fifo;
}

static void apply(mr_router *r, struct mr__cmd *c, bool settle)
{
	switch (c->kind) {
	case MR__CMD_ADD_NS:
		add_ns(r, c->ns);
		break;
	case MR__CMD_DEL_NS:
		mr__commands_del_ns(r, c->ns);
		break;
	case MR__CMD_ADD_SUB:
		add_sub(r, c->sub, settle);
		break;
	case MR__CMD_DEL_SUB:
		mr__commands_del_sub(r, c->sub);
		break;
	}
	mr__free(c);
}

void mr__commands_run(mr_router *r)
{
	struct mr__cmd *c;

	if (r->applying)
		return;
	take_pushed(r);
	r->applying = true;
	while ((c = r->queued)) {
		r->queued = c->next;
		apply(r, c, true);
	}
	r->applying = false;
}

/*
 * A source has read the kernel's table and has yet to route what it found
 * (a listing, a read of mountinfo, a resync's read after a kernel loss,
 * loop.c).  The completion that asked for that
 * read was reaped before a caller may have subscribed and then changed the
 * table, and the read sees the change: the subscription must be in place
 * before the change is routed, or the subscriber never gets it.  So the
 * subscription commands at the head of the queue are applied now.  A
 * namespace command stops them (it may close the namespace being read):
 * it and what follows wait for the step's next mr__commands_run().
 * Nothing is applied while commands already are (a snapshot's settle
 * reading the table).
 */
void mr__router_observed(struct mr__ns *ns)
{
	mr_router *r = ns->r;
	struct mr__cmd *c;

	if (r->applying)
		return;
	take_pushed(r);
	r->applying = true;
	while ((c = r->queued) && (c->kind == MR__CMD_ADD_SUB || c->kind == MR__CMD_DEL_SUB)) {
		r->queued = c->next;
		/* @ns routes what it read next: no settle of its own meanwhile. */
		apply(r, c, c->kind != MR__CMD_ADD_SUB || c->sub->ns != ns);
	}
	r->applying = false;
}

bool mr__commands_queued(const mr_router *r)
{
	return r->queued != NULL;
}

void mr__commands_run_cb(void *r)
{
	mr__commands_run(r);
}
