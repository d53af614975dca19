/* SPDX-License-Identifier: MIT */
/*
 * The mirror made equal to a fresh read of the whole table (a resync, a
 * namespace's first read), and the parents-first order changes and
 * snapshots are reported in.  The table itself (lookup, insert, remove) is
 * mirror.c's; this file reaches into it only through mirror_table.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "mirror/mirror.h"
#include "alloc.h"
#include "mirror/mirror_table.h"
#include "mirror/mount.h"

static uint32_t path_depth(const struct mr__mount *mnt)
{
	uint32_t d = 0;

	/* "/" is depth 0, "/a" 1, "/a/b" 2; paths come normalised from the kernel. */
	for (uint32_t i = 0; i < mnt->path_len; i++)
		d += mnt->pub.path[i] == '/';
	if (mnt->path_len == 1)
		d = 0;
	return d;
}

void mr__mirror_depth_pass(struct mr__mirror *m)
{
	/* Pass 0 is what new records carry: never use it. */
	if (++m->depth_pass == 0) {
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i] && m->slots[i] != MR__MIRROR_TOMBSTONE)
				m->slots[i]->depth_pass = 0;
		m->depth_pass = 1;
	}
}

uint32_t mr__mirror_depth(const struct mr__mirror *m, struct mr__mount *mnt)
{
	struct mr__mount *top = mnt;
	uint32_t hops = 0, d;

	/*
	 * Up to the first record whose depth this pass knows, or to the top:
	 * the namespace's root is its own parent (statmount) or names one
	 * outside the table (mountinfo).  The bound stops a cycle that bad
	 * input could make.
	 */
	while (top->depth_pass != m->depth_pass && hops < m->n) {
		struct mr__mount *p = top->pub.parent_id == top->pub.id ?
					      NULL : mr__mirror_get(m, top->pub.parent_id);
		if (!p)
			break;
		top = p;
		hops++;
	}
	d = (top->depth_pass == m->depth_pass ? top->depth : 0) + hops;

	/* The same walk again, leaving each depth behind for the next call. */
	uint32_t at = d;
	struct mr__mount *x = mnt;
	for (uint32_t i = 0; i < hops; i++) {
		x->depth = at--;
		x->depth_pass = m->depth_pass;
		x = mr__mirror_get(m, x->pub.parent_id);
	}
	x->depth = at;
	x->depth_pass = m->depth_pass;
	return d;
}

/*
 * Order of changes, by tree depth (ancestors in the mirror), not by path: a
 * mount moved onto an existing mount sits at its parent's path, and
 * keeps an ID lower than its parent's when it is the older of the two.
 */
struct ordered {
	struct mr__mount *old, *now;
	uint32_t depth, pdepth;
	size_t idx;
};

/* Parents first; among equals, the order read (@fresh's). */
static int appear_cmp(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Children first: deepest, then longest path, then newest (highest ID). */
static int gone_cmp(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	if (x->pdepth != y->pdepth)
		return x->pdepth > y->pdepth ? -1 : 1;
	if (x->old->pub.id != y->old->pub.id)
		return x->old->pub.id > y->old->pub.id ? -1 : 1;
	return 0;
}

/* Parents first, then by path length and ID (snapshots). */
static int snap_cmp(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->now->path_len != y->now->path_len)
		return x->now->path_len < y->now->path_len ? -1 : 1;
	return x->now->pub.id < y->now->pub.id ? -1 : x->now->pub.id > y->now->pub.id;
}

int mr__mirror_sort_parents_first(struct mr__mirror *m, struct mr__mount **v, size_t n)
{
	struct ordered *o;

	if (n < 2)
		return 0;
	o = mr__malloc(n * sizeof(*o));
	if (!o)
		return -ENOMEM;
	mr__mirror_depth_pass(m);
	for (size_t i = 0; i < n; i++)
		o[i] = (struct ordered){ .now = v[i], .depth = mr__mirror_depth(m, v[i]) };
	qsort(o, n, sizeof(*o), snap_cmp);
	for (size_t i = 0; i < n; i++)
		v[i] = o[i].now;
	mr__free(o);
	return 0;
}

uint32_t mr__mirror_new_mark(struct mr__mirror *m)
{
	/* Generation 0 is what new records carry: never use it as a mark. */
	if (++m->gen == 0) {
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i] && m->slots[i] != MR__MIRROR_TOMBSTONE)
				m->slots[i]->seen = 0;
		m->gen = 1;
	}
	return m->gen;
}

/*
 * O(n + m + k log k) for n fresh mounts, m mirrored ones and k differences:
 * one lookup per fresh mount, one sweep of the mirror, the depths of what
 * differs (each ancestor walked once a pass), and a sort of only that.
 *
 * Appearances and changes are reported parents first (tree depth in the new
 * table, then @fresh's order); disappearances after them, children first
 * (tree depth in the old table), so a subscriber replaying the calls never
 * holds a child whose parent it was told is gone, nor is told of a child
 * before its parent.  @fn is called once the mirror holds the new record,
 * with the old one still alive.  Every difference is applied and reported
 * even if @fn fails: the mirror must match the kernel whatever a
 * subscriber's trouble; the first negative value @fn returned is then
 * returned instead of the count.  -ENOMEM comes before any call to @fn and
 * leaves mirror and @fresh unchanged.
 */
int mr__mirror_sync(struct mr__mirror *m, struct mr__table *fresh, mr__diff_fn fn, void *arg)
{
	struct ordered *changed, *gone;
	size_t nchanged = 0, ngone = 0;
	int count = 0, err = 0, r;

	/*
	 * All allocation up front, so that nothing can fail half-way.  Room
	 * only for the IDs not mirrored yet: reserving for all of @fresh would
	 * double a large, mostly unchanged table on every resync.
	 */
	size_t absent = 0;

	for (size_t i = 0; i < fresh->n; i++)
		absent += !mr__mirror_get(m, fresh->v[i]->pub.id);
	r = mr__mirror_reserve(m, absent);
	if (r < 0)
		return r;
	changed = mr__malloc((fresh->n ? fresh->n : 1) * sizeof(*changed));
	gone = mr__malloc((m->n ? m->n : 1) * sizeof(*gone));
	if (!changed || !gone) {
		mr__free(changed);
		mr__free(gone);
		return -ENOMEM;
	}

	mr__mirror_new_mark(m);

	/* What differs, before anything is applied: the old tree is still whole. */
	for (size_t i = 0; i < fresh->n; i++) {
		struct mr__mount *now = fresh->v[i], *old = mr__mirror_get(m, now->pub.id);

		if (old)
			old->seen = m->gen;
		if (old && mr__mount_same(old, now)) {
			/* Keep the old record: snapshots already share it. */
			mr__mount_unref(now);
			continue;
		}
		now->seen = m->gen;
		/*
		 * Both held until reported: a table read while mounts come and
		 * go can list one ID twice (mountinfo reuses IDs), and the
		 * second record then replaces the first in the mirror.
		 */
		changed[nchanged] = (struct ordered){ .old = mr__mount_ref(old),
						      .now = mr__mount_ref(now), .idx = nchanged };
		nchanged++;
	}
	fresh->n = 0;
	mr__mirror_depth_pass(m);
	for (size_t i = 0; i < m->cap; i++) {
		struct mr__mount *s = m->slots[i];

		if (s && s != MR__MIRROR_TOMBSTONE && s->seen != m->gen)
			gone[ngone++] = (struct ordered){ .old = s, .depth = mr__mirror_depth(m, s),
							  .pdepth = path_depth(s) };
	}

	for (size_t i = 0; i < nchanged; i++)
		mr__mirror_put_reserved(m, changed[i].now);
	mr__mirror_depth_pass(m); /* the new tree */
	for (size_t i = 0; i < nchanged; i++)
		changed[i].depth = mr__mirror_depth(m, changed[i].now);
	qsort(changed, nchanged, sizeof(*changed), appear_cmp);
	for (size_t i = 0; i < nchanged; i++) {
		r = fn(changed[i].old, changed[i].now, arg);
		if (r < 0 && !err)
			err = r;
		count++;
		mr__mount_unref(changed[i].old);
		mr__mount_unref(changed[i].now);
	}

	qsort(gone, ngone, sizeof(*gone), gone_cmp);
	for (size_t i = 0; i < ngone; i++) {
		r = fn(gone[i].old, NULL, arg);
		if (r < 0 && !err)
			err = r;
		count++;
		mr__mount_unref(mr__mirror_take(m, gone[i].old->pub.id));
	}
	mr__free(changed);
	mr__free(gone);
	mr__mirror_shrink_indexes(m);
	return err ? err : count;
}
