/* SPDX-License-Identifier: MIT */
/*
 * reactor.c: one io_uring for every source fd (reactor_poll.c: epoll where
 * io_uring cannot be set up).
 */
#ifndef MR_REACTOR_H
#define MR_REACTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warm.h"

struct mr__reactor;
struct mr__watch;

/*
 * Called for each completion of a watch: @res is the byte count (data in
 * @buf) or -errno; for a poll watch, @res is the revents mask.  The buffer
 * is only valid during the call.
 */
typedef void (*mr__watch_fn)(struct mr__watch *w, int res, const void *buf, size_t len);

enum mr__watch_mode { MR__WATCH_READ, MR__WATCH_POLLPRI, MR__WATCH_TIMER };

struct mr__watch {
	int fd;
	enum mr__watch_mode mode;
	mr__watch_fn fn;
	void *owner;
	/* reactor bookkeeping */
	bool armed;     /* a request is in flight */
	bool multishot; /* the in-flight request keeps producing completions */
	bool closing;   /* cancelled: freed by the reactor at its last completion */
	bool paused;    /* not re-armed after its next completion */
	bool stopping;  /* paused, and its multishot request cancelled */
	bool parked;    /* paused and no request in flight */
	uint64_t timeout_ns; /* MR__WATCH_TIMER: fires once, this long after arming */
	struct { int64_t tv_sec; long long tv_nsec; } ts; /* __kernel_timespec */
	void (*release)(struct mr__watch *w);
	struct mr__watch *next_rearm;
};

struct mr__reactor_opts {
	unsigned entries;  /* SQ size */
	unsigned buffers;  /* provided buffers (power of two) */
	unsigned buf_size; /* bytes per buffer */
	bool epoll;        /* read through epoll even where io_uring works */
};

/*
 * Tests only (testing.h): every reactor made from now on reads through
 * the backend named here whatever its opts ask, io_uring still falling
 * back to epoll where it cannot be set up.  Threads: any.
 */
enum mr__reactor_override {
	MR__REACTOR_AS_ASKED,
	MR__REACTOR_EPOLL,
	MR__REACTOR_IO_URING,
};
void mr__reactor_override(enum mr__reactor_override o);

int mr__reactor_new(const struct mr__reactor_opts *o, struct mr__reactor **ret);
void mr__reactor_free(struct mr__reactor *re);
int mr__reactor_fd(const struct mr__reactor *re);
/* Notes the lines a wake-up and a read use (warm.h). */
void mr__reactor_warm(const struct mr__reactor *re, struct mr__warm *w);

/* Queues the first request of @w (submitted at the next submit). */
int mr__reactor_add(struct mr__reactor *re, struct mr__watch *w);
/*
 * Cancels @w; @w->release runs once the kernel has let go of it (maybe
 * later, from mr__reactor_reap()).
 */
void mr__reactor_remove(struct mr__reactor *re, struct mr__watch *w);
/*
 * Stops re-arming @w: the request in flight (if any) completes as usual,
 * and none follows until mr__reactor_resume().  For a one-shot poll whose
 * events are wanted only part of the time.
 */
void mr__reactor_pause(struct mr__watch *w);
/* Arms @w again if its pause left it without a request.  0 or -errno. */
int mr__reactor_resume(struct mr__reactor *re, struct mr__watch *w);
/*
 * Makes the armed timer @w fire @timeout_ns from now instead.  Returns 0,
 * or -EINVAL when @w is not an armed timer.
 */
int mr__reactor_retime(struct mr__reactor *re, struct mr__watch *w, uint64_t timeout_ns);

/*
 * Submits what is queued and, if @wait, waits for at least one completion:
 * one io_uring_enter for all of it.  Returns 0 or -errno (-EINTR/-ETIME
 * are not errors for the caller).
 */
int mr__reactor_submit(struct mr__reactor *re, bool wait);
/*
 * Submits what is queued and waits up to @timeout_ms (-1: no limit) until
 * work is ready, in one syscall; the next mr__reactor_reap() takes it.
 * Returns 1 when work is ready, 0 on timeout, or -errno (-EINTR).
 */
int mr__reactor_wait(struct mr__reactor *re, int timeout_ms);
/*
 * Handles every completion ready, in batches; @before (if not NULL) runs
 * after each batch is seen and before it is handled.  Returns how many.
 */
int mr__reactor_reap(struct mr__reactor *re, void (*before)(void *), void *arg);
/*
 * Waits (up to @timeout_ms) until the kernel has let go of every request,
 * so that each removed watch has been released.  0 or -ETIMEDOUT.
 */
int mr__reactor_drain(struct mr__reactor *re, unsigned timeout_ms);

struct mr__reactor_stats {
	uint64_t enters, completions, rearms, nobufs;
	uint64_t calls; /* its other syscalls (epoll: epoll_wait, read, epoll_ctl, timerfd) */
};
void mr__reactor_stats(const struct mr__reactor *re, struct mr__reactor_stats *ret);
/*
 * True when completions are ready, or (5.19+) wait for the router to enter
 * the kernel: work that can be split should stop and let them through.
 */
bool mr__reactor_completions_waiting(struct mr__reactor *re);
/* "io_uring", or "epoll" where io_uring could not be set up (reactor_poll.c). */
const char *mr__reactor_backend(const struct mr__reactor *re);

#endif /* MR_REACTOR_H */
