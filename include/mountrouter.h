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
 * failure; out-parameters are named ret_*, come last and are left untouched
 * on failure; every free/unref accepts NULL.  The library never prints.
 *
 * Each function below states its contract in three words:
 *   Threads:   who may call it, and alongside which other calls.
 *   Progress:  wait-free (a bounded number of its own steps, whatever other
 *              threads do), lock-based (may wait for a mutex held only by
 *              other API callers, never by the router thread), or blocking
 *              (sleeps in the kernel).
 *   Lifetime:  what the call creates or ends, and how long what it returns
 *              stays valid.
 * "The router thread" is the thread of mr_router_start(), or whichever
 * thread calls mr_router_dispatch().  A call stated "any thread" may run
 * alongside the router thread and other such calls, but never alongside
 * mr_router_free() of the same router.
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
	MR_EVENT_NS_GONE,       /* the namespace is no longer watched; the last event */
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

/*
 * MR_EVENT_NS_GONE ends a subscription: mr_router_remove_ns() was called
 * for its namespace (a container manager does so when the container's
 * last process exits: its pidfd turns readable).  It comes after the
 * events already routed to the subscriber, nothing comes after it, and
 * it always finds room in the ring.  A subscriber that had overrun and not yet
 * caught up gets an OVERRUN marker with the count it missed just before
 * it (no SNAPSHOT: there is no namespace left to take one of).  Then only
 * mr_unsubscribe() is left to do.
 */

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
	/*
	 * Appended after 0.1.0.  SNAPSHOT's mounts[] is an array, so its
	 * stride grew with them: a program built against an older header
	 * must be rebuilt (0.x, never released, keeps SOVERSION 0).
	 */
	uint32_t mountinfo_id;        /* the reused 32-bit ID mountinfo and findmnt -o ID show
					 (0: unknown) */
	uint32_t mountinfo_parent_id; /* the parent's, likewise */
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
	uint64_t ns_id;      /* mount namespace ID (NS_GET_MNTNS_ID), as
				mr_router_add_ns_*() gave it; events queued
				before mr_router_remove_ns() keep it */
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
	/*
	 * Appended after 0.1.0 (events are only ever handed out by pointer,
	 * so older callers are unaffected): the mount as it is after the
	 * change, and as it was before, with its root, device and mountinfo
	 * IDs.  For UNMOUNT and EXPIRY @mount is the mount that went; @old_mount
	 * is NULL for MOUNT, UNMOUNT and EXPIRY.  Both NULL for markers and
	 * SNAPSHOT.  Valid until mr_event_unref().
	 */
	const struct mr_mount *mount, *old_mount;
};

/*
 * Returns a static lower-case name ("mount", "unmount", ...) or "unknown".
 * Threads: any.  Progress: wait-free.  Lifetime: the string is static.
 */
MR_EXPORT const char *mr_event_kind_name(uint32_t kind);

/*
 * Parses a kind name (also findmnt's "umount", "remount") into *ret_kind.
 * Returns 0 or -EINVAL for an unknown name.
 * Threads: any.  Progress: wait-free.
 */
MR_EXPORT int mr_event_kind_parse(const char *name, uint32_t *ret_kind);

/*
 * Drops the caller's reference to an event received with mr_sub_next();
 * each event received is released exactly once.
 * Threads: any (not necessarily the one that received it).
 * Progress: wait-free, but the last reference frees the event's memory.
 * Lifetime: an event and its strings stay valid until this call, even after
 * its subscription is ended or its router freed.
 */
MR_EXPORT void mr_event_unref(const struct mr_event *ev);

/* ---- router ---- */

/* struct mr_opts::flags */
#define MR_OPT_NO_SELF_NS (1u << 0) /* do not watch the caller's namespace */
/*
 * The backend a router reads its fds through.  By default it follows the
 * source.  fanotify reads one fd for every namespace, where io_uring's
 * batches buy nothing and its completions cost more: it posts them through
 * task work, which interrupts and restarts the poll() a caller's loop
 * sleeps in on mr_router_fd().  There epoll and read(2) are the default: on
 * a quiet host a change costs about an eighth less CPU driven from a
 * caller's loop, a fifth less on the router's own thread (BENCHMARKS.md,
 * "One change at a time").  watch_mount reads a pipe per namespace, which
 * io_uring batches in a storm: io_uring for it.  listmount and mountinfo
 * read the table when mountinfo's doorbell rings, on either backend alike
 * (their tests run on both); they stay on io_uring, where they were
 * measured, until epoll is measured for them.
 * MR_OPT_EPOLL reads through epoll whatever the source; MR_OPT_IO_URING
 * through io_uring whatever the source (still epoll where io_uring cannot
 * be set up).  Both at once: -EINVAL.
 */
#define MR_OPT_EPOLL (1u << 1)
#define MR_OPT_IO_URING (1u << 2)

struct mr_opts {
	size_t size;          /* sizeof(struct mr_opts); layouts ending at
				 'source' are accepted too */
	unsigned flags;       /* MR_OPT_* */
	const char *source;   /* NULL or "auto" (the best available), "watch_mount",
				 "fanotify", "listmount", "mountinfo" */
	unsigned queue_notes; /* watch_mount: notification queue slots, 1..512
				 (0: 256) */
	unsigned batch;       /* the io_uring has 2 * batch submission entries
				 (no meaning on epoll: see MR_OPT_EPOLL),
				 1..4096 (0: 256 entries, as for batch 128) */
};

/*
 * Creates a router (@opts may be NULL: every default).  Unless
 * MR_OPT_NO_SELF_NS, the caller's own mount namespace is added at once.
 * Returns 0, -ENOSYS if the named source is not supported by this kernel,
 * -EINVAL for unknown flags, MR_OPT_EPOLL with MR_OPT_IO_URING, an unknown
 * source name, a queue_notes or batch out of range or a short opts->size,
 * -ENOMEM, or the -errno of adding the caller's namespace (with a source
 * named, a refusal is returned as it is: -EACCES when a security module
 * refuses the watch).  Where io_uring cannot be set up (io_uring_setup
 * refused by kernel.io_uring_disabled or a seccomp filter, a kernel without
 * it or without provided-buffer rings, 5.19), a router that would read
 * through it is still made: it reads the same fds through epoll and read(2)
 * instead, with the same events and contracts, but for the early mount
 * MR_OPT_EPOLL tells of on listmount and mountinfo.
 * Threads: any.  Progress: blocking (syscalls; reads the caller's table).
 * Lifetime: the router lives until mr_router_free(); no thread runs until
 * mr_router_start().
 */
MR_EXPORT int mr_router_new(const struct mr_opts *opts, mr_router **ret_router);

/*
 * Stops the router thread if any (joins it), ends every subscription and
 * frees the router.
 * Threads: one, with no other call on @r or on any of its subscriptions in
 * progress or to come: every mr_sub handle of @r is invalid afterwards
 * (do not mr_unsubscribe() them).  Events already received stay valid until
 * mr_event_unref().  Progress: blocking.
 */
MR_EXPORT void mr_router_free(mr_router *r);

/*
 * Name of the source in use ("watch_mount", "fanotify", "mountinfo") and
 * why it was chosen; "" for NULL.
 * Threads: any.  Progress: wait-free.  Lifetime: static strings.
 */
MR_EXPORT const char *mr_router_source(const mr_router *r);
MR_EXPORT const char *mr_router_source_reason(const mr_router *r);

/*
 * The source watching namespace @ns_id and why: the router's, or, when the
 * router's source was picked by probing and could not watch this namespace
 * (a per-user limit, a kernel that cannot name it, a refusal: -EPERM or
 * -EACCES, as a security module gives), the next one that could.  Returns 0, -ENOENT for an unknown namespace, -EINVAL.
 * Threads: any, alongside the router thread.  Progress: lock-based.
 * Lifetime: static strings.
 */
MR_EXPORT int mr_router_ns_source(mr_router *r, uint64_t ns_id, const char **ret_name,
				  const char **ret_reason);

/*
 * Adds a mount namespace: the caller's, that of process @pid, or the one an
 * nsfs fd (/proc/PID/ns/mnt) refers to (the fd is duplicated; the caller
 * keeps its own).  Opens the kernel source and reads the table into the
 * namespace's mirror before returning, so changes made meanwhile are
 * queued, not lost; the router takes the namespace over at its next step.
 * Returns 0 and the namespace ID in *ret_ns_id (which may be NULL),
 * -EEXIST if it is already watched (the ID is still stored), -ESRCH for a
 * dead process, -EINVAL for an fd that is not a mount namespace's,
 * -ENOMEM, or the source's -errno.
 * The ID is the kernel's (NS_GET_MNTNS_ID, or the nsfs inode number where
 * that ioctl is missing): it names the namespace for as long as the
 * namespace exists and is never given to another one during that time.
 * Threads: any, alongside the router thread.  Progress: lock-based and
 * blocking (syscalls).
 */
MR_EXPORT int mr_router_add_ns_self(mr_router *r, uint64_t *ret_ns_id);
MR_EXPORT int mr_router_add_ns_pid(mr_router *r, pid_t pid, uint64_t *ret_ns_id);
MR_EXPORT int mr_router_add_ns_fd(mr_router *r, int nsfd, uint64_t *ret_ns_id);

/*
 * Stops watching a namespace at the router's next step.  Returns 0, or
 * -ENOENT if @ns_id is not watched (never added, or removed already).
 * After removal, @ns_id is unknown to the router: mr_subscribe() with it
 * fails with -ENOENT until the same namespace is added again, which gives
 * back the same ID, a mirror read afresh and no events for the interval.
 * Subscriptions to the removed namespace stay valid handles: the events
 * already in their rings are still delivered, then MR_EVENT_NS_GONE and
 * nothing after it, and each must still be ended with mr_unsubscribe().
 * They are not carried over to a namespace added again.
 * Threads: any, alongside the router thread.  Progress: lock-based.
 */
MR_EXPORT int mr_router_remove_ns(mr_router *r, uint64_t ns_id);

/*
 * Runs the router on a thread of its own until mr_router_stop() or
 * mr_router_free().  Returns 0, -EALREADY if it runs, or pthread_create's
 * -errno.  mr_router_stop() wakes the thread and joins it; returns 0 or
 * -EALREADY if none runs.
 * Threads: one at a time, never alongside mr_router_dispatch() or each
 * other.  Progress: blocking (stop waits for the thread's current step).
 */
MR_EXPORT int mr_router_start(mr_router *r);
MR_EXPORT int mr_router_stop(mr_router *r);

/*
 * For callers driving the router from their own loop: an fd that becomes
 * readable (POLLIN) when there is work, and the call that does the work
 * without blocking.
 * mr_router_fd() returns the fd (the io_uring's or the epoll fd's, as
 * MR_OPT_EPOLL tells; poll it, never read or close it) or -EINVAL.
 * Threads: any.  Progress: wait-free.
 * Lifetime: the fd is the router's until mr_router_free().
 * mr_router_dispatch() returns the number of events routed, -EBUSY while
 * mr_router_start()'s thread runs, or -errno.  Threads: one at a time; the
 * calling thread is the router thread for the call's duration.
 * Progress: blocking only in non-waiting syscalls (io_uring_enter or
 * epoll_wait without a wait, statmount, reads of mountinfo); a resync
 * reads the whole table.
 */
MR_EXPORT int mr_router_fd(const mr_router *r);
MR_EXPORT int mr_router_dispatch(mr_router *r);

/*
 * For a thread that does nothing but run the router and its subscribers:
 * waits up to @timeout_ms (-1: no limit) until mr_router_dispatch() has
 * work, in one syscall, and leaves what it found to that call (a poll of
 * mr_router_fd() followed by mr_router_dispatch() costs a syscall more a
 * change).  Call mr_router_dispatch() after it returns 1; mr_router_fd()
 * need not be readable then.
 * Returns 1 when there is work, 0 on timeout, -EINTR, -EBUSY while
 * mr_router_start()'s thread runs, -EINVAL, or -errno.
 * Threads: one at a time, the one that calls mr_router_dispatch().
 * Progress: blocking.  Added after 0.1.0 (symbol version MOUNTROUTER_0.2).
 */
MR_EXPORT int mr_router_wait(mr_router *r, int timeout_ms);

struct mr_stats {
	uint64_t records_read;   /* kernel records decoded */
	uint64_t events_routed;  /* events produced by the router */
	uint64_t deliveries;     /* events enqueued, summed over subscribers */
	uint64_t ring_drops;     /* deliveries dropped on full rings */
	uint64_t kernel_losses;  /* loss signals from the kernel */
	uint64_t resyncs;        /* table diffs after a loss */
	uint64_t syscalls;       /* syscalls the router thread made, all told */
	uint64_t io_uring_enters; /* of them, io_uring_enter; where the router
				     reads through epoll (see MR_OPT_EPOLL),
				     its thread's blocking waits, while
				     epoll_wait, read and epoll_ctl count
				     among the rest */
	uint64_t bad_records;    /* truncated or unknown records skipped */
	uint64_t namespaces;
	uint64_t subscribers;
	uint64_t mounts;         /* mounts in all mirrors */
	uint64_t resync_ns_total; /* time spent in resyncs */
	uint64_t resync_cpu_ns_total; /* router CPU time spent in them */
	uint64_t sweeps;         /* table sweeps for changes the source cannot name
				    (fanotify: remounts, mount_setattr;
				    mountinfo: every read of the file) */
	uint64_t sweep_ns_total; /* router CPU time spent in them */
};

/*
 * Copies the router's counters into *ret_stats.  Returns 0 or -EINVAL.
 * Threads: any.  Progress: wait-free.  Each counter is read on its own
 * (relaxed): the copy is not one instant's, and counters of the same
 * moment may disagree by the router's current step.
 */
MR_EXPORT int mr_router_stats(const mr_router *r, struct mr_stats *ret_stats);

/* ---- subscribers ---- */

/* struct mr_sub_opts::flags */
#define MR_SUB_SNAPSHOT (1u << 0) /* start with a SNAPSHOT of the subtree */

/*
 * What asking for READONLY or ATTR costs, and when they come.  Sources that
 * name the mount a change touched (watch_mount; fanotify with the project
 * kernel's attribute event) report them as they come, in O(1).  Mainline
 * fanotify and listmount do not: a remount or mount_setattr(2) only makes
 * mountinfo poll, so while some subscriber of a namespace asks for READONLY
 * or ATTR, the source polls mountinfo and, for a POLLPRI that no record
 * explains within 1 ms, reads mountinfo once and looks up the mounts whose
 * line changed: the change arrives about 1 ms plus one read of mountinfo
 * late (~15 ms at 10,000 mounts), and costs what a poller pays for every
 * change.  Two cases come later:
 *  - a remount made within the router's wake-up latency (tens of
 *    microseconds) of an attach or detach on another mount shares its
 *    POLLPRI with it: it is found by the verification pass that follows a
 *    burst of changes (records paused 1 ms, and at most 2% of the time:
 *    ~0.75 s after the previous pass at 10,000 mounts) or, after a lone
 *    attach or detach, once the router has spent 50 times a pass's cost on
 *    records since the last pass, or by the next pass of any kind;
 *  - a propagation change (MS_SHARED, MS_SLAVE, ...) makes mountinfo poll
 *    not at all: it is found by the next pass;
 *  - the mount on top of a MOVE_MOUNT_BENEATH, re-parented onto the new
 *    mount, gets no record of its own: it is found by the next pass if a
 *    pass has read its line before, else when its line next changes, or
 *    by a resync.
 * While no subscriber of a namespace asks for them the source does not
 * poll mountinfo (one wake-up a change instead of two) and reads it only
 * to take a SNAPSHOT, so that the snapshot is right.
 *
 * The mountinfo source reads the whole file for every change, and while
 * changes keep coming it reads at most half the time: a read that took T
 * (~10 ms at 10,000 mounts) is not followed by the next until T after it
 * ends.  A lone change is read at once; a change within T of the end of the
 * previous read comes up to T later.  Taking a SNAPSHOT makes a read put
 * off at once.
 */
struct mr_sub_opts {
	size_t size;         /* sizeof(struct mr_sub_opts) (every field is read) */
	unsigned flags;      /* MR_SUB_* */
	uint64_t ns_id;      /* namespace from mr_router_add_ns_*(); 0: the first
				added (once it is removed, any one still watched) */
	const char *subtree; /* absolute path prefix; NULL or "/" for everything */
	uint32_t kinds;      /* MR_KIND() mask within MR_KINDS_ALL; 0: MR_KINDS_ALL */
	uint32_t capacity;   /* ring slots, up to 1 << 22, rounded up to a power
				of two, at least 8 (0: 4096); the ring holds
				capacity - 5 changes: one slot is the ring's own,
				four are kept for markers (OVERRUN, SNAPSHOT,
				NS_GONE) */
};

/*
 * Subscribes (@opts may be NULL: everything in the first namespace).
 * The subscription takes effect at the router's next step
 * (the caller's next mr_router_dispatch(), or at once on the router's
 * thread, which this call wakes); events from then on are delivered, after
 * the SNAPSHOT if asked for.  A change made after this call returns is
 * delivered on every source, also where the router was woken by an earlier
 * change and reads the table only now (listmount, mountinfo, attribute
 * changes on fanotify): the subscription is put in place between that read
 * and the routing of what it found.  Returns 0, -EINVAL for a relative or
 * malformed subtree, unknown flags or kinds, a capacity over 1 << 22 or
 * a short opts->size, -ENOENT for an unknown namespace, -ENOMEM.
 * Threads: any, alongside the router thread.  Progress: lock-based.
 * Lifetime: the handle lives until mr_unsubscribe() or mr_router_free(),
 * whichever comes first.
 */
MR_EXPORT int mr_subscribe(mr_router *r, const struct mr_sub_opts *opts, mr_sub **ret_sub);

/*
 * Ends a subscription.  At its next step the router stops routing to it,
 * releases every event still queued, closes the eventfd and frees the
 * ring; until then (with mr_router_dispatch(), until the caller's next
 * dispatch or mr_router_free()) the ring may still fill.  Events already
 * received stay valid until mr_event_unref().
 * Threads: any, alongside the router thread, but not alongside any other
 * call on @s (mr_sub_next(), mr_sub_wait(), mr_sub_fd(), mr_sub_stats()):
 * the caller first stops its reader, then ends the subscription.  The
 * handle and the fd of mr_sub_fd() are invalid once this is called; a
 * thread polling that fd must have stopped too.  Not after
 * mr_router_free() (which ended it already).  In debug builds (no NDEBUG)
 * a second call or a later use of the handle aborts at that call with a
 * message on stderr.
 * Progress: lock-free (one allocation and a compare-and-swap push; a router
 * thread asleep is woken with one write(2)).  Should that allocation fail,
 * the subscription is ended by mr_router_free() instead.
 */
MR_EXPORT void mr_unsubscribe(mr_sub *s);

/*
 * Takes the next event.  Returns 0 and the event in *ret_event (release it
 * with mr_event_unref()), -EAGAIN when the ring is empty (after which the
 * fd of mr_sub_fd(), if made, becomes readable when an event arrives), or
 * -EINVAL.
 * Threads: one reader at a time per subscription (single consumer),
 * alongside the router thread.  Progress: wait-free; no syscall while
 * events are queued.  On an empty ring with an eventfd, one read(2) drains
 * a stale wake-up before re-arming; once after an OVERRUN, the call that
 * finds its ring half drained wakes the router with one write(2).
 */
MR_EXPORT int mr_sub_next(mr_sub *s, const struct mr_event **ret_event);

/*
 * An eventfd that becomes readable when an event arrives after
 * mr_sub_next() said -EAGAIN.  Made on the first call (a subscriber that
 * never waits costs no fd), the same fd afterwards.  The call changes the
 * subscription's state: from then on the router writes the eventfd
 * whenever it queues to an empty ring the reader waits on.  Returns the fd
 * or -errno (-EMFILE, -EINVAL).
 * Readable does not promise an event: a wake-up may be stale (the event it
 * announced already taken), so a reader calls mr_sub_next() until -EAGAIN
 * and then polls again.  Poll it; never read, write or close it.
 * Threads: the reader's (the same thread discipline as mr_sub_next()).
 * Progress: wait-free but for eventfd(2) on the first call.
 * Lifetime: the fd is the subscription's until mr_unsubscribe() or
 * mr_router_free().
 */
MR_EXPORT int mr_sub_fd(mr_sub *s);

/*
 * Sleeps until an event may be available or @timeout_ms passes (-1:
 * forever; 0: only looks).  Returns 0, -ETIMEDOUT, -EINTR, or the -errno of
 * making the eventfd (as mr_sub_fd()).
 * A return of 0 may be spurious: a stale wake-up (an event announced and
 * already taken) ends the wait with the ring empty, so callers loop:
 *     while (mr_sub_next(s, &ev) == -EAGAIN) mr_sub_wait(s, -1);
 * Threads: the reader's.  Progress: blocking (poll(2)).
 */
MR_EXPORT int mr_sub_wait(mr_sub *s, int timeout_ms);

struct mr_sub_stats {
	uint64_t delivered; /* events enqueued to this ring */
	uint64_t dropped;   /* events that found the ring full */
	uint64_t overruns;  /* OVERRUN markers sent */
	uint64_t snapshots; /* SNAPSHOTs sent */
};

/*
 * Copies the subscription's counters into *ret_stats.  Returns 0 or -EINVAL.
 * Threads: any, while the handle is valid (see mr_unsubscribe()).
 * Progress: wait-free; relaxed reads, as mr_router_stats().
 */
MR_EXPORT int mr_sub_stats(const mr_sub *s, struct mr_sub_stats *ret_stats);

/* ---- version ---- */

/*
 * Returns MR_VERSION_STRING of the library actually loaded.
 * Threads: any.  Progress: wait-free.  Lifetime: a static string.
 */
MR_EXPORT const char *mr_version(void);

#ifdef __cplusplus
}
#endif

#endif /* MOUNTROUTER_H */
