/* SPDX-License-Identifier: MIT */
/*
 * Misuse and absurd input at the API: out-of-range options rejected with
 * -EINVAL, an fd that is not a mount namespace's rejected, a stale wake-up
 * not reported as an event, and a subscriber freed twice (or used after its
 * free) caught at that call: an abort with a message in debug builds,
 * ignored in release builds.  Runs on the model kernel: no kernel feature.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif

static struct model k;

static mr_router *model_only(void)
{
	mr_router *r = NULL;

	return model_router(&k, &r, NULL, 0, NULL, 0) == 0 ? r : NULL;
}

static int test_option_ranges(void)
{
	mr_router *r;
	struct mr_opts o = { .size = sizeof(o), .source = "model" };

	o.queue_notes = 513;
	CHECK(mr_router_new(&o, &r) == -EINVAL);
	o.queue_notes = 0;
	o.batch = 4097;
	CHECK(mr_router_new(&o, &r) == -EINVAL);
	o.batch = 0x80000000u; /* batch * 2 wraps to 0 */
	CHECK(mr_router_new(&o, &r) == -EINVAL);
	o.batch = 4096;
	o.queue_notes = 512;
	CHECK(mr_router_new(&o, &r) == 0);
	mr_router_free(r);

	CHECK((r = model_only()) != NULL);
	mr_sub *s = NULL;
	struct mr_sub_opts so = { .size = sizeof(so), .capacity = 0xffffffffu };
	CHECK(mr_subscribe(r, &so, &s) == -EINVAL && s == NULL);
	so.capacity = (1u << 22) + 1;
	CHECK(mr_subscribe(r, &so, &s) == -EINVAL);
	so.capacity = 1u << 22;
	CHECK(mr_subscribe(r, &so, &s) == 0);
	mr_unsubscribe(s);
	mr_router_free(r);
	return 0;
}

static int test_not_a_namespace_fd(void)
{
	mr_router *r = model_only();
	uint64_t id = 0;

	CHECK(r);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(mr_router_add_ns_fd(r, fd, &id) == -EINVAL);
	close(fd);
	fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		CHECK(mr_router_add_ns_fd(r, fd, &id) == -EINVAL);
		close(fd);
	}
	fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(mr_router_add_ns_fd(r, fd, &id) == -EEXIST); /* the router's own, a real one */
	close(fd);
	mr_router_free(r);
	return 0;
}

/* A wake-up left from an event already read is not a new event. */
static int test_wait_stale_wakeup(void)
{
	struct mr_sub_opts so = { .size = sizeof(so) };
	const struct mr_event *ev;
	struct mr_sub *s;

	CHECK(mr__sub_alloc(NULL, -1, &so, &s) == 0);
	CHECK(mr_sub_fd(s) >= 0); /* arms the wake-up */
	struct mr__event *e = mr__event_marker(MR_EVENT_OVERRUN);
	CHECK(e);
	atomic_store(&e->refs, 1);
	CHECK(mr__sub_push(s, e));
	CHECK(mr__sub_wake(s)); /* the eventfd now counts 1 */
	CHECK(mr_sub_next(s, &ev) == 0 && ev == &e->pub);
	mr_event_unref(ev);
	CHECK(mr_sub_wait(s, 50) == -ETIMEDOUT);
	CHECK(mr_sub_wait(s, 0) == -ETIMEDOUT);

	/* A real one still wakes it. */
	e = mr__event_marker(MR_EVENT_OVERRUN);
	CHECK(e);
	atomic_store(&e->refs, 1);
	CHECK(mr__sub_push(s, e));
	mr__sub_wake(s);
	CHECK(mr_sub_wait(s, 1000) == 0);
	CHECK(mr_sub_next(s, &ev) == 0);
	mr_event_unref(ev);
	mr__sub_destroy(s);
	return 0;
}

/* Runs @fn in a child; returns its wait status. */
static int in_child(void (*fn)(void))
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		/* The abort's message is the point; keep a core dump out of the way. */
		signal(SIGABRT, SIG_DFL);
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static void double_free(void)
{
	mr_router *r = model_only();
	mr_sub *s;
	struct mr_sub_opts so = { .size = sizeof(so) };

	if (!r || mr_subscribe(r, &so, &s) < 0)
		_exit(3);
	mr_unsubscribe(s);
	mr_unsubscribe(s); /* the bug: caught here, or ignored */
	mr_router_dispatch(r);
	mr_router_free(r);
}

#if !defined(NDEBUG) && !defined(ASAN)
static void use_after_release(void)
{
	mr_router *r = model_only();
	const struct mr_event *ev;
	mr_sub *s;
	struct mr_sub_opts so = { .size = sizeof(so) };

	if (!r || mr_subscribe(r, &so, &s) < 0)
		_exit(3);
	mr_router_dispatch(r);
	mr_unsubscribe(s);
	mr_router_dispatch(r); /* the router releases it */
	mr_sub_next(s, &ev);   /* the bug */
	_exit(4);
}
#endif

static int test_double_free(void)
{
	int st = in_child(double_free);

	CHECK(st != -1);
#ifdef NDEBUG
	/* Release: the second free is ignored, the router is unharmed. */
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
#else
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
#endif
	return 0;
}

static int test_use_after_release(void)
{
#if defined(NDEBUG) || defined(ASAN)
	/* Release builds do not poison; AddressSanitizer reports it its own way. */
	return tu_skip("poisoning is checked in debug builds without AddressSanitizer");
#else
	int st = in_child(use_after_release);

	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	return 0;
#endif
}

int main(void)
{
	int rc = 0;

	model_init(&k, MODEL_WATCH_MOUNT);
	mr_router_free(model_only()); /* installs the model source */
	rc |= RUN(test_option_ranges);
	rc |= RUN(test_not_a_namespace_fd);
	rc |= RUN(test_wait_stale_wakeup);
	rc |= RUN(test_double_free);
	int u = RUN(test_use_after_release);
	rc |= u == T_EXIT_SKIP ? 0 : u;
	return rc ? T_EXIT_FAIL : T_EXIT_PASS;
}
