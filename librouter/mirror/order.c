/* SPDX-License-Identifier: MIT */
/*
 * Parents before children: the order a set of mounts must be announced in
 * when they appear (and reversed, when they go), whatever their IDs or
 * paths say.  A mount stacked on its parent's mount point has the same path
 * length as the parent, and after a move a child can have the lower ID, so
 * neither is a safe key; the parent links are.
 */
#include <errno.h>
#include <stdlib.h>

#include "alloc.h"
#include "mirror/mount.h"

struct ranked {
	struct mr__mount *m;
	uint32_t depth, pos;
	bool known; /* depth found */
};

static int by_depth(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos; /* stable: the kernel's order */
}

static size_t slot_of(uint64_t id, size_t mask)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

/* Where v[i]'s parent is in @v, found through @index; n if the set lacks it. */
static size_t parent_pos(struct mr__mount *const *v, size_t n, const uint32_t *index, size_t mask,
			 size_t i)
{
	uint64_t parent = v[i]->pub.parent_id;

	if (parent == v[i]->pub.id)
		return n;
	size_t s = slot_of(parent, mask);
	while (index[s] && v[index[s] - 1]->pub.id != parent)
		s = (s + 1) & mask;
	return index[s] ? index[s] - 1 : n;
}

int mr__order_parents_first(struct mr__mount **v, size_t n, bool reverse)
{
	if (n < 2)
		return 0;
	size_t cap = 4;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *index = mr__malloc(cap * sizeof(*index)); /* id -> position + 1, 0 empty */
	struct ranked *r = mr__malloc(n * sizeof(*r));
	if (!index || !r) {
		mr__free(index);
		mr__free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		index[i] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t s = slot_of(v[i]->pub.id, cap - 1);
		while (index[s])
			s = (s + 1) & (cap - 1);
		index[s] = (uint32_t)i + 1;
		r[i] = (struct ranked){.m = v[i], .depth = 0, .pos = (uint32_t)i};
	}
	/*
	 * Depth within the set: how many of its ancestors are in the set too.
	 * A walk up stops at the first ancestor whose depth is known and
	 * leaves the depths behind on a second walk, so each link is followed
	 * about twice: a stack of thousands of mounts on one mount point costs
	 * O(n), not O(n^2).  Walking up at most n links bounds the work even
	 * for a corrupt cycle.
	 */
	for (size_t i = 0; i < n; i++) {
		size_t top = i, hops = 0, p;

		while (!r[top].known && hops < n && (p = parent_pos(v, n, index, cap - 1, top)) < n) {
			top = p;
			hops++;
		}
		uint32_t d = (r[top].known ? r[top].depth : 0) + (uint32_t)hops;
		size_t x = i;
		for (size_t k = 0; k < hops; k++) {
			r[x].depth = d--;
			r[x].known = true;
			x = parent_pos(v, n, index, cap - 1, x);
		}
		r[x].depth = d;
		r[x].known = true;
	}
	if (reverse)
		for (size_t i = 0; i < n; i++)
			r[i].depth = UINT32_MAX - r[i].depth;
	qsort(r, n, sizeof(*r), by_depth);
	for (size_t i = 0; i < n; i++)
		v[i] = r[i].m;
	mr__free(index);
	mr__free(r);
	return 0;
}
