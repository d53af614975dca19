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
	 * Walking up at most n links bounds the work even for a corrupt cycle.
	 */
	for (size_t i = 0; i < n; i++) {
		uint64_t parent = v[i]->pub.parent_id, self = v[i]->pub.id;
		uint32_t d = 0;
		for (size_t hops = 0; hops < n && parent != self; hops++) {
			size_t s = slot_of(parent, cap - 1);
			while (index[s] && v[index[s] - 1]->pub.id != parent)
				s = (s + 1) & (cap - 1);
			if (!index[s])
				break;
			d++;
			self = parent;
			parent = v[index[s] - 1]->pub.parent_id;
		}
		r[i].depth = reverse ? UINT32_MAX - d : d;
	}
	qsort(r, n, sizeof(*r), by_depth);
	for (size_t i = 0; i < n; i++)
		v[i] = r[i].m;
	mr__free(index);
	mr__free(r);
	return 0;
}
