/* SPDX-License-Identifier: MIT */
/*
 * The epoll backend's state, shared by its setup (reactor_poll.c) and its
 * dispatch (reactor_poll_dispatch.c).  Nothing outside io/ includes this.
 */
#ifndef MR_REACTOR_POLL_STATE_H
#define MR_REACTOR_POLL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "io/reactor.h"

/* An armed timer and when it is due. */
struct mr__poll_timer {
	struct mr__watch *w;
	uint64_t due_ns; /* CLOCK_MONOTONIC */
};

struct mr__reactor_poll {
	int epfd, tfd;
	char *buf;
	unsigned buf_size;
	struct mr__poll_timer *timers; /* armed timers, unordered: a namespace has one or two */
	size_t n_timers, cap_timers;
	/*
	 * The batch being handled, or found by a wait and not reaped yet
	 * (n_evs > 0 between the two): a removal clears the watch's entry
	 * here, so it is not read after its release.
	 */
	struct epoll_event evs[64];
	int n_evs;
	struct mr__watch *current; /* whose callback runs */
	bool current_removed;      /* ...and it removed itself */
	unsigned n_armed;
	struct mr__reactor_stats stats;
};

#endif /* MR_REACTOR_POLL_STATE_H */
