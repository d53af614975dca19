/* SPDX-License-Identifier: MIT */
/*
 * The per-user watch limit: the watch_queue core counts every watch a user
 * holds against RLIMIT_NOFILE (kernel/watch_queue.c, add_one_watch(),
 * upstream since 5.8) and mount watches go through it: -EAGAIN at the limit.
 */
#include "vmtest.h"
#include <sys/resource.h>

#define LIMIT 8
#define DIRS 20

static int child(void)
{
	struct rlimit rl = { LIMIT, LIMIT };
	int r, w, ok = 0, i;

	if (setgid(65534) < 0 || setuid(65534) < 0)
		FAILF("setuid: %s", strerror(errno));
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	w = make_queue(16, &r);
	for (i = 0; i < DIRS; i++) {
		char p[16];

		snprintf(p, sizeof(p), "l%d", i);
		if (watch_mount(AT_FDCWD, p, 0, w, i) == 0) {
			ok++;
			continue;
		}
		if (errno != EAGAIN)
			FAILF("watch %d: want EAGAIN, got %s", i, strerror(errno));
		break;
	}
	if (ok != LIMIT)
		FAILF("%d watches before EAGAIN, want %d", ok, LIMIT);
	/* Removing one makes room for one. */
	CHECK(watch_mount(AT_FDCWD, "l0", 0, w, -1) == 0);
	/* The count drops when the watch is freed, after an RCU grace period. */
	for (i = 0; i < 100; i++) {
		if (watch_mount(AT_FDCWD, "l19", 0, w, 19) == 0)
			break;
		CHECK(errno == EAGAIN);
		usleep(10000);
	}
	CHECK(i < 100);
	errno = 0;
	CHECK(watch_mount(AT_FDCWD, "l18", 0, w, 18) < 0 && errno == EAGAIN);
	return T_PASS;
}

static int test_limit(void)
{
	int status;
	pid_t pid;

	for (int i = 0; i < DIRS; i++) {
		char p[16];

		snprintf(p, sizeof(p), "l%d", i);
		CHECK(mkdir(p, 0755) == 0);
	}
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child());
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	CHECK(chmod(".", 0755) == 0);
	RUN(test_limit);
	return T_PASS;
}
