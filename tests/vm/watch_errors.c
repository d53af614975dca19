/* SPDX-License-Identifier: MIT */
/*
 * watch_mount() argument checking: each bad argument gets its documented
 * error, and nothing is left behind.
 */
#include "vmtest.h"

static int wfd, rfd;

#define EXPECT_ERR(call, err)                                              \
	do {                                                               \
		errno = 0;                                                 \
		if ((call) != -1 || errno != (err))                        \
			FAILF("%s: want %s, got errno %d (%s)", #call,     \
			      #err, errno, strerror(errno));               \
	} while (0)

static int test_bad_flags(void)
{
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", AT_SYMLINK_NOFOLLOW, wfd, 0), EINVAL);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0x80000000u, wfd, 0), EINVAL);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", AT_REMOVEDIR, wfd, 0), EINVAL);
	return T_PASS;
}

static int test_bad_watch_id(void)
{
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, wfd, 256), EINVAL);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, wfd, -2), EINVAL);
	return T_PASS;
}

/* The 2020 series returned 0 here: the error was never stored. */
static int test_bad_fd(void)
{
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, -1, 0), EBADF);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, 1000, 0), EBADF);
	return T_PASS;
}

static int test_not_a_queue(void)
{
	int p[2], f;

	CHECK(pipe(p) == 0);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, p[1], 0), EINVAL);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, p[0], 0), EINVAL);
	close(p[0]);
	close(p[1]);
	f = open("file", O_RDWR | O_CREAT, 0644);
	CHECK(f >= 0);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, f, 0), EINVAL);
	close(f);
	return T_PASS;
}

static int test_bad_path(void)
{
	EXPECT_ERR(watch_mount(AT_FDCWD, "file", 0, wfd, 0), ENOTDIR);
	EXPECT_ERR(watch_mount(AT_FDCWD, "nonexistent", 0, wfd, 0), ENOENT);
	EXPECT_ERR(watch_mount(AT_FDCWD, "", 0, wfd, 0), ENOENT);
	EXPECT_ERR(watch_mount(AT_FDCWD, NULL, 0, wfd, 0), EFAULT);
	return T_PASS;
}

static int test_empty_path(void)
{
	int d = open("d", O_RDONLY | O_DIRECTORY);

	CHECK(d >= 0);
	CHECK(watch_mount(d, "", AT_EMPTY_PATH, wfd, 5) == 0);
	CHECK(watch_mount(d, "", AT_EMPTY_PATH, wfd, -1) == 0);
	close(d);
	return T_PASS;
}

static int test_duplicate_and_missing(void)
{
	CHECK(watch_mount(AT_FDCWD, "d", 0, wfd, 1) == 0);
	/* Same queue, same directory: one watch is enough. */
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, wfd, 2), EBUSY);
	CHECK(watch_mount(AT_FDCWD, "d", 0, wfd, -1) == 0);
	EXPECT_ERR(watch_mount(AT_FDCWD, "d", 0, wfd, -1), EBADSLT);
	EXPECT_ERR(watch_mount(AT_FDCWD, "e", 0, wfd, -1), EBADSLT);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	CHECK(mkdir("d", 0755) == 0 && mkdir("e", 0755) == 0);
	wfd = make_queue(16, &rfd);
	RUN(test_bad_flags);
	RUN(test_bad_watch_id);
	RUN(test_bad_fd);
	RUN(test_not_a_queue);
	RUN(test_bad_path);
	RUN(test_empty_path);
	RUN(test_duplicate_and_missing);
	return T_PASS;
}
