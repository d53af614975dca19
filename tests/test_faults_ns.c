/* SPDX-License-Identifier: MIT */
/*
 * A watched mount namespace whose processes all exit mid-stream: a child in
 * its own namespace mounts as fast as it can and is killed while it does.
 * The router (on its own thread) must not crash, hang or spin on the dead
 * namespace; the caller's own namespace, watched by the same router, keeps
 * being reported exactly; the dead namespace can be removed and the router
 * freed.
 *
 * Usage: test_faults_ns SOURCE   (fanotify | mountinfo)
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static char root[256];

static void child_storm(int ready)
{
	char p[512];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(1);
	snprintf(p, sizeof(p), "%s/storm", root);
	(void)!write(ready, "r", 1);
	for (unsigned i = 0;; i++) {
		if (i % 8 == 7)
			umount2(p, MNT_DETACH);
		else
			mount("storm", p, "tmpfs", 0, "size=16k");
	}
}

static int cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (int)(t.tv_sec * 1000 + t.tv_nsec / 1000000);
}

int main(int argc, char **argv)
{
	const char *source = argc > 1 ? argv[1] : "fanotify";
	struct mr_opts o = { .size = sizeof(o), .source = source };
	int rc = tu_private_root(root, sizeof(root)), pfd[2];
	mr_router *r;
	mr_sub *mine, *theirs;
	uint64_t child_ns;
	char p[512], b;

	if (rc)
		return rc;
	int err = mr_router_new(&o, &r);
	if (err == -ENOSYS || err == -EINVAL)
		return tu_skip("source %s: not on this kernel", source);
	CHECK(err == 0);
	snprintf(p, sizeof(p), "%s/storm", root);
	CHECK(mkdir(p, 0755) == 0);
	CHECK(pipe(pfd) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child_storm(pfd[1]);
	CHECK(read(pfd[0], &b, 1) == 1);
	CHECK(mr_router_add_ns_pid(r, pid, &child_ns) == 0);

	struct mr_sub_opts so = { .size = sizeof(so), .subtree = root, .capacity = 256 };
	CHECK(mr_subscribe(r, &so, &mine) == 0);
	so.ns_id = child_ns;
	CHECK(mr_subscribe(r, &so, &theirs) == 0);
	CHECK(mr_router_start(r) == 0);

	/* Let the storm run, reading what it makes, then kill it mid-stream. */
	const struct mr_event *ev;
	unsigned got = 0;
	for (int i = 0; i < 50; i++) {
		while (mr_sub_next(theirs, &ev) == 0) {
			got++;
			mr_event_unref(ev);
		}
		usleep(10000);
	}
	CHECK(kill(pid, SIGKILL) == 0);
	CHECK(waitpid(pid, NULL, 0) == pid);
	fprintf(stderr, "%s: %u events from the child's namespace before it died\n", source, got);

	/* The router goes on: a change in our own namespace is reported. */
	snprintf(p, sizeof(p), "%s/after", root);
	CHECK(mkdir(p, 0755) == 0);
	usleep(200000);
	while (mr_sub_next(mine, &ev) == 0)
		mr_event_unref(ev);
	CHECK(mount("after", p, "tmpfs", 0, "size=16k") == 0);
	ev = tu_next(mine, 5000, false);
	CHECK(ev && ev->kind == MR_EVENT_MOUNT && !strcmp(ev->path, p));
	mr_event_unref(ev);

	/* It does not spin on the dead namespace: one idle second costs little CPU. */
	while (mr_sub_next(theirs, &ev) == 0)
		mr_event_unref(ev);
	usleep(300000);
	struct mr_stats s0, s1;
	CHECK(mr_router_stats(r, &s0) == 0);
	int c0 = cpu_ms();
	sleep(1);
	int used = cpu_ms() - c0;
	CHECK(mr_router_stats(r, &s1) == 0);
	fprintf(stderr, "%s: idle second after the death: %d ms CPU, %llu resyncs, %llu syscalls\n",
		source, used, (unsigned long long)(s1.resyncs - s0.resyncs),
		(unsigned long long)(s1.syscalls - s0.syscalls));
	CHECK(s1.resyncs - s0.resyncs <= 2);
	CHECK(s1.syscalls - s0.syscalls < 1000);

	CHECK(mr_router_remove_ns(r, child_ns) == 0);
	mr_unsubscribe(theirs);
	mr_unsubscribe(mine);
	mr_router_free(r);
	return T_EXIT_PASS;
}
