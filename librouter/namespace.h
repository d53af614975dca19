/* SPDX-License-Identifier: MIT */
/*
 * namespace.c: a watched mount namespace, its mirror, its subscribers' trie
 * and its source.
 */
#ifndef MR_NAMESPACE_H
#define MR_NAMESPACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mountrouter.h"
#include "mirror/listmount.h"
#include "mirror/mirror.h"
#include "trie.h"
#include "event.h"
#include "sources/source.h"

struct mr__ns {
	uint64_t id;
	int nsfd;          /* nsfs fd of the namespace */
	pid_t pid;         /* a process inside it (0: ourselves) */
	mr_router *r;
	struct mr__mirror mirror;
	struct mr__trie *trie;
	unsigned subs_of_kind[MR_KIND_LIMIT]; /* subscribers asking for each kind */
	uint32_t kinds_wanted; /* MR_KIND() of each kind some subscriber asks for */
	const struct mr__source_ops *ops;
	const char *reason; /* why ops, when it is not the router's source */
	void *src;         /* the source's state */
	bool resync_pending;
	bool active;           /* on the router's active list (router thread) */
	bool due;              /* on the router's due list: after_batch this step */
	struct mr__ns *next_due;
	struct mr__event *gone; /* NS_GONE for its subscribers, made up front */
	struct mr__statmount_buf smbuf; /* statmount replies (one thread at a time) */
	_Atomic uint64_t *syscalls; /* where mr__ns_statmount() and _listmount() count */
	struct mr__ns *next;
};

/* What the router hands a namespace it opens. */
struct mr__ns_source {
	const struct mr__source_ops *ops; /* the router's source: the first choice */
	bool fallback;                    /* picked by probing: the next may take over */
	_Atomic uint64_t *syscalls;       /* the router's count of syscalls made for it */
};

/*
 * Opens a namespace from an nsfs fd it takes ownership of (caller thread),
 * watched through @src->ops or, with @src->fallback, the next source that
 * can watch it.
 */
int mr__ns_open(mr_router *r, int nsfd, pid_t pid, const struct mr__ns_source *src,
		struct mr__ns **ret);
void mr__ns_close(struct mr__ns *ns, struct mr__reactor *re);
/*
 * A subscriber asking for @kinds was attached to @ns (@delta 1) or detached
 * (-1): the kinds its source must look for.  O(kinds).
 */
void mr__ns_count_sub(struct mr__ns *ns, uint32_t kinds, int delta);
/*
 * The statmount(2)/listmount(2) readers for sources whose records carry
 * 64-bit mount IDs: one mount, or the whole table.  Syscalls are counted.
 */
int mr__ns_statmount(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret);
int mr__ns_listmount(struct mr__ns *ns, struct mr__table *ret);

#endif /* MR_NAMESPACE_H */
