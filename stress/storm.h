/* SPDX-License-Identifier: MIT */
/*
 * mountstorm: shared declarations.
 *
 * The tool runs one storm per contender (a router source, or an
 * alternative a user would pick instead), each in a forked child with its
 * own private mount namespace, so that CPU time, peak RSS and the mount
 * table of one contender never leak into another's figures.  The child
 * sends a fixed-size struct ms_result back through a pipe.
 */
#ifndef MOUNTSTORM_H
#define MOUNTSTORM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define MS_MAX_WAVES 96
#define MS_MAX_SUBS 16
#define MS_MAX_DEPTH 8
#define MS_PATH 160

/* What a change did to a mount, as far as matching ops to events goes. */
enum ms_class {
	MS_ARRIVE, /* mount, bind, move, propagated copy */
	MS_DEPART, /* unmount, lazy detach, expiry */
	MS_ATTR,   /* remount ro/rw, mount_setattr */
	MS_NCLASS
};

/* ---- options ---- */

struct ms_opts {
	unsigned peers;    /* peer groups */
	unsigned members;  /* shared members per group (propagation fan-out) */
	bool slave;        /* one slave member per group */
	bool unbindable;   /* one unbindable member per group */
	unsigned mounts;   /* operations per wave */
	unsigned depth;    /* nesting of the mounts a "mount" wave makes */
	unsigned total;    /* live storm mounts to reach */
	unsigned threads;  /* threads issuing a wave's operations */
	unsigned rate;     /* operations per second, 0: as fast as the kernel allows */
	unsigned subs;     /* subscribers per router contender */
	unsigned stall_capacity; /* ring slots of the stalled subscriber */
	unsigned queue_notes;    /* watch_mount: notification pipe slots (0: the library's) */
	unsigned hold_waves;     /* routers read nothing during waves 1..hold_waves */
	bool build_at_max;       /* --rate paces every wave but the build-up ones */
	unsigned settle_ms;      /* per-wave limit for reaching consistency */
	unsigned alt_settle_ms;  /* same, for the alternatives (they may lag) */
	bool router_thread;      /* mr_router_start instead of our dispatch loop */
	unsigned router_flags;   /* MR_OPT_EPOLL or MR_OPT_IO_URING (--backend), or 0 */
	bool quick;
	const char *contenders;  /* comma-separated */
	const char *json;        /* path or NULL */
	const char *plot;        /* file prefix or NULL */
	bool verbose;
};

/* ---- tables (ground truth and pollers) ---- */

struct ms_entry {
	uint64_t id;
	uint64_t attr;  /* MOUNT_ATTR_* (statmount), 0 from mountinfo */
	char *path;
	char *mopts;    /* per-mount options, mountinfo field 6 style */
};

struct ms_table {
	struct ms_entry *v;
	size_t n, cap;
};

void ms_table_clear(struct ms_table *t);
void ms_table_sort(struct ms_table *t);
const struct ms_entry *ms_table_find(const struct ms_table *t, uint64_t id);
/* The whole namespace by listmount(2)+statmount(2).  Returns 0 or -errno. */
int ms_truth_listmount(struct ms_table *ret, uint64_t *ret_syscalls);
/* Parses a mountinfo buffer (NUL-terminated).  Returns 0 or -errno. */
int ms_mountinfo_parse(char *buf, struct ms_table *ret);
/* Reads @fd from offset 0 into *buf (grown as needed).  Returns length or -errno. */
long ms_read_all(int fd, char **buf, size_t *cap);
int ms_truth_mountinfo(struct ms_table *ret);
/* "rw,nosuid,relatime" from MOUNT_ATTR_* bits, as show_mnt_opts() prints it. */
void ms_render_mopts(uint64_t attr, char *out, size_t len);
/* The per-mount prefix of a router options string (see truth.c). */
void ms_mopts_prefix(const char *options, char *out, size_t len);
bool ms_in_subtree(const char *path, const char *prefix);

/* Changes between two tables under @prefix, by class. */
void ms_table_diff(const struct ms_table *before, const struct ms_table *after,
		   const char *prefix, uint64_t ret[MS_NCLASS]);

/* ---- keys: which storm operation a path belongs to ---- */

/*
 * Every copy a propagation makes of a mount sits at the same path relative
 * to its peer-group member; the key drops the member so that all copies
 * map to the operation that made them.
 */
uint64_t ms_key(const char *root, const char *path);
uint64_t ms_key_mix(uint64_t key, unsigned wave, unsigned cls);

static inline uint64_t ms_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ms_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- topology and waves ---- */

enum ms_op_kind {
	OP_MOUNT,      /* tmpfs chain of depth D under a group's origin */
	OP_BIND,       /* bind of a private directory under the origin */
	OP_STAGE,      /* tmpfs in the private staging area (to be moved) */
	OP_MOVE,       /* MS_MOVE from staging into a group's origin */
	OP_REMOUNT_RO, /* MS_REMOUNT|MS_BIND|MS_RDONLY on a unit's root */
	OP_REMOUNT_RW,
	OP_SETATTR,    /* mount_setattr(AT_RECURSIVE) nosuid|nodev|noexec */
	OP_FLAP,       /* mount then lazy unmount at once: net zero, 2x changes */
	OP_UMOUNT,     /* umount2(leaf, 0) */
	OP_UMOUNT_LAZY /* umount2(root, MNT_DETACH): the whole unit */
};

struct ms_op {
	uint8_t kind;
	uint8_t depth;     /* mounts the op touches (chain levels) */
	uint16_t group;    /* peer group, or UINT16_MAX for staging only */
	int err;           /* first errno, 0 if every syscall worked */
	char rel[48];      /* unit path relative to the origin (or to stage/) */
	char rel2[48];     /* OP_MOVE: the staged mount's rel */
	uint64_t t[MS_MAX_DEPTH + 1]; /* CLOCK_MONOTONIC after each syscall */
};

struct ms_wave {
	char name[16];
	unsigned kind;
	struct ms_op *ops;
	size_t n_ops;
	uint64_t issued[MS_NCLASS]; /* changes the model says the ops cause */
	uint64_t t_start, t_end;
	unsigned failed;            /* ops with err != 0 */
	int first_err;
};

struct ms_storm {
	const struct ms_opts *o;
	char root[64];       /* tmpfs root of this storm */
	unsigned mult;       /* mounts one origin mount becomes: members + slave */
	struct ms_wave waves[MS_MAX_WAVES];
	size_t n_waves;
	_Atomic unsigned cur_wave; /* readers tag what they see with it */
	uint64_t live;       /* storm mounts the model says are live */
	uint64_t live_peak_model; /* live storm mounts after the last build wave */
};

/* Private namespace and tmpfs root.  Returns 0, -errno (77-worthy if EPERM). */
int ms_namespace_enter(struct ms_storm *st);
int ms_topology_build(struct ms_storm *st);
void ms_topology_teardown(struct ms_storm *st);
/* Member directory name of group g: "m<k>", "s" (slave), "u" (unbindable). */
void ms_origin(const struct ms_storm *st, unsigned group, char *out, size_t len);
/* Plans every wave (deterministic: same for every contender). */
int ms_plan(struct ms_storm *st);
/* Runs wave @w with o->threads threads.  Returns 0 or -errno. */
int ms_wave_run(struct ms_storm *st, struct ms_wave *w);
void ms_plan_free(struct ms_storm *st);
/* Paths (absolute) where wave w's flaps made transient copies, for subtree accounting. */
uint64_t ms_wave_transient(const struct ms_storm *st, const struct ms_wave *w, const char *prefix);

/* ---- results ---- */

enum ms_status { MS_OK, MS_UNAVAILABLE, MS_FAILED, MS_LAGGING, MS_ERROR };

struct ms_wave_result {
	char name[16];
	uint32_t ops, failed;
	uint64_t issued, net;       /* whole namespace: model and listmount diff */
	uint64_t mounts;            /* whole namespace after the wave */
	uint64_t expected, seen, synthetic; /* routers: of the subscriber on "/" */
	uint64_t op_ns, settle_ns;
	int32_t consistent;         /* -1 not checked (held) */
	uint64_t kernel_losses, ring_drops, resyncs;
};

struct ms_sub_result {
	char subtree[MS_PATH];
	uint32_t capacity;
	int32_t stalled, consistent;
	uint64_t expected, seen, synthetic, misrouted;
	uint64_t delivered, dropped, overruns, snapshots, resync_brackets;
	uint64_t recovery_ns_max;  /* OVERRUN read by router -> SNAPSHOT dequeued */
	char diff[160];            /* first difference from the truth, if any */
};

struct ms_lat_class {
	uint64_t n, p50, p99, max; /* ns */
};

struct ms_lat {
	uint64_t n, p50, p90, p99, p999, max; /* ns */
	uint64_t early; /* seen before the syscall's return was stamped */
	struct ms_lat_class by_class[MS_NCLASS];
};

struct ms_result {
	char name[16];
	int32_t status;
	char reason[200];
	char source_reason[120];
	uint32_t n_waves, n_subs;
	struct ms_wave_result waves[MS_MAX_WAVES];
	struct ms_sub_result subs[MS_MAX_SUBS];
	struct ms_lat lat;
	/*
	 * Routers: from the syscall's return to the router reading the change
	 * (the event's time_ns), the library's part of lat without the wake-up
	 * and scheduling of the subscriber's thread.
	 */
	struct ms_lat router_lat;
	uint64_t cpu_ns;           /* the watcher's own CPU: router thread, poller, findmnt */
	uint64_t events, changes_seen, changes_issued, reads;
	uint64_t syscalls, kernel_losses, resyncs, resync_ns, resync_cpu_ns, ring_drops;
	uint64_t sweeps, sweep_ns; /* fanotify: sweeps for remounts and setattr */
	uint64_t loss_to_consistent_ns; /* first kernel loss -> every sub consistent */
	uint64_t maxrss_kb, wall_ns, peak_mounts;
	uint64_t unmatched; /* observations no storm op explains */
};

/* Contenders: each fills @res; returns 0 (ran) or -errno. */
int ms_run_router(struct ms_storm *st, const char *source, struct ms_result *res);
int ms_run_poller(struct ms_storm *st, struct ms_result *res);
int ms_run_findmnt(struct ms_storm *st, struct ms_result *res);

/* ---- latency samples, shared by every contender ---- */

struct ms_sample {
	uint64_t key;  /* ms_key_mix(key, wave, class) */
	uint64_t t;    /* dequeue / observation time */
	uint32_t cls;  /* enum ms_class; kept for ops only (the key hides it) */
};

struct ms_samples {
	struct ms_sample *v;
	size_t n, cap;
};

int ms_samples_push(struct ms_samples *s, uint64_t key, uint64_t t);
/* Matches samples to op completion times; fills lat; writes histogram data if @dat. */
void ms_latency(const struct ms_storm *st, struct ms_samples *all, struct ms_lat *ret,
		uint64_t *ret_unmatched, const char *dat_path, const char *ts_path);
/* ms_latency() into res->lat, with the plot data files named after the contender. */
void ms_latency_files(const struct ms_storm *st, struct ms_samples *all, struct ms_result *res);

/* CPU time of finished storm threads (they are ours, not the watcher's). */
extern _Atomic uint64_t ms_runner_cpu_ns;

/* ---- report ---- */

void ms_report_text(const struct ms_opts *o, const struct ms_result *r, size_t n);
int ms_report_json(const struct ms_opts *o, const struct ms_result *r, size_t n, const char *path);
int ms_report_plot(const struct ms_opts *o, const struct ms_result *r, size_t n);

#endif /* MOUNTSTORM_H */
