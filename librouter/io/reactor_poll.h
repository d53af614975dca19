/* SPDX-License-Identifier: MIT */
/*
 * The reactor without io_uring: the same watches read through epoll and
 * read(2).  reactor.c turns to it when io_uring cannot be set up, and
 * forwards each of its calls here; nothing else calls it.  The contracts
 * are reactor.h's mr__reactor_* ones.
 */
#ifndef MR_REACTOR_POLL_H
#define MR_REACTOR_POLL_H

#include "io/reactor.h"

struct mr__reactor_poll;

/* 0, -ENOMEM, or the -errno of epoll_create1/timerfd_create. */
int mr__reactor_poll_new(const struct mr__reactor_opts *o, struct mr__reactor_poll **ret);
void mr__reactor_poll_free(struct mr__reactor_poll *p);
/* The epoll fd: readable when a watch has something or a timer is due. */
int mr__reactor_poll_fd(const struct mr__reactor_poll *p);
/* Notes the lines a wake-up and a read use (warm.h). */
void mr__reactor_poll_warm(const struct mr__reactor_poll *p, struct mr__warm *w);
int mr__reactor_poll_add(struct mr__reactor_poll *p, struct mr__watch *w);
/* Lets go of @w at once: its release runs before this returns, or, when
 * @w's own callback is running, as soon as that callback returns. */
void mr__reactor_poll_remove(struct mr__reactor_poll *p, struct mr__watch *w);
int mr__reactor_poll_resume(struct mr__reactor_poll *p, struct mr__watch *w);
int mr__reactor_poll_retime(struct mr__reactor_poll *p, struct mr__watch *w, uint64_t timeout_ns);
int mr__reactor_poll_submit(struct mr__reactor_poll *p, bool wait);
int mr__reactor_poll_wait(struct mr__reactor_poll *p, int timeout_ms);
int mr__reactor_poll_reap(struct mr__reactor_poll *p, void (*before)(void *), void *arg);
int mr__reactor_poll_drain(struct mr__reactor_poll *p);
bool mr__reactor_poll_ready(struct mr__reactor_poll *p);
void mr__reactor_poll_stats(const struct mr__reactor_poll *p, struct mr__reactor_stats *ret);

#endif /* MR_REACTOR_POLL_H */
