/* SPDX-License-Identifier: MIT */
/*
 * single_change: what one change costs each watcher on a big, quiet mount
 * table.  The driver (single_change.c) builds N mounts in a private mount
 * namespace, starts one watcher at a time in a child process, makes one
 * change at a time and waits for the watcher to hold it; each watcher
 * (watchers.c) reports what it saw through a shared page.
 */
#ifndef SINGLE_H
#define SINGLE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* What a watcher tells the driver, in memory shared across fork(). */
struct seen {
	_Atomic int ready;          /* the watcher read the table and waits */
	_Atomic uint64_t count;     /* changes (lines, events) it holds */
	_Atomic uint64_t last_ns;   /* CLOCK_MONOTONIC when it took the last one */
	_Atomic uint64_t syscalls;  /* syscalls its library counted, if it has one */
};

enum watcher {
	W_FLOOR,     /* fanotify record -> statmount -> a line: the least any watcher does */
	W_FANOTIFY,  /* mountrouter, fanotify source, a subscriber asking for every kind */
	W_FANOTIFY_1T, /* the same, router and subscriber on one thread (mr_router_dispatch) */
	W_FANOTIFY_TOPO, /* one thread, a subscriber asking for mount, umount and move only */
	W_LISTMOUNT, /* mountrouter, listmount source */
	W_MOUNTINFO, /* mountrouter, mountinfo source */
	W_POLLER,    /* POLLPRI, re-read mountinfo, diff lines by ID */
	W_FINDMNT,   /* util-linux findmnt --poll */
	/*
	 * Last, so that the numbers --watchers takes in BENCHMARKS.md's
	 * commands keep naming the same watchers.
	 */
	W_WATCH_MOUNT, /* mountrouter, watch_mount source, one thread, every kind */
	/*
	 * The listmount and mountinfo sources on one thread, as the poller
	 * runs: one wake-up a change, where W_LISTMOUNT and W_MOUNTINFO pay
	 * two (the router's thread, then the subscriber's).
	 */
	W_LISTMOUNT_1T,
	W_MOUNTINFO_1T,
	/*
	 * The floor's loop waiting as an embedded watcher must, in poll() on
	 * its fd and then a non-blocking read: what a library the caller
	 * drives from its own event loop pays before doing anything.
	 */
	W_FLOOR_POLLED,
	/*
	 * The floor's loop asking statmount for what a mountrouter event
	 * carries (source, options, root, the superblock's flags), as the
	 * router does: how much of the router's cost is that information.
	 */
	W_FLOOR_FIELDS,
	/*
	 * The polled floor with its fd inside an epoll set, the caller polling
	 * the set and the loop asking epoll_wait() which fd woke: what any
	 * library that hands its caller one fd for many pays (libmount's
	 * monitor hands out an epoll fd the same way, mnt_monitor_get_fd()).
	 */
	W_FLOOR_EPOLL,
	/*
	 * W_FANOTIFY_1T with the thread waiting in mr_router_wait() instead
	 * of a poll() of mr_router_fd(): one syscall less a change, as the
	 * blocking floor has against the polled one.
	 */
	W_FANOTIFY_WAIT,
	W__N,
};

extern const char *const watcher_name[W__N];

/* Runs watcher @w in this (child) process until killed; @root: the subtree. */
void watcher_run(enum watcher w, const char *root, struct seen *seen);
/* 0 if watcher @w can run here, else -errno (the reason it is left out). */
int watcher_probe(enum watcher w);
/* What watcher @w needs from the system, for the line saying why it is left out. */
extern const char *const watcher_needs[W__N];

uint64_t now_ns(void);

/* MR_OPT_* the mountrouter watchers make their routers with (--epoll, --io-uring). */
extern unsigned watcher_router_flags;

#endif
