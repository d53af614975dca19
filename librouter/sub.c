/* SPDX-License-Identifier: MIT */
/*
 * A subscriber's ring: Concurrency Kit's SPSC ring of event pointers, the
 * router thread producing and the subscriber's thread consuming, plus an
 * eventfd for a consumer that wants to sleep when the ring is empty.
 *
 * Wake-up protocol (no syscall while events flow):
 *   consumer: ring empty -> drain eventfd -> waiting = 1 (seq_cst)
 *             -> look at the ring again -> sleep on the eventfd
 *   producer: enqueue (release) -> seq_cst fence -> if waiting: waiting = 0,
 *             write the eventfd
 * The two seq_cst steps form a Dekker pair: either the consumer's second
 * look sees the event, or the producer sees waiting = 1.
 *
 * ThreadSanitizer cannot see ck_pr's fences (inline assembly), so under
 * TSan the ring's own accesses are ignored and the hand-over it provides is
 * stated instead: a release on the event before it is enqueued, an acquire
 * on it after it is dequeued.  That is exactly the ordering the ring
 * guarantees, and it lets TSan check everything around it.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <ck_ring.h>

#include "sub.h"
#include "internal.h"
#include "alloc.h"
#include "clock.h"
#include "event.h"
#include "trie.h"

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define TSAN_RELEASE(p) __tsan_release(p)
#define TSAN_ACQUIRE(p) __tsan_acquire(p)
#define TSAN_IGNORE_BEGIN() __tsan_ignore_thread_begin()
#define TSAN_IGNORE_END() __tsan_ignore_thread_end()
#else
#define TSAN_RELEASE(p) ((void)(p))
#define TSAN_ACQUIRE(p) ((void)(p))
#define TSAN_IGNORE_BEGIN() ((void)0)
#define TSAN_IGNORE_END() ((void)0)
#endif

/*
 * Slots kept back from changes: the OVERRUN marker and the SNAPSHOT of a
 * catch-up, which may still be unread when the namespace goes; then the
 * OVERRUN of a loss not caught up, and NS_GONE, which must always fit.
 */
#define RESERVE 4

struct mr__sub_ring {
	struct ck_ring ring; /* capacity a power of two; holds capacity - 1 entries */
	alignas(MR__CACHELINE) ck_ring_buffer_t buf[];
};

static uint32_t round_pow2(uint32_t v)
{
	uint32_t p = 8;

	while (p < v)
		p <<= 1;
	return p;
}

void mr__misuse(const char *call, const char *what)
{
#ifndef NDEBUG
	/* A bug in the calling program: stop where it happened, saying what. */
	static const char pre[] = "mountrouter: ";
	char line[160];
	size_t n = 0;

	for (const char *parts[] = {pre, call, ": ", what, "\n"}, **p = parts;
	     p < parts + 5; p++) {
		size_t l = strlen(*p);
		if (l > sizeof(line) - n)
			l = sizeof(line) - n;
		memcpy(line + n, *p, l);
		n += l;
	}
	(void)!write(2, line, n);
	abort();
#else
	(void)call;
	(void)what;
#endif
}

int mr__sub_check(const struct mr_sub *s, const char *call)
{
	uint32_t magic = atomic_load_explicit(&s->magic, memory_order_relaxed);

	if (MR__LIKELY(magic == MR__SUB_LIVE))
		return 0;
	mr__misuse(call, magic == MR__SUB_FREED ? "subscriber already freed"
						: "not a live subscriber (freed, or never made)");
	return -EINVAL;
}

int mr__sub_alloc(mr_router *r, int wake_efd, const struct mr_sub_opts *o, struct mr_sub **ret)
{
	uint32_t cap;
	struct mr_sub *s;
	int err;

	if (o->capacity > MR__SUB_CAPACITY_MAX)
		return -EINVAL;
	cap = round_pow2(o->capacity ? o->capacity : 4096);
	s = mr__calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->q = mr__calloc(1, sizeof(*s->q) + cap * sizeof(ck_ring_buffer_t));
	if (!s->q) {
		err = -ENOMEM;
		goto fail;
	}
	ck_ring_init(&s->q->ring, cap);
	s->capacity = cap;
	s->usable = cap - 1 - RESERVE;
	/* No fd until the consumer asks to wait: 100,000 busy readers cost none. */
	atomic_init(&s->efd, -1);
	err = mr__path_normalize(o->subtree, &s->prefix);
	if (err < 0)
		goto fail;
	s->r = r;
	s->wake_efd = wake_efd;
	s->kinds = o->kinds ? o->kinds : MR_KINDS_ALL;
	s->flags = o->flags;
	atomic_init(&s->magic, MR__SUB_LIVE);
	*ret = s;
	return 0;
fail:
	mr__free(s->q);
	mr__free(s);
	return err;
}

/* Consumer side.  Wait-free. */
static bool ring_pop(struct mr__sub_ring *q, struct mr__event **ev)
{
	TSAN_IGNORE_BEGIN();
	bool ok = ck_ring_dequeue_spsc(&q->ring, q->buf, ev);
	TSAN_IGNORE_END();
	if (ok)
		TSAN_ACQUIRE(*ev);
	return ok;
}

/* Producer side.  Wait-free. */
static bool ring_push(struct mr__sub_ring *q, struct mr__event *ev)
{
	TSAN_RELEASE(ev);
	TSAN_IGNORE_BEGIN();
	bool ok = ck_ring_enqueue_spsc(&q->ring, q->buf, ev);
	TSAN_IGNORE_END();
	return ok;
}

void mr__sub_warm(const struct mr_sub *s, struct mr__warm *w)
{
	const struct mr__sub_ring *q = s->q;

	mr__warm_add(w, s, sizeof(*s));
	/* The ring's indexes, and the slot the next push writes. */
	mr__warm_add(w, q, sizeof(*q));
	mr__warm_add(w, &q->buf[q->ring.p_tail & (s->capacity - 1)], sizeof(q->buf[0]));
}

/* Either side: the fill level, exact for the calling side's own moves. */
unsigned mr__sub_queued(const struct mr_sub *s)
{
	TSAN_IGNORE_BEGIN();
	unsigned n = ck_ring_size(&s->q->ring);
	TSAN_IGNORE_END();
	return n;
}

void mr__sub_destroy(struct mr_sub *s)
{
	struct mr__event *ev;

	if (!s)
		return;
	while (ring_pop(s->q, &ev))
		mr_event_unref(&ev->pub);
	int fd = atomic_load(&s->efd);
	if (fd >= 0)
		close(fd);
	mr__free(s->prefix);
	mr__free(s->q);
#ifndef NDEBUG
	/* A handle used after this fails mr__sub_check() rather than reading a stale ring. */
	memset(s, MR__SUB_POISON, sizeof(*s));
#endif
	mr__free(s);
}

bool mr__sub_push(struct mr_sub *s, struct mr__event *ev)
{
	if (mr__sub_queued(s) >= s->usable)
		return false;
	return ring_push(s->q, ev);
}

bool mr__sub_push_reserved(struct mr_sub *s, struct mr__event *ev)
{
	return ring_push(s->q, ev);
}

bool mr__sub_wake(struct mr_sub *s)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&s->waiting, memory_order_relaxed) &&
	    atomic_exchange_explicit(&s->waiting, 0, memory_order_acquire)) {
		uint64_t one = 1;
		/* EAGAIN means the counter is already non-zero: the consumer wakes anyway. */
		/* waiting is only ever set after the fd exists (seq_cst): fd >= 0 here. */
		int fd = atomic_load_explicit(&s->efd, memory_order_relaxed);
		if (fd >= 0) {
			(void)!write(fd, &one, sizeof(one));
			return true;
		}
	}
	return false;
}

int mr_sub_next(mr_sub *s, const struct mr_event **ret)
{
	struct mr__event *ev;
	uint64_t drain;

	if (!s || !ret || mr__sub_check(s, "mr_sub_next") < 0)
		return -EINVAL;
	if (!ring_pop(s->q, &ev)) {
		/* Consume a stale wake-up before arming, so poll() means "new event". */
		int fd = atomic_load_explicit(&s->efd, memory_order_relaxed);
		if (fd >= 0) {
			(void)!read(fd, &drain, sizeof(drain));
			atomic_store(&s->waiting, 1);
		}
		if (!ring_pop(s->q, &ev))
			return -EAGAIN;
	}
	/*
	 * A subscriber that overran is caught up once it has drained half of
	 * its ring; tell the router, once, that the moment has come.
	 */
	if (MR__UNLIKELY(atomic_load_explicit(&s->wants_recovery, memory_order_relaxed) == 1) &&
	    mr__sub_queued(s) <= s->capacity / 2) {
		int expect = 1;
		uint64_t one = 1;
		/* EAGAIN: the counter is already non-zero, the router wakes anyway. */
		if (atomic_compare_exchange_strong(&s->wants_recovery, &expect, 2) && s->wake_efd >= 0)
			(void)!write(s->wake_efd, &one, sizeof(one));
	}
	*ret = &ev->pub;
	return 0;
}

/* Consumer side: the eventfd, made the first time it is needed. */
static int sub_efd(mr_sub *s)
{
	int fd = atomic_load(&s->efd);

	if (fd >= 0)
		return fd;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	atomic_store(&s->efd, fd);
	return fd;
}

int mr_sub_fd(mr_sub *s)
{
	if (!s || mr__sub_check(s, "mr_sub_fd") < 0)
		return -EINVAL;
	int fd = sub_efd(s);
	if (fd < 0)
		return fd;
	/* From now on an empty ring arms the wake-up; arm it now too. */
	atomic_store(&s->waiting, 1);
	return fd;
}

int mr_sub_wait(mr_sub *s, int timeout_ms)
{
	uint64_t deadline = 0, drain;
	struct pollfd pfd;

	if (!s || mr__sub_check(s, "mr_sub_wait") < 0)
		return -EINVAL;
	int fd = sub_efd(s);
	if (fd < 0)
		return fd;
	if (timeout_ms > 0)
		deadline = mr__now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		/*
		 * A count left from a wake-up whose event was read since would
		 * make poll() return at once with nothing queued: drain it
		 * before arming, then look at the ring (the consumer half of
		 * the Dekker pair in mr__sub_wake()).
		 */
		(void)!read(fd, &drain, sizeof(drain));
		atomic_store(&s->waiting, 1);
		if (mr__sub_queued(s))
			return 0;
		int wait_ms = timeout_ms;
		if (timeout_ms > 0) {
			uint64_t now = mr__now_ns();
			if (now >= deadline)
				return -ETIMEDOUT;
			wait_ms = (int)((deadline - now + 999999u) / 1000000u);
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		int n = poll(&pfd, 1, wait_ms);
		if (n < 0)
			return -errno;
		if (!n)
			return -ETIMEDOUT;
		/* Readable: an event came, or a wake-up raced with one read meanwhile. */
		if (mr__sub_queued(s))
			return 0;
		if (timeout_ms == 0)
			return -ETIMEDOUT;
	}
}

int mr_sub_stats(const mr_sub *s, struct mr_sub_stats *ret)
{
	if (!s || !ret || mr__sub_check(s, "mr_sub_stats") < 0)
		return -EINVAL;
	ret->delivered = atomic_load_explicit(&s->delivered, memory_order_relaxed);
	ret->dropped = atomic_load_explicit(&s->dropped, memory_order_relaxed);
	ret->overruns = atomic_load_explicit(&s->overruns, memory_order_relaxed);
	ret->snapshots = atomic_load_explicit(&s->snapshots, memory_order_relaxed);
	return 0;
}
