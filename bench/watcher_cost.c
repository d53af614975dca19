/* SPDX-License-Identifier: MIT */
/*
 * How the one-change-at-a-time benchmarks measure a watcher process.
 *
 * Why pin: the driver runs on the first CPU and each watcher on the last,
 * so every watcher is woken across CPUs the same way each time, instead of
 * wherever the scheduler placed it, which on two CPUs moved the floor
 * loop's cost per change by 2-3x from one run to the next.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "watcher_cost.h"

uint64_t process_cpu_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) != 0 || clock_gettime(clk, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pin_to(int cpu, const char *who)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fprintf(stderr, "%s: not pinned to CPU %d: %s\n", who, cpu, strerror(errno));
}

void wait_quiet(pid_t pid, uint64_t (*cpu_ns)(pid_t))
{
	for (int t = 0; t < 200; t++) {
		uint64_t c0 = cpu_ns(pid);
		usleep(50000);
		if (cpu_ns(pid) - c0 < 500000)
			return;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, unsigned n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double percentile(double *v, unsigned n, unsigned pct)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	unsigned i = (n * pct) / 100;
	return v[i < n ? i : n - 1];
}
