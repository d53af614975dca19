/* SPDX-License-Identifier: MIT */
/*
 * sub.c: one subscriber's SPSC ring and its wake-up.
 */
#ifndef MR_SUB_H
#define MR_SUB_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mountrouter.h"
#include "internal.h"
#include "event.h"
#include "warm.h"

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
	int wake_efd;               /* the router thread's eventfd, or -1 */

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

/*
 * A subscriber of router @r; @wake_efd is the eventfd that wakes @r's
 * thread when the subscriber has drained enough to be caught up (-1: no
 * thread recovers it).
 */
int mr__sub_alloc(mr_router *r, int wake_efd, const struct mr_sub_opts *o, struct mr_sub **ret);
/* Frees the sub after releasing every event left in its ring. */
void mr__sub_destroy(struct mr_sub *s);
/* Notes the lines a push and a wake-up use (warm.h).  Router thread. */
void mr__sub_warm(const struct mr_sub *s, struct mr__warm *w);

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

#endif /* MR_SUB_H */
