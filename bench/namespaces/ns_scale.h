/* SPDX-License-Identifier: MIT */
/*
 * ns_scale: how the router's cost grows with the number of mount
 * namespaces it watches, one change at a time on a quiet host.  The
 * driver (ns_scale.c) builds K namespaces, each held by a process of its
 * own (namespaces.c); each run (run.c) starts one watcher in a child
 * process (watcher.c), makes one change at a time in the busy namespace
 * and waits for the watcher to hold it; the watcher reports through a
 * shared page.
 */
#ifndef NS_SCALE_H
#define NS_SCALE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

enum ns_state {
	NS_STARTING,
	NS_READY,   /* every namespace added and subscribed: changes may come */
	NS_FAILED,  /* setup failed: err and what say where */
	NS_DONE,    /* asked to stop: the end-of-run figures are in */
};

/* What the watcher tells the driver, in memory shared across fork(). */
struct ns_report {
	_Atomic int state;          /* enum ns_state */
	int err;                    /* NS_FAILED: the -errno */
	char what[128];             /* NS_FAILED: the step that failed */

	/* Set before NS_READY. */
	uint64_t setup_ns;          /* wall time to add, subscribe and take over K namespaces */
	uint64_t setup_cpu_ns;      /* CPU of the watcher's threads meanwhile */
	uint64_t rss_kb, hwm_kb;    /* VmRSS and VmHWM once set up */
	uint64_t mounts;            /* mounts in all mirrors once set up */

	/* The busy namespace's subscriber, while it runs. */
	_Atomic uint64_t count;     /* change events it took */
	_Atomic uint64_t last_ns;   /* CLOCK_MONOTONIC when it took the last one */
	_Atomic uint64_t markers;   /* OVERRUN and RESYNC markers it took: none expected */
	_Atomic uint64_t syscalls;  /* syscalls the router counted so far */

	/* Set before NS_DONE. */
	uint64_t stray;             /* events on the other namespaces' subscribers: none expected */
	uint64_t rss_end_kb;        /* VmRSS after the changes */
	uint64_t ring_drops, kernel_losses, resyncs;
};

/* The namespaces, each held by a sleeping process; the first is the busy one. */
struct ns_holders {
	const char *root;       /* the private tmpfs every namespace starts from */
	unsigned mounts_per_ns; /* tmpfs mounts under each namespace's own tmpfs */
	pid_t *pid;             /* holder i's process; pid[0] is the busy one */
	unsigned n, cap;
	int cmd, ack;           /* to and from the busy one */
};

/* Makes room for @cap namespaces; nothing is forked yet. */
void ns_holders_init(struct ns_holders *h, const char *root, unsigned mounts_per_ns,
		     unsigned cap);
/* Adds namespaces until there are @n, each mounted and asleep; exits on failure. */
void ns_holders_grow(struct ns_holders *h, unsigned n);
/* Mounts lines in the busy namespace's table: the count each namespace has. */
unsigned ns_holders_mounts_each(const struct ns_holders *h);
/*
 * The busy namespace mounts ('m') or unmounts ('u') its probe.  Returns 0
 * and in *ret_ns the CLOCK_MONOTONIC time just after the syscall returned,
 * or the syscall's -errno.
 */
int ns_busy_change(struct ns_holders *h, char op, uint64_t *ret_ns);
/* Kills every holder, which ends their namespaces. */
void ns_holders_end(struct ns_holders *h);

/*
 * Runs the router on @source over the namespaces of @pids[0..n) in this
 * (child) process until killed; @pids[0] is the busy one.  Stops taking
 * events and reports the end-of-run figures when @quit turns readable.
 */
void watcher_run(const char *source, const pid_t *pids, unsigned n, int quit,
		 struct ns_report *rep);
/* 0 if the router can run on @source here, else -errno (why it is left out). */
int watcher_probe(const char *source);
/* What @source needs from the system, for the row saying why it is left out. */
const char *watcher_needs(const char *source);

/* One source at one namespace count: a row of the table. */
/* Per change, over every round of one cell: CPU us, latency us; mounts and unmounts apart. */
struct samples {
	double *cpu[2], *lat[2];
	unsigned n_cpu[2], n_lat[2];
	unsigned missed;
};

struct result {
	const char *source;
	unsigned k;                 /* namespaces watched */
	unsigned mounts_expected;   /* K times the mounts of one namespace */
	char why[192];              /* not measured: why ("left out: ...", "setup failed: ...") */
	char check[192];            /* measured: "ok" or what the check found */
	struct ns_report rep;       /* the watcher's page, copied at the end */
	double cpu_mount, cpu_umount; /* medians over the changes, us */
	double syscalls;            /* the router's, per change */
	double mount_p50, mount_p99, umount_p50, umount_p99; /* us */
	unsigned missed;            /* changes the watcher never held (5 s each) */
	struct samples samples;     /* every round's, summed up by run_finish() */
};

/* run.c: the changes each run makes, the quiet time after each, and the runs a cell gets. */
extern unsigned changes, interval_ms, rounds;
/*
 * Runs the watcher on @res->source over the first @res->k namespaces of @h
 * in a child process pinned to @watcher_cpu (-1: anywhere), makes the
 * changes and adds them to @res: its samples, setup figures and check
 * (the first finding of any round), or why it has none (setup failed).
 * @rep: the page shared with the watcher.
 */
void run_one(struct ns_holders *h, struct ns_report *rep, int watcher_cpu, struct result *res);
/* The medians and percentiles of @res over all its rounds; frees its samples. */
void run_finish(struct result *res);

uint64_t now_ns(void);
/* Says what failed, with errno, and leaves with 1 (ns_scale.c). */
_Noreturn void die(const char *what);

#endif
