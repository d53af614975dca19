/* SPDX-License-Identifier: MIT */
/*
 * Faults injected under the router, on the model kernel, for each source's
 * records; after each, once the fault is gone, the mirror and every
 * subscriber's view must equal the model (the truth):
 *  - allocation failure at every allocation site in turn (each numbered
 *    allocation of a fixed scenario fails once), and a run of failures for
 *    a whole batch: calls return -ENOMEM, nothing leaks (LeakSanitizer in
 *    the sanitizer build), the router stays usable;
 *  - read completions that say EINTR or EAGAIN, a short read that cuts a
 *    record, an error (EIO, or EBADF: the fd closed under the router);
 *  - io_uring unavailable (io_uring_setup refused, as with
 *    kernel.io_uring_disabled=2, by a seccomp filter in a child): the
 *    router is made on the epoll backend, no hang, and routes as before
 *    (test_reactor_fallback.c delivers real events that way).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "testing.h"
#include "testutil.h"

extern _Atomic uint64_t mr__alloc_count, mr__alloc_fail_at;
extern _Atomic bool mr__alloc_fail_all;

static struct model k;
static struct view views[3];
static const char *const prefixes[] = { "/", "/a", "/x" };

static void faults_off(void)
{
	atomic_store(&mr__alloc_fail_at, 0);
	atomic_store(&mr__alloc_fail_all, false);
}

/* The operations each run makes, cut into batches. */
static void scenario_ops(int step)
{
	static uint64_t s, b, c;

	switch (step) {
	case 0:
		model_mount_new(&k, 1, "a", &s);
		model_mount_new(&k, s, "c", &c);
		model_bind(&k, s, 1, "x", &b);
		break;
	case 1:
		model_remount(&k, b, 5, true);
		model_move(&k, c, b, "m");
		break;
	case 2:
		model_setattr(&k, s, true);
		model_umount(&k, b, true);
		break;
	}
}

/* After the fault: two clean batches, then every invariant and no view left overrun. */
static int repaired(mr_router *r)
{
	faults_off();
	CHECK(model_batch(&k, r, views, 3) == 0);
	CHECK(model_batch(&k, r, views, 3) == 0);
	for (int i = 0; i < 3; i++)
		CHECK(!views[i].s->overrun);
	return 0;
}

/*
 * One run with allocation number @fail_at failing (0: none; @all: that one
 * and every later one until the fault is lifted).  Returns 0, or 1; counts
 * the allocations made in *@allocs.
 */
static int run_with_fault(enum model_source src, uint64_t fail_at, bool all, uint64_t *allocs)
{
	mr_router *r = NULL;
	int err;

	model_init(&k, src);
	atomic_store(&mr__alloc_count, 0);
	atomic_store(&mr__alloc_fail_all, all);
	atomic_store(&mr__alloc_fail_at, fail_at);
	err = model_router(&k, &r, views, 3, prefixes, 0);
	if (err < 0) {
		/* Construction failed: cleanly, and with the right error. */
		faults_off();
		if (err != -ENOMEM) {
			fprintf(stderr, "allocation %llu: setup returned %d\n",
				(unsigned long long)fail_at, err);
			return 1;
		}
		for (int i = 0; i < 3; i++)
			mr_unsubscribe(views[i].s);
		mr_router_free(r);
		*allocs = atomic_load(&mr__alloc_count);
		return 0;
	}
	for (int step = 0; step < 3; step++) {
		scenario_ops(step);
		/*
		 * Under the fault the invariants may not hold yet (a view waits
		 * for its snapshot, a resync is retried): the views follow what
		 * they are told, and are judged once the fault is lifted.
		 */
		model_batch_unjudged(&k, r, views, 3);
		if (step == 0)
			*allocs = atomic_load(&mr__alloc_count);
	}
	if (repaired(r)) {
		fprintf(stderr, "after a failure of allocation %llu%s (%s records)\n",
			(unsigned long long)fail_at, all ? " onwards" : "", model_source_name(src));
		return 1;
	}
	*allocs = atomic_load(&mr__alloc_count);
	mr_router_free(r);
	return 0;
}

static int test_alloc_every_site(void)
{
	for (int src = MODEL_WATCH_MOUNT; src <= MODEL_MOUNTINFO; src++) {
		uint64_t total = 0, n;

		CHECK(run_with_fault(src, 0, false, &total) == 0);
		CHECK(total > 0);
		for (uint64_t at = 1; at <= total; at++)
			CHECK(run_with_fault(src, at, false, &n) == 0);
		/* Everything failing from some point on, for the rest of the scenario. */
		for (uint64_t at = 1; at <= total; at += total / 16 + 1)
			CHECK(run_with_fault(src, at, true, &n) == 0);
		fprintf(stderr, "  %s: %llu allocation sites failed in turn\n", model_source_name(src),
			(unsigned long long)total);
	}
	return 0;
}

/* Read completions that fail, or deliver part of a record. */
static int test_read_faults(void)
{
	for (int src = MODEL_WATCH_MOUNT; src <= MODEL_FANOTIFY; src++) {
		mr_router *r;
		uint64_t a, b;
		mr__decode_fn decode = src == MODEL_WATCH_MOUNT ? mr__decode_watch_queue
							       : mr__decode_fanotify;

		model_init(&k, src);
		CHECK(model_router(&k, &r, views, 3, prefixes, 0) == 0);
		CHECK(model_batch(&k, r, views, 3) == 0);
		struct mr_stats st0, st;
		CHECK(mr_router_stats(r, &st0) == 0);

		/* EINTR and EAGAIN: nothing lost, the records come with the next read. */
		CHECK(model_mount_new(&k, 1, "a", &a) == 0);
		CHECK(mr__source_records(k.ns, -EINTR, NULL, 0, decode, NULL, 0) == -1);
		CHECK(mr__source_records(k.ns, -EAGAIN, NULL, 0, decode, NULL, 0) == -1);
		CHECK(mr_router_stats(r, &st) == 0 && st.kernel_losses == st0.kernel_losses);
		CHECK(model_batch(&k, r, views, 3) == 0);
		CHECK(mr_router_stats(r, &st) == 0 && st.resyncs == st0.resyncs);

		/* A short read: the last record cut in half. */
		CHECK(model_mount_new(&k, a, "b", &b) == 0);
		CHECK(model_move(&k, b, 1, "x") == 0);
		k.rec_len -= 5;
		CHECK(model_batch(&k, r, views, 3) == 0);
		CHECK(mr_router_stats(r, &st) == 0 && st.bad_records > st0.bad_records);
		CHECK(st.resyncs == st0.resyncs + 1);

		/* An error, or the fd closed under the router: the records are gone. */
		static const int errs[] = { -EIO, -EBADF, -ENOBUFS };
		for (size_t i = 0; i < MR__ARRAY_SIZE(errs); i++) {
			CHECK(model_remount(&k, a, 10 + (unsigned)i, i & 1) == 0);
			CHECK(model_umount(&k, b, true) == 0 || model_mount_new(&k, 1, "x", &b) == 0);
			k.rec_len = 0;
			CHECK(mr__source_records(k.ns, errs[i], NULL, 0, decode, NULL, 0) == -1);
			CHECK(model_batch(&k, r, views, 3) == 0);
		}
		CHECK(mr_router_stats(r, &st) == 0 && st.resyncs == st0.resyncs + 4);
		mr_router_free(r);
	}
	return 0;
}

/* In a child: io_uring_setup fails with EPERM, as kernel.io_uring_disabled=2 makes it. */
static void no_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = MR__ARRAY_SIZE(f), .filter = f };
	mr_router *r = NULL;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(77);
	alarm(10); /* a hang fails the test by signal */
	model_init(&k, MODEL_FANOTIFY);
	if (model_router(&k, &r, views, 3, prefixes, 0) < 0 || !r ||
	    strcmp(mr__testing_reactor_backend(r), "epoll"))
		_exit(1);
	uint64_t a;
	if (model_mount_new(&k, 1, "a", &a) < 0 || model_batch(&k, r, views, 3) != 0)
		_exit(1);
	mr_router_free(r);
	_exit(0);
}

static int test_no_io_uring(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		no_io_uring();
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return tu_skip("seccomp filters are not allowed here");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

int main(void)
{
	int rc = 0, s;

	rc |= RUN(test_read_faults);
	s = RUN(test_no_io_uring);
	rc |= s == T_EXIT_SKIP ? 0 : s;
	rc |= RUN(test_alloc_every_site);
	return rc ? T_EXIT_FAIL : T_EXIT_PASS;
}
