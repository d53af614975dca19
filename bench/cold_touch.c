/* SPDX-License-Identifier: MIT */
/*
 * cold_touch: what it costs to touch 64 cache lines right after a sleep, by
 * how many pages they are spread over.
 *
 * A watcher on a quiet table sleeps between changes, and wakes with its
 * caches and TLB cold.  The question this answers for BENCHMARKS.md is
 * which of the two its cost follows: the lines it touches, or the pages
 * they sit on (each a page-table walk; on a virtual machine a walk of the
 * guest's and the host's tables).  The same 64 lines are read after each
 * sleep, as a chain of dependent loads (a pointer-chasing library's path)
 * and as independent ones, spread over 1 to 64 pages 2 MiB apart, so that
 * no two pages share a page-table page.  --huge asks for transparent huge
 * pages (MADV_HUGEPAGE) and says how much of the region got them.
 *
 * Usage: cold_touch [--sleep-ms MS] [--rounds R] [--huge]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "watcher_cost.h"

#define LINES 64
#define STRIDE (2u << 20) /* a page's distance from the next: its own page-table page */
#define REGION ((size_t)LINES * STRIDE)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Line @i: on page i % @pages, 128 bytes after the line before it there (past pair prefetch). */
static char *line_at(char *base, unsigned i, unsigned pages)
{
	return base + (size_t)(i % pages) * STRIDE + (size_t)(i / pages) * 128;
}

/* @s as a whole number from @min up, or -1. */
static long number(const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v >= min && v <= 1000000 ? v : -1;
}

static unsigned long huge_kib(void)
{
	char buf[256];
	unsigned long kib = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "AnonHugePages: %lu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	static const unsigned spreads[] = {1, 4, 16, 32, 64};
	unsigned sleep_ms = 30, rounds = 100;
	int huge = 0;

	for (int i = 1; i < argc; i++) {
		long v = i + 1 < argc ? number(argv[i + 1], 0) : -1;
		if (!strcmp(argv[i], "--huge")) {
			huge = 1;
		} else if (!strcmp(argv[i], "--sleep-ms") && v >= 0) {
			sleep_ms = (unsigned)v;
			i++;
		} else if (!strcmp(argv[i], "--rounds") && v >= 1) {
			rounds = (unsigned)v;
			i++;
		} else {
			fprintf(stderr, "usage: cold_touch [--sleep-ms MS] [--rounds R] [--huge]\n");
			return 2;
		}
	}
	pin_to((int)sysconf(_SC_NPROCESSORS_ONLN) - 1, "cold_touch");
	/* 2 MiB aligned, so that --huge can map every page of the region huge. */
	char *map = mmap(NULL, REGION + STRIDE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "cold_touch: mmap: %s\n", strerror(errno));
		return 1;
	}
	char *base = (char *)(((uintptr_t)map + STRIDE - 1) & ~(uintptr_t)(STRIDE - 1));
	if (huge && madvise(base, REGION, MADV_HUGEPAGE) < 0)
		fprintf(stderr, "cold_touch: MADV_HUGEPAGE: %s\n", strerror(errno));
	memset(base, 0, REGION); /* every page present: no fault is timed */

	double *dep = calloc(rounds, sizeof(double)), *ind = calloc(rounds, sizeof(double));
	if (!dep || !ind)
		return 1;
	printf("%u rounds, %u ms asleep before each; AnonHugePages %lu kB of %zu kB\n\n"
	       "| pages | dependent loads, ns | per line | independent loads, ns | per line |\n"
	       "|---:|---:|---:|---:|---:|\n",
	       rounds, sleep_ms, huge_kib(), REGION / 1024);
	for (size_t s = 0; s < sizeof(spreads) / sizeof(spreads[0]); s++) {
		unsigned pages = spreads[s];
		char *lines[LINES];
		for (unsigned i = 0; i < LINES; i++)
			lines[i] = line_at(base, i, pages);
		for (unsigned i = 0; i < LINES; i++)
			*(char **)lines[i] = i + 1 < LINES ? lines[i + 1] : NULL;
		for (unsigned r = 0; r < rounds; r++) {
			volatile uintptr_t sink = 0;
			usleep(sleep_ms * 1000);
			now_ns(); /* the clock's own first touch after the sleep is not timed */
			uint64_t t0 = now_ns();
			for (char *p = lines[0]; p; p = *(char **)p)
				sink += 1;
			uint64_t t1 = now_ns();
			usleep(sleep_ms * 1000);
			now_ns();
			uint64_t t2 = now_ns();
			for (unsigned i = 0; i < LINES; i++)
				sink += (uintptr_t)*(char *volatile *)lines[i];
			uint64_t t3 = now_ns();
			dep[r] = (double)(t1 - t0);
			ind[r] = (double)(t3 - t2);
		}
		double d = median(dep, rounds), n = median(ind, rounds);
		printf("| %u | %.0f | %.1f | %.0f | %.1f |\n", pages, d, d / LINES, n, n / LINES);
	}
	return 0;
}
