/* SPDX-License-Identifier: MIT */
/*
 * The listmount source's per-namespace state, shared by the source
 * (source_listmount.c) and its ID listings (listmount_listing.c).  Nothing
 * outside sources/ includes this.
 */
#ifndef MR_SOURCE_LISTMOUNT_H
#define MR_SOURCE_LISTMOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "io/reactor.h"
#include "mirror/mount_ids.h"
#include "sources/attr_pass.h"
#include "sources/pass_schedule.h"
#include "sources/source.h"

/* The whole listing that checks a conclusion drawn from counts. */
#define VERIFY_QUIET_NS 50000000ull      /* 50 ms */
#define VERIFY_MAX_NS 1000000000ull      /* 1 s */
#define VERIFY_DUTY 100

/* The kinds an ID set cannot tell: they need a pass over the table. */
#define KINDS_PASS (MR_KIND(MR_EVENT_READONLY) | MR_KIND(MR_EVENT_ATTR) | MR_KIND(MR_EVENT_MOVE))

struct mr__lm_state {
	struct mr__source_base base; /* first: the reactor's release finds it */
	struct mr__ns *ns;
	struct mr__attr_pass pass; /* mountinfo as passes read it */
	int bell_fd;               /* mountinfo again, only polled: the doorbell */
	struct mr__pass_clock clock;
	uint64_t ns_id;          /* for the syscalls: 0 names our own namespace */
	struct mr__watch mi_watch;
	struct mr__source_timer timer;
	struct mr__ids known, next; /* the last listing; the one being read */
	uint64_t last_pollpri_ns;
	bool counts_ok;          /* NS_MNT_GET_INFO counts what listmount lists */
	uint64_t verify_since_ns; /* known rests on counts since then, or 0 */
	uint64_t full_cpu_ns;    /* CPU time of the last whole listing */
};

/* NS_MNT_GET_INFO's count (6.12), or -errno; counted as a syscall. */
long mr__lm_count_mounts(struct mr__lm_state *st);
/*
 * Lists every ID and routes the difference; returns how many changed, or
 * -errno.  Learns again whether the counts can be trusted.
 */
long mr__lm_full_listing(struct mr__lm_state *st);
/*
 * New IDs only, if the counts say nothing went away: the number of new
 * mounts (routed), or -1 when a whole listing must tell.
 */
long mr__lm_quick_listing(struct mr__lm_state *st);

#endif /* MR_SOURCE_LISTMOUNT_H */
