/* SPDX-License-Identifier: MIT */
/*
 * What every source shares: its state's base, its ops, how one is chosen
 * (source.c), and how a read of kernel records reaches the router.
 */
#ifndef MR_SOURCE_H
#define MR_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mirror/mount.h"
#include "io/reactor.h"
#include "sources/decode.h"

struct mr__ns;
struct mr__table;

/*
 * What every source's per-namespace state begins with.  A watch handed to
 * the reactor may still be written by the kernel after the namespace is
 * closed, so the state lives until the reactor releases the last of them.
 */
struct mr__source_base {
	unsigned live;                /* watches the reactor still holds */
	void (*free_state)(void *st); /* the whole state, base included */
};

/*
 * A read completion of kernel records for @ns (@res: bytes or -errno),
 * router thread: decodes them with @decode into @out (room for @max) and
 * hands each change to the router in order.  A record that cannot be
 * decoded, or a read error other than EAGAIN/EINTR, counts as a loss.
 * Returns the number of changes, or -1 when there were no records to read.
 */
long mr__source_records(struct mr__ns *ns, int res, const void *buf, size_t len,
			mr__decode_fn decode, struct mr__change *out, size_t max);
/*
 * Decoded records of one read: a 16 KiB reactor buffer holds at most 2,048
 * (8-byte watch_queue loss records).
 */
#define MR__SOURCE_CHANGES_MAX 2048
/* The release callback of a source's watches (their owner is the state). */
void mr__source_watch_released(struct mr__watch *w);
/*
 * Ends a state: frees it now if the reactor holds none of its @n @watches
 * (or @re is NULL), else cancels them and the last release frees it.
 */
void mr__source_end(struct mr__source_base *b, struct mr__reactor *re,
		    struct mr__watch *const *watches, size_t n);

/*
 * A source's one-shot timer and when it fires (router thread only).  When
 * it fires, the namespace's after_batch runs in that step.
 */
struct mr__source_timer {
	struct mr__watch watch; /* MR__WATCH_TIMER, owned by the source's state */
	struct mr__ns *ns;
	bool armed;             /* in flight: set until its completion */
	uint64_t at_ns;         /* when the armed timer fires */
};

/* Sets @t up for @ns; its watch belongs to the source's state @st. */
void mr__source_timer_init(struct mr__source_timer *t, void *st, struct mr__ns *ns);
/*
 * Makes @t fire @in_ns after @now: arms it, or brings the timer in flight
 * forward when it would fire later (never back).  A failure to arm leaves
 * it unarmed; the next call tries again.
 */
void mr__source_timer_arm(struct mr__source_timer *t, struct mr__reactor *re, uint64_t in_ns,
			  uint64_t now);

struct mr__source_ops {
	const char *name;
	/*
	 * The router reads through io_uring by default, not epoll (MR_OPT_EPOLL
	 * says why): watch_mount reads a pipe per namespace, which io_uring
	 * batches in a storm.  listmount and mountinfo work the same on
	 * either (a read routes only once the subscriptions made before it
	 * are in place, mr__router_observed()); they stay on io_uring, where
	 * they were measured, until epoll is measured for them.
	 */
	bool prefers_io_uring;
	/* 0 if this kernel supports the source, else -errno (-ENOSYS: absent). */
	int (*probe)(void);
	/* Opens the kernel side for @ns (caller's thread); mirror not built yet. */
	int (*open)(struct mr__ns *ns);
	/* Registers its fds with the reactor (router thread). */
	int (*start)(struct mr__ns *ns, struct mr__reactor *re);
	/* Router thread: after a batch, work the source deferred (sweeps). */
	void (*after_batch)(struct mr__ns *ns);
	/*
	 * Router thread, before a snapshot is taken from the mirror: look now
	 * for changes put off until someone asked (may be NULL).
	 */
	void (*settle)(struct mr__ns *ns);
	/* Reads the whole table for a resync. */
	int (*read_table)(struct mr__ns *ns, struct mr__table *ret);
	/* Looks one mount up after a change (-ENOENT if gone, -ENOTSUP: resync). */
	int (*lookup)(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret);
	void (*close)(struct mr__ns *ns, struct mr__reactor *re);
	/*
	 * Optional, router thread: notes the lines of its state a change on
	 * @ns uses (warm.h), beyond the namespace, its mirror and the reactor.
	 */
	void (*warm)(const struct mr__ns *ns, struct mr__warm *w);
	/* Optional: the IDs below @mnt_id, as mr__listmount_below() (NULL: that). */
	int (*list_below)(struct mr__ns *ns, uint64_t mnt_id, uint64_t **ids, size_t *cap);
};

extern const struct mr__source_ops mr__source_fanotify;
extern const struct mr__source_ops mr__source_listmount;
extern const struct mr__source_ops mr__source_mountinfo;
extern const struct mr__source_ops mr__source_watch_mount;

/* Picks a source by name ("auto"/NULL: the best available) and says why. */
int mr__source_pick(const char *name, const struct mr__source_ops **ret, const char **ret_reason);
/*
 * The source a namespace falls back to when @failed could not watch it
 * with @err (a limit, an unsupported namespace), and why; NULL when @err
 * is not such an error or nothing below @failed probes.
 */
const struct mr__source_ops *mr__source_fallback(const struct mr__source_ops *failed, int err,
						 const char **ret_reason);

#endif /* MR_SOURCE_H */
