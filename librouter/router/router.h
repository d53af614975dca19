/* SPDX-License-Identifier: MIT */
/*
 * What the files of the router share, and nothing outside librouter/router/
 * includes: the router object, and each file's entry points for the others.
 * Calls between them go one way: registry -> commands -> recovery ->
 * route; loop -> commands, recovery; apply -> refresh -> route, recovery;
 * router.c (the object) -> commands, loop.  The counters and accessors of
 * router.c are leaves anyone may call.  Sources and namespaces reach the
 * router only through the mr__router_*() calls in upcalls.h.
 */
#ifndef MR_ROUTER_H
#define MR_ROUTER_H

#include <pthread.h>

#include "internal.h"
#include "alloc.h"
#include "clock.h"
#include "event.h"
#include "io/reactor.h"
#include "mirror/listmount.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "namespace.h"
#include "router/upcalls.h"
#include "sources/decode.h"
#include "sources/source.h"
#include "sub.h"
#include "trie.h"
#include "warm.h"

enum mr__cmd_kind { MR__CMD_ADD_NS, MR__CMD_DEL_NS, MR__CMD_ADD_SUB, MR__CMD_DEL_SUB };

struct mr__cmd {
	enum mr__cmd_kind kind;
	struct mr__cmd *next;
	struct mr__ns *ns;
	struct mr_sub *sub;
};

/* A refresh queued by a change (refresh.c). */
enum { MR__DEFER_BELOW, MR__DEFER_SB };

struct mr__deferred {
	int what;
	uint64_t id;         /* DEFER_BELOW: the moved mount; DEFER_SB: the one remounted */
	uint32_t major, minor;
};

struct mr_router {
	struct mr__reactor *re;
	const struct mr__source_ops *ops;
	const char *reason;
	bool source_auto;  /* picked by probing, not by name: namespaces may fall back */
	struct mr_opts opts;
	char *source_name;

	/* Control plane: the namespaces callers may name, under ctl_lock. */
	pthread_mutex_t ctl_lock;
	/* The fanotify group every namespace shares (fanotify_group.c), under group_lock. */
	pthread_mutex_t group_lock;
	struct mr__fan_group *fan_group;
	struct mr__ns **registry;
	size_t n_registry, cap_registry;

	_Atomic(struct mr__cmd *) cmds; /* lock-free stack, newest first */
	int wake_efd;
	struct mr__watch wake_watch;

	pthread_t thread;
	bool threaded;
	_Atomic bool stop;

	/* Router thread only from here on. */
	struct mr__ns *active;     /* namespaces being routed */
	struct mr__ns *due;        /* whose source has work after this batch */
	struct mr__cmd *queued;    /* commands taken off the stack, not yet applied, oldest first */
	bool applying;             /* applying them: a source read meanwhile applies none */
	void (*before_read)(void *arg); /* a test's, run once (mr__router_reading()) */
	void *before_read_arg;
	struct mr_sub *subs;       /* every live subscription */
	struct mr_sub *touched;    /* got events this step: wake if waiting */
	struct mr_sub *overrun;    /* waiting to be caught up */
	struct mr_sub **match;
	size_t cap_match;
	uint32_t route_mark;
	uint64_t *below;   /* mount IDs under a moved mount */
	size_t cap_below;
	uint64_t *same_sb; /* mount IDs of a remounted superblock */
	size_t cap_same_sb;
	struct mr__deferred *deferred; /* refreshes a change left to do */
	size_t n_deferred, cap_deferred;
	bool refreshing;   /* running them */
	bool in_below;     /* walking r->below */
	uint64_t seq;
	uint64_t now_ns;
	bool any_resync;

	/* Counters, written by the router thread, read anywhere. */
	_Atomic uint64_t records_read, events_routed, deliveries, ring_drops, kernel_losses,
		resyncs, syscalls, enters, bad_records, resync_ns_total, resync_cpu_ns_total, sweeps,
		sweep_ns_total;
	_Atomic uint64_t reactor_calls; /* the reactor's syscalls besides its waits */
	_Atomic uint64_t n_subs, n_ns, n_mounts;

	/* Router thread: the lines the last batch of changes used (warm.c). */
	struct mr__warm warm;
};


/* Counters: one writer (the router thread, or a caller under ctl_lock). */
static inline void mr__count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* route.c */
/* A change already resolved to records (apply, refresh, recovery): routed as @kind. */
void mr__router_emit(struct mr__ns *ns, uint32_t kind, struct mr__mount *old,
		     struct mr__mount *now, uint32_t flags);
bool mr__route_in_subtree(const char *path, const char *prefix);
void mr__route_touch(mr_router *r, struct mr_sub *s);
void mr__route_mark_overrun(mr_router *r, struct mr_sub *s);
void mr__route_deliver(mr_router *r, struct mr__event *ev, size_t n, bool reserved);
void mr__route_stamp(mr_router *r, struct mr__ns *ns, struct mr__event *ev, uint32_t flags);
/* Sends a marker to every subscriber of @ns, whatever its subtree. */
void mr__route_broadcast(struct mr__ns *ns, uint32_t kind, uint32_t flags);

/* refresh.c */
void mr__defer(struct mr__ns *ns, int what, const struct mr__mount *m);
/* The IDs of the mounts @d names, into *@ids; their number, or -errno. */
int mr__refresh_list(struct mr__ns *ns, const struct mr__deferred *d, uint64_t **ids, size_t *cap);
bool mr__superblock_changed(struct mr__ns *ns, const struct mr__mount *old,
			    const struct mr__mount *now);
void mr__unmount_tree(struct mr__ns *ns, struct mr__mount *top);

/* recovery.c */
/*
 * A resync in two halves, so that the step can put the subscriptions made
 * before the read in place between them (mr__router_observed()), as a
 * source does between its own read and routing.
 */
struct mr__resync {
	struct mr__table fresh; /* the table as read */
	uint64_t t0, cpu0;      /* when the resync began, wall and thread CPU */
};
/* Reads @ns's whole table into @rs; false: it could not, tried again after the next batch. */
bool mr__recovery_read(struct mr__ns *ns, struct mr__resync *rs);
/* Routes the differences between the mirror and what @rs read, between RESYNC markers. */
void mr__recovery_resync(struct mr__ns *ns, struct mr__resync *rs);
/* @s's subtree as the mirror has it now: the caller settles the source first. */
bool mr__recovery_send_snapshot(mr_router *r, struct mr_sub *s, uint32_t flags);
void mr__recovery_catch_up(mr_router *r);
void mr__recovery_tell_ns_gone(mr_router *r, struct mr__ns *ns);

/* commands.c */
/* Wakes the router thread (any thread). */
void mr__router_kick(mr_router *r);
void mr__commands_push(mr_router *r, struct mr__cmd *c);
void mr__commands_run(mr_router *r);
/* Whether commands wait in the queue (left behind by mr__router_observed()). */
bool mr__commands_queued(const mr_router *r);
void mr__commands_run_cb(void *r);
void mr__commands_del_sub(mr_router *r, struct mr_sub *s);
void mr__commands_del_ns(mr_router *r, struct mr__ns *ns);

/* due.c (mr__router_due() is an upcall) */
/* Runs the after_batch of each namespace that asked since the last call. */
void mr__due_run(mr_router *r);
/* Takes @ns off the list (it is being removed). */
void mr__due_forget(mr_router *r, struct mr__ns *ns);

/* warm.c: after a batch, the lines it used, into r->warm. */
void mr__warm_note(mr_router *r);

/* loop.c */
void mr__loop_wake_cb(struct mr__watch *w, int res, const void *buf, size_t len);

/* registry.c */
struct mr__ns *mr__registry_find(mr_router *r, uint64_t id);

#endif
