/* SPDX-License-Identifier: MIT */
/* The router's two clocks: wall time for events and deadlines, its own CPU time for budgets. */
#include <time.h>

#include "clock.h"


static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t mr__now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t mr__thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}
