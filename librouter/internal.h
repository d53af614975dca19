/* SPDX-License-Identifier: MIT */
/*
 * Declarations shared by the library's files.  Nothing here is public: the
 * mr__ prefix marks internal symbols, and the version script keeps them out
 * of the shared object's dynamic symbol table.
 */
#ifndef MR_INTERNAL_H
#define MR_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mountrouter.h"

#define MR__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MR__LIKELY(x) __builtin_expect(!!(x), 1)
#define MR__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MR__CACHELINE 64

/* ---- alloc.c: every allocation goes through jemalloc's non-standard API ---- */

void *mr__malloc(size_t n);
void *mr__calloc(size_t n, size_t size);
void *mr__realloc(void *p, size_t n);
void mr__free(void *p);
char *mr__strdup(const char *s);

/* ---- clock ---- */

uint64_t mr__now_ns(void); /* CLOCK_MONOTONIC */
uint64_t mr__thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID */

/* ---- mount.c: one immutable, reference-counted mount record ---- */

/*
 * A mount as read from the kernel.  Immutable once built: a change makes a
 * new record, and events and snapshots keep the old one alive by holding a
 * reference, so readers on other threads never see it change.
 */
struct mr__mount {
	struct mr_mount pub;  /* strings point into str[] */
	_Atomic uint32_t refs;
	uint32_t old_id;      /* mountinfo's reused 32-bit ID (0: unknown) */
	uint32_t sb_flags;    /* SB_RDONLY etc. from statmount, 0 if unknown */
	uint32_t sb_opts;     /* mr__sb_opts_hash() of the superblock's own options */
	uint32_t seen;        /* mirror diff generation (router thread only) */
	uint32_t path_len;
	char str[];
};

/*
 * Superblock flags as statmount(2) reports them in sb_flags (values from the
 * kernel's include/linux/fs.h); mountinfo.c derives the same bits from the
 * superblock options so records from either reader compare equal.
 */
#define MR__SB_RDONLY 0x00000001u
#define MR__SB_SYNCHRONOUS 0x00000010u
#define MR__SB_DIRSYNC 0x00000080u
#define MR__SB_LAZYTIME 0x02000000u

/*
 * Copies @f (and its strings; NULL strings become "") into a new record,
 * refs = 1.  @sb_opts: mr__sb_opts_hash() of the superblock's own options.
 */
struct mr__mount *mr__mount_new(const struct mr_mount *f, uint32_t old_id, uint32_t sb_flags,
				uint32_t sb_opts);
/*
 * A digest of a superblock's own options (statmount's mnt_opts, mountinfo's
 * super options): when it or sb_flags changes, every mount of that
 * superblock changed, whether or not the kernel said so for each.
 */
uint32_t mr__sb_opts_hash(const char *opts);
/* The superblock under @a changed from what @b had (same mount, two looks). */
bool mr__mount_sb_changed(const struct mr__mount *a, const struct mr__mount *b);
struct mr__mount *mr__mount_ref(struct mr__mount *m);
void mr__mount_unref(struct mr__mount *m);
/* True if every field the user sees (path, options, attr, ...) is equal. */
bool mr__mount_same(const struct mr__mount *a, const struct mr__mount *b);
bool mr__mount_readonly(const struct mr__mount *m);
/*
 * True if what a remount, mount_setattr(2) or a propagation change can
 * change is equal (flags, propagation, superblock, options), whoever read
 * the two records (statmount or mountinfo; paths and IDs are not compared).
 */
bool mr__mount_attrs_same(const struct mr__mount *a, const struct mr__mount *b);

/* ---- table.c: a growable array of mount records (a read of the whole table) ---- */

struct mr__table {
	struct mr__mount **v;
	size_t n, cap;
};

int mr__table_push(struct mr__table *t, struct mr__mount *m); /* takes the reference */
void mr__table_clear(struct mr__table *t);                    /* drops references */

/* ---- order.c: parents before children ---- */

/*
 * Orders @v so that a mount whose parent is also in @v comes after it
 * (@reverse: before it, the order to announce unmounts in); otherwise the
 * order is kept.  O(n log n).  0 or -ENOMEM (@v is then unchanged).
 */
int mr__order_parents_first(struct mr__mount **v, size_t n, bool reverse);

/* ---- mountinfo.c: parse /proc/PID/mountinfo text ---- */

/*
 * Undoes the kernel's octal escaping of ' ', '\t', '\n' and '\\' (mangle()
 * in fs/proc_namespace.c: \040 \011 \012 \134) in place.  Returns the new
 * length, or -EINVAL for a malformed escape.
 */
int mr__mountinfo_unescape(char *s);

/*
 * Parses a whole mountinfo buffer into @ret (appended).  IDs are the
 * 32-bit mountinfo IDs (stored in old_id and, lacking better, in pub.id).
 * Returns the number of mounts parsed, or -EINVAL at the first malformed
 * line (the table then holds the lines before it).
 */
int mr__mountinfo_parse(const char *buf, size_t len, struct mr__table *ret);

/* Scratch space for parsing lines one at a time, reused between them. */
struct mr__mountinfo_scratch {
	char *p;
	size_t cap;
};

/*
 * Parses one line (@n bytes, no '\n') into a new record.  0, -EINVAL for a
 * malformed line, -ENOMEM.
 */
int mr__mountinfo_parse_line(const char *l, size_t n, struct mr__mountinfo_scratch *s,
			     struct mr__mount **ret);
void mr__mountinfo_scratch_free(struct mr__mountinfo_scratch *s);

/* Reads a whole mountinfo file through @fd (-1: /proc/self/mountinfo) into *@buf. */
int mr__mountinfo_read_fd(int fd, char **buf, size_t *cap, size_t *ret_len);

/* ---- mountinfo_diff.c: the lines of mountinfo that changed since the last read ---- */

/* What one mountinfo ID's line was at the last read. */
struct mr__mi_slot {
	uint64_t hash; /* 0: no line */
	uint64_t key;  /* the caller's name for the mount (its mirror ID), 0: unknown */
	uint32_t gen;  /* the read that last listed it */
	/*
	 * The caller's record the line was last judged against (a reference,
	 * dropped when the slot is cleared): a mirror that changed since
	 * through another path shows as a different record.
	 */
	struct mr__mount *rec;
};

struct mr__mi_diff {
	struct mr__mi_slot *slot; /* indexed by mountinfo ID */
	size_t cap;
	uint32_t gen;
	char *buf; /* the file, reused between reads */
	size_t buf_cap;
};

struct mr__mi_diff_ops {
	/*
	 * A line new (@known false) or changed since the last read, @n bytes
	 * without its '\n'; @key is what mr__mi_diff_set_key() gave the ID.
	 */
	int (*changed)(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *slot,
		       bool known);
	/* A line as it was last time (may be NULL). */
	int (*same)(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *slot);
	/* An ID listed last time and not now (its slot is cleared after). */
	int (*gone)(void *arg, uint32_t id, struct mr__mi_slot *slot);
};

/*
 * Reads the whole file through @fd and calls @ops for each difference from
 * the last read (every line, the first time or after a reset): O(file) to
 * read and hash, plus whatever @ops does.  Returns 0, a callback's -errno,
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

/* ---- listmount.c: read a table with listmount(2)/statmount(2) ---- */

struct mr__statmount_buf {
	void *p;
	size_t cap;
};

/*
 * Reads one mount of namespace @ns_id (0: the caller's) with statmount(2).
 * Returns 0 and a new record, -ENOENT if the mount is gone, -ENOSYS if the
 * kernel lacks statmount.  @syscalls is incremented per call made.
 */
int mr__statmount(uint64_t ns_id, uint64_t mnt_id, struct mr__statmount_buf *buf,
		  uint64_t *syscalls, struct mr__mount **ret);

/*
 * Turns one statmount(2) reply of @cap bytes (8-byte aligned) into a
 * record: 0, -EPROTO for a reply whose strings lie outside it, -ENOMEM.
 */
int mr__statmount_parse(const void *buf, size_t cap, struct mr__mount **ret);

/* The fields statmount(2) gives without formatting a string (~4x cheaper). */
struct mr__mount_basic {
	uint64_t parent_id, attr;
	uint32_t propagation, sb_flags;
};

/* Reads @mnt_id's flags only (SB_BASIC | MNT_BASIC); 0, -ENOENT, -errno. */
int mr__statmount_basic(uint64_t ns_id, uint64_t mnt_id, uint64_t *syscalls,
			struct mr__mount_basic *ret);

/* Lists and reads every mount of namespace @ns_id into @ret (appended). */
int mr__listmount_table(uint64_t ns_id, struct mr__statmount_buf *buf, uint64_t *syscalls,
			struct mr__table *ret);

/*
 * The IDs of every mount below @mnt_id (reachable under it, at any depth)
 * into *@ids, grown as needed.  Returns how many, or -errno.
 */
int mr__listmount_below(uint64_t ns_id, uint64_t mnt_id, uint64_t *syscalls, uint64_t **ids,
			size_t *cap);

void mr__statmount_buf_free(struct mr__statmount_buf *buf);

/* ---- mount_ids.c: a namespace's mount IDs and mount count ---- */

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

/* ---- mirror.c: one namespace's mount table, keyed by mount ID ---- */

struct mr__sb_ent {
	uint64_t dev;               /* major << 32 | minor */
	uint32_t count;             /* mirrored mounts of it; 0: empty slot */
	uint32_t sb_flags, sb_opts; /* the last record of it stored */
};

/* A count (and, for superblocks, a digest) per key. */
struct mr__key_index {
	struct mr__sb_ent *v;
	size_t cap, n;
};

struct mr__mirror {
	struct mr__mount **slots; /* open addressing, NULL empty, TOMBSTONE deleted */
	size_t cap, n, used;
	uint32_t gen;
	struct mr__key_index sbs;     /* mounts by superblock (mirror.c) */
	struct mr__key_index parents; /* mounts by parent ID */
};

int mr__mirror_init(struct mr__mirror *m);
void mr__mirror_free(struct mr__mirror *m);
struct mr__mount *mr__mirror_get(const struct mr__mirror *m, uint64_t id);
/* Whether a mirrored mount has @mnt_id as its parent: O(1). */
bool mr__mirror_has_children(const struct mr__mirror *m, uint64_t mnt_id);
/* Inserts or replaces; takes @mnt's reference and drops the replaced one. */
int mr__mirror_put(struct mr__mirror *m, struct mr__mount *mnt);
/* Removes and returns the record (the caller owns its reference), or NULL. */
struct mr__mount *mr__mirror_take(struct mr__mirror *m, uint64_t id);

/*
 * The superblock digest (sb_flags, sb_opts) of the last mirrored record of
 * device @major:@minor; false if no mirrored mount shows that superblock.
 * O(1).
 */
bool mr__mirror_sb_get(const struct mr__mirror *m, uint32_t major, uint32_t minor,
		       uint32_t *ret_sb_flags, uint32_t *ret_sb_opts);
/* How many ancestors of @mnt the mirror holds (0: the root, or an orphan). */
uint32_t mr__mirror_depth(const struct mr__mirror *m, const struct mr__mount *mnt);
/* Sorts @v parents first (tree depth, then path length, then ID); 0 or -ENOMEM. */
int mr__mirror_sort_parents_first(const struct mr__mirror *m, struct mr__mount **v, size_t n);

/* Visits each mount; stops early if @fn returns non-zero and returns that. */
int mr__mirror_each(const struct mr__mirror *m, int (*fn)(struct mr__mount *, void *), void *arg);

/*
 * What a resync found: each change as the old and the new record (old NULL:
 * a mount appeared; new NULL: it went away; both: it changed).
 */
typedef int (*mr__diff_fn)(struct mr__mount *old, struct mr__mount *now, void *arg);

/*
 * Makes the mirror equal @fresh, calling @fn for every difference before
 * applying it, in O(n).  The mounts of @fresh are taken over by the mirror
 * (the table is left empty).  Returns the number of differences.
 */
int mr__mirror_sync(struct mr__mirror *m, struct mr__table *fresh, mr__diff_fn fn, void *arg);

/* ---- trie.c: component-wise prefix trie of subscriptions ---- */

struct mr__trie;
struct mr_sub;

int mr__trie_new(struct mr__trie **ret);
void mr__trie_free(struct mr__trie *t);
int mr__trie_add(struct mr__trie *t, const char *prefix, struct mr_sub *s);
int mr__trie_remove(struct mr__trie *t, const char *prefix, struct mr_sub *s);

/*
 * Calls @fn for every subscription whose prefix contains @path ("/a" holds
 * "/a" and "/a/b", not "/ab").  @fn may not modify the trie.
 */
typedef void (*mr__trie_visit_fn)(struct mr_sub *s, void *arg);
void mr__trie_match(const struct mr__trie *t, const char *path, size_t len,
		    mr__trie_visit_fn fn, void *arg);

/* Normalises a subtree prefix ("//a/./b/" -> "/a/b"); -EINVAL if relative or has "..". */
int mr__path_normalize(const char *in, char **ret);

/* ---- event.c: events shared by every ring they are routed to ---- */

struct mr__event {
	struct mr_event pub;
	_Atomic uint32_t refs;
	struct mr__mount *now;  /* strings of pub point into these two */
	struct mr__mount *old;
	struct mr__mount **snap; /* SNAPSHOT: the records pub.mounts copies */
};

/*
 * A change event about @now (the mount after) and/or @old (before); holds a
 * reference to each.  refs starts at 0: the router sets it to the number of
 * rings the event goes to before enqueuing it anywhere.
 */
struct mr__event *mr__event_new(uint32_t kind, struct mr__mount *old, struct mr__mount *now);
/* The event kind that turns @old into @now (MOVE, READONLY or ATTR). */
uint32_t mr__event_kind_of(const struct mr__mount *old, const struct mr__mount *now);
struct mr__event *mr__event_marker(uint32_t kind);
/* A SNAPSHOT holding references to @n records of @v (copied). */
struct mr__event *mr__event_snapshot(struct mr__mount **v, size_t n);
/* Frees an event no ring took (refs still 0). */
void mr__event_discard(struct mr__event *ev);

/* ---- sub.c: one subscriber's SPSC ring and its wake-up ---- */

/* struct mr_sub_opts::capacity's upper bound (4 Mi slots, 32 MiB of ring). */
#define MR__SUB_CAPACITY_MAX (1u << 22)

struct mr__ns;

/*
 * mr_sub::magic: a live handle, and one whose free was asked for.  A freed
 * handle's memory is overwritten with MR__SUB_POISON in debug builds, so
 * that a use after the router released it is caught too.
 */
#define MR__SUB_LIVE 0x6d727375u  /* "msru" */
#define MR__SUB_FREED 0x66726565u /* "free" */
#define MR__SUB_POISON 0xdb

/*
 * Misuse of the API by the caller (a second free, a handle used after its
 * free): in debug builds, one line on stderr naming the call, then abort()
 * at that call; in release builds nothing (the call returns -EINVAL or
 * does nothing).  The one place the library writes anything.
 */
void mr__misuse(const char *call, const char *what);
/* 0 if @s is a live handle, else -EINVAL (after mr__misuse()). */
int mr__sub_check(const struct mr_sub *s, const char *call);

struct mr_sub {
	/* Consumer side first, producer side on its own cache line. */
	_Atomic uint32_t magic;     /* MR__SUB_LIVE, MR__SUB_FREED */
	struct mr__sub_ring *q;
	uint32_t capacity;          /* ring slots, a power of two */
	_Atomic int efd;            /* eventfd the consumer waits on, made on first use */
	_Atomic int waiting;        /* consumer found the ring empty */
	_Atomic int wants_recovery; /* 1: overrun pending; 2: router kicked */

	alignas(MR__CACHELINE) mr_router *r;
	struct mr__ns *ns;
	char *prefix;
	uint32_t kinds;
	unsigned flags;
	uint32_t usable;            /* slots for changes: capacity minus reserve */
	bool overrun;               /* dropped events since the last recovery */
	bool in_touched;            /* listed for a wake-up check this batch */
	bool attached;              /* in the trie */
	uint64_t lost;
	uint32_t route_mark;         /* last routing pass that matched it */
	struct mr_sub *next_touched;
	struct mr_sub *next_overrun;
	struct mr_sub *next_all, *prev_all;

	_Atomic uint64_t delivered, dropped, overruns, snapshots;
};

int mr__sub_alloc(mr_router *r, const struct mr_sub_opts *o, struct mr_sub **ret);
/* Frees the sub after releasing every event left in its ring. */
void mr__sub_destroy(struct mr_sub *s);

/*
 * Producer side (router thread only).  Enqueues @ev; returns false when the
 * ring has no room left for changes (the reserve is kept for the overrun
 * marker and snapshot).  Wait-free.
 */
bool mr__sub_push(struct mr_sub *s, struct mr__event *ev);
/* Enqueues into the reserve too (markers and snapshots). Wait-free. */
bool mr__sub_push_reserved(struct mr_sub *s, struct mr__event *ev);
unsigned mr__sub_queued(const struct mr_sub *s);
/* After a batch: wakes the consumer if it waits.  Returns true if that took a syscall. */
bool mr__sub_wake(struct mr_sub *s);

/* ---- reactor.c: one io_uring for every source fd ---- */

struct mr__reactor;
struct mr__watch;

/*
 * Called for each completion of a watch: @res is the byte count (data in
 * @buf) or -errno; for a poll watch, @res is the revents mask.  The buffer
 * is only valid during the call.
 */
typedef void (*mr__watch_fn)(struct mr__watch *w, int res, const void *buf, size_t len);

enum mr__watch_mode { MR__WATCH_READ, MR__WATCH_POLLPRI, MR__WATCH_TIMER };

struct mr__watch {
	int fd;
	enum mr__watch_mode mode;
	mr__watch_fn fn;
	void *owner;
	/* reactor bookkeeping */
	bool armed;     /* a request is in flight */
	bool multishot; /* the in-flight request keeps producing completions */
	bool closing;   /* cancelled: freed by the reactor at its last completion */
	bool paused;    /* not re-armed after its next completion */
	bool parked;    /* paused and no request in flight */
	uint64_t timeout_ns; /* MR__WATCH_TIMER: fires once, this long after arming */
	struct { int64_t tv_sec; long long tv_nsec; } ts; /* __kernel_timespec */
	void (*release)(struct mr__watch *w);
	struct mr__watch *next_rearm;
};

struct mr__reactor_opts {
	unsigned entries;  /* SQ size */
	unsigned buffers;  /* provided buffers (power of two) */
	unsigned buf_size; /* bytes per buffer */
};

int mr__reactor_new(const struct mr__reactor_opts *o, struct mr__reactor **ret);
void mr__reactor_free(struct mr__reactor *re);
int mr__reactor_fd(const struct mr__reactor *re);

/* Queues the first request of @w (submitted at the next submit). */
int mr__reactor_add(struct mr__reactor *re, struct mr__watch *w);
/*
 * Cancels @w; @w->release runs once the kernel has let go of it (maybe
 * later, from mr__reactor_reap()).
 */
void mr__reactor_remove(struct mr__reactor *re, struct mr__watch *w);
/*
 * Stops re-arming @w: the request in flight (if any) completes as usual,
 * and none follows until mr__reactor_resume().  For a one-shot poll whose
 * events are wanted only part of the time.
 */
void mr__reactor_pause(struct mr__watch *w);
/* Arms @w again if its pause left it without a request.  0 or -errno. */
int mr__reactor_resume(struct mr__reactor *re, struct mr__watch *w);
/*
 * Makes the armed timer @w fire @timeout_ns from now instead.  Returns 0,
 * or -EINVAL when @w is not an armed timer.
 */
int mr__reactor_retime(struct mr__reactor *re, struct mr__watch *w, uint64_t timeout_ns);

/*
 * Submits what is queued and, if @wait, waits for at least one completion:
 * one io_uring_enter for all of it.  Returns 0 or -errno (-EINTR/-ETIME
 * are not errors for the caller).
 */
int mr__reactor_submit(struct mr__reactor *re, bool wait);
/*
 * Handles every completion ready, in batches; @before (if not NULL) runs
 * after each batch is seen and before it is handled.  Returns how many.
 */
int mr__reactor_reap(struct mr__reactor *re, void (*before)(void *), void *arg);
/*
 * Waits (up to @timeout_ms) until the kernel has let go of every request,
 * so that each removed watch has been released.  0 or -ETIMEDOUT.
 */
int mr__reactor_drain(struct mr__reactor *re, unsigned timeout_ms);

struct mr__reactor_stats {
	uint64_t enters, completions, rearms, nobufs;
};
void mr__reactor_stats(const struct mr__reactor *re, struct mr__reactor_stats *ret);
/*
 * True when completions are ready, or (5.19+) wait for the router to enter
 * the kernel: work that can be split should stop and let them through.
 */
bool mr__reactor_completions_waiting(struct mr__reactor *re);
/* "io_uring", or "epoll" where io_uring could not be set up (reactor_poll.c). */
const char *mr__reactor_backend(const struct mr__reactor *re);

/* ---- probe.c: what the running kernel offers, asked once ---- */

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

/* ---- decode.c: kernel records to source-neutral changes (no syscalls) ---- */

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

/* ---- pass_schedule.c: when to read the whole table for attribute changes ---- */

#define MR__PASS_EXPLAIN_NS 1000000ull     /* records within 1 ms after explain a POLLPRI */
#define MR__PASS_VERIFY_DUTY 50            /* verification: <= 2% of the records' time */
#define MR__PASS_VERIFY_QUIET_NS 1000000ull
#define MR__PASS_BURST_GAP_NS 1000000ull   /* explained POLLPRIs closer than this: a burst */

/* What a source has seen since its last pass (router thread only). */
struct mr__pass_clock {
	bool wanted;             /* some subscriber asks for attribute changes */
	uint64_t suspect_ns;     /* first POLLPRI nothing explained since the last pass, or 0 */
	uint64_t pending;        /* POLLPRIs waiting up to EXPLAIN_NS for records */
	uint64_t pending_ns;     /* when the first of them came */
	uint64_t credits;        /* records of this batch not yet matched with a POLLPRI */
	uint64_t unverified;     /* POLLPRIs records explained since the last pass */
	uint64_t burst;          /* of which came in the last burst */
	uint64_t bursts;         /* bursts (two or more) since the last pass */
	uint64_t record_run;     /* records in a row closer than BURST_GAP_NS */
	uint64_t explained_ns;   /* when the last was explained */
	uint64_t record_ns;      /* router time spent on records since the last pass */
	uint64_t last_record_ns;
	uint64_t pass_cost_ns;   /* what the last pass took (an estimate before one ran) */
	uint64_t pass_end_ns;
};

/* @n records were applied, taking @spent_ns of the router's time. */
void mr__pass_records(struct mr__pass_clock *c, uint64_t n, uint64_t spent_ns, uint64_t now);
/* mountinfo polled with POLLPRI. */
void mr__pass_pollpri(struct mr__pass_clock *c, uint64_t now);
/* A batch of completions was handled. */
void mr__pass_batch_end(struct mr__pass_clock *c);
/*
 * 0 when POLLPRIs have waited EXPLAIN_NS for records in vain (look at the
 * recent mounts, then call mr__pass_judged()), else the ns until they have
 * (UINT64_MAX: none waits).
 */
uint64_t mr__pass_unexplained_in(const struct mr__pass_clock *c, uint64_t now);
/* The waiting POLLPRIs were explained after all (a recent mount changed), or not. */
void mr__pass_judged(struct mr__pass_clock *c, bool explained, uint64_t now);
/* 0 when a pass is due now, else the ns until one may be, UINT64_MAX: none asked for. */
uint64_t mr__pass_due(const struct mr__pass_clock *c, uint64_t now);
/* A pass ran from @start_ns to @end_ns: it saw everything that came before it. */
void mr__pass_done(struct mr__pass_clock *c, uint64_t start_ns, uint64_t end_ns);

/* ---- attr_pass.c: mountinfo read once, the mounts whose line changed looked up ---- */

struct mr__ns;

struct mr__attr_pass {
	int fd; /* /proc/PID/mountinfo: the source polls it for POLLPRI too */
	struct mr__mi_diff diff;
	struct mr__mountinfo_scratch scratch;
	bool ok; /* diff holds a whole read */
};

/* Opens @ns's mountinfo and learns its lines, before the mirror is read. */
int mr__attr_pass_open(struct mr__attr_pass *p, struct mr__ns *ns);
/*
 * Router thread: reads mountinfo and looks up each mount whose line, or
 * mirror record, changed since the last pass, routing what differs.  On an
 * error the namespace is marked for a resync.  Returns 0 or -errno.
 */
int mr__attr_pass_run(struct mr__attr_pass *p, struct mr__ns *ns);
void mr__attr_pass_free(struct mr__attr_pass *p);

/* ---- namespace.c / source_*.c: a watched mount namespace and its source ---- */

struct mr__ns;

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

struct mr__source_ops {
	const char *name;
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
	/* Optional: the IDs below @mnt_id, as mr__listmount_below() (NULL: that). */
	int (*list_below)(struct mr__ns *ns, uint64_t mnt_id, uint64_t **ids, size_t *cap);
};

/* ---- fanotify_group.c: one fanotify group for every namespace of a router ---- */

struct mr__fan_group;

/* A namespace's place in the group (in its source's state). */
struct mr__fan_member {
	struct mr__ns *ns;
	uint64_t ino; /* nsfs inode, to match a record's process with */
	/* Router thread: @c was applied to ns, taking @spent_ns. */
	void (*applied)(struct mr__fan_member *m, const struct mr__change *c, uint64_t spent_ns);
	struct mr__fan_group *group;
	bool started;
	bool attr_events; /* the kernel reports its attribute changes (FAN_MNT_ATTR_CHANGE) */
	uint64_t unclaimed_at_join;
};

/* Marks @m->ns in the router's group, making the group if needed (any thread). */
int mr__fan_group_join(mr_router *r, struct mr__fan_member *m);
/* Router thread: @m's records are routed to it from now on. */
int mr__fan_group_start(struct mr__fan_member *m, struct mr__reactor *re);
/* Unmarks @m; the last member out closes the group (through @re when it was started). */
void mr__fan_group_leave(struct mr__fan_member *m, struct mr__reactor *re);

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

struct mr__ns {
	uint64_t id;
	int nsfd;          /* nsfs fd of the namespace */
	pid_t pid;         /* a process inside it (0: ourselves) */
	mr_router *r;
	struct mr__mirror mirror;
	struct mr__trie *trie;
	unsigned n_subs;
	unsigned n_attr_subs; /* subscribers asking for READONLY or ATTR events */
	const struct mr__source_ops *ops;
	const char *reason; /* why ops, when it is not the router's source */
	void *src;         /* the source's state */
	bool resync_pending;
	struct mr__event *gone; /* NS_GONE for its subscribers, made up front */
	struct mr__statmount_buf smbuf; /* statmount replies (one thread at a time) */
	struct mr__ns *next;
};

/* Opens a namespace from an nsfs fd it takes ownership of (caller thread). */
int mr__ns_open(mr_router *r, int nsfd, pid_t pid, struct mr__ns **ret);
void mr__ns_close(struct mr__ns *ns, struct mr__reactor *re);
/*
 * The statmount(2)/listmount(2) readers for sources whose records carry
 * 64-bit mount IDs: one mount, or the whole table.  Syscalls are counted.
 */
int mr__ns_statmount(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret);
int mr__ns_listmount(struct mr__ns *ns, struct mr__table *ret);

/* ---- router/: what sources and namespaces call back into ---- */

/* struct mr_opts ranges (mountrouter.h). */
#define MR__QUEUE_NOTES_MAX 512u
#define MR__BATCH_MAX 4096u

/* A change read from the kernel for @ns: look it up, update the mirror, route. */
void mr__router_change(struct mr__ns *ns, const struct mr__change *c);
/* Looks a mount up again and reports whatever changed (sweeps; not a kernel record). */
void mr__router_recheck(struct mr__ns *ns, uint64_t mnt_id);
/*
 * The same, looking only at flags, parent and propagation first and reading
 * the rest only if one of them changed.  Misses a change of filesystem
 * options alone (tmpfs size=...), which a full recheck sees.  Returns true
 * when it looked again in full.
 */
bool mr__router_recheck_flags(struct mr__ns *ns, uint64_t mnt_id);
/* Event kinds that only a look at the whole table finds on mainline fanotify. */
#define MR__ATTR_KINDS (MR_KIND(MR_EVENT_READONLY) | MR_KIND(MR_EVENT_ATTR))

/*
 * A mount read in full (mountinfo): the mirror takes @now (its reference),
 * and whatever changed from the mirror's record is routed.
 */
void mr__router_update(struct mr__ns *ns, struct mr__mount *now);
/* A mount gone (mountinfo): UNMOUNT routed if the mirror had it. */
void mr__router_remove(struct mr__ns *ns, uint64_t mnt_id);
/* A change already resolved to records (mountinfo diff, sweeps). */
void mr__router_emit(struct mr__ns *ns, uint32_t kind, struct mr__mount *old,
		     struct mr__mount *now, uint32_t flags);
/*
 * Makes @ns's mirror equal @fresh (taking its records), routing each
 * difference as an event with @flags (MR_EVF_SYNTHETIC for a resync).
 * Returns the number of differences.
 */
int mr__router_sync(struct mr__ns *ns, struct mr__table *fresh, uint32_t flags);
/* The time events read in the current batch are stamped with. */
void mr__router_stamp(mr_router *r);
/* The kernel lost records for @ns: resync after this batch. */
void mr__router_loss(struct mr__ns *ns);
/* Wakes the router thread (any thread). */
void mr__router_kick(mr_router *r);
/* The router's fanotify group and the lock its membership changes under. */
struct mr__fan_group **mr__router_fan_group(mr_router *r, pthread_mutex_t **ret_lock);
/* Counts records that could not be decoded. */
void mr__router_count_bad(mr_router *r, uint64_t n);
/* Counts syscalls made on the router thread. */
void mr__router_count_syscalls(mr_router *r, uint64_t n);
/* A finished table sweep (changes the source does not report) and its CPU time. */
void mr__router_count_sweep(mr_router *r, uint64_t ns);
/*
 * The union of the kinds (MR_KIND() mask) @ns's subscribers ask for, so a
 * source does no work for changes nobody wants.  Router thread only.
 */
uint32_t mr__router_kinds_wanted(const struct mr__ns *ns);
/* The router's source: each namespace's first choice. */
const struct mr__source_ops *mr__router_source_ops(mr_router *r);
/* The router's source was picked by probing: a namespace may fall back. */
bool mr__router_source_auto(mr_router *r);
struct mr__reactor *mr__router_reactor(mr_router *r);
const struct mr_opts *mr__router_opts(mr_router *r);

#endif /* MR_INTERNAL_H */
