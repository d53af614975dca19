/* SPDX-License-Identifier: MIT */
/*
 * mount_ids.c: a namespace's mount IDs and mount count.
 */
#ifndef MR_MOUNT_IDS_H
#define MR_MOUNT_IDS_H

#include <stddef.h>
#include <stdint.h>

struct mr__ids {
	uint64_t *v; /* ascending */
	size_t n, cap;
};

void mr__ids_free(struct mr__ids *ids);
/* Room for @n IDs in all; 0 or -ENOMEM. */
int mr__ids_reserve(struct mr__ids *ids, size_t n);
/* Every mount ID of namespace @ns_id (0: ours) into @ids; 0 or -errno. */
int mr__ids_list(uint64_t ns_id, struct mr__ids *ids, uint64_t *syscalls);
/* Appends the IDs above the last one in @ids; how many, or -errno. */
long mr__ids_list_new(uint64_t ns_id, struct mr__ids *ids, uint64_t *syscalls);
/* The namespace's mount count (NS_MNT_GET_INFO, 6.12), or -errno. */
long mr__ids_count(int nsfd);
/* Lines of a mountinfo file (2 syscalls or more), or -errno. */
long mr__ids_count_mountinfo(int fd);

#endif /* MR_MOUNT_IDS_H */
