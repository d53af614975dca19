/* SPDX-License-Identifier: MIT */
/*
 * One immutable, reference-counted mount record (mount.c), a growable
 * array of them (table.c: a read of the whole table), and the order
 * parents come in (order.c).
 */
#ifndef MR_MOUNT_H
#define MR_MOUNT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mountrouter.h"

/*
 * A mount as read from the kernel.  Immutable once built: a change makes a
 * new record, and events and snapshots keep the old one alive by holding a
 * reference, so readers on other threads never see it change.  The
 * exceptions are the mirror's scratch fields (seen, depth, depth_pass),
 * which only the router thread reads or writes.
 */
struct mr__mount {
	struct mr_mount pub;  /* strings point into str[] */
	_Atomic uint32_t refs;
	uint32_t old_id;      /* mountinfo's reused 32-bit ID (0: unknown) */
	uint32_t sb_flags;    /* SB_RDONLY etc. from statmount, 0 if unknown */
	uint32_t sb_opts;     /* mr__sb_opts_hash() of the superblock's own options */
	uint32_t seen;        /* mr__mirror_new_mark() (router thread only) */
	uint32_t depth;       /* mr__mirror_depth() as of pass depth_pass */
	uint32_t depth_pass;  /* 0: none yet */
	uint32_t path_len;
	char str[];
};

/*
 * Superblock flags as statmount(2) reports them in sb_flags (values from the
 * kernel's include/linux/fs.h); mountinfo.c derives the same bits from the
 * superblock options so records from either reader compare equal.
 */
#define MR__SB_RDONLY 0x00000001u
#define MR__SB_SYNCHRONOUS 0x00000010u
#define MR__SB_DIRSYNC 0x00000080u
#define MR__SB_LAZYTIME 0x02000000u

/*
 * Copies @f (and its strings; NULL strings become "") into a new record,
 * refs = 1.  @sb_opts: mr__sb_opts_hash() of the superblock's own options.
 */
struct mr__mount *mr__mount_new(const struct mr_mount *f, uint32_t old_id, uint32_t sb_flags,
				uint32_t sb_opts);
/*
 * A digest of a superblock's own options (statmount's mnt_opts, mountinfo's
 * super options): when it or sb_flags changes, every mount of that
 * superblock changed, whether or not the kernel said so for each.
 */
uint32_t mr__sb_opts_hash(const char *opts);
/* The superblock under @a changed from what @b had (same mount, two looks). */
bool mr__mount_sb_changed(const struct mr__mount *a, const struct mr__mount *b);
struct mr__mount *mr__mount_ref(struct mr__mount *m);
void mr__mount_unref(struct mr__mount *m);
/* True if every field the user sees (path, options, attr, ...) is equal. */
bool mr__mount_same(const struct mr__mount *a, const struct mr__mount *b);
bool mr__mount_readonly(const struct mr__mount *m);
/*
 * True if what a remount, mount_setattr(2) or a propagation change can
 * change is equal (flags, propagation, superblock, options), whoever read
 * the two records (statmount or mountinfo; paths and IDs are not compared).
 */
bool mr__mount_attrs_same(const struct mr__mount *a, const struct mr__mount *b);

/* table.c: a growable array of mount records (a read of the whole table). */


struct mr__table {
	struct mr__mount **v;
	size_t n, cap;
};

int mr__table_push(struct mr__table *t, struct mr__mount *m); /* takes the reference */
void mr__table_clear(struct mr__table *t);                    /* drops references */

/* order.c: parents before children. */


/*
 * Orders @v so that a mount whose parent is also in @v comes after it
 * (@reverse: before it, the order to announce unmounts in); otherwise the
 * order is kept.  O(n log n).  0 or -ENOMEM (@v is then unchanged).
 */
int mr__order_parents_first(struct mr__mount **v, size_t n, bool reverse);

#endif /* MR_MOUNT_H */
