/* SPDX-License-Identifier: MIT */
/*
 * The io_uring reactor's state, shared by its setup (reactor.c) and its
 * submission and completion path (reactor_dispatch.c).  Nothing outside
 * io/ includes this.
 */
#ifndef MR_REACTOR_URING_H
#define MR_REACTOR_URING_H

#include <stdbool.h>
#include <stddef.h>

#include "io/io_uring_compat.h"
#include "io/reactor.h"
#include "io/reactor_poll.h"

/* user_data of requests whose completions carry nothing to dispatch. */
#define MR__REACTOR_UD_IGNORE 1ull

#define MR__REACTOR_BGID 7

struct mr__reactor {
	struct mr__reactor_poll *poll; /* set: io_uring was refused, epoll reads */
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	size_t br_bytes;
	char *bufs;
	unsigned n_bufs, buf_size;
	unsigned pending_sqes;
	unsigned n_armed; /* requests the kernel still holds */
	bool multishot_read;
	struct mr__watch *rearm; /* watches to re-arm at the next submit */
	struct mr__reactor_stats stats;
};

#endif /* MR_REACTOR_URING_H */
