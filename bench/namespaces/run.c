/* SPDX-License-Identifier: MIT */
/*
 * One run of ns_scale: a watcher on one source over K namespaces, in a
 * child process of its own, and the changes made in the busy namespace
 * one at a time, each waited for until the watcher holds it.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ns_scale.h"
#include "watcher_cost.h"

unsigned changes = 40, interval_ms = 30, rounds = 1;

/*
 * One change in the busy namespace (@op: 'm' mount, 'u' unmount), for the
 * watcher in @pid: its CPU from before the syscall to the end of the quiet
 * interval after it, and the latency to the subscriber holding it.
 */
static void measure(struct ns_holders *h, pid_t pid, struct ns_report *rep, char op,
		    struct samples *s)
{
	int u = op == 'u';
	uint64_t before = atomic_load(&rep->count), cpu0 = process_cpu_ns(pid), t;
	int err = ns_busy_change(h, op, &t);

	if (err < 0) {
		errno = -err;
		die(u ? "unmounting the probe" : "mounting the probe");
	}
	bool got = false;
	for (uint64_t deadline = t + 5000000000ull; now_ns() < deadline; usleep(20))
		if (atomic_load(&rep->count) > before) {
			got = true;
			break;
		}
	/* Seen before the syscall returned (a detach is posted first): 0. */
	if (got) {
		uint64_t at = atomic_load(&rep->last_ns);
		s->lat[u][s->n_lat[u]++] = at > t ? (double)(at - t) / 1e3 : 0;
	} else {
		s->missed++;
	}
	/* Quiet between changes: whatever the watcher does after, it does now. */
	usleep(interval_ms * 1000);
	s->cpu[u][s->n_cpu[u]++] = (double)(process_cpu_ns(pid) - cpu0) / 1e3;
}

/* Appends one finding to @buf, after a "; " if there is one already. */
static void note(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n && n + 2 < len) {
		memcpy(buf + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * The end-of-run check: "ok", or each thing that was not so.  A cell's
 * first round that was not ok is the one its check names.
 */
static void check(struct result *res, uint64_t taken, unsigned missed)
{
	const struct ns_report *rep = &res->rep;
	uint64_t want = 2ull * changes;
	char c[sizeof(res->check)] = "";
	size_t len = sizeof(c);

	if (res->check[0] && strcmp(res->check, "ok"))
		return;
	if (missed)
		note(c, len, "%u missed", missed);
	if (taken > want)
		note(c, len, "%llu events more than changes", (unsigned long long)(taken - want));
	if (rep->stray)
		note(c, len, "%llu on other namespaces", (unsigned long long)rep->stray);
	if (rep->markers || rep->ring_drops || rep->kernel_losses || rep->resyncs)
		note(c, len, "%llu markers, %llu ring drops, %llu kernel losses, %llu resyncs",
		     (unsigned long long)rep->markers, (unsigned long long)rep->ring_drops,
		     (unsigned long long)rep->kernel_losses, (unsigned long long)rep->resyncs);
	if (rep->mounts != res->mounts_expected)
		note(c, len, "mirrors held %llu of %u mounts", (unsigned long long)rep->mounts,
		     res->mounts_expected);
	if (atomic_load(&rep->state) != NS_DONE)
		note(c, len, "no end-of-run report");
	snprintf(res->check, sizeof(res->check), "%s", c[0] ? c : "ok");
}

void run_one(struct ns_holders *h, struct ns_report *rep, int watcher_cpu, struct result *res)
{
	struct samples *s = &res->samples;
	unsigned missed0 = s->missed;
	int quit[2];

	if (res->why[0])
		return; /* an earlier round could not set up: no figures */
	for (int u = 0; u < 2; u++)
		if ((!s->cpu[u] && !(s->cpu[u] = calloc((size_t)rounds * changes, sizeof(double)))) ||
		    (!s->lat[u] && !(s->lat[u] = calloc((size_t)rounds * changes, sizeof(double)))))
			die("calloc");
	memset(rep, 0, sizeof(*rep));
	if (pipe(quit) < 0)
		die("pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(quit[1]);
		pin_to(watcher_cpu, "ns_scale");
		watcher_run(res->source, h->pid, res->k, quit[0], rep);
		_exit(1);
	}
	close(quit[0]);

	int status;
	bool died = false;
	for (int t = 0; t < 600000 && atomic_load(&rep->state) == NS_STARTING && !died; t++) {
		usleep(1000);
		died = waitpid(pid, &status, WNOHANG) == pid;
	}
	int state = atomic_load(&rep->state);
	if (state != NS_READY) {
		if (state == NS_FAILED)
			snprintf(res->why, sizeof(res->why), "setup failed: %s: %s", rep->what,
				 strerror(-rep->err));
		else
			snprintf(res->why, sizeof(res->why), "setup failed: the watcher %s",
				 died ? "died" : "took over 10 minutes");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(quit[1]);
		return;
	}
	wait_quiet(pid, process_cpu_ns);
	uint64_t count0 = atomic_load(&rep->count), sys0 = atomic_load(&rep->syscalls);
	for (unsigned i = 0; i < changes; i++) {
		measure(h, pid, rep, 'm', s);
		measure(h, pid, rep, 'u', s);
	}
	uint64_t taken = atomic_load(&rep->count) - count0;
	res->syscalls += (double)(atomic_load(&rep->syscalls) - sys0) / (2.0 * changes * rounds);
	(void)!write(quit[1], "q", 1);
	for (int t = 0; t < 30000 && atomic_load(&rep->state) != NS_DONE; t++)
		usleep(1000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(quit[1]);

	res->rep = *rep;
	res->missed = s->missed;
	check(res, taken, s->missed - missed0);
}

void run_finish(struct result *res)
{
	struct samples *s = &res->samples;

	res->cpu_mount = median(s->cpu[0], s->n_cpu[0]);
	res->cpu_umount = median(s->cpu[1], s->n_cpu[1]);
	res->mount_p50 = percentile(s->lat[0], s->n_lat[0], 50);
	res->mount_p99 = percentile(s->lat[0], s->n_lat[0], 99);
	res->umount_p50 = percentile(s->lat[1], s->n_lat[1], 50);
	res->umount_p99 = percentile(s->lat[1], s->n_lat[1], 99);
	for (int u = 0; u < 2; u++) {
		free(s->cpu[u]);
		free(s->lat[u]);
	}
	*s = (struct samples){0};
}

