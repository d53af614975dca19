/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own account of a mount namespace's table, read with
 * listmount(2) and statmount(2) (6.8; another namespace by its ID, 6.11):
 * what unit-tracker and container-manager check the tables they kept from
 * events against.  Not part of the library: the reference it is held to.
 */
#ifndef EXAMPLES_KERNEL_TABLE_H
#define EXAMPLES_KERNEL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kt_mount {
	uint64_t id;    /* 64-bit unique mount ID */
	char *path;     /* mount point, relative to the namespace's root */
	char *fstype;
	bool readonly;  /* the mount (MOUNT_ATTR_RDONLY) or its superblock (SB_RDONLY) */
};

struct kt_table {
	struct kt_mount *m;
	size_t n;
};

/*
 * Reads namespace @ns_id's table (0: the caller's).  Returns 0, -ENOSYS
 * when the kernel has no listmount, or -errno.
 */
int kt_read(uint64_t ns_id, struct kt_table *ret);
void kt_free(struct kt_table *t);

#endif
