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
 * The routers there ask for io_uring (MR_OPT_IO_URING), which fanotify
 * would not use anyway, so epoll is the refusal's doing.
 * Without the filter, a router reads through the backend its source
 * chooses (epoll for fanotify, io_uring for the others) unless
 * MR_OPT_EPOLL or MR_OPT_IO_URING says otherwise, and delivers the same
 * events on each.
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
static int events_delivered(const char *source, bool own_loop, unsigned flags, const char *backend)
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
	CHECK_STR(mr__testing_reactor_backend(r), backend);
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
			int rc = events_delivered(sources[i], own_loop, MR_OPT_IO_URING, "epoll");
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
 * Without the refusal: each source's own backend (epoll for fanotify,
 * io_uring for listmount and mountinfo) unless MR_OPT_EPOLL or
 * MR_OPT_IO_URING asks for the other, io_uring wherever io_uring_setup
 * works; the two flags together are refused.  MR_TEST_REACTOR overrides
 * every choice.
 */
static int test_backend_by_source(void)
{
	static const unsigned flags[] = { 0, MR_OPT_IO_URING, MR_OPT_EPOLL };
	int ran = 0;

	for (size_t s = 0; s < sizeof(sources) / sizeof(sources[0]); s++)
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			struct mr_opts o = { .size = sizeof(o), .flags = flags[i],
					     .source = sources[s] };
			mr_router *r = NULL;
			int err = mr_router_new(&o, &r);

			if (err == -ENOSYS)
				continue;
			CHECK(err == 0);
			CHECK_STR(mr__testing_reactor_backend(r),
				  tu_expected_backend(sources[s], flags[i]));
			mr_router_free(r);
			ran++;
		}
	struct mr_opts both = { .size = sizeof(both), .flags = MR_OPT_EPOLL | MR_OPT_IO_URING };
	mr_router *r = NULL;
	CHECK(mr_router_new(&both, &r) == -EINVAL && !r);
	return ran ? 0 : tu_skip("no source runs on this kernel");
}

/* Each backend asked for delivers the same events, both ways of driving. */
static int test_backend_asked(void)
{
	const char *forced = getenv("MR_TEST_REACTOR");
	static const struct {
		unsigned flag;
		const char *name;
	} asked[] = { { MR_OPT_EPOLL, "epoll" }, { MR_OPT_IO_URING, "io_uring" } };
	int ran = 0;

	if (forced && *forced)
		return tu_skip("MR_TEST_REACTOR overrides what is asked");
	for (size_t a = 0; a < sizeof(asked) / sizeof(asked[0]); a++) {
		const char *backend = asked[a].flag == MR_OPT_IO_URING && !tu_io_uring_works() ?
					      "epoll" : asked[a].name;
		for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
			for (int own_loop = 0; own_loop < 2; own_loop++) {
				int rc = events_delivered(sources[i], own_loop, asked[a].flag, backend);
				if (rc == T_EXIT_FAIL) {
					fprintf(stderr, "%s, %s, asked for %s: FAIL\n", sources[i],
						own_loop ? "caller's poll loop" : "router thread",
						asked[a].name);
					return T_EXIT_FAIL;
				}
				ran += rc == 0;
			}
	}
	return ran ? 0 : tu_skip("no source runs on this kernel");
}

int main(void)
{
	int rc = tu_private_root(root, sizeof(root)), s;

	if (rc)
		return rc;
	rc = RUN(test_backend_by_source) == T_EXIT_FAIL;
	rc |= RUN(test_backend_asked) == T_EXIT_FAIL;
	s = RUN(test_refused_io_uring);
	if (s == T_EXIT_SKIP && !rc)
		return T_EXIT_SKIP;
	rc |= s;
	return rc ? T_EXIT_FAIL : T_EXIT_PASS;
}
