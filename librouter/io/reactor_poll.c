/* SPDX-License-Identifier: MIT */
/*
 * The reactor where io_uring is refused: kernel.io_uring_disabled (6.6) on
 * hardened distributions, a seccomp filter (container runtimes), a kernel
 * without it, or one too old for provided-buffer rings (5.19).  The same
 * watches, read through one epoll fd with read(2) into one buffer, so the
 * sources and the router above cannot tell the two apart.
 *
 * A read watch stays in the set, level-triggered, from its add to its
 * removal, as a multishot read stays in flight on io_uring: a change costs
 * epoll_wait and read(2), with no epoll_ctl to re-arm.  A paused read
 * watch is taken out of the set when it next reports, and put back by
 * resume.
 *
 * A POLLPRI watch cannot ask epoll for EPOLLPRI: /proc/PID/mountinfo's
 * poll method reports a change once and forgets it, and epoll polls its
 * items again whenever the epoll fd itself is polled (by the router's wait,
 * or by a caller's loop around mr_router_fd()), so the change is used up
 * before epoll_wait() would hand it over.  The file wakes its waiters
 * exactly when the namespace changes, though, and always polls EPOLLIN:
 * registered edge-triggered for EPOLLIN, it is reported once per wake-up,
 * however often it is polled meanwhile, and that report is handed to the
 * source as the POLLPRI.  Registering reports once at once: a spurious
 * POLLPRI, which costs a pass and covers a change made between opening the
 * file and adding the watch (a fresh io_uring poll reports those too).
 * Paused, it is taken out of the set when it next reports, and put back
 * (reporting at once again) by resume.
 *
 * Timers share one timerfd in the epoll set, set to the earliest deadline.
 * Removal is immediate (no request is in flight to cancel): a watch's
 * release runs inside mr__reactor_remove(), or right after its own
 * callback when that callback removed it.
 *
 * This file sets the backend up and tears it down; reactor_poll_dispatch.c
 * arms, waits, and hands each ready fd or due timer to its watch.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "io/reactor_poll.h"
#include "alloc.h"
#include "io/reactor_poll_state.h"

int mr__reactor_poll_new(const struct mr__reactor_opts *o, struct mr__reactor_poll **ret)
{
	struct mr__reactor_poll *p = mr__calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->epfd = p->tfd = -1;
	p->buf_size = o->buf_size ? o->buf_size : 16384;
	p->buf = mr__malloc(p->buf_size);
	if (!p->buf) {
		err = -ENOMEM;
		goto fail;
	}
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->epfd < 0 || p->tfd < 0) {
		err = -errno;
		goto fail;
	}
	/* Level-triggered: it stays readable until the expiry count is read. */
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->tfd};
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->tfd, &ev) < 0) {
		err = -errno;
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	mr__reactor_poll_free(p);
	return err;
}

void mr__reactor_poll_free(struct mr__reactor_poll *p)
{
	if (!p)
		return;
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->tfd >= 0)
		close(p->tfd);
	mr__free(p->timers);
	mr__free(p->buf);
	mr__free(p);
}

int mr__reactor_poll_fd(const struct mr__reactor_poll *p)
{
	return p->epfd;
}

/* The state but the unused end of its event array, the read buffer's head, the timers. */
void mr__reactor_poll_warm(const struct mr__reactor_poll *p, struct mr__warm *w)
{
	mr__warm_add(w, p, offsetof(struct mr__reactor_poll, evs) + 2 * sizeof(p->evs[0]));
	mr__warm_add(w, &p->n_evs, sizeof(*p) - offsetof(struct mr__reactor_poll, n_evs));
	mr__warm_add(w, p->buf, 2 * MR__CACHELINE);
	mr__warm_add(w, p->timers, p->n_timers * sizeof(*p->timers));
}

void mr__reactor_poll_stats(const struct mr__reactor_poll *p, struct mr__reactor_stats *ret)
{
	*ret = p->stats;
}
