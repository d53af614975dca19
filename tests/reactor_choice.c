/* SPDX-License-Identifier: MIT */
/*
 * Linked into every test binary: MR_TEST_REACTOR=epoll makes each router
 * the test creates read through the epoll backend, as where io_uring is
 * refused, so that the same tests prove that backend (ctest's *_epoll
 * variants) and run under valgrind, which delivers no io_uring
 * completions.  Before main, so no router exists yet.
 */
#include <stdlib.h>
#include <string.h>

#include "testing.h"

__attribute__((constructor)) static void reactor_choice(void)
{
	const char *v = getenv("MR_TEST_REACTOR");

	if (v && !strcmp(v, "epoll"))
		mr__testing_reactor_force_poll(true);
}
