/* SPDX-License-Identifier: MIT */
/*
 * What mirror_sync.c uses of the table in mirror.c beyond mirror.h: the
 * deleted-slot marker and insertion in two steps, so that a sync reserves
 * all its room before it reports anything and cannot fail half-way.
 * Nothing outside mirror/ includes this.
 */
#ifndef MR_MIRROR_TABLE_H
#define MR_MIRROR_TABLE_H

#include <stddef.h>

#include "mirror/mirror.h"
#include "mirror/mount.h"

/* A deleted slot: any address no record can have. */
extern char mr__mirror_tombstone;
#define MR__MIRROR_TOMBSTONE ((struct mr__mount *)(void *)&mr__mirror_tombstone)

/*
 * Makes room for @extra more insertions without passing 70% load (live plus
 * tombstones), in the table and in the per-superblock and per-parent
 * counts.  0 or -ENOMEM.
 */
int mr__mirror_reserve(struct mr__mirror *m, size_t extra);
/* Inserts or replaces, room already reserved (takes @mnt's reference). */
void mr__mirror_put_reserved(struct mr__mirror *m, struct mr__mount *mnt);
/* Gives back the count indexes' room a sync reserved and did not use. */
void mr__mirror_shrink_indexes(struct mr__mirror *m);

#endif /* MR_MIRROR_TABLE_H */
