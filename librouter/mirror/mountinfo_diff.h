/* SPDX-License-Identifier: MIT */
/*
 * mountinfo_diff.c: the lines of mountinfo that changed since the last read.
 */
#ifndef MR_MOUNTINFO_DIFF_H
#define MR_MOUNTINFO_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mirror/mount.h"

/* What one mountinfo ID's line was at the last read. */
struct mr__mi_slot {
	uint64_t hash; /* 0: no line */
	uint64_t key;  /* the caller's name for the mount (its mirror ID), 0: unknown */
	uint32_t gen;  /* the read that last listed it */
	uint32_t tag;  /* the mountinfo ID + 1 (mnt_alloc_id() hands out 0 too); 0: empty */
	/*
	 * In read @gen: where the ID's last line starts in the buffer (which
	 * mr__mountinfo_read_fd() keeps under 1 GiB) ...
	 */
	uint32_t line_at;
	bool known; /* ... whether it had a line before this read ... */
	bool noted; /* ... and whether a line of it is to be reported changed */
	/*
	 * The caller's record the line was last judged against (a reference,
	 * dropped when the slot is cleared): a mirror that changed since
	 * through another path shows as a different record.
	 */
	struct mr__mount *rec;
};

struct mr__mi_diff {
	struct mr__mi_slot *slot; /* hashed by mountinfo ID, at most half full */
	size_t cap;               /* places: a power of two, or 0 */
	size_t n;                 /* places used */
	uint32_t gen;
	char *buf; /* the file, reused between reads */
	size_t buf_cap;
	/* This read's lines that differ, reported once the file is read. */
	struct mr__mi_line {
		uint32_t at, len, id;
	} *changed;
	size_t n_changed, changed_cap;
};

struct mr__mi_diff_ops {
	/* The whole file is read: called before any other callback (may be NULL). */
	void (*read)(void *arg);
	/*
	 * A line new (@known false) or changed since the last read, @n bytes
	 * without its '\n'; @key is what mr__mi_diff_set_key() gave the ID.
	 * Called after the whole file is read, in the file's order, once per
	 * ID with its last line (an ID listed twice in one read was reused or
	 * moved while the file was read in pieces; the later line is the
	 * newer).
	 */
	int (*changed)(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *slot,
		       bool known);
	/* A line as it was last time (may be NULL), called as it is read. */
	int (*same)(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *slot);
	/* An ID listed last time and not now (its slot is cleared after). */
	int (*gone)(void *arg, uint32_t id, struct mr__mi_slot *slot);
};

/*
 * Reads the whole file through @fd and calls @ops for each difference from
 * the last read (every line, the first time or after a reset): O(file) to
 * read and hash, plus whatever @ops does; memory O(lines), not O(largest
 * ID).  @ops must not call mr__mi_diff_set_key() (it may move the slots).  Returns 0, a callback's -errno,
 * -EINVAL for text that is not mountinfo, or a read's -errno; after an
 * error the state is unreliable until mr__mi_diff_reset().
 */
int mr__mi_diff_run(struct mr__mi_diff *d, int fd, const struct mr__mi_diff_ops *ops, void *arg,
		    uint64_t *syscalls);
/* Names the mount behind mountinfo ID @id for later callbacks. 0 or -errno. */
int mr__mi_diff_set_key(struct mr__mi_diff *d, uint32_t id, uint64_t key);
/* Forgets every line: the next run reports them all as new. */
void mr__mi_diff_reset(struct mr__mi_diff *d);
void mr__mi_diff_free(struct mr__mi_diff *d);

#endif /* MR_MOUNTINFO_DIFF_H */
