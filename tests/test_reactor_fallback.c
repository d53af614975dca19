/* SPDX-License-Identifier: MIT */
/*
 * Where io_uring_setup is refused (kernel.io_uring_disabled=2, a seccomp
 * filter), the router reads its fds through epoll instead, and events are
 * still delivered.  The refusal is a seccomp filter in a child process
 * (io_uring_setup returns EPERM, as with io_uring_disabled=2), so nothing
 * on the host changes.  In the child, for each source the kernel has:
 *  - the router is made, on epoll;
 *  - on its own thread, a mount, a remount read-only and an umount in a
 *    private namespace are each reported;
 *  - driven from a caller's poll(2) loop on mr_router_fd(), the same: the
 *    caller's poll of the epoll fd must not use up mountinfo's POLLPRI.
 * Without the filter, this kernel's router is on io_uring (unless the
 * test runs with MR_TEST_REACTOR=epoll), so the choice is the refusal's.
 * A router made with MR_OPT_EPOLL reads through epoll with io_uring at
 * hand, and delivers the same events both ways.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testing.h"
#include "testutil.h"

static const char *const sources[] = { "fanotify", "listmount", "mountinfo" };
static char root[256];

static int refuse_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -1;
	return 0;
}

/* The next change event of @s, dispatching the router from a poll(2) loop when @r. */
static const struct mr_event *next_event(mr_router *r, mr_sub *s)
{
	if (!r)
		return tu_next(s, 5000, false);
	struct pollfd pfd = { .fd = mr_router_fd(r), .events = POLLIN };
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		const struct mr_event *ev;
		while (mr_sub_next(s, &ev) == 0) {
			if (ev->kind <= MR_EVENT_EXPIRY)
				return ev;
			mr_event_unref(ev);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > 5000)
			return NULL;
		poll(&pfd, 1, 100);
		mr_router_dispatch(r);
	}
}

static int expect(mr_router *r, mr_sub *s, uint32_t kind, const char *path)
{
	const struct mr_event *ev = next_event(r, s);

	if (!ev) {
		fprintf(stderr, "timed out waiting for %s %s\n", mr_event_kind_name(kind), path);
		return T_EXIT_FAIL;
	}
	int ok = ev->kind == kind && !strcmp(ev->path, path);
	if (!ok)
		fprintf(stderr, "expected %s %s, got %s %s\n", mr_event_kind_name(kind), path,
			mr_event_kind_name(ev->kind), ev->path);
	mr_event_unref(ev);
	return ok ? 0 : T_EXIT_FAIL;
}

/* One source: mount, remount read-only, umount, each reported. */
static int events_delivered(const char *source, bool own_loop, unsigned flags)
{
	struct mr_opts o = { .size = sizeof(o), .flags = flags, .source = source };
	struct mr_sub_opts so = { .size = sizeof(so), .subtree = root };
	mr_router *r = NULL;
	mr_sub *s = NULL;
	char p[512];
	int err = mr_router_new(&o, &r);

	if (err == -ENOSYS)
		return T_EXIT_SKIP;
	CHECK(err == 0);
	CHECK_STR(mr__testing_reactor_backend(r), "epoll");
	CHECK(mr_subscribe(r, &so, &s) == 0);
	if (!own_loop)
		CHECK(mr_router_start(r) == 0);
	else
		CHECK(mr_router_dispatch(r) >= 0);
	/* Let the subscription take effect before the first change. */
	const struct mr_event *ev;
	while (!own_loop && mr_sub_wait(s, 50) == 0 && mr_sub_next(s, &ev) == 0)
		mr_event_unref(ev);

	tu_path(p, sizeof(p), root, "f");
	CHECK(tu_mkdir(p) == 0 || errno == EEXIST);
	CHECK(mount("fallback", p, "tmpfs", 0, "size=1m") == 0);
	CHECK(expect(own_loop ? r : NULL, s, MR_EVENT_MOUNT, p) == 0);
	CHECK(mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	CHECK(expect(own_loop ? r : NULL, s, MR_EVENT_READONLY, p) == 0);
	CHECK(umount(p) == 0);
	CHECK(expect(own_loop ? r : NULL, s, MR_EVENT_UNMOUNT, p) == 0);
	mr_unsubscribe(s);
	mr_router_free(r);
	return 0;
}

static void child(void)
{
	int ran = 0;

	alarm(60); /* a hang fails the test by signal */
	if (refuse_io_uring() < 0)
		_exit(77);
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		for (int own_loop = 0; own_loop < 2; own_loop++) {
			int rc = events_delivered(sources[i], own_loop, 0);
			if (rc == T_EXIT_FAIL) {
				fprintf(stderr, "%s, %s: FAIL\n", sources[i],
					own_loop ? "caller's poll loop" : "router thread");
				_exit(1);
			}
			ran += rc == 0;
			if (rc == 0)
				fprintf(stderr, "  %s, %s: events delivered on epoll\n", sources[i],
					own_loop ? "caller's poll loop" : "router thread");
		}
	_exit(ran ? 0 : 77);
}

static int test_refused_io_uring(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		child();
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return tu_skip("seccomp filters, or every source, are missing here");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

/*
 * Without the refusal the router is on io_uring wherever io_uring_setup
 * works here (asked directly), and on epoll where it does not.
 */
static int test_io_uring_when_allowed(void)
{
	struct mr_opts o = { .size = sizeof(o), .source = "mountinfo" };
	struct io_uring_params params = { 0 };
	const char *forced = getenv("MR_TEST_REACTOR");
	mr_router *r = NULL;
	int fd = (int)syscall(__NR_io_uring_setup, 4, &params);

	if (fd >= 0)
		close(fd);
	CHECK(mr_router_new(&o, &r) == 0);
	if ((forced && !strcmp(forced, "epoll")) || fd < 0)
		CHECK_STR(mr__testing_reactor_backend(r), "epoll");
	else
		CHECK_STR(mr__testing_reactor_backend(r), "io_uring");
	mr_router_free(r);
	return 0;
}

/* Asked for, epoll reads where io_uring would work: the same events, both ways. */
static int test_epoll_asked(void)
{
	int ran = 0;

	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		for (int own_loop = 0; own_loop < 2; own_loop++) {
			int rc = events_delivered(sources[i], own_loop, MR_OPT_EPOLL);
			if (rc == T_EXIT_FAIL) {
				fprintf(stderr, "%s, %s, MR_OPT_EPOLL: FAIL\n", sources[i],
					own_loop ? "caller's poll loop" : "router thread");
				return T_EXIT_FAIL;
			}
			ran += rc == 0;
		}
	return ran ? 0 : tu_skip("no source runs on this kernel");
}

int main(void)
{
	int rc = tu_private_root(root, sizeof(root)), s;

	if (rc)
		return rc;
	rc = RUN(test_io_uring_when_allowed);
	rc |= RUN(test_epoll_asked) == T_EXIT_FAIL;
	s = RUN(test_refused_io_uring);
	if (s == T_EXIT_SKIP && !rc)
		return T_EXIT_SKIP;
	rc |= s;
	return rc ? T_EXIT_FAIL : T_EXIT_PASS;
}
