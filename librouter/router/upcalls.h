/* SPDX-License-Identifier: MIT */
/*
 * The one narrow interface the router hands the layers below: what sources
 * and namespaces may call back into (defined in router/).  Nothing else of the
 * router is theirs to call.
 */
#ifndef MR_UPCALLS_H
#define MR_UPCALLS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mountrouter.h"

struct mr__change;
struct mr__fan_group;
struct mr__mount;
struct mr__ns;
struct mr__reactor;
struct mr__source_ops;
struct mr__table;

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
/*
 * Makes @ns's mirror equal @fresh (taking its records), routing each
 * difference as an event with @flags (MR_EVF_SYNTHETIC for a resync).
 * Returns the number of differences.
 */
int mr__router_sync(struct mr__ns *ns, struct mr__table *fresh, uint32_t flags);
/*
 * @ns's source is about to read the kernel's table, to route what it finds
 * after mr__router_observed().  Runs a test's hook, if one was set.
 */
void mr__router_reading(struct mr__ns *ns);
/* For testing.c: @fn(@arg) runs once, at the next mr__router_reading(). */
void mr__router_before_read(mr_router *r, void (*fn)(void *arg), void *arg);
/* For testing.c: every namespace of @r resyncs in the next step, as after a kernel loss. */
void mr__router_lose_all(mr_router *r);
/*
 * @ns's source has just read the kernel's table and is about to route what
 * it found: subscriptions made before that read are put in place first
 * (commands.c says why).  Router thread only.
 */
void mr__router_observed(struct mr__ns *ns);
/* Sets, and returns, the time events read in the current batch are stamped with. */
uint64_t mr__router_stamp(mr_router *r);
/*
 * Runs @ns's after_batch at the end of this step (the next, when called
 * from after_batch itself): a source calls it when a completion leaves it
 * work, so that a step costs the namespaces that had something, not all.
 */
void mr__router_due(struct mr__ns *ns);
/* The kernel lost records for @ns: resync after this batch. */
void mr__router_loss(struct mr__ns *ns);
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
struct mr__reactor *mr__router_reactor(mr_router *r);
const struct mr_opts *mr__router_opts(mr_router *r);

#endif /* MR_UPCALLS_H */
