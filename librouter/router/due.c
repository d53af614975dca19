/* SPDX-License-Identifier: MIT */
/*
 * Which namespaces do work after a batch: those whose source asked, by
 * mr__router_due() from a completion (records, a POLLPRI, its timer) or
 * because what its subscribers want changed.  A list, not a walk over
 * every namespace: with 1,000 namespaces watched, one change in one of
 * them must not cost 1,000 calls (bench: ns_scale).
 */
#include "router.h"

void mr__router_due(struct mr__ns *ns)
{
	/*
	 * Not before add_ns: a shared fanotify group can apply records to a
	 * namespace still being opened on the caller's thread.
	 */
	if (!ns->active || ns->due || !ns->ops->after_batch)
		return;
	ns->due = true;
	ns->next_due = ns->r->due;
	ns->r->due = ns;
}

void mr__due_run(mr_router *r)
{
	struct mr__ns *ns = r->due;

	r->due = NULL; /* one that asks again now waits for the next step */
	while (ns) {
		struct mr__ns *next = ns->next_due;
		ns->due = false;
		ns->next_due = NULL;
		ns->ops->after_batch(ns);
		ns = next;
	}
}

void mr__due_forget(mr_router *r, struct mr__ns *ns)
{
	for (struct mr__ns **pp = &r->due; ns->due && *pp; pp = &(*pp)->next_due)
		if (*pp == ns) {
			*pp = ns->next_due;
			ns->due = false;
			return;
		}
}
