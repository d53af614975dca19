/* SPDX-License-Identifier: MIT */
/*
 * decode.c: kernel records to source-neutral changes (no syscalls).
 */
#ifndef MR_DECODE_H
#define MR_DECODE_H

#include <stddef.h>
#include <stdint.h>

enum mr__change_kind {
	MR__CHANGE_ATTACH = 1, /* mount appeared: look it up, emit MOUNT */
	MR__CHANGE_DETACH,     /* mount went away: UNMOUNT */
	MR__CHANGE_MOVE,       /* mount moved: look it up again, emit MOVE */
	MR__CHANGE_READONLY,   /* read-only state changed */
	MR__CHANGE_SETATTR,    /* attributes changed */
	MR__CHANGE_EXPIRY,     /* automount expired: EXPIRY */
	MR__CHANGE_LOSS,       /* the kernel dropped records: resync */
	MR__CHANGE_REMOVED,    /* the watched object went away */
	MR__CHANGE_RECHECK,    /* router only: look again (sweeps, refreshes), no record */
};

struct mr__change {
	enum mr__change_kind kind;
	uint64_t mnt_id;   /* the mount the change is about */
	uint64_t other_id; /* watch_mount: the mount it happened on; fanotify: the pid */
	uint32_t info;     /* watch_mount: info flags, watch ID */
};

/*
 * Decodes a buffer of fanotify records (FAN_REPORT_MNT group).  Appends up
 * to @max changes to @out; returns how many, and counts malformed records
 * in *bad.  A record with both ATTACH and DETACH is a move.
 */
size_t mr__decode_fanotify(const void *buf, size_t len, struct mr__change *out, size_t max,
			   uint64_t *bad);

/* Decodes a buffer of watch_queue records (mount notifications and meta). */
size_t mr__decode_watch_queue(const void *buf, size_t len, struct mr__change *out, size_t max,
			      uint64_t *bad);

typedef size_t (*mr__decode_fn)(const void *buf, size_t len, struct mr__change *out, size_t max,
				uint64_t *bad);

#endif /* MR_DECODE_H */
