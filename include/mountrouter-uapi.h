/* SPDX-License-Identifier: MIT */
/*
 * Kernel ABI that Debian 12's system headers (linux-libc-dev 6.1) lack:
 *
 *  - watch_mount(2), the mount-notification series carried in kernel/patches/
 *    (syscall 900: far above what mainline assigns, which is near 470 in
 *    6.18 and grows by about ten a year, so the number never reaches
 *    another syscall; 463, the first free one in 6.12, became
 *    setxattrat(2) in 6.13);
 *  - listmount(2)/statmount(2) (Linux 6.8, extended through 6.15);
 *  - fanotify mount events (Linux 6.15).
 *
 * Values come from the kernel's include/uapi/linux/{mount,fanotify,
 * watch_queue}.h; every definition is guarded so newer system headers win.
 */
#ifndef MOUNTROUTER_UAPI_H
#define MOUNTROUTER_UAPI_H

#include <fcntl.h>
#include <stdint.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * The watch_queue ABI (5.8), from include/uapi/linux/watch_queue.h.  Not
 * included from <linux/watch_queue.h>: that header pulls <linux/fcntl.h>,
 * which clashes with glibc's <fcntl.h>.
 */
#ifndef WATCH_INFO_LENGTH
#define O_NOTIFICATION_PIPE O_EXCL /* pipe2() flag: a notification pipe */

#define IOC_WATCH_QUEUE_SET_SIZE _IO('W', 0x60)   /* queue size in notes */
#define IOC_WATCH_QUEUE_SET_FILTER _IO('W', 0x61) /* set the filter */

enum watch_notification_type {
	WATCH_TYPE_META = 0,       /* special record */
	WATCH_TYPE_KEY_NOTIFY = 1, /* key change event notification */
};

enum watch_meta_notification_subtype {
	WATCH_META_REMOVAL_NOTIFICATION = 0, /* watched object was removed */
	WATCH_META_LOSS_NOTIFICATION = 1,    /* data loss occurred */
};

/* Record header, 8 bytes; records are multiples of 8 bytes long. */
struct watch_notification {
	__u32 type : 24;   /* enum watch_notification_type */
	__u32 subtype : 8; /* type-specific subtype (filterable) */
	__u32 info;
#define WATCH_INFO_LENGTH 0x0000007f /* length of record in bytes */
#define WATCH_INFO_LENGTH__SHIFT 0
#define WATCH_INFO_ID 0x0000ff00 /* ID of the watchpoint */
#define WATCH_INFO_ID__SHIFT 8
#define WATCH_INFO_TYPE_INFO 0xffff0000 /* type-specific info */
#define WATCH_INFO_TYPE_INFO__SHIFT 16
#define WATCH_INFO_FLAG_0 0x00010000
#define WATCH_INFO_FLAG_1 0x00020000
#define WATCH_INFO_FLAG_2 0x00040000
#define WATCH_INFO_FLAG_3 0x00080000
#define WATCH_INFO_FLAG_4 0x00100000
#define WATCH_INFO_FLAG_5 0x00200000
#define WATCH_INFO_FLAG_6 0x00400000
#define WATCH_INFO_FLAG_7 0x00800000
};

struct watch_notification_type_filter {
	__u32 type;              /* type to apply the filter to */
	__u32 info_filter;       /* filter on watch_notification::info */
	__u32 info_mask;         /* mask of relevant bits in info_filter */
	__u32 subtype_filter[8]; /* bitmask of subtypes to pass */
};

struct watch_notification_filter {
	__u32 nr_filters;
	__u32 __reserved; /* must be 0 */
	struct watch_notification_type_filter filters[];
};

/* Removal record with the watched object's ID (length tells it apart). */
struct watch_notification_removal {
	struct watch_notification watch;
	__u64 id;
};
#endif

/* ---- watch_mount(2): kernel/patches/, CONFIG_MOUNT_NOTIFICATIONS ---- */

/*
 * Not a number mainline has given out (see the top of this file): on a
 * kernel without the series the call is ENOSYS, never another syscall.
 */
#ifndef __NR_watch_mount
#if defined(__x86_64__)
#define __NR_watch_mount 900
#endif
#endif

/*
 * watch_queue.h in 6.1 ends the type list at WATCH_TYPE_KEY_NOTIFY; the
 * series appends mount notifications as type 2.
 */
#define MR_WATCH_TYPE_MOUNT_NOTIFY 2

#ifndef WATCH_TYPE_MOUNT_NOTIFY
#define WATCH_TYPE_MOUNT_NOTIFY MR_WATCH_TYPE_MOUNT_NOTIFY

enum mount_notification_subtype {
	NOTIFY_MOUNT_NEW_MOUNT = 0,  /* new mount added */
	NOTIFY_MOUNT_UNMOUNT = 1,    /* mount removed manually */
	NOTIFY_MOUNT_EXPIRY = 2,     /* automount expired */
	NOTIFY_MOUNT_READONLY = 3,   /* mount R/O state changed */
	NOTIFY_MOUNT_SETATTR = 4,    /* mount attributes changed */
	NOTIFY_MOUNT_MOVE_FROM = 5,  /* mount moved from here */
	NOTIFY_MOUNT_MOVE_TO = 6,    /* mount moved to here */
};

/* Type-specific bits of watch_notification::info. */
#define NOTIFY_MOUNT_IN_SUBTREE 0x00010000u  /* not at the watched dentry */
#define NOTIFY_MOUNT_IS_NOW_RO 0x00020000u   /* mount is now read-only */
#define NOTIFY_MOUNT_IS_SUBMOUNT 0x00040000u /* new mount is a submount */

/*
 * One record, 24 bytes.  Both IDs are the 64-bit unique mount IDs that
 * listmount(2), statmount(2) and fanotify report (mnt_id_unique), so a
 * reader can resynchronise against listmount() after a loss.
 */
struct mount_notification {
	struct watch_notification watch; /* type WATCH_TYPE_MOUNT_NOTIFY */
	__u64 triggered_on;              /* mount the change happened on */
	__u64 auxiliary_mount;           /* added/moved/removed mount or 0 */
};
#endif

/* ---- listmount(2) / statmount(2) ---- */

#ifndef __NR_statmount
#define __NR_statmount 457 /* 6.8 */
#endif
#ifndef __NR_listmount
#define __NR_listmount 458 /* 6.8 */
#endif

/*
 * Our own names for the request and reply layouts, so that they never clash
 * with a system header that defines the structs with fewer fields.  Layout
 * as of Linux 6.15 (include/uapi/linux/mount.h).
 */
struct mr_mnt_id_req {
	uint32_t size;
	uint32_t mnt_ns_fd; /* was 'spare' in 6.8 */
	uint64_t mnt_id;
	uint64_t param;
	uint64_t mnt_ns_id; /* 6.11 */
};
#define MR_MNT_ID_REQ_SIZE_VER0 24
#define MR_MNT_ID_REQ_SIZE_VER1 32

struct mr_statmount {
	uint32_t size;
	uint32_t mnt_opts; /* 6.11 [str] */
	uint64_t mask;
	uint32_t sb_dev_major;
	uint32_t sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags;
	uint32_t fs_type; /* [str] */
	uint64_t mnt_id;
	uint64_t mnt_parent_id;
	uint32_t mnt_id_old;
	uint32_t mnt_parent_id_old;
	uint64_t mnt_attr;
	uint64_t mnt_propagation;
	uint64_t mnt_peer_group;
	uint64_t mnt_master;
	uint64_t propagate_from;
	uint32_t mnt_root;  /* [str] */
	uint32_t mnt_point; /* [str] */
	uint64_t mnt_ns_id; /* 6.11 */
	uint32_t fs_subtype; /* 6.13 [str] */
	uint32_t sb_source;  /* 6.13 [str] */
	uint32_t opt_num;
	uint32_t opt_array;
	uint32_t opt_sec_num;
	uint32_t opt_sec_array;
	uint64_t spare[46];
	char str[];
};

#ifndef STATMOUNT_SB_BASIC
#define STATMOUNT_SB_BASIC 0x00000001u
#define STATMOUNT_MNT_BASIC 0x00000002u
#define STATMOUNT_PROPAGATE_FROM 0x00000004u
#define STATMOUNT_MNT_ROOT 0x00000008u
#define STATMOUNT_MNT_POINT 0x00000010u
#define STATMOUNT_FS_TYPE 0x00000020u
#endif
#ifndef STATMOUNT_MNT_NS_ID
#define STATMOUNT_MNT_NS_ID 0x00000040u /* 6.11 */
#define STATMOUNT_MNT_OPTS 0x00000080u  /* 6.11 */
#endif
#ifndef STATMOUNT_FS_SUBTYPE
#define STATMOUNT_FS_SUBTYPE 0x00000100u /* 6.13 */
#define STATMOUNT_SB_SOURCE 0x00000200u  /* 6.13 */
#endif

#ifndef LSMT_ROOT
#define LSMT_ROOT 0xffffffffffffffffull /* listmount: the namespace root */
#endif
#ifndef LISTMOUNT_REVERSE
#define LISTMOUNT_REVERSE (1u << 0) /* 6.11: newest mounts first */
#endif

/* MOUNT_ATTR_* (5.12) as statmount reports them in mnt_attr. */
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001u
#define MOUNT_ATTR_NOSUID 0x00000002u
#define MOUNT_ATTR_NODEV 0x00000004u
#define MOUNT_ATTR_NOEXEC 0x00000008u
#define MOUNT_ATTR__ATIME 0x00000070u
#define MOUNT_ATTR_RELATIME 0x00000000u
#define MOUNT_ATTR_NOATIME 0x00000010u
#define MOUNT_ATTR_STRICTATIME 0x00000020u
#define MOUNT_ATTR_NODIRATIME 0x00000080u
#define MOUNT_ATTR_IDMAP 0x00100000u
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000u
#endif

/* NS_GET_NSTYPE (4.11): the CLONE_NEW* type of an nsfs fd. */
#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO(0xb7, 0x3)
#endif

/* NS_GET_MNTNS_ID (6.10): the 64-bit ID statmount reports as mnt_ns_id. */
#ifndef NS_GET_MNTNS_ID
#define NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t)
#endif

/*
 * Walking the mount namespaces an nsfs fd can see (6.12, linux/nsfs.h):
 * NS_MNT_GET_NEXT returns an fd of the next one (ENOENT after the last).
 */
struct mr_mnt_ns_info {
	uint32_t size;
	uint32_t nr_mounts;
	uint64_t mnt_ns_id;
};
#define MR_MNT_NS_INFO_SIZE_VER0 16
#ifndef NS_MNT_GET_INFO
#define NS_MNT_GET_INFO _IOR(0xb7, 10, struct mr_mnt_ns_info)
#define NS_MNT_GET_NEXT _IOR(0xb7, 11, struct mr_mnt_ns_info)
#define NS_MNT_GET_PREV _IOR(0xb7, 12, struct mr_mnt_ns_info)
#endif

/* ---- fanotify mount events (6.15) ---- */

#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000u /* mount was attached */
#define FAN_MNT_DETACH 0x02000000u /* mount was detached */
#endif
#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000u
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110u
#endif
#ifndef FAN_EVENT_INFO_TYPE_MNT
#define FAN_EVENT_INFO_TYPE_MNT 7
#endif

/*
 * Attribute change of a mount (flags, propagation, idmapping, superblock
 * reconfigured), on FAN_MARK_MNTNS marks: the project's kernel only
 * (kernel/patches/0021), not mainline.  Bit 63 of the 64-bit mask: mainline
 * never assigns it, so a mainline kernel answers fanotify_mark() with EINVAL
 * (how the probe tells it is absent).  Deliberately not the 0x04000000 of
 * the unmerged January 2025 FAN_MNT_CHANGE proposal, nor its name.
 */
#ifndef FAN_MNT_ATTR_CHANGE
#define FAN_MNT_ATTR_CHANGE 0x8000000000000000ull
#endif

/* Info record that follows fanotify_event_metadata for mount events. */
struct mr_fanotify_info_mnt {
	uint8_t info_type; /* FAN_EVENT_INFO_TYPE_MNT */
	uint8_t pad;
	uint16_t len; /* 16: the u64 is naturally aligned after the header */
	uint64_t mnt_id;
};

#endif /* MOUNTROUTER_UAPI_H */
