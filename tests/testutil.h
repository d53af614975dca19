/* SPDX-License-Identifier: MIT */
/* Helpers shared by the test binaries: checks, skips, private namespaces. */
#ifndef MR_TESTUTIL_H
#define MR_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mountrouter.h"

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/* Fails the calling test function (returning 1) with the expression and line. */
#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                \
			return T_EXIT_FAIL;                                            \
		}                                                                      \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                              \
	do {                                                                            \
		uint64_t a_ = (a), b_ = (b);                                            \
		if (a_ != b_) {                                                         \
			fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", __FILE__, \
				__LINE__, #a, #b, (unsigned long long)a_,               \
				(unsigned long long)b_);                                \
			return T_EXIT_FAIL;                                             \
		}                                                                       \
	} while (0)

#define CHECK_STR(a, b)                                                                 \
	do {                                                                            \
		const char *a_ = (a), *b_ = (b);                                        \
		if (strcmp(a_, b_)) {                                                   \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",   \
				__FILE__, __LINE__, #a, #b, a_, b_);                    \
			return T_EXIT_FAIL;                                             \
		}                                                                       \
	} while (0)

/* Runs one test function, printing its name and verdict; returns its status. */
#define RUN(fn)                                                                     \
	({                                                                          \
		int rc_ = fn();                                                     \
		fprintf(stderr, "%-40s %s\n", #fn,                                  \
			rc_ == T_EXIT_PASS ? "ok" : rc_ == T_EXIT_SKIP ? "skip" : "FAIL"); \
		rc_;                                                                \
	})

/* Prints one line saying why and returns T_EXIT_SKIP. */
int tu_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* io_uring_setup works here (asked directly, not through the library). */
bool tu_io_uring_works(void);
/*
 * The backend a router made with @flags on @source reads through here:
 * MR_TEST_REACTOR's if set, else the source's own (epoll for fanotify,
 * io_uring for the others; MR_OPT_EPOLL and MR_OPT_IO_URING override it),
 * epoll wherever io_uring cannot be set up.
 */
const char *tu_expected_backend(const char *source, unsigned flags);

/*
 * Moves the process into a new private mount namespace with a tmpfs at a
 * fresh directory under /tmp, whose path goes to @root.  Returns 0,
 * T_EXIT_SKIP when namespaces are not allowed here, or T_EXIT_FAIL.
 */
int tu_private_root(char *root, size_t len);

/*
 * mr_router_new() for @source (NULL: "auto") with no flags: 0 with the
 * router in *ret, T_EXIT_SKIP (one line said) when the source is not
 * available here, or T_EXIT_FAIL (the error said).
 */
int tu_router_new(const char *source, mr_router **ret);

/*
 * tu_private_root(), tu_router_new(), then a subscription to the whole
 * root for every kind in *ret_sub: 0, T_EXIT_SKIP or T_EXIT_FAIL.
 */
int tu_router_on_private_root(const char *source, char *root, size_t len, mr_router **ret_router,
			      mr_sub **ret_sub);

/* Joins @root and @rel ("a/b") into @out. */
const char *tu_path(char *out, size_t len, const char *root, const char *rel);

/* mkdir -p for one level under an existing directory; 0 or -errno. */
int tu_mkdir(const char *path);

/*
 * Waits (up to @timeout_ms) for the next event of @s that is not a
 * resync/overrun marker unless @markers; NULL on timeout.
 */
const struct mr_event *tu_next(mr_sub *s, int timeout_ms, bool markers);

/* The 64-bit unique mount ID of the mount at @path (statx), 0 on failure. */
uint64_t tu_mnt_id(const char *path);

#endif
