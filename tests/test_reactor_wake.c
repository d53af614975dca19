/* SPDX-License-Identifier: MIT */
/*
 * A wake-up that arrives while the router drains its commands is not lost,
 * on either reactor backend.  The router's loop runs its commands (the
 * reap's @before) and then hands the wake eventfd's completion to its
 * watch; another thread that pushes a command right after that drain kicks
 * the eventfd again.  That kick must still wake the next wait: if the
 * eventfd were read after @before (as the epoll backend once did), the
 * read would take both kicks, and the command would sit on its stack until
 * some unrelated event woke the router.
 *
 * Here @before kicks the eventfd itself, at exactly that moment.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "io/reactor.h"
#include "testing.h"
#include "testutil.h"

struct kick {
	struct mr__watch w;
	int reads;      /* completions handed to the watch */
	int kicks_left; /* kicks @before still makes */
	bool kick_failed;
};

static void on_read(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct kick *k = (struct kick *)w;

	(void)buf;
	if (res == (int)sizeof(uint64_t) && len == sizeof(uint64_t))
		k->reads++;
}

/* A command pushed, and its wake-up written, just as the router drained. */
static void kick_during_drain(void *arg)
{
	struct kick *k = arg;
	uint64_t one = 1;

	if (k->kicks_left > 0) {
		k->kicks_left--;
		if (write(k->w.fd, &one, sizeof(one)) != sizeof(one))
			k->kick_failed = true;
	}
}

/* The reactor has something to reap within @ms: what the router's wait sees. */
static bool wakes_within(struct mr__reactor *re, int ms)
{
	struct pollfd p = {.fd = mr__reactor_fd(re), .events = POLLIN};

	return poll(&p, 1, ms) > 0;
}

static int run(bool epoll)
{
	struct mr__reactor_opts ro = {.entries = 16, .buffers = 16, .buf_size = 4096};
	struct mr__reactor *re;
	struct kick k = {.kicks_left = 1};
	uint64_t one = 1;

	mr__testing_reactor_force(epoll ? "epoll" : "io_uring");
	CHECK(mr__reactor_new(&ro, &re) == 0);
	if (!epoll && strcmp(mr__reactor_backend(re), "io_uring")) {
		mr__reactor_free(re);
		return tu_skip("io_uring cannot be set up here");
	}
	k.w = (struct mr__watch){.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
				 .mode = MR__WATCH_READ,
				 .fn = on_read};
	CHECK(k.w.fd >= 0);
	CHECK(mr__reactor_add(re, &k.w) == 0);
	CHECK(mr__reactor_submit(re, false) == 0);

	/* The first wake-up, and a second one made while the router drains. */
	CHECK(write(k.w.fd, &one, sizeof(one)) == sizeof(one));
	CHECK(wakes_within(re, 2000));
	mr__reactor_reap(re, kick_during_drain, &k);
	CHECK(k.reads >= 1 && k.kicks_left == 0 && !k.kick_failed);

	/*
	 * The second is handed over in the same reap (io_uring's multishot
	 * read completes again at once), or wakes the next wait.
	 */
	if (k.reads == 1) {
		CHECK(mr__reactor_submit(re, false) == 0);
		CHECK(wakes_within(re, 2000));
		mr__reactor_reap(re, NULL, NULL);
	}
	CHECK(k.reads == 2);

	/* Nothing more: the counter was read to zero. */
	CHECK(mr__reactor_submit(re, false) == 0);
	CHECK(!wakes_within(re, 100));

	mr__reactor_remove(re, &k.w);
	CHECK(mr__reactor_drain(re, 2000) == 0);
	close(k.w.fd);
	mr__reactor_free(re);
	mr__testing_reactor_force(NULL);
	return 0;
}

static int test_io_uring(void)
{
	return run(false);
}

static int test_epoll(void)
{
	return run(true);
}

int main(void)
{
	int fail = 0;

	fail |= RUN(test_io_uring) == T_EXIT_FAIL;
	fail |= RUN(test_epoll) == T_EXIT_FAIL;
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
