/* SPDX-License-Identifier: MIT */
/*
 * The epoll backend at work (reactor_poll.c sets it up; the behaviour each
 * watch mode gets is described there): watches armed in the epoll set or
 * on the one timerfd, waits, and each ready fd read and handed to its
 * watch, each due timer fired.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "io/reactor_poll.h"
#include "internal.h"
#include "alloc.h"
#include "io/reactor_poll_state.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Sets the timerfd to the earliest deadline, or disarms it. */
static void program_timer(struct mr__reactor_poll *p)
{
	struct itimerspec its = {0};
	uint64_t first = 0;

	for (size_t i = 0; i < p->n_timers; i++)
		if (!first || p->timers[i].due_ns < first)
			first = p->timers[i].due_ns;
	/* An all-zero it_value disarms; CLOCK_MONOTONIC is never 0 here. */
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	timerfd_settime(p->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	p->stats.calls++;
}

static struct mr__poll_timer *find_timer(struct mr__reactor_poll *p, struct mr__watch *w)
{
	for (size_t i = 0; i < p->n_timers; i++)
		if (p->timers[i].w == w)
			return &p->timers[i];
	return NULL;
}

static void drop_timer(struct mr__reactor_poll *p, struct mr__poll_timer *t)
{
	*t = p->timers[--p->n_timers];
}

static int arm(struct mr__reactor_poll *p, struct mr__watch *w, int op)
{
	w->multishot = false;
	if (w->mode == MR__WATCH_TIMER) {
		if (p->n_timers == p->cap_timers) {
			size_t cap = p->cap_timers ? p->cap_timers * 2 : 4;
			struct mr__poll_timer *t = mr__realloc(p->timers, cap * sizeof(*t));
			if (!t)
				return -ENOMEM;
			p->timers = t;
			p->cap_timers = cap;
		}
		p->timers[p->n_timers++] = (struct mr__poll_timer){.w = w, .due_ns = now_ns() + w->timeout_ns};
		program_timer(p);
	} else {
		struct epoll_event ev = {
			.events = w->mode == MR__WATCH_POLLPRI ? EPOLLIN | EPOLLET : EPOLLIN,
			.data.ptr = w,
		};
		int rc = epoll_ctl(p->epfd, op, w->fd, &ev);
		p->stats.calls++;
		/* A watch added again after a removal, or re-armed after a close and reopen. */
		if (rc < 0 && (errno == EEXIST || errno == ENOENT)) {
			rc = epoll_ctl(p->epfd, errno == EEXIST ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w->fd, &ev);
			p->stats.calls++;
		}
		if (rc < 0)
			return -errno;
	}
	w->armed = true;
	p->n_armed++;
	return 0;
}

int mr__reactor_poll_add(struct mr__reactor_poll *p, struct mr__watch *w)
{
	w->closing = false;
	return arm(p, w, EPOLL_CTL_ADD);
}

void mr__reactor_poll_remove(struct mr__reactor_poll *p, struct mr__watch *w)
{
	if (w->mode == MR__WATCH_TIMER) {
		struct mr__poll_timer *t = find_timer(p, w);
		if (t) {
			drop_timer(p, t);
			program_timer(p);
		}
	} else {
		/* Registered from its add until here, armed or not; the fd is still open. */
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, w->fd, NULL);
		p->stats.calls++;
		for (int i = 0; i < p->n_evs; i++)
			if (p->evs[i].data.ptr == w)
				p->evs[i].data.ptr = NULL;
	}
	if (w->armed) {
		w->armed = false;
		p->n_armed--;
	}
	w->parked = false;
	if (w == p->current) {
		p->current_removed = true; /* released when its callback returns */
		return;
	}
	if (w->release)
		w->release(w);
}

int mr__reactor_poll_resume(struct mr__reactor_poll *p, struct mr__watch *w)
{
	w->paused = false;
	if (!w->parked)
		return 0;
	w->parked = false;
	return arm(p, w, EPOLL_CTL_ADD);
}

int mr__reactor_poll_retime(struct mr__reactor_poll *p, struct mr__watch *w, uint64_t timeout_ns)
{
	struct mr__poll_timer *t;

	if (w->mode != MR__WATCH_TIMER || !w->armed || w->closing || !(t = find_timer(p, w)))
		return -EINVAL;
	w->timeout_ns = timeout_ns;
	t->due_ns = now_ns() + timeout_ns;
	program_timer(p);
	return 0;
}

int mr__reactor_poll_submit(struct mr__reactor_poll *p, bool wait)
{
	/* Nothing to re-arm: every watch stays in the epoll set (reactor_poll.c). */
	if (!wait)
		return 0;
	return mr__reactor_poll_wait(p, -1);
}

int mr__reactor_poll_wait(struct mr__reactor_poll *p, int timeout_ms)
{
	if (p->n_evs)
		return 1; /* what the last wait found is not reaped yet */
	/*
	 * The wait is the first round's epoll_wait: what it returns is kept
	 * for mr__reactor_poll_reap(), which reads each fd then (after the
	 * commands queued meanwhile are in place), so a change costs one
	 * epoll_wait, not a wait and then an epoll_wait that finds the same.
	 * A watch removed before the reap is cleared from the kept batch.
	 */
	p->stats.enters++;
	int n = epoll_wait(p->epfd, p->evs, (int)MR__ARRAY_SIZE(p->evs), timeout_ms);
	if (n < 0)
		return -errno;
	p->n_evs = n;
	return n > 0;
}

/* Runs @w's callback; true if @w is still the reactor's afterwards. */
static bool call(struct mr__reactor_poll *p, struct mr__watch *w, int res, const void *buf,
		 size_t len)
{
	p->current = w;
	p->current_removed = false;
	w->fn(w, res, buf, len);
	p->current = NULL;
	if (!p->current_removed)
		return true;
	if (w->release)
		w->release(w);
	return false;
}

static void fire_timers(struct mr__reactor_poll *p)
{
	uint64_t expiries;

	(void)!read(p->tfd, &expiries, sizeof(expiries));
	p->stats.calls++;
	for (;;) {
		uint64_t now = now_ns();
		struct mr__poll_timer *t = NULL;
		for (size_t i = 0; i < p->n_timers && !t; i++)
			if (p->timers[i].due_ns <= now)
				t = &p->timers[i];
		if (!t)
			break;
		struct mr__watch *w = t->w;
		drop_timer(p, t);
		w->armed = false;
		p->n_armed--;
		p->stats.completions++;
		/* One-shot, as io_uring's timeout: -ETIME, and the owner arms it again. */
		call(p, w, -ETIME, NULL, 0);
	}
	program_timer(p);
}

/* Takes @w out of the epoll set until it is added or resumed again. */
static void unregister(struct mr__reactor_poll *p, struct mr__watch *w)
{
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	p->stats.calls++;
	w->armed = false;
	p->n_armed--;
}

/* The POLLPRI watch @w was woken: its namespace changed (see the top). */
static void pollpri(struct mr__reactor_poll *p, struct mr__watch *w, uint32_t events)
{
	p->stats.completions++;
	if (!call(p, w, POLLPRI | (int)(events & (EPOLLERR | EPOLLHUP)), NULL, 0))
		return;
	if (w->paused) {
		unregister(p, w);
		w->parked = true;
	}
}

/*
 * Hands what read(2) returned for the read watch @w (@n bytes in p->buf,
 * or -1 with @err) to its watch.
 */
static void ready(struct mr__reactor_poll *p, struct mr__watch *w, ssize_t n, int err)
{
	p->stats.completions++;
	if (n > 0) {
		if (!call(p, w, (int)n, p->buf, (size_t)n))
			return;
	} else if (n == 0 || (err != EAGAIN && err != EINTR)) {
		/*
		 * An error (EBADF: the fd closed under the router) is reported
		 * once and the watch not read again, as reactor.c does; so is
		 * an end of file, which would otherwise be reported forever.
		 */
		if (call(p, w, n == 0 ? 0 : -err, p->buf, 0))
			unregister(p, w);
		return;
	}
	/*
	 * Read, or EAGAIN or EINTR (another reader took it, or a signal): it
	 * stays in the set, unless it was paused.
	 */
	if (w->paused) {
		unregister(p, w);
		w->parked = true;
	}
}

int mr__reactor_poll_reap(struct mr__reactor_poll *p, void (*before)(void *), void *arg)
{
	int total = 0;

	/*
	 * Another round only while this one suggests more is ready now: the
	 * array came back full, or a read all but filled the buffer.
	 * Otherwise what came meanwhile leaves the epoll fd readable for the
	 * next step, and one change costs one epoll_wait, not a second that
	 * finds nothing.
	 * A read watch comes back while its fd has more to read and a POLLPRI
	 * watch with every change: a storm of mounts could keep this loop
	 * going, so it stops after a few rounds all the same.
	 */
	bool more = true;
	for (int round = 0; round < 8 && more; round++) {
		int n = p->n_evs; /* the batch a wait found, or none */
		if (!n) {
			n = epoll_wait(p->epfd, p->evs, (int)MR__ARRAY_SIZE(p->evs), 0);
			p->stats.calls++;
			if (n <= 0)
				break;
			p->n_evs = n;
		}
		more = n == (int)MR__ARRAY_SIZE(p->evs);
		for (int i = 0; i < n; i++) {
			void *ptr = p->evs[i].data.ptr;
			ssize_t got = 0;
			int err = 0;

			if (!ptr)
				continue; /* removed by an earlier callback of this batch */
			/*
			 * A read watch is read first, as io_uring reads it in the
			 * kernel before the completion is seen: the router's wake
			 * eventfd read after @before would swallow the wake-up of a
			 * command pushed meanwhile, and leave it on the stack.
			 */
			bool reads = ptr != &p->tfd && ((struct mr__watch *)ptr)->mode != MR__WATCH_POLLPRI;
			if (reads) {
				got = read(((struct mr__watch *)ptr)->fd, p->buf, p->buf_size);
				p->stats.calls++;
				err = got < 0 ? errno : 0;
				/* Whole records only: a full read can end short of the buffer. */
				more |= got >= (ssize_t)p->buf_size / 2;
			}
			/*
			 * @before before each one, not once a batch: what a watch
			 * reports here is read now (a mountinfo pass sees the table
			 * as it is, not as it was when epoll_wait returned), so a
			 * command pushed before a change must be in place first.
			 */
			if (before)
				before(arg);
			if (!p->evs[i].data.ptr)
				continue; /* @before removed it: what was read was its own */
			p->evs[i].data.ptr = NULL;
			if (ptr == &p->tfd)
				fire_timers(p);
			else if (reads)
				ready(p, ptr, got, err);
			else
				pollpri(p, ptr, p->evs[i].events);
		}
		p->n_evs = 0;
		total += n;
	}
	return total;
}

int mr__reactor_poll_drain(struct mr__reactor_poll *p)
{
	/* Nothing is in flight: every removed watch is released already. */
	return p->n_armed ? -ETIMEDOUT : 0;
}

bool mr__reactor_poll_ready(struct mr__reactor_poll *p)
{
	struct pollfd pfd = {.fd = p->epfd, .events = POLLIN};

	if (p->n_evs)
		return true; /* a wait's batch, not reaped yet */

	p->stats.calls++;
	return poll(&pfd, 1, 0) > 0;
}
