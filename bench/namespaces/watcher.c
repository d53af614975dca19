/* SPDX-License-Identifier: MIT */
/*
 * The watcher ns_scale measures: one router run as `mountwatch -A` runs
 * it.  No namespace of its own (MR_OPT_NO_SELF_NS), every namespace added
 * by the PID of a process inside it, one subscriber per namespace on "/"
 * asking for every kind, and the router stepped by mr_router_dispatch() on
 * the one thread that polls its fd.
 *
 * One difference: after each step mountwatch drains every subscriber,
 * this watcher only the busy namespace's.  On a quiet host the others get
 * nothing, and polling K empty rings after every step would add the
 * benchmark's own O(K) to the router's; they are drained once at the end,
 * to check that they did get nothing.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mountrouter.h>

#include "ns_scale.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every thread of this process, io_uring's workers included. */
static uint64_t cpu_self_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A "Vm...:" line of /proc/self/status, in kB (0 if missing). */
static uint64_t status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t kb = 0;
	size_t len = strlen(key);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len)) {
			kb = strtoull(line + len, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

static _Noreturn void fail(struct ns_report *rep, int err, const char *what, unsigned i)
{
	rep->err = err;
	snprintf(rep->what, sizeof(rep->what), what, i);
	atomic_store(&rep->state, NS_FAILED);
	_exit(1);
}

static bool is_change(uint32_t kind)
{
	return kind < MR_KIND_LIMIT && (MR_KIND(kind) & MR_KINDS_ALL);
}

/* Takes what the busy namespace's subscriber holds; the time is the driver's latency end. */
static void take(mr_sub *s, struct ns_report *rep)
{
	const struct mr_event *ev;

	while (mr_sub_next(s, &ev) == 0) {
		if (is_change(ev->kind)) {
			atomic_store(&rep->last_ns, now_ns());
			atomic_fetch_add(&rep->count, 1);
		} else {
			atomic_fetch_add(&rep->markers, 1);
		}
		mr_event_unref(ev);
	}
}

/* Steps the router as mountwatch's pump() does: again while steps keep producing. */
static void pump(mr_router *r, mr_sub *busy, struct ns_report *rep)
{
	for (int round = 0; round < 8; round++) {
		int n = mr_router_dispatch(r);
		take(busy, rep);
		if (n <= 0)
			break;
	}
}

static void publish_syscalls(mr_router *r, struct ns_report *rep)
{
	struct mr_stats st;

	if (mr_router_stats(r, &st) == 0)
		atomic_store(&rep->syscalls, st.syscalls); /* io_uring_enters among them */
}

/* The end of the run: what the other subscribers got, and the router's loss counters. */
static void finish(mr_router *r, mr_sub **subs, unsigned n, struct ns_report *rep)
{
	struct mr_stats st;
	const struct mr_event *ev;

	pump(r, subs[0], rep);
	for (unsigned i = 1; i < n; i++)
		while (mr_sub_next(subs[i], &ev) == 0) {
			rep->stray++;
			mr_event_unref(ev);
		}
	if (mr_router_stats(r, &st) == 0) {
		rep->ring_drops = st.ring_drops;
		rep->kernel_losses = st.kernel_losses;
		rep->resyncs = st.resyncs;
	}
	rep->rss_end_kb = status_kb("VmRSS:");
	atomic_store(&rep->state, NS_DONE);
}

void watcher_run(const char *source, const pid_t *pids, unsigned n, int quit,
		 struct ns_report *rep)
{
	struct mr_opts o = {.size = sizeof(o), .flags = MR_OPT_NO_SELF_NS, .source = source};
	mr_router *r;
	mr_sub **subs = calloc(n, sizeof(*subs));
	int err;

	if (!subs)
		fail(rep, -ENOMEM, "calloc", 0);
	if ((err = mr_router_new(&o, &r)) < 0)
		fail(rep, err, "mr_router_new", 0);
	uint64_t t0 = now_ns(), cpu0 = cpu_self_ns();
	for (unsigned i = 0; i < n; i++) {
		uint64_t id;
		struct mr_sub_opts so = {.size = sizeof(so), .subtree = "/"};
		if ((err = mr_router_add_ns_pid(r, pids[i], &id)) < 0)
			fail(rep, err, "adding namespace %u", i);
		so.ns_id = id;
		if ((err = mr_subscribe(r, &so, &subs[i])) < 0)
			fail(rep, err, "subscribing to namespace %u", i);
	}
	/* The router takes the namespaces and subscriptions over at its next step. */
	pump(r, subs[0], rep);
	rep->setup_ns = now_ns() - t0;
	rep->setup_cpu_ns = cpu_self_ns() - cpu0;
	rep->rss_kb = status_kb("VmRSS:");
	rep->hwm_kb = status_kb("VmHWM:");
	struct mr_stats st;
	if (mr_router_stats(r, &st) == 0)
		rep->mounts = st.mounts;
	publish_syscalls(r, rep);
	atomic_store(&rep->state, NS_READY);

	struct pollfd p[2] = {{.fd = mr_router_fd(r), .events = POLLIN},
			      {.fd = quit, .events = POLLIN}};
	for (;;) {
		if (poll(p, 2, -1) < 0)
			continue;
		pump(r, subs[0], rep);
		publish_syscalls(r, rep);
		if (p[1].revents) {
			finish(r, subs, n, rep);
			for (;;)
				pause();
		}
	}
}

int watcher_probe(const char *source)
{
	struct mr_opts o = {.size = sizeof(o), .source = source};
	mr_router *r;
	int err = mr_router_new(&o, &r);

	if (err < 0)
		return err;
	mr_router_free(r);
	return 0;
}

const char *watcher_needs(const char *source)
{
	if (!strcmp(source, "fanotify"))
		return "fanotify mount events (FAN_REPORT_MNT, 6.14)";
	if (!strcmp(source, "listmount"))
		return "listmount(2) and statmount(2) (6.8)";
	if (!strcmp(source, "mountinfo"))
		return "a pollable /proc/PID/mountinfo";
	if (!strcmp(source, "watch_mount"))
		return "watch_mount(2) (the series in kernel/patches)";
	return "?";
}
