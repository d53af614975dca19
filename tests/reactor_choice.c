/* SPDX-License-Identifier: MIT */
/*
 * Linked into every test binary: MR_TEST_REACTOR=epoll or =io_uring makes
 * each router the test creates read through that backend, whatever its
 * source would choose, so that the same tests prove both (ctest's
 * *_io_uring variants; valgrind, which delivers no io_uring completions,
 * runs them on epoll).  Before main, so no router exists yet.
 */
#include <stdio.h>
#include <stdlib.h>

#include "testing.h"

__attribute__((constructor)) static void reactor_choice(void)
{
	const char *v = getenv("MR_TEST_REACTOR");

	if (v && *v && mr__testing_reactor_force(v) < 0) {
		fprintf(stderr, "MR_TEST_REACTOR=%s: not a backend (epoll, io_uring)\n", v);
		exit(1);
	}
}
