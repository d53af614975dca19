/* SPDX-License-Identifier: MIT */
/*
 * Embedding: a program that links the library keeps its own malloc, and the
 * library's memory stays out of the program's heap.
 *
 * Built three ways (tests/CMakeLists.txt):
 *   test_embed_libc       static library, the program uses glibc's malloc;
 *   test_embed_own_malloc static library, the program defines malloc and
 *                         friends itself (over glibc's __libc_* entry
 *                         points), counting the blocks it hands out;
 *   test_embed_shared     the shared library, glibc's malloc.
 * Public API only.  A router is made without a namespace (no kernel feature
 * but io_uring, skipped without it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#ifdef MR_TEST_OWN_MALLOC
/* glibc's own entry points, exported for exactly this kind of wrapper. */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

static atomic_long calls; /* blocks handed out by this file's malloc */
static atomic_long live;  /* of those, not yet freed */

static void *counted(void *p)
{
	if (p) {
		atomic_fetch_add(&calls, 1);
		atomic_fetch_add(&live, 1);
	}
	return p;
}

void *malloc(size_t n)
{
	return counted(__libc_malloc(n));
}

void *calloc(size_t n, size_t size)
{
	return counted(__libc_calloc(n, size));
}

void *realloc(void *p, size_t n)
{
	void *q = __libc_realloc(p, n);

	if (!p)
		return counted(q);
	if (!q && n == 0) /* glibc freed the block */
		atomic_fetch_sub(&live, 1);
	return q;
}

void *memalign(size_t align, size_t n)
{
	return counted(__libc_memalign(align, n));
}

void *aligned_alloc(size_t align, size_t n)
{
	return counted(__libc_memalign(align, n));
}

int posix_memalign(void **ret, size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);

	if (!p)
		return ENOMEM;
	*ret = counted(p);
	return 0;
}

void *valloc(size_t n)
{
	return counted(__libc_memalign(4096, n));
}

void free(void *p)
{
	if (p) {
		atomic_fetch_sub(&live, 1);
		__libc_free(p);
	}
}
#endif

/* The library's allocator, whichever the program's is, must not be it. */
static int new_router(mr_router **ret)
{
	struct mr_opts o = {.size = sizeof(o), .flags = MR_OPT_NO_SELF_NS, .source = "mountinfo"};
	int err = mr_router_new(&o, ret);

	if (err == -ENOSYS || err == -EPERM || err == -EACCES) {
		exit(tu_skip("no io_uring for a router (%s)", strerror(-err)));
	}
	return err;
}

#ifdef MR_TEST_OWN_MALLOC
/* The program's calls, and glibc's on its behalf, reach its own malloc. */
static int test_own_malloc_is_used(void)
{
	void *(*volatile alloc)(size_t) = malloc;
	long before = atomic_load(&calls);

	void *p = alloc(100);
	char *s = strdup("kept by the program's malloc");
	CHECK(p && s);
	CHECK(atomic_load(&calls) == before + 2);
	free(p);
	free(s);
	return 0;
}

/*
 * A live router holds dozens of the library's blocks (router, io_uring
 * buffers, rings); none may be the program's.  liburing's probe borrows a
 * block from the program's malloc for the duration of one call and gives it
 * back, so the measure is blocks still live, not calls.
 */
static int test_router_memory_is_not_the_programs(void)
{
	mr_router *r;
	long live_before = atomic_load(&live);

	CHECK(new_router(&r) == 0);
	long held = atomic_load(&live) - live_before;
	mr_router_free(r);
	if (held != 0)
		fprintf(stderr, "a live router holds %ld blocks of the program's malloc\n", held);
	CHECK(held == 0);
	return 0;
}
#else
/* The program's malloc is glibc's: the symbol resolves into libc, and glibc counts the block. */
static int test_malloc_is_glibc(void)
{
	void *(*volatile alloc)(size_t) = malloc;
	Dl_info info;

	CHECK(dladdr((void *)alloc, &info) && info.dli_fname);
	if (!strstr(info.dli_fname, "/libc.so")) {
		fprintf(stderr, "malloc comes from %s, not libc\n", info.dli_fname);
		return T_EXIT_FAIL;
	}
	size_t before = mallinfo2().uordblks;
	void *p = alloc(100000);
	CHECK(p);
	memset(p, 1, 100000);
	CHECK(mallinfo2().uordblks >= before + 100000);
	free(p);
	return 0;
}

/* A live router's memory is not in glibc's heap. */
static int test_router_memory_is_not_glibcs(void)
{
	mr_router *r;

	/* Warm up once: glibc's per-thread cache and liburing's probe, made on first use. */
	CHECK(new_router(&r) == 0);
	mr_router_free(r);

	size_t before = mallinfo2().uordblks;
	CHECK(new_router(&r) == 0);
	size_t held = mallinfo2().uordblks - before;
	mr_router_free(r);
	if (held)
		fprintf(stderr, "a live router holds %zu bytes of glibc's heap\n", held);
	CHECK(held == 0);
	return 0;
}
#endif

int main(void)
{
	int fails = 0;

#ifdef MR_TEST_OWN_MALLOC
	fails += RUN(test_own_malloc_is_used);
	fails += RUN(test_router_memory_is_not_the_programs);
#else
	fails += RUN(test_malloc_is_glibc);
	fails += RUN(test_router_memory_is_not_glibcs);
#endif
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
