/* SPDX-License-Identifier: MIT */
/*
 * The mirror: one namespace's mount table as the router believes it to be,
 * keyed by mount ID.  Open addressing with linear probing over a
 * power-of-two array: a lookup is a hash, a mask and usually one cache
 * line.  Deleted slots become tombstones so probe chains stay intact; they
 * count towards the load factor and are swept out whenever the array is
 * rebuilt.  Router thread only: nothing here is safe to call concurrently.
 * Making the whole table equal a fresh read is mirror_sync.c's.
 *
 * Kept over ck_hs (same hash, 10,000 mounts, bench_tables): a lookup is a
 * draw (14.7-16.4 ns against 15.4-18.4 ns over three runs), an unmount plus
 * a mount is not (69-75 ns against 186-199 ns), and a mount table changes
 * as often as it is looked up.
 */
#include <errno.h>
#include <stdlib.h>

#include "mirror/mirror.h"
#include "alloc.h"
#include "mirror/mirror_table.h"
#include "mirror/mount.h"

/* A deleted slot: any address no record can have. */
char mr__mirror_tombstone;
#define TOMBSTONE MR__MIRROR_TOMBSTONE

#define MR__MIRROR_MIN_CAP 64
#define MR__SB_MIN_CAP 16

static inline uint64_t dev_of(const struct mr__mount *mnt)
{
	return (uint64_t)mnt->pub.dev_major << 32 | mnt->pub.dev_minor;
}

int mr__mirror_init(struct mr__mirror *m)
{
	struct mr__mount **slots = mr__calloc(MR__MIRROR_MIN_CAP, sizeof(*slots));
	struct mr__sb_ent *sbs = mr__calloc(MR__SB_MIN_CAP, sizeof(*sbs));
	struct mr__sb_ent *parents = mr__calloc(MR__SB_MIN_CAP, sizeof(*parents));

	if (!slots || !sbs || !parents) {
		mr__free(slots);
		mr__free(sbs);
		mr__free(parents);
		return -ENOMEM;
	}
	*m = (struct mr__mirror){ .slots = slots, .cap = MR__MIRROR_MIN_CAP,
				  .sbs = {sbs, MR__SB_MIN_CAP, 0},
				  .parents = {parents, MR__SB_MIN_CAP, 0} };
	return 0;
}

/*
 * Two counting indexes beside the table, both linear probing with
 * backward-shift deletion (no tombstones; count 0 marks an empty slot):
 *  - by superblock (device number): how many mirrored mounts show it and
 *    the digest (sb_flags, sb_opts) of the last record of it stored, so a
 *    new mount looked up after a remount made through it is checked
 *    against the others of its superblock in O(1);
 *  - by parent ID: how many mirrored mounts sit on it, so a moved mount
 *    with nothing under it costs no listing of its subtree.
 */
static size_t idx_find(const struct mr__key_index *x, uint64_t key)
{
	size_t mask = x->cap - 1;

	for (size_t i = mr__mix64(key) & mask;; i = (i + 1) & mask) {
		if (!x->v[i].count)
			return i;
		if (x->v[i].dev == key)
			return i;
	}
}

static int idx_rehash(struct mr__key_index *x, size_t cap)
{
	struct mr__sb_ent *v = mr__calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < x->cap; i++) {
		size_t j;

		if (!x->v[i].count)
			continue;
		for (j = mr__mix64(x->v[i].dev) & (cap - 1); v[j].count; j = (j + 1) & (cap - 1))
			;
		v[j] = x->v[i];
	}
	mr__free(x->v);
	x->v = v;
	x->cap = cap;
	return 0;
}

/* Room for @extra more keys at or under 50% load. */
static int idx_reserve(struct mr__key_index *x, size_t extra)
{
	size_t cap = x->cap;

	while ((x->n + extra) * 2 > cap) {
		if (cap > SIZE_MAX / 4 / sizeof(*x->v))
			return -ENOMEM;
		cap *= 2;
	}
	return cap == x->cap ? 0 : idx_rehash(x, cap);
}

/*
 * A sync reserves room for as many keys as it adds mounts (most share a
 * few): give the excess back afterwards.  Failing to is harmless.
 */
static void idx_shrink(struct mr__key_index *x)
{
	size_t cap = x->cap;

	while (cap > MR__SB_MIN_CAP && x->n * 8 < cap)
		cap /= 2;
	if (cap != x->cap)
		(void)idx_rehash(x, cap);
}

static struct mr__sb_ent *idx_add(struct mr__key_index *x, uint64_t key)
{
	struct mr__sb_ent *e = &x->v[idx_find(x, key)];

	if (!e->count) {
		e->dev = key;
		x->n++;
	}
	e->count++;
	return e;
}

static void idx_del(struct mr__key_index *x, uint64_t key)
{
	size_t mask = x->cap - 1, i = idx_find(x, key), j;

	if (!x->v[i].count || --x->v[i].count)
		return;
	x->n--;
	/* Backward shift: pull later members of the run into the hole. */
	for (j = (i + 1) & mask; x->v[j].count; j = (j + 1) & mask) {
		size_t home = mr__mix64(x->v[j].dev) & mask;

		/* Stays if its home lies cyclically in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		x->v[i] = x->v[j];
		x->v[j].count = 0;
		i = j;
	}
}

static int sb_reserve(struct mr__mirror *m, size_t extra)
{
	if (idx_reserve(&m->sbs, extra) < 0)
		return -ENOMEM;
	return idx_reserve(&m->parents, extra);
}

void mr__mirror_shrink_indexes(struct mr__mirror *m)
{
	idx_shrink(&m->sbs);
	idx_shrink(&m->parents);
}

/* Counts @mnt in both indexes. */
static void sb_add(struct mr__mirror *m, const struct mr__mount *mnt)
{
	struct mr__sb_ent *e = idx_add(&m->sbs, dev_of(mnt));

	e->sb_flags = mnt->sb_flags;
	e->sb_opts = mnt->sb_opts;
	idx_add(&m->parents, mnt->pub.parent_id);
}

static void sb_del(struct mr__mirror *m, const struct mr__mount *mnt)
{
	idx_del(&m->sbs, dev_of(mnt));
	idx_del(&m->parents, mnt->pub.parent_id);
}

bool mr__mirror_has_children(const struct mr__mirror *m, uint64_t mnt_id)
{
	const struct mr__sb_ent *e = &m->parents.v[idx_find(&m->parents, mnt_id)];

	/* A root mount is its own parent in some readers: that is not a child. */
	const struct mr__mount *self = mr__mirror_get(m, mnt_id);
	uint32_t own = self && self->pub.parent_id == mnt_id;
	return e->count > own;
}

bool mr__mirror_sb_get(const struct mr__mirror *m, uint32_t major, uint32_t minor,
		       uint32_t *ret_sb_flags, uint32_t *ret_sb_opts)
{
	const struct mr__sb_ent *e = &m->sbs.v[idx_find(&m->sbs, (uint64_t)major << 32 | minor)];

	if (!e->count)
		return false;
	*ret_sb_flags = e->sb_flags;
	*ret_sb_opts = e->sb_opts;
	return true;
}

void mr__mirror_free(struct mr__mirror *m)
{
	if (!m->slots)
		return;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i] && m->slots[i] != TOMBSTONE)
			mr__mount_unref(m->slots[i]);
	mr__free(m->slots);
	mr__free(m->sbs.v);
	mr__free(m->parents.v);
	*m = (struct mr__mirror){ 0 };
}

/* Slot holding @id, or SIZE_MAX. */
static size_t find(const struct mr__mirror *m, uint64_t id)
{
	size_t mask = m->cap - 1;

	/* Terminates: the load limit keeps at least 30% of slots NULL. */
	for (size_t i = mr__mix64(id) & mask;; i = (i + 1) & mask) {
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
		for (j = mr__mix64(s->pub.id) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
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
int mr__mirror_reserve(struct mr__mirror *m, size_t extra)
{
	size_t cap = m->cap;

	/* At worst every new mount brings its own superblock. */
	if (sb_reserve(m, extra) < 0)
		return -ENOMEM;
	if ((m->used + extra) * 10 <= cap * 7)
		return 0;
	while ((m->n + extra) * 20 > cap * 7) {
		if (cap > SIZE_MAX / 2 / sizeof(*m->slots))
			return -ENOMEM;
		cap *= 2;
	}
	return rehash(m, cap);
}

/* Its only writer is the thread that writes the mirror: no locked add. */
static void total_add(struct mr__mirror *m, int64_t d)
{
	uint64_t v = atomic_load_explicit(m->total, memory_order_relaxed);

	atomic_store_explicit(m->total, v + (uint64_t)d, memory_order_relaxed);
}

void mr__mirror_count_into(struct mr__mirror *m, _Atomic uint64_t *total)
{
	if (m->total)
		total_add(m, -(int64_t)m->n);
	m->total = total;
	if (m->total)
		total_add(m, (int64_t)m->n);
}

void mr__mirror_put_reserved(struct mr__mirror *m, struct mr__mount *mnt)
{
	size_t mask = m->cap - 1, tomb = SIZE_MAX, i;
	uint64_t id = mnt->pub.id;

	for (i = mr__mix64(id) & mask; m->slots[i]; i = (i + 1) & mask) {
		struct mr__mount *s = m->slots[i];

		if (s == TOMBSTONE) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (s->pub.id == id) {
			m->slots[i] = mnt;
			sb_del(m, s);
			sb_add(m, mnt);
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
	if (m->total)
		total_add(m, 1);
	sb_add(m, mnt);
}

/* Returns 0 or -ENOMEM (then @mnt's reference stays with the caller). */
int mr__mirror_put(struct mr__mirror *m, struct mr__mount *mnt)
{
	int r = mr__mirror_reserve(m, 1);

	if (r < 0)
		return r;
	mr__mirror_put_reserved(m, mnt);
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
	if (m->total)
		total_add(m, -1);
	sb_del(m, s);
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
