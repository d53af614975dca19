/* SPDX-License-Identifier: MIT */
/*
 * mirror.c: one namespace's mount table, keyed by mount ID.
 */
#ifndef MR_MIRROR_H
#define MR_MIRROR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mirror/mount.h"

/*
 * splitmix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014): mount IDs are sequential, and linear
 * probing needs their low bits spread or neighbours pile into one run.
 */
static inline uint64_t mr__mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

struct mr__sb_ent {
	uint64_t dev;               /* major << 32 | minor */
	uint32_t count;             /* mirrored mounts of it; 0: empty slot */
	uint32_t sb_flags, sb_opts; /* the last record of it stored */
};

/* A count (and, for superblocks, a digest) per key. */
struct mr__key_index {
	struct mr__sb_ent *v;
	size_t cap, n;
};

struct mr__mirror {
	struct mr__mount **slots; /* open addressing, NULL empty, TOMBSTONE deleted */
	size_t cap, n, used;
	/*
	 * A count that follows n, or NULL: the router's over all its mirrors,
	 * kept as mounts come and go so that reading it costs no walk over
	 * the namespaces.  One writer (the mirror's), any reader.
	 */
	_Atomic uint64_t *total;
	uint32_t gen;
	uint32_t depth_pass; /* mr__mirror_depth_pass() */
	struct mr__key_index sbs;     /* mounts by superblock (mirror.c) */
	struct mr__key_index parents; /* mounts by parent ID */
};

int mr__mirror_init(struct mr__mirror *m);
/*
 * Adds the mirror's count to @total and keeps it there as mounts come and
 * go, until called again (NULL: taken out).  Its writer's thread only.
 */
void mr__mirror_count_into(struct mr__mirror *m, _Atomic uint64_t *total);
void mr__mirror_free(struct mr__mirror *m);
struct mr__mount *mr__mirror_get(const struct mr__mirror *m, uint64_t id);
/* Whether a mirrored mount has @mnt_id as its parent: O(1). */
bool mr__mirror_has_children(const struct mr__mirror *m, uint64_t mnt_id);
/* Inserts or replaces; takes @mnt's reference and drops the replaced one. */
int mr__mirror_put(struct mr__mirror *m, struct mr__mount *mnt);
/* Removes and returns the record (the caller owns its reference), or NULL. */
struct mr__mount *mr__mirror_take(struct mr__mirror *m, uint64_t id);

/*
 * The superblock digest (sb_flags, sb_opts) of the last mirrored record of
 * device @major:@minor; false if no mirrored mount shows that superblock.
 * O(1).
 */
bool mr__mirror_sb_get(const struct mr__mirror *m, uint32_t major, uint32_t minor,
		       uint32_t *ret_sb_flags, uint32_t *ret_sb_opts);
/*
 * How many ancestors of @mnt the mirror holds (0: the root, or an orphan).
 * The answer for @mnt and for every ancestor walked is kept in their
 * records until the next mr__mirror_depth_pass(), so the depths of a whole
 * set cost O(set + ancestors), not O(set x depth): a stack of thousands of
 * mounts on one mount point is one chain thousands deep.  Begin a pass
 * before the first call and again whenever the tree has changed.
 */
void mr__mirror_depth_pass(struct mr__mirror *m);
uint32_t mr__mirror_depth(const struct mr__mirror *m, struct mr__mount *mnt);
/*
 * Sorts @v parents first (tree depth, then path length, then ID) in
 * O(n log n + ancestors); 0 or -ENOMEM.
 */
int mr__mirror_sort_parents_first(struct mr__mirror *m, struct mr__mount **v, size_t n);

/*
 * A value of the records' `seen` field that none of them carries yet, to
 * mark a set of records with (router thread only).  mr__mirror_sync()
 * takes the next one for its diff, so a mark lasts until then at most.
 */
uint32_t mr__mirror_new_mark(struct mr__mirror *m);

/* Visits each mount; stops early if @fn returns non-zero and returns that. */
int mr__mirror_each(const struct mr__mirror *m, int (*fn)(struct mr__mount *, void *), void *arg);

/*
 * What a resync found: each change as the old and the new record (old NULL:
 * a mount appeared; new NULL: it went away; both: it changed).
 */
typedef int (*mr__diff_fn)(struct mr__mount *old, struct mr__mount *now, void *arg);

/*
 * Makes the mirror equal @fresh, calling @fn for every difference before
 * applying it, in O(n).  The mounts of @fresh are taken over by the mirror
 * (the table is left empty).  Returns the number of differences.
 */
int mr__mirror_sync(struct mr__mirror *m, struct mr__table *fresh, mr__diff_fn fn, void *arg);

#endif /* MR_MIRROR_H */
