/* SPDX-License-Identifier: MIT */
/*
 * Allocation through jemalloc's own entry points (mallocx/dallocx) rather
 * than malloc: events are allocated on the router thread and freed on
 * subscriber threads, a pattern jemalloc's per-thread caches handle without
 * a global lock, and it keeps the library's heap behaviour the same whatever
 * malloc the embedding program uses.
 *
 * The jemalloc is the library's own: CMakeLists.txt links the members of
 * libjemalloc_pic.a into the library's one object and makes their symbols
 * local, so malloc, free and operator new stay the program's, and this
 * jemalloc's arenas hold the library's memory alone (tests/test_embed.c).
 *
 * Sanitizer builds (MR_SANITIZE) use the C library's allocator instead:
 * AddressSanitizer and ThreadSanitizer only see allocations they intercept,
 * and would otherwise miss use-after-free or report memory that jemalloc
 * recycles between threads as a race.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jemalloc/jemalloc.h>

#include "alloc.h"


#ifdef MR_TEST_HOOKS
/*
 * Test builds only (never the shipped library): allocation failure on
 * demand.  Every allocation counts; the one whose number equals
 * mr__alloc_fail_at fails (0: none).  Atomic: allocations happen on the
 * router and subscriber threads alike.
 */
_Atomic uint64_t mr__alloc_count, mr__alloc_fail_at;
_Atomic bool mr__alloc_fail_all; /* every one from mr__alloc_fail_at on */

static bool inject_failure(void)
{
	uint64_t n = atomic_fetch_add_explicit(&mr__alloc_count, 1, memory_order_relaxed) + 1;
	uint64_t at = atomic_load_explicit(&mr__alloc_fail_at, memory_order_relaxed);

	return at && (n == at || (n > at && atomic_load_explicit(&mr__alloc_fail_all,
								  memory_order_relaxed)));
}
#define INJECT_FAILURE() inject_failure()
#else
#define INJECT_FAILURE() false
#endif

#ifdef MR_SANITIZER_ALLOC
void *mr__malloc(size_t n)
{
	if (INJECT_FAILURE())
		return NULL;
	return malloc(n ? n : 1);
}

void *mr__calloc(size_t n, size_t size)
{
	if (INJECT_FAILURE())
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *mr__realloc(void *p, size_t n)
{
	if (INJECT_FAILURE())
		return NULL;
	return realloc(p, n ? n : 1);
}

void mr__free(void *p)
{
	free(p);
}
#else
void *mr__malloc(size_t n)
{
	if (INJECT_FAILURE())
		return NULL;
	return mallocx(n ? n : 1, 0);
}

void *mr__calloc(size_t n, size_t size)
{
	size_t total;

	if (INJECT_FAILURE())
		return NULL;
	if (__builtin_mul_overflow(n, size, &total))
		return NULL;
	return mallocx(total ? total : 1, MALLOCX_ZERO);
}

void *mr__realloc(void *p, size_t n)
{
	if (!p)
		return mr__malloc(n);
	if (INJECT_FAILURE())
		return NULL;
	return rallocx(p, n ? n : 1, 0);
}

void mr__free(void *p)
{
	if (p)
		dallocx(p, 0);
}
#endif

char *mr__strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = mr__malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}
