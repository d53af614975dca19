/* SPDX-License-Identifier: MIT */
/*
 * The reactor at work (reactor.c sets it up): watches armed as SQEs,
 * cancelled, paused and retimed; one io_uring_enter per batch; each
 * completion handed to its watch, its buffer given back to the ring, and
 * one-shot requests queued for re-arming at the next submit.  Every call
 * forwards to reactor_poll.c when the reactor reads through epoll.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "io/reactor.h"
#include "internal.h"
#include "io/reactor_poll.h"
#include "io/reactor_uring.h"

static struct io_uring_sqe *get_sqe(struct mr__reactor *re)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&re->ring);

	if (!sqe) {
		/* SQ full: hand what we have to the kernel and take a fresh slot. */
		io_uring_submit(&re->ring);
		re->stats.enters++;
		re->pending_sqes = 0;
		sqe = io_uring_get_sqe(&re->ring);
	}
	if (sqe)
		re->pending_sqes++;
	return sqe;
}

static void set_timeout(struct mr__watch *w, uint64_t timeout_ns)
{
	w->ts.tv_sec = (int64_t)(timeout_ns / 1000000000u);
	w->ts.tv_nsec = (long long)(timeout_ns % 1000000000u);
}

static int arm(struct mr__reactor *re, struct mr__watch *w)
{
	struct io_uring_sqe *sqe = get_sqe(re);

	if (!sqe)
		return -EBUSY;
	if (w->mode == MR__WATCH_TIMER) {
		set_timeout(w, w->timeout_ns);
		io_uring_prep_timeout(sqe, (struct __kernel_timespec *)&w->ts, 0, 0);
		w->multishot = false;
	} else if (w->mode == MR__WATCH_POLLPRI) {
		/*
		 * Not a poll for POLLPRI.  /proc/PID/mountinfo reports POLLPRI
		 * once per change, to the first poll that looks, and io_uring
		 * may look more than once for one wake-up: when a change lands
		 * while the request is being armed, the arm's look takes the
		 * POLLPRI while the wake-up's task work owns the request, and
		 * that task's look then finds nothing and waits again.  The
		 * change is lost (seen on 6.1 under qemu, a mount that never
		 * came).  The file wakes its waiters at every change, though,
		 * and always polls POLLIN: a multishot poll for POLLIN,
		 * edge-triggered, completes once per wake-up whoever looked,
		 * and once at arming (a spurious report that covers what changed
		 * before it), as the epoll backend's watch does.
		 */
		io_uring_prep_poll_multishot(sqe, w->fd, POLLIN);
		w->multishot = true;
		w->stopping = false;
	} else if (re->multishot_read) {
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_READ_MULTISHOT;
		sqe->fd = w->fd;
		sqe->off = (uint64_t)-1; /* the file position: these fds are streams */
		sqe->flags = IOSQE_BUFFER_SELECT;
		sqe->buf_group = MR__REACTOR_BGID;
		w->multishot = true;
	} else {
		io_uring_prep_read(sqe, w->fd, NULL, re->buf_size, (uint64_t)-1);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = MR__REACTOR_BGID;
		w->multishot = false;
	}
	io_uring_sqe_set_data(sqe, w);
	w->armed = true;
	re->n_armed++;
	return 0;
}

int mr__reactor_add(struct mr__reactor *re, struct mr__watch *w)
{
	if (re->poll)
		return mr__reactor_poll_add(re->poll, w);
	w->closing = false;
	return arm(re, w);
}

void mr__reactor_remove(struct mr__reactor *re, struct mr__watch *w)
{
	if (re->poll) {
		mr__reactor_poll_remove(re->poll, w);
		return;
	}
	if (!w->armed) {
		/*
		 * A one-shot watch that completed in this step waits on the
		 * re-arm list: take it off, or the next submit would arm (and
		 * read) a watch its owner has freed.
		 */
		for (struct mr__watch **pp = &re->rearm; *pp; pp = &(*pp)->next_rearm)
			if (*pp == w) {
				*pp = w->next_rearm;
				w->next_rearm = NULL;
				break;
			}
		w->parked = false;
		if (w->release)
			w->release(w);
		return;
	}
	w->closing = true;
	struct io_uring_sqe *sqe = get_sqe(re);
	if (!sqe)
		return; /* the watch stays closing; its fd's close ends the request */
	io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)w, 0);
	io_uring_sqe_set_data64(sqe, MR__REACTOR_UD_IGNORE);
}

void mr__reactor_pause(struct mr__watch *w)
{
	w->paused = true;
}

int mr__reactor_resume(struct mr__reactor *re, struct mr__watch *w)
{
	if (re->poll)
		return mr__reactor_poll_resume(re->poll, w);
	w->paused = false;
	if (!w->parked)
		return 0; /* still armed: it goes on */
	w->parked = false;
	return arm(re, w);
}

int mr__reactor_retime(struct mr__reactor *re, struct mr__watch *w, uint64_t timeout_ns)
{
	if (re->poll)
		return mr__reactor_poll_retime(re->poll, w, timeout_ns);
	if (w->mode != MR__WATCH_TIMER || !w->armed || w->closing)
		return -EINVAL;
	struct io_uring_sqe *sqe = get_sqe(re);
	if (!sqe)
		return -EBUSY;
	/*
	 * The kernel copies the time when it takes a request, so w->ts is free
	 * to change; if the timer fired meanwhile, the update finds nothing
	 * (-ENOENT, ignored) and the timer's own completion wakes the owner.
	 */
	w->timeout_ns = timeout_ns;
	set_timeout(w, timeout_ns);
	io_uring_prep_timeout_update(sqe, (struct __kernel_timespec *)&w->ts,
				     (uint64_t)(uintptr_t)w, 0);
	io_uring_sqe_set_data64(sqe, MR__REACTOR_UD_IGNORE);
	return 0;
}

/* Queues the re-arms waiting for room in the ring. */
static void queue_rearms(struct mr__reactor *re)
{
	/* One the ring has no room for stays queued, with those after it: a watch never re-armed is deaf. */
	while (re->rearm && arm(re, re->rearm) == 0) {
		struct mr__watch *w = re->rearm;
		re->rearm = w->next_rearm;
		w->next_rearm = NULL;
		re->stats.rearms++;
	}
}

int mr__reactor_submit(struct mr__reactor *re, bool wait)
{
	if (re->poll)
		return mr__reactor_poll_submit(re->poll, wait);
	int ret;

	queue_rearms(re);
	if (!re->pending_sqes && !wait)
		return 0;
	re->stats.enters++;
	re->pending_sqes = 0;
	ret = wait ? io_uring_submit_and_wait(&re->ring, 1) : io_uring_submit(&re->ring);
	return ret < 0 ? ret : 0;
}

int mr__reactor_wait(struct mr__reactor *re, int timeout_ms)
{
	if (re->poll)
		return mr__reactor_poll_wait(re->poll, timeout_ms);
	if (io_uring_cq_ready(&re->ring))
		return 1;
	int ret;
	if (timeout_ms < 0) {
		ret = mr__reactor_submit(re, true);
	} else {
		struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
					       .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
		struct io_uring_cqe *cqe;
		queue_rearms(re);
		re->stats.enters++;
		re->pending_sqes = 0;
		ret = io_uring_submit_and_wait_timeout(&re->ring, &cqe, 1, &ts, NULL);
	}
	if (ret == -ETIME)
		return 0;
	if (ret < 0)
		return ret;
	return io_uring_cq_ready(&re->ring) > 0;
}

static void queue_rearm(struct mr__reactor *re, struct mr__watch *w)
{
	w->next_rearm = re->rearm;
	re->rearm = w;
}

/*
 * A paused multishot poll is cancelled at its next completion: it then
 * parks, and mr__reactor_resume() arms it afresh, whose first report
 * covers whatever changed while it was parked.
 */
static void stop(struct mr__reactor *re, struct mr__watch *w)
{
	struct io_uring_sqe *sqe;

	if (w->stopping || !(sqe = get_sqe(re)))
		return; /* cancelled already, or at the next completion */
	w->stopping = true;
	io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)w, 0);
	io_uring_sqe_set_data64(sqe, MR__REACTOR_UD_IGNORE);
}

static void complete(struct mr__reactor *re, struct io_uring_cqe *cqe, unsigned *recycled)
{
	struct mr__watch *w = io_uring_cqe_get_data(cqe);
	bool more = cqe->flags & IORING_CQE_F_MORE;
	const void *data = NULL;
	size_t len = 0;

	if ((uintptr_t)w == MR__REACTOR_UD_IGNORE || !w)
		return;
	re->stats.completions++;

	if (cqe->flags & IORING_CQE_F_BUFFER) {
		unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		data = re->bufs + (size_t)bid * re->buf_size;
		len = cqe->res > 0 ? (size_t)cqe->res : 0;
		if (!w->closing)
			w->fn(w, cqe->res, data, len);
		/* Hand the buffer back; the tail moves once for the whole batch. */
		io_uring_buf_ring_add(re->br, (void *)data, re->buf_size, (unsigned short)bid,
				      io_uring_buf_ring_mask(re->n_bufs), (int)*recycled);
		(*recycled)++;
	} else if (w->mode == MR__WATCH_TIMER) {
		w->armed = false;
		re->n_armed--;
		if (w->closing) {
			if (w->release)
				w->release(w);
		} else if (cqe->res != -ECANCELED) {
			w->fn(w, cqe->res, NULL, 0);
		}
		return; /* one-shot: the owner arms it again if it wants */
	} else if (!w->closing) {
		if (cqe->res == -ENOBUFS) {
			/* Every buffer was in use: not an error, read again after recycling. */
			re->stats.nobufs++;
		} else if (cqe->res == -EINVAL && w->multishot && w->mode == MR__WATCH_READ) {
			/* The fd refuses multishot reads: one-shot reads from now on. */
			re->multishot_read = false;
		} else if (w->mode == MR__WATCH_POLLPRI && cqe->res >= 0) {
			/* A wake-up: the namespace changed (see arm()). */
			w->fn(w, POLLPRI | (cqe->res & (POLLERR | POLLHUP)), NULL, 0);
			if (more && w->paused && !w->closing)
				stop(re, w);
		} else if (cqe->res != -ECANCELED && cqe->res < 0) {
			w->fn(w, cqe->res, NULL, 0);
		}
	}

	if (more)
		return;
	w->armed = false;
	re->n_armed--;
	if (w->closing) {
		if (w->release)
			w->release(w);
		return;
	}
	/* A dead fd (EBADF) or a fatal error is reported once and not re-armed. */
	if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -EAGAIN && cqe->res != -EINTR &&
	    !(cqe->res == -EINVAL && w->mode == MR__WATCH_READ) && cqe->res != -ECANCELED)
		return;
	if (w->paused) {
		w->parked = true; /* mr__reactor_resume() arms it again */
		return;
	}
	queue_rearm(re, w);
}

int mr__reactor_reap(struct mr__reactor *re, void (*before)(void *), void *arg)
{
	if (re->poll)
		return mr__reactor_poll_reap(re->poll, before, arg);
	struct io_uring_cqe *cqes[256];
	unsigned recycled = 0;
	int total = 0;

	for (;;) {
		unsigned n = io_uring_peek_batch_cqe(&re->ring, cqes, MR__ARRAY_SIZE(cqes));
		if (!n)
			break;
		if (before)
			before(arg);
		for (unsigned i = 0; i < n; i++)
			complete(re, cqes[i], &recycled);
		io_uring_cq_advance(&re->ring, n);
		total += (int)n;
	}
	if (recycled)
		io_uring_buf_ring_advance(re->br, (int)recycled);
	return total;
}

int mr__reactor_drain(struct mr__reactor *re, unsigned timeout_ms)
{
	if (re->poll)
		return mr__reactor_poll_drain(re->poll);
	struct __kernel_timespec ts = {.tv_nsec = 10 * 1000000};
	struct io_uring_cqe *cqe;

	for (unsigned waited = 0; re->n_armed && waited < timeout_ms; waited += 10) {
		re->stats.enters++;
		re->pending_sqes = 0;
		io_uring_submit_and_wait_timeout(&re->ring, &cqe, 1, &ts, NULL);
		mr__reactor_reap(re, NULL, NULL);
	}
	return re->n_armed ? -ETIMEDOUT : 0;
}

bool mr__reactor_completions_waiting(struct mr__reactor *re)
{
	if (re->poll)
		return mr__reactor_poll_ready(re->poll);
	return io_uring_cq_ready(&re->ring) ||
	       (IO_URING_READ_ONCE(*re->ring.sq.kflags) & IORING_SQ_TASKRUN);
}
