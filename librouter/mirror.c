/* SPDX-License-Identifier: MIT */
/*
 * The mirror: one namespace's mount table as the router believes it to be,
 * keyed by mount ID.  Open addressing with linear probing over a
 * power-of-two array: a lookup is a hash, a mask and usually one cache
 * line.  Deleted slots become tombstones so probe chains stay intact; they
 * count towards the load factor and are swept out whenever the array is
 * rebuilt.  Router thread only: nothing here is safe to call concurrently.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* A deleted slot: any address no record can have. */
static char mr__tombstone_storage;
#define TOMBSTONE ((struct mr__mount *)(void *)&mr__tombstone_storage)

#define MR__MIRROR_MIN_CAP 64

/*
 * splitmix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014): mount IDs are sequential, and linear
 * probing needs their low bits spread or neighbours pile into one run.
 */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

int mr__mirror_init(struct mr__mirror *m)
{
	struct mr__mount **slots = mr__calloc(MR__MIRROR_MIN_CAP, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	*m = (struct mr__mirror){ .slots = slots, .cap = MR__MIRROR_MIN_CAP };
	return 0;
}

void mr__mirror_free(struct mr__mirror *m)
{
	if (!m->slots)
		return;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i] && m->slots[i] != TOMBSTONE)
			mr__mount_unref(m->slots[i]);
	mr__free(m->slots);
	*m = (struct mr__mirror){ 0 };
}

/* Slot holding @id, or SIZE_MAX. */
static size_t find(const struct mr__mirror *m, uint64_t id)
{
	size_t mask = m->cap - 1;

	/* Terminates: the load limit keeps at least 30% of slots NULL. */
	for (size_t i = mix64(id) & mask;; i = (i + 1) & mask) {
		struct mr__mount *s = m->slots[i];

		if (!s)
			return SIZE_MAX;
		if (s != TOMBSTONE && s->pub.id == id)
			return i;
	}
}

struct mr__mount *mr__mirror_get(const struct mr__mirror *m, uint64_t id)
{
	size_t i = find(m, id);

	return i == SIZE_MAX ? NULL : m->slots[i];
}

/* Rebuilds into @cap slots (a power of two), dropping the tombstones. */
static int rehash(struct mr__mirror *m, size_t cap)
{
	struct mr__mount **slots = mr__calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct mr__mount *s = m->slots[i];
		size_t j;

		if (!s || s == TOMBSTONE)
			continue;
		for (j = mix64(s->pub.id) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = s;
	}
	mr__free(m->slots);
	m->slots = slots;
	m->cap = cap;
	m->used = m->n;
	return 0;
}

/*
 * Makes room for @extra more insertions without passing 70% load (live plus
 * tombstones).  The new size keeps live records at or under 35% so growth
 * is amortised O(1); when tombstones alone crowd the table it is swept at
 * the same size instead.
 */
static int reserve(struct mr__mirror *m, size_t extra)
{
	size_t cap = m->cap;

	if ((m->used + extra) * 10 <= cap * 7)
		return 0;
	while ((m->n + extra) * 20 > cap * 7) {
		if (cap > SIZE_MAX / 2 / sizeof(*m->slots))
			return -ENOMEM;
		cap *= 2;
	}
	return rehash(m, cap);
}

/* Insert or replace, room already reserved. */
static void put_reserved(struct mr__mirror *m, struct mr__mount *mnt)
{
	size_t mask = m->cap - 1, tomb = SIZE_MAX, i;
	uint64_t id = mnt->pub.id;

	for (i = mix64(id) & mask; m->slots[i]; i = (i + 1) & mask) {
		struct mr__mount *s = m->slots[i];

		if (s == TOMBSTONE) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (s->pub.id == id) {
			m->slots[i] = mnt;
			mr__mount_unref(s);
			return;
		}
	}
	/* Absent: reuse the first tombstone on the chain if there was one. */
	if (tomb != SIZE_MAX) {
		i = tomb;
	} else {
		m->used++;
	}
	m->slots[i] = mnt;
	m->n++;
}

/* Returns 0 or -ENOMEM (then @mnt's reference stays with the caller). */
int mr__mirror_put(struct mr__mirror *m, struct mr__mount *mnt)
{
	int r = reserve(m, 1);

	if (r < 0)
		return r;
	put_reserved(m, mnt);
	return 0;
}

struct mr__mount *mr__mirror_take(struct mr__mirror *m, uint64_t id)
{
	size_t i = find(m, id);
	struct mr__mount *s;

	if (i == SIZE_MAX)
		return NULL;
	s = m->slots[i];
	/* If the chain ends right after, the slot can be NULL again at once. */
	if (!m->slots[(i + 1) & (m->cap - 1)]) {
		m->slots[i] = NULL;
		m->used--;
	} else {
		m->slots[i] = TOMBSTONE;
	}
	m->n--;
	return s;
}

int mr__mirror_each(const struct mr__mirror *m, int (*fn)(struct mr__mount *, void *), void *arg)
{
	for (size_t i = 0; i < m->cap; i++) {
		struct mr__mount *s = m->slots[i];
		int r;

		if (!s || s == TOMBSTONE)
			continue;
		r = fn(s, arg);
		if (r)
			return r;
	}
	return 0;
}

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

struct gone {
	struct mr__mount *mnt;
	uint32_t depth;
};

/* Deepest first, then newest (highest ID) first: an overmount before what it covers. */
static int gone_cmp(const void *a, const void *b)
{
	const struct gone *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	if (x->mnt->pub.id != y->mnt->pub.id)
		return x->mnt->pub.id > y->mnt->pub.id ? -1 : 1;
	return 0;
}

/*
 * O(n + m + k log k) for n fresh mounts, m mirrored ones and k that went
 * away: one lookup per fresh mount, one sweep of the mirror, and a sort of
 * only the disappearances.
 *
 * Appearances and changes are reported in @fresh's order (listmount: by
 * mount ID, so parents usually first); disappearances after them, deepest
 * path first, so a subscriber replaying the calls never holds a child whose
 * parent it was told is gone.  @fn is called before each change is applied
 * (the old record is still alive during the call).  Every difference is
 * applied and reported even if @fn fails: the mirror must match the
 * kernel whatever a subscriber's trouble; the first negative value @fn
 * returned is then returned instead of the count.  -ENOMEM comes before
 * any call to @fn and leaves mirror and @fresh unchanged.
 */
int mr__mirror_sync(struct mr__mirror *m, struct mr__table *fresh, mr__diff_fn fn, void *arg)
{
	struct gone *gone;
	size_t ngone = 0;
	int count = 0, err = 0, r;

	/*
	 * All allocation up front, so that nothing can fail half-way.  Room
	 * only for the IDs not mirrored yet: reserving for all of @fresh would
	 * double a large, mostly unchanged table on every resync.
	 */
	size_t absent = 0;

	for (size_t i = 0; i < fresh->n; i++)
		absent += find(m, fresh->v[i]->pub.id) == SIZE_MAX;
	r = reserve(m, absent);
	if (r < 0)
		return r;
	gone = mr__malloc((m->n ? m->n : 1) * sizeof(*gone));
	if (!gone)
		return -ENOMEM;

	/* Generation 0 is what new records carry: never use it as a stamp. */
	if (++m->gen == 0) {
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i] && m->slots[i] != TOMBSTONE)
				m->slots[i]->seen = 0;
		m->gen = 1;
	}

	for (size_t i = 0; i < fresh->n; i++) {
		struct mr__mount *now = fresh->v[i], *old = mr__mirror_get(m, now->pub.id);

		if (old && mr__mount_same(old, now)) {
			/* Keep the old record: snapshots already share it. */
			old->seen = m->gen;
			mr__mount_unref(now);
			continue;
		}
		r = fn(old, now, arg);
		if (r < 0 && !err)
			err = r;
		count++;
		now->seen = m->gen;
		put_reserved(m, now);
	}
	fresh->n = 0;

	for (size_t i = 0; i < m->cap; i++) {
		struct mr__mount *s = m->slots[i];

		if (s && s != TOMBSTONE && s->seen != m->gen)
			gone[ngone++] = (struct gone){ s, path_depth(s) };
	}
	qsort(gone, ngone, sizeof(*gone), gone_cmp);
	for (size_t i = 0; i < ngone; i++) {
		r = fn(gone[i].mnt, NULL, arg);
		if (r < 0 && !err)
			err = r;
		count++;
		mr__mount_unref(mr__mirror_take(m, gone[i].mnt->pub.id));
	}
	mr__free(gone);
	return err ? err : count;
}
