/* SPDX-License-Identifier: MIT */
/*
 * probe.c: what the running kernel offers, asked once.
 */
#ifndef MR_PROBE_H
#define MR_PROBE_H

#include <stdbool.h>

struct mr__features {
	bool listmount;      /* listmount/statmount (6.8) */
	bool statmount_ns;   /* mnt_id_req.mnt_ns_id (6.11) */
	bool fanotify_mnt;   /* FAN_REPORT_MNT + FAN_MARK_MNTNS (6.15) */
	bool fanotify_mnt_attr; /* FAN_MNT_ATTR_CHANGE (the project's kernel) */
	bool watch_mount;    /* the project's patched kernel */
	bool notification_pipe; /* CONFIG_WATCH_QUEUE */
	bool read_multishot; /* IORING_OP_READ_MULTISHOT (6.7) */
	bool buf_ring;       /* provided buffer rings (5.19) */
	bool mntns_id;       /* NS_GET_MNTNS_ID (6.10) */
	bool statmount_opts; /* STATMOUNT_MNT_OPTS (6.11) */
	bool statmount_sb_source; /* STATMOUNT_SB_SOURCE (6.13): else sources read "" */
	bool listmount_reverse; /* LISTMOUNT_REVERSE (6.11) */
	bool ns_mnt_next;    /* NS_MNT_GET_NEXT (6.12) */
	int watch_mount_err; /* why watch_mount is unusable (-errno) */
	int fanotify_err;
};

const struct mr__features *mr__probe(void);

#endif /* MR_PROBE_H */
