/* SPDX-License-Identifier: MIT */
/*
 * The reactor: one io_uring for every fd the router reads.
 *
 * Reads use a provided buffer ring, so the kernel picks a buffer only when
 * data is there and one ring of buffers serves thousands of fds.  Where the
 * kernel has IORING_OP_READ_MULTISHOT (6.7) a single request keeps reading
 * an fd until it fails; elsewhere each completion re-arms a one-shot READ.
 * A doorbell (a POLLPRI watch on mountinfo) is one multishot poll that
 * completes at every wake-up of the file (reactor_dispatch.c says why).
 * Re-arms are queued and go to the kernel with the next submit, so a batch
 * of completions costs one io_uring_enter however many fds it touched.
 *
 * liburing 2.3 (Debian 12) predates READ_MULTISHOT and io_uring_setup_buf_ring,
 * so those SQEs and the ring registration are prepared by hand here.
 *
 * Where the io_uring cannot be set up (refused, or a kernel without
 * provided-buffer rings), or the caller asked for epoll (MR_OPT_EPOLL),
 * every call is forwarded to the epoll backend of reactor_poll.c instead:
 * the router and the sources carry on as before.
 *
 * This file sets the reactor up and tears it down; reactor_dispatch.c
 * arms the watches, submits, and hands each completion to its watch.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/reactor.h"
#include "internal.h"
#include "alloc.h"
#include "io/reactor_poll.h"
#include "io/reactor_uring.h"
#include "probe.h"

static atomic_int override;

void mr__reactor_override(enum mr__reactor_override o)
{
	atomic_store(&override, o);
}

static bool wants_epoll(const struct mr__reactor_opts *o)
{
	switch (atomic_load(&override)) {
	case MR__REACTOR_EPOLL:
		return true;
	case MR__REACTOR_IO_URING:
		return false;
	default:
		return o->epoll;
	}
}

/*
 * The io_uring and its provided-buffer ring.  Returns 0, or -errno with
 * nothing left set up: each such error means io_uring is not to be had
 * here (EPERM: kernel.io_uring_disabled or seccomp; ENOSYS; EINVAL from
 * every setup flag or from the buffer ring registration before 5.19;
 * ENOMEM: the ring's locked memory limit before 5.12).
 */
static int uring_setup(struct mr__reactor *re, unsigned entries)
{
	struct io_uring_params p = {0};
	int err;

	/*
	 * COOP_TASKRUN: completions are posted when we next enter the kernel
	 * rather than by interrupting the router thread; TASKRUN_FLAG (5.19)
	 * says when some wait for that, so long work can stop for them.  Not
	 * SINGLE_ISSUER: the ring is made on the caller's thread and driven by
	 * the router's.
	 */
	static const unsigned setups[] = {
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	err = -EINVAL;
	for (size_t i = 0; i < MR__ARRAY_SIZE(setups) && err == -EINVAL; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = setups[i];
		err = io_uring_queue_init_params(entries, &re->ring, &p);
	}
	if (err < 0)
		return err;

	struct io_uring_buf_reg reg = {
		.ring_addr = (uint64_t)(uintptr_t)re->br,
		.ring_entries = re->n_bufs,
		.bgid = MR__REACTOR_BGID,
	};
	err = io_uring_register_buf_ring(&re->ring, &reg, 0);
	if (err < 0) {
		io_uring_queue_exit(&re->ring);
		return err;
	}
	io_uring_buf_ring_init(re->br);
	for (unsigned i = 0; i < re->n_bufs; i++)
		io_uring_buf_ring_add(re->br, re->bufs + (size_t)i * re->buf_size, re->buf_size,
				      (unsigned short)i, io_uring_buf_ring_mask(re->n_bufs), (int)i);
	io_uring_buf_ring_advance(re->br, (int)re->n_bufs);
	return 0;
}

int mr__reactor_new(const struct mr__reactor_opts *o, struct mr__reactor **ret)
{
	struct mr__reactor *re;
	int err;

	re = mr__calloc(1, sizeof(*re));
	if (!re)
		return -ENOMEM;
	re->n_bufs = o->buffers ? o->buffers : 64;
	re->buf_size = o->buf_size ? o->buf_size : 16384;

	/* Our own memory first: its failure is an error, not a reason to fall back. */
	re->bufs = mr__malloc((size_t)re->n_bufs * re->buf_size);
	if (!re->bufs) {
		err = -ENOMEM;
		goto fail;
	}
	re->br_bytes = re->n_bufs * sizeof(struct io_uring_buf);
	re->br = mmap(NULL, re->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (re->br == MAP_FAILED) {
		err = -errno;
		re->br = NULL;
		goto fail;
	}

	if (wants_epoll(o) ||
	    uring_setup(re, o->entries ? o->entries : 256) < 0) {
		munmap(re->br, re->br_bytes);
		re->br = NULL;
		mr__free(re->bufs);
		re->bufs = NULL;
		err = mr__reactor_poll_new(o, &re->poll);
		if (err < 0)
			goto fail;
		*ret = re;
		return 0;
	}

	re->multishot_read = mr__probe()->read_multishot;
	*ret = re;
	return 0;
fail:
	if (re->br)
		munmap(re->br, re->br_bytes);
	mr__free(re->bufs);
	mr__free(re);
	return err;
}

void mr__reactor_free(struct mr__reactor *re)
{
	if (!re)
		return;
	if (re->poll) {
		mr__reactor_poll_free(re->poll);
		mr__free(re);
		return;
	}
	io_uring_queue_exit(&re->ring);
	munmap(re->br, re->br_bytes);
	mr__free(re->bufs);
	mr__free(re);
}

void mr__reactor_warm(const struct mr__reactor *re, struct mr__warm *w)
{
	mr__warm_add(w, re, sizeof(*re));
	if (re->poll) {
		mr__reactor_poll_warm(re->poll, w);
		return;
	}
	/* The completion queue's indexes: the first thing a reap reads. */
	mr__warm_add(w, re->ring.cq.khead, sizeof(*re->ring.cq.khead));
	mr__warm_add(w, re->ring.cq.ktail, sizeof(*re->ring.cq.ktail));
}

int mr__reactor_fd(const struct mr__reactor *re)
{
	return re->poll ? mr__reactor_poll_fd(re->poll) : re->ring.ring_fd;
}

void mr__reactor_stats(const struct mr__reactor *re, struct mr__reactor_stats *ret)
{
	if (re->poll) {
		mr__reactor_poll_stats(re->poll, ret);
		return;
	}
	*ret = re->stats;
}

const char *mr__reactor_backend(const struct mr__reactor *re)
{
	return re->poll ? "epoll" : "io_uring";
}
