/* SPDX-License-Identifier: MIT */
/*
 * The O(table) pass for changes that leave a namespace's set of mounts
 * alone (moves, remounts, mount_setattr(2)) on sources that cannot name
 * them: look at every mirrored mount again.  Flags, parent and propagation
 * first (a statmount without strings per mount, ~2.5x cheaper); if that
 * finds nothing and @full, every mount in full, for a remount that changed
 * filesystem options only or a move under the same parent.  At 10,000
 * mounts the first part costs about a mountinfo re-read, the second more.
 */
#include <stdlib.h>

#include "internal.h"

static int collect(struct mr__mount *m, void *arg)
{
	return mr__table_push(arg, mr__mount_ref(m));
}

static int cmp_depth(const void *a, const void *b)
{
	const struct mr__mount *x = *(struct mr__mount *const *)a;
	const struct mr__mount *y = *(struct mr__mount *const *)b;

	if (x->path_len != y->path_len)
		return x->path_len < y->path_len ? -1 : 1;
	return x->pub.id < y->pub.id ? -1 : x->pub.id > y->pub.id;
}

void mr__table_pass(struct mr__ns *ns, bool full, struct mr__table *scratch)
{
	uint64_t cpu0 = mr__thread_cpu_ns();
	size_t found = 0;

	if (mr__mirror_each(&ns->mirror, collect, scratch) < 0) {
		/* No memory to list the mounts: a resync reads them all instead. */
		mr__table_clear(scratch);
		mr__router_loss(ns);
		return;
	}
	/*
	 * Shallowest first: a moved tree is then reported from its top (which
	 * reports the mounts below it), not from a submount the mirror's hash
	 * order happens to reach first.
	 */
	qsort(scratch->v, scratch->n, sizeof(*scratch->v), cmp_depth);
	mr__router_stamp(ns->r);
	for (size_t i = 0; i < scratch->n; i++)
		found += mr__router_recheck_flags(ns, scratch->v[i]->pub.id);
	if (!found && full)
		for (size_t i = 0; i < scratch->n; i++)
			mr__router_recheck(ns, scratch->v[i]->pub.id);
	mr__table_clear(scratch);
	mr__router_count_sweep(ns->r, mr__thread_cpu_ns() - cpu0);
}
