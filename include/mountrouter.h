/* SPDX-License-Identifier: MIT */
/*
 * mountrouter: typed, per-subtree mount-table events for many subscribers.
 *
 * A router watches the mount table of one or more mount namespaces through
 * the best kernel interface available (watch_mount, fanotify mount events,
 * or /proc/PID/mountinfo), keeps a mirror of each table, and delivers every
 * change to the subscribers whose subtree it touches, each through its own
 * single-producer/single-consumer ring.
 *
 * Conventions: functions return 0 (or a count) on success and -errno on
 * failure; out-parameters are named ret_* and are left untouched on
 * failure; every free/unref accepts NULL.  The library never prints.
 */
#ifndef MOUNTROUTER_H
#define MOUNTROUTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mountrouter-version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MR_BUILDING_LIBRARY)
#define MR_EXPORT __attribute__((visibility("default")))
#else
#define MR_EXPORT
#endif

typedef struct mr_router mr_router;
typedef struct mr_sub mr_sub;

/* ---- events ---- */

enum mr_event_kind {
	MR_EVENT_MOUNT = 1,     /* a mount appeared (attach, bind, propagation) */
	MR_EVENT_UNMOUNT,       /* a mount went away */
	MR_EVENT_MOVE,          /* a mount moved: path and old_path */
	MR_EVENT_READONLY,      /* read-only state flipped: see MR_EVF_READONLY */
	MR_EVENT_ATTR,          /* attributes or options changed (remount, setattr) */
	MR_EVENT_EXPIRY,        /* an automount expired */
	MR_EVENT_OVERRUN,       /* this subscriber missed events: lost = count */
	MR_EVENT_RESYNC_BEGIN,  /* synthetic events follow until RESYNC_END */
	MR_EVENT_RESYNC_END,
	MR_EVENT_SNAPSHOT,      /* the subscriber's whole subtree: mounts[] */
};

/*
 * Every kind, present and future, is below this: a kind is a bit of the
 * 32-bit mask MR_KIND() builds.  Arrays indexed by kind can use it.
 */
#define MR_KIND_LIMIT 32u

/* Bit for a kind in a subscription's kind mask. */
#define MR_KIND(k) (1u << (k))
/* Every change kind; markers and snapshots are always delivered. */
#define MR_KINDS_ALL                                                       \
	(MR_KIND(MR_EVENT_MOUNT) | MR_KIND(MR_EVENT_UNMOUNT) |             \
	 MR_KIND(MR_EVENT_MOVE) | MR_KIND(MR_EVENT_READONLY) |             \
	 MR_KIND(MR_EVENT_ATTR) | MR_KIND(MR_EVENT_EXPIRY))

/* struct mr_event::flags */
#define MR_EVF_SYNTHETIC (1u << 0) /* derived by a resync diff, not read live */
#define MR_EVF_READONLY (1u << 1)  /* the mount is read-only after the event */
#define MR_EVF_SUBMOUNT (1u << 2)  /* an automount made the mount */
#define MR_EVF_KERNEL_LOSS (1u << 3) /* OVERRUN/RESYNC: the kernel lost records */
#define MR_EVF_RING_LOSS (1u << 4) /* OVERRUN: this subscriber's ring was full */
#define MR_EVF_LATE_JOIN (1u << 5) /* SNAPSHOT asked for at subscribe time */

/* One mount as the mirror knows it (entries of a SNAPSHOT). */
struct mr_mount {
	uint64_t id;        /* 64-bit unique mount ID (statmount mnt_id) */
	uint64_t parent_id;
	uint64_t attr;      /* MOUNT_ATTR_* */
	uint32_t propagation; /* MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE */
	uint32_t dev_major, dev_minor;
	const char *path;   /* mount point, relative to the namespace root */
	const char *root;   /* root of the mount within its filesystem */
	const char *source;
	const char *fstype;
	const char *options; /* per-mount and superblock options, comma separated */
};

/*
 * One change, shared read-only by every subscriber it was routed to.
 * Strings are NUL-terminated and never NULL (empty when unknown).  Release
 * with mr_event_unref() when done.
 */
struct mr_event {
	uint32_t kind;       /* enum mr_event_kind */
	uint32_t flags;      /* MR_EVF_* */
	uint64_t mnt_id;     /* 64-bit unique mount ID (the mountinfo source: mountinfo's
				32-bit ID, all that file shows), 0 for markers */
	uint64_t parent_id;
	uint64_t ns_id;      /* mount namespace ID (NS_GET_MNTNS_ID) */
	uint64_t seq;        /* router-wide sequence number, strictly increasing */
	uint64_t time_ns;    /* CLOCK_MONOTONIC when the router read the change */
	uint64_t lost;       /* OVERRUN: number of changes this subscriber missed */
	uint64_t attr, old_attr; /* MOUNT_ATTR_* after and before */
	const char *path, *old_path; /* old_path: MOVE only */
	const char *source;
	const char *fstype;
	const char *options, *old_options; /* old_options: READONLY/ATTR */
	const struct mr_mount *mounts; /* SNAPSHOT: the subtree, parents first */
	size_t n_mounts;
	uint32_t propagation, old_propagation; /* MS_SHARED | MS_SLAVE | ... after and before */
	uint64_t reserved[3];
};

/* Returns a static lower-case name ("mount", "unmount", ...) or "unknown". */
MR_EXPORT const char *mr_event_kind_name(uint32_t kind);

/* Parses a kind name (also findmnt's "umount", "remount") into *ret_kind. */
MR_EXPORT int mr_event_kind_parse(const char *name, uint32_t *ret_kind);

/* Drops the caller's reference to an event received with mr_sub_next(). */
MR_EXPORT void mr_event_unref(const struct mr_event *ev);

/* ---- router ---- */

/* struct mr_opts::flags */
#define MR_OPT_NO_SELF_NS (1u << 0) /* do not watch the caller's namespace */

struct mr_opts {
	size_t size;          /* sizeof(struct mr_opts), for extension */
	unsigned flags;       /* MR_OPT_* */
	const char *source;   /* "auto" (NULL), "watch_mount", "fanotify", "mountinfo" */
	unsigned queue_notes; /* watch_mount: notification pipe slots, 1..512 (0: 256) */
	unsigned batch;       /* reads submitted per io_uring_enter (0: 64) */
};

/*
 * Creates a router.  Unless MR_OPT_NO_SELF_NS, the caller's own mount
 * namespace is added at once.  Returns 0, -ENOSYS if the named source is
 * not supported by this kernel, -EINVAL for bad options.
 */
MR_EXPORT int mr_router_new(const struct mr_opts *opts, mr_router **ret_router);

/* Stops the router thread if any, frees every subscription and the router. */
MR_EXPORT void mr_router_free(mr_router *r);

/* Name of the source in use ("fanotify", ...) and why it was chosen. */
MR_EXPORT const char *mr_router_source(const mr_router *r);
MR_EXPORT const char *mr_router_source_reason(const mr_router *r);

/*
 * Adds a mount namespace: the caller's, that of process @pid, or the one an
 * nsfs fd (/proc/PID/ns/mnt) refers to (the fd is duplicated).  Builds its
 * mirror before returning.  Returns 0 and the namespace ID, -EEXIST if it
 * is already watched (the ID is still stored), -ESRCH for a dead process.
 * Safe from any thread while the router runs.
 */
MR_EXPORT int mr_router_add_ns_self(mr_router *r, uint64_t *ret_ns_id);
MR_EXPORT int mr_router_add_ns_pid(mr_router *r, pid_t pid, uint64_t *ret_ns_id);
MR_EXPORT int mr_router_add_ns_fd(mr_router *r, int nsfd, uint64_t *ret_ns_id);

/*
 * Stops watching a namespace.  Its subscribers receive nothing more.
 * Returns 0 or -ENOENT.  Safe from any thread while the router runs.
 */
MR_EXPORT int mr_router_remove_ns(mr_router *r, uint64_t ns_id);

/* Runs the router on its own thread until mr_router_stop() or free. */
MR_EXPORT int mr_router_start(mr_router *r);
MR_EXPORT int mr_router_stop(mr_router *r);

/*
 * For callers driving the router from their own loop: an fd that becomes
 * readable (POLLIN) when there is work, and the call that does the work
 * without blocking.  Returns the number of events routed, or -errno.
 * Not to be mixed with mr_router_start().
 */
MR_EXPORT int mr_router_fd(const mr_router *r);
MR_EXPORT int mr_router_dispatch(mr_router *r);

struct mr_stats {
	uint64_t records_read;   /* kernel records decoded */
	uint64_t events_routed;  /* events produced by the router */
	uint64_t deliveries;     /* events enqueued, summed over subscribers */
	uint64_t ring_drops;     /* deliveries dropped on full rings */
	uint64_t kernel_losses;  /* loss signals from the kernel */
	uint64_t resyncs;        /* table diffs after a loss */
	uint64_t syscalls;       /* syscalls the router thread made */
	uint64_t io_uring_enters;
	uint64_t bad_records;    /* truncated or unknown records skipped */
	uint64_t namespaces;
	uint64_t subscribers;
	uint64_t mounts;         /* mounts in all mirrors */
	uint64_t resync_ns_total; /* time spent in resyncs */
	uint64_t resync_cpu_ns_total; /* router CPU time spent in them */
	uint64_t sweeps;         /* table sweeps for changes the source cannot name
				    (fanotify: remounts, mount_setattr) */
	uint64_t sweep_ns_total; /* router CPU time spent in them */
};

/* Copies the router's counters (relaxed reads; any thread). Returns 0. */
MR_EXPORT int mr_router_stats(const mr_router *r, struct mr_stats *ret);

/* ---- subscribers ---- */

/* struct mr_sub_opts::flags */
#define MR_SUB_SNAPSHOT (1u << 0) /* start with a SNAPSHOT of the subtree */

struct mr_sub_opts {
	size_t size;         /* sizeof(struct mr_sub_opts) */
	unsigned flags;      /* MR_SUB_* */
	uint64_t ns_id;      /* namespace from mr_router_add_ns_*(); 0: the first */
	const char *subtree; /* absolute path prefix; NULL or "/" for everything */
	uint32_t kinds;      /* MR_KIND() mask; 0: MR_KINDS_ALL */
	uint32_t capacity;   /* ring slots, rounded up to a power of two (0: 4096) */
};

/*
 * Subscribes.  Safe from any thread while the router runs; the
 * subscription takes effect at the router's next step, and events from then
 * on are delivered (after the SNAPSHOT if asked for).  Returns 0, -EINVAL
 * for a relative or malformed subtree, -ENOENT for an unknown namespace.
 */
MR_EXPORT int mr_subscribe(mr_router *r, const struct mr_sub_opts *opts, mr_sub **ret);

/*
 * Ends a subscription and releases every event still queued.  The handle
 * must not be used afterwards.  Safe from any thread.
 */
MR_EXPORT void mr_unsubscribe(mr_sub *s);

/*
 * Takes the next event.  Returns 0 and the event (release it with
 * mr_event_unref()), or -EAGAIN when the ring is empty, after which the
 * fd of mr_sub_fd() becomes readable when an event arrives.  Wait-free.
 * Only one thread may read a subscription at a time.
 */
MR_EXPORT int mr_sub_next(mr_sub *s, const struct mr_event **ret);

/*
 * An eventfd that becomes readable when an event arrives after
 * mr_sub_next() said -EAGAIN.  Made on the first call (a subscriber that
 * never waits costs no fd); returns the fd or -errno (-EMFILE).  Call it
 * from the reading thread.
 */
MR_EXPORT int mr_sub_fd(mr_sub *s);

/*
 * Blocks until an event is available or @timeout_ms passes (-1: forever).
 * Returns 0 when one is, -ETIMEDOUT, or -EINTR.
 */
MR_EXPORT int mr_sub_wait(mr_sub *s, int timeout_ms);

struct mr_sub_stats {
	uint64_t delivered; /* events enqueued to this ring */
	uint64_t dropped;   /* events that found the ring full */
	uint64_t overruns;  /* OVERRUN markers sent */
	uint64_t snapshots; /* SNAPSHOTs sent */
};

MR_EXPORT int mr_sub_stats(const mr_sub *s, struct mr_sub_stats *ret);

/* ---- version ---- */

/* Returns MR_VERSION_STRING of the library actually loaded. */
MR_EXPORT const char *mr_version(void);

#ifdef __cplusplus
}
#endif

#endif /* MOUNTROUTER_H */
