/* SPDX-License-Identifier: MIT */
/*
 * The part of the listmount(2)/statmount(2) ABI kernel-table.c uses, for
 * system headers older than Linux 6.8 (Debian 12 ships 6.1's).  Values and
 * layouts from the kernel's include/uapi/linux/mount.h (6.11) and
 * arch/x86/entry/syscalls/syscall_64.tbl; our own names, so that a newer
 * system header never clashes with them.
 */
#ifndef EXAMPLES_KERNEL_ABI_H
#define EXAMPLES_KERNEL_ABI_H

#include <stdint.h>

#define KT_NR_STATMOUNT 457 /* 6.8, every architecture (asm-generic numbering) */
#define KT_NR_LISTMOUNT 458

struct kt_mnt_id_req {
	uint32_t size;
	uint32_t spare;
	uint64_t mnt_id;
	uint64_t param;
	uint64_t mnt_ns_id; /* 6.11 */
};
#define KT_MNT_ID_REQ_SIZE_VER1 32

struct kt_statmount {
	uint32_t size;
	uint32_t mnt_opts; /* 6.11 */
	uint64_t mask;
	uint32_t sb_dev_major, sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags;
	uint32_t fs_type;
	uint64_t mnt_id, mnt_parent_id;
	uint32_t mnt_id_old, mnt_parent_id_old;
	uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
	uint32_t mnt_root, mnt_point;
	uint64_t mnt_ns_id; /* 6.11 */
	uint64_t spare2[49];
	char str[];
};

#define KT_STATMOUNT_SB_BASIC 0x00000001u
#define KT_STATMOUNT_MNT_BASIC 0x00000002u
#define KT_STATMOUNT_MNT_POINT 0x00000010u
#define KT_STATMOUNT_FS_TYPE 0x00000020u
#define KT_LSMT_ROOT 0xffffffffffffffffull
#define KT_MOUNT_ATTR_RDONLY 0x00000001u

#endif
