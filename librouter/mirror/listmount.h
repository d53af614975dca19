/* SPDX-License-Identifier: MIT */
/*
 * listmount.c: read a table with listmount(2)/statmount(2).
 */
#ifndef MR_LISTMOUNT_H
#define MR_LISTMOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "mirror/mount.h"

struct mr__statmount_buf {
	void *p;
	size_t cap;
};

/*
 * Reads one mount of namespace @ns_id (0: the caller's) with statmount(2).
 * Returns 0 and a new record, -ENOENT if the mount is gone, -ENOSYS if the
 * kernel lacks statmount.  @syscalls is incremented per call made.
 */
int mr__statmount(uint64_t ns_id, uint64_t mnt_id, struct mr__statmount_buf *buf,
		  uint64_t *syscalls, struct mr__mount **ret);

/*
 * Turns one statmount(2) reply of @cap bytes (8-byte aligned) into a
 * record: 0, -EPROTO for a reply whose strings lie outside it, -ENOMEM.
 */
int mr__statmount_parse(const void *buf, size_t cap, struct mr__mount **ret);
/* A reply's superblock flags, only the MR__SB_* bits records compare. */
struct mr_statmount;
uint32_t mr__statmount_sb_flags(const struct mr_statmount *sm);

/* The fields statmount(2) gives without formatting a string (~4x cheaper). */
struct mr__mount_basic {
	uint64_t parent_id, attr;
	uint32_t propagation, sb_flags;
};

/* Reads @mnt_id's flags only (SB_BASIC | MNT_BASIC); 0, -ENOENT, -errno. */
int mr__statmount_basic(uint64_t ns_id, uint64_t mnt_id, uint64_t *syscalls,
			struct mr__mount_basic *ret);

/* Lists and reads every mount of namespace @ns_id into @ret (appended). */
int mr__listmount_table(uint64_t ns_id, struct mr__statmount_buf *buf, uint64_t *syscalls,
			struct mr__table *ret);

/*
 * The IDs of every mount below @mnt_id (reachable under it, at any depth)
 * into *@ids, grown as needed.  Returns how many, or -errno.
 */
int mr__listmount_below(uint64_t ns_id, uint64_t mnt_id, uint64_t *syscalls, uint64_t **ids,
			size_t *cap);

void mr__statmount_buf_free(struct mr__statmount_buf *buf);

#endif /* MR_LISTMOUNT_H */
