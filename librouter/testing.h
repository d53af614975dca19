/* SPDX-License-Identifier: MIT */
/*
 * The library's test-only surface: what bench/ and stress/ may use beyond
 * mountrouter.h.  Everything else in librouter/ is internal (internal.h
 * and the per-concept headers), which they must not include: a change
 * inside the library then breaks this file's few promises or nothing
 * outside it.  One exception, named here so that it stays one:
 * bench/tables.c times the mountinfo parser and the mirror's table
 * themselves, and includes their headers (alloc.h, mirror/mount.h,
 * mirror/mirror.h, mirror/mountinfo.h) and no other.
 *
 * Four things only:
 *   - a namespace fed from memory: its source answers lookups from a
 *     callback, its changes are handed in by the caller, and its
 *     subscriptions are attached at once, so the routing path (apply to the
 *     mirror, match in the trie, enqueue to the rings) runs with no syscall
 *     and no router thread;
 *   - the subtree trie alone;
 *   - the reactor's backend: which one a router reads through, and a way
 *     to make routers read through epoll as where io_uring is refused;
 *   - a hook between a source's wake-up and its read of the table.
 * Linked from the static library (mountrouter_static); the shared library
 * does not export these names.
 *
 * Threads: one, the caller's, for everything here; the subscriptions'
 * readers (mr_sub_next()) may be other threads, as with a running router.
 */
#ifndef MR_TESTING_H
#define MR_TESTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mountrouter.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mr__mount;      /* one mount as the mirror holds it, reference counted */
struct mr__testing_ns; /* a namespace fed from memory */
struct mr__trie;       /* subtree prefixes to values */

/* A mount record copied from @m (strings too), one reference; NULL on ENOMEM. */
struct mr__mount *mr__testing_mount_new(const struct mr_mount *m);
/* Returns @m with one more reference. */
struct mr__mount *mr__testing_mount_ref(struct mr__mount *m);
/* Drops one reference; accepts NULL. */
void mr__testing_mount_unref(struct mr__mount *m);

/*
 * The source's lookup: the mount @mnt_id as it is now, as a new reference
 * in *ret_mount; 0, or -ENOENT if it is gone.
 */
typedef int (*mr__testing_lookup_fn)(void *arg, uint64_t mnt_id, struct mr__mount **ret_mount);

/*
 * A namespace of router @r (which needs no namespace of its own:
 * MR_OPT_NO_SELF_NS) that the router's thread never sees: drive it only
 * through the calls below, without mr_router_start() or
 * mr_router_dispatch() touching it.  Returns 0 or -ENOMEM.
 */
int mr__testing_ns_new(mr_router *r, mr__testing_lookup_fn lookup, void *arg,
		       struct mr__testing_ns **ret_ns);
/* Frees the namespace and its mirror; its subscriptions must be ended first. */
void mr__testing_ns_free(struct mr__testing_ns *ns);
/* Puts @m into the mirror as the namespace's initial table (takes the reference). */
int mr__testing_ns_put(struct mr__testing_ns *ns, struct mr__mount *m);

/*
 * A subscription to the namespace, attached at once (no command queue, no
 * SNAPSHOT); read it with mr_sub_next() as any other.  Returns 0, -EINVAL
 * for a bad subtree, -ENOMEM.  End it with mr__testing_ns_unsubscribe(),
 * not mr_unsubscribe().
 */
int mr__testing_ns_subscribe(struct mr__testing_ns *ns, const struct mr_sub_opts *opts,
			     mr_sub **ret_sub);
void mr__testing_ns_unsubscribe(struct mr__testing_ns *ns, mr_sub *s);

/*
 * One change the kernel reported, as a source would hand it over: @kind is
 * MR_EVENT_MOUNT, _UNMOUNT, _MOVE, _READONLY, _ATTR or _EXPIRY; the mount
 * is looked up (through the callback) where the kind needs it, the mirror
 * updated and the event routed to every matching ring.  Wake-ups of
 * waiting readers are not sent: readers poll.  Returns 0 or -EINVAL for
 * another kind.
 */
int mr__testing_ns_change(struct mr__testing_ns *ns, uint32_t kind, uint64_t mnt_id);

/* The trie that routes: subtree prefixes, each holding values. */
int mr__testing_trie_new(struct mr__trie **ret_trie);
void mr__testing_trie_free(struct mr__trie *t);
/* Adds @value under the absolute, normalised @prefix.  0 or -ENOMEM. */
int mr__testing_trie_add(struct mr__trie *t, const char *prefix, void *value);
/* How many values lie under prefixes of @path (the routing match). */
size_t mr__testing_trie_count(const struct mr__trie *t, const char *path);

/*
 * Every router made from now on reads its fds through @backend, whatever
 * its source or flags would choose: "epoll" (as where io_uring_setup is
 * refused, and under valgrind, which delivers no io_uring completions),
 * "io_uring" (falling back to epoll only where it cannot be set up), or
 * NULL for the router's own choice.  -EINVAL for any other name.
 * Threads: any; routers already made keep theirs.
 */
int mr__testing_reactor_force(const char *backend);
/* "io_uring" or "epoll": what router @r reads its fds through. */
const char *mr__testing_reactor_backend(mr_router *r);

/*
 * @fn(@arg) runs once, on the router's thread, when a source of @r next
 * reads the kernel's table (a listing, a read of mountinfo): in the gap
 * between the completion that asked for the read and the read itself,
 * where a test subscribes and changes the table.  Set it while the router
 * runs on the caller's thread (mr_router_dispatch()), between dispatches.
 */
void mr__testing_before_read(mr_router *r, void (*fn)(void *arg), void *arg);

/*
 * As if the kernel had lost records for every namespace of @r: each
 * resyncs (RESYNC_BEGIN, the differences, RESYNC_END) in the next step.
 * Call it as mr__testing_before_read(), between dispatches.
 */
void mr__testing_lose(mr_router *r);

#ifdef __cplusplus
}
#endif

#endif /* MR_TESTING_H */
