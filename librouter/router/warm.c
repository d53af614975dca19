/* SPDX-License-Identifier: MIT */
/*
 * What goes in the router's warm set (warm.h): after a batch of changes,
 * the lines that batch used, taken from the subscribers it delivered to,
 * which name the namespaces and the subtrees it touched.  The next step
 * prefetches them as it begins (loop.c).
 *
 * The first few subscribers are enough: the set is for a quiet table, a
 * change at a time reaching a few subscribers; in a storm every line is
 * already warm.  A namespace's lines go in once however many of its
 * subscribers follow one another on the list.
 */
#include <stddef.h>

#include "router.h"

#define SUBS_NOTED 4

void mr__warm_note(mr_router *r)
{
	struct mr__warm *w = &r->warm;
	const struct mr__ns *last = NULL;
	unsigned subs = 0;

	w->n = 0;
	mr__warm_add(w, &r->cmds, sizeof(r->cmds));
	mr__warm_add(w, &r->active, offsetof(struct mr_router, warm) - offsetof(struct mr_router, active));
	mr__warm_add(w, r->match, sizeof(*r->match));
	mr__reactor_warm(r->re, w);
	for (const struct mr_sub *s = r->touched; s && subs < SUBS_NOTED; s = s->next_touched, subs++) {
		const struct mr__ns *ns = s->ns;
		if (!ns)
			continue; /* its namespace went away in this batch */
		mr__sub_warm(s, w);
		if (ns != last) {
			mr__warm_add(w, ns, sizeof(*ns));
			/* The head of the statmount reply, which the kernel writes. */
			mr__warm_add(w, ns->smbuf.p, 2 * MR__CACHELINE);
			if (ns->ops->warm)
				ns->ops->warm(ns, w);
			last = ns;
		}
		mr__trie_warm(ns->trie, s->prefix, w);
	}
}
