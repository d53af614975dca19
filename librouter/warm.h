/* SPDX-License-Identifier: MIT */
/*
 * A warm set: the cache lines a change used, loaded all at once ahead of
 * the next change.
 *
 * On a quiet table the router sleeps between changes, long enough for its
 * state to leave the caches and the TLB.  Woken, it would touch that state
 * one line at a time, and each line is a miss the next waits for: about
 * 1 us each on a virtual machine, whose misses walk the guest's and the
 * host's page tables (BENCHMARKS.md, "the router's path stage by stage").
 * So after each batch of changes the router notes the lines the batch used
 * (router/warm.c asks each module for its own), and at the next wake-up it
 * prefetches them all before the first system call: their misses overlap
 * with each other and with the read(2) of the record, not with the work.
 *
 * Prefetching is a hint: it never faults, so a line whose owner has since
 * been freed costs nothing but the load.
 */
#ifndef MR_WARM_H
#define MR_WARM_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Lines a change uses on one namespace with a few subscribers: about 40. */
#define MR__WARM_MAX 64

struct mr__warm {
	const void *line[MR__WARM_MAX];
	unsigned n;
};

/* Notes every line of [@p, @p + @n); what does not fit is left out. */
static inline void mr__warm_add(struct mr__warm *w, const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(MR__CACHELINE - 1);

	if (!p)
		return;
	for (; a < (uintptr_t)p + n && w->n < MR__WARM_MAX; a += MR__CACHELINE)
		w->line[w->n++] = (const void *)a;
}

/*
 * Starts loading every noted line; returns before any has arrived.  For
 * reading: some lines are shared with subscriber threads, and asking for
 * them to write would take them away from their readers.
 */
static inline void mr__warm_prefetch(const struct mr__warm *w)
{
	for (unsigned i = 0; i < w->n; i++)
		__builtin_prefetch(w->line[i], 0, 3);
}

#endif /* MR_WARM_H */
