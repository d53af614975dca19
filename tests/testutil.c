/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/io_uring.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

bool tu_io_uring_works(void)
{
	struct io_uring_params params = { 0 };
	int fd = (int)syscall(__NR_io_uring_setup, 4, &params);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

const char *tu_expected_backend(const char *source, unsigned flags)
{
	const char *forced = getenv("MR_TEST_REACTOR");
	bool uring = strcmp(source, "fanotify") != 0;

	if (forced && *forced)
		uring = !strcmp(forced, "io_uring");
	else if (flags & MR_OPT_EPOLL)
		uring = false;
	else if (flags & MR_OPT_IO_URING)
		uring = true;
	return uring && tu_io_uring_works() ? "io_uring" : "epoll";
}

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000u /* 6.8 */
#endif

int tu_skip(const char *fmt, ...)
{
	va_list ap;

	fputs("SKIP: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	return T_EXIT_SKIP;
}

static char made_root[256];

/*
 * The directory lives on the host's /tmp even though the tmpfs on it is
 * only in our namespace: take it away when the test ends.
 */
static void remove_root(void)
{
	if (made_root[0]) {
		umount2(made_root, MNT_DETACH);
		rmdir(made_root);
	}
}

int tu_private_root(char *root, size_t len)
{
	if (geteuid() != 0)
		return tu_skip("needs root to make a private mount namespace");
	if (unshare(CLONE_NEWNS) < 0)
		return tu_skip("unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("make / private");
		return T_EXIT_FAIL;
	}
	/* A bare VM guest may have no /tmp yet. */
	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST) {
		perror("mkdir /tmp");
		return T_EXIT_FAIL;
	}
	snprintf(root, len, "/tmp/mr-test.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return T_EXIT_FAIL;
	}
	snprintf(made_root, sizeof(made_root), "%s", root);
	atexit(remove_root);
	if (mount("mr-test", root, "tmpfs", 0, "size=16m") < 0) {
		perror("mount tmpfs root");
		return T_EXIT_FAIL;
	}
	return 0;
}

const char *tu_path(char *out, size_t len, const char *root, const char *rel)
{
	snprintf(out, len, "%s/%s", root, rel);
	return out;
}

int tu_mkdir(const char *path)
{
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

int tu_router_new(const char *source, mr_router **ret)
{
	struct mr_opts o = {.size = sizeof(o), .source = source};
	int err = mr_router_new(&o, ret);

	if (err == -ENOSYS || err == -EINVAL)
		return tu_skip("the %s source is not available here", source ? source : "auto");
	if (err < 0) {
		fprintf(stderr, "mr_router_new(%s): %s\n", source ? source : "auto", strerror(-err));
		return T_EXIT_FAIL;
	}
	return 0;
}

int tu_router_on_private_root(const char *source, char *root, size_t len, mr_router **ret_router,
			      mr_sub **ret_sub)
{
	struct mr_sub_opts so = {.size = sizeof(so), .subtree = root};
	int err = tu_private_root(root, len);

	if (!err)
		err = tu_router_new(source, ret_router);
	if (err)
		return err;
	err = mr_subscribe(*ret_router, &so, ret_sub);
	if (err < 0) {
		fprintf(stderr, "mr_subscribe(%s): %s\n", root, strerror(-err));
		mr_router_free(*ret_router);
		return T_EXIT_FAIL;
	}
	return 0;
}

const struct mr_event *tu_next(mr_sub *s, int timeout_ms, bool markers)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		const struct mr_event *ev;
		if (mr_sub_next(s, &ev) == 0) {
			bool marker = ev->kind == MR_EVENT_RESYNC_BEGIN || ev->kind == MR_EVENT_RESYNC_END;
			if (!marker || markers)
				return ev;
			mr_event_unref(ev);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		long spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= timeout_ms)
			return NULL;
		mr_sub_wait(s, (int)(timeout_ms - spent));
	}
}

uint64_t tu_mnt_id(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID_UNIQUE, &sx) < 0)
		return 0;
	return sx.stx_mnt_id;
}
