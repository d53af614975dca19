/* SPDX-License-Identifier: MIT */
/*
 * CPU per single attach or detach on a big, quiet table: routers on the
 * named sources beside a bare mountinfo poller, in one run, watching the
 * same private mount namespace.
 *
 *   attach_detach [--mounts N] [--changes K] [--sources LIST]
 *
 * Builds N bind mounts (10,000) in a private namespace on a tmpfs, then makes
 * K changes (200) one at a time, alternately a new bind mount and its
 * unmount, and waits after each until every contender has seen it.  Each
 * contender runs on its own thread and is charged that thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), so two cores shared with others skew wall time
 * but not the figures.  The poller is what systemd and libmount do: wait
 * for POLLPRI, read all of mountinfo, index the lines by mount ID, diff
 * against the last read.  Checks after timing: every contender saw every
 * change.  Prints one line per contender and the ratios; needs root.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mountrouter.h"

#define MAX_ROUTERS 4

static char root[64] = "/tmp/single-change-XXXXXX";

/* Another thread's CPU time so far. */
static uint64_t cpu_of(pthread_t th)
{
	clockid_t id;
	struct timespec ts;

	if (pthread_getcpuclockid(th, &id) || clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the bare poller ---- */

struct line {
	unsigned long id;
	const char *s;
	size_t len;
};

struct poller {
	pthread_t th;
	uint64_t kind_ns[2];
	int fd, stopfd;
	_Atomic uint64_t seen; /* lines that appeared or went away */
	uint64_t cpu_ns, reads;
	char *buf[2];
	size_t cap[2];
	struct line *lines[2];
	size_t n[2], lcap[2];
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Reads and indexes the whole file into slot @k. */
static int poller_read(struct poller *p, int k)
{
	size_t len = 0;
	ssize_t got;

	if (lseek(p->fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		if (p->cap[k] - len < 65536) {
			p->cap[k] = p->cap[k] ? p->cap[k] * 2 : 1 << 20;
			p->buf[k] = realloc(p->buf[k], p->cap[k]);
		}
		got = read(p->fd, p->buf[k] + len, p->cap[k] - len);
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		len += (size_t)got;
	}
	p->n[k] = 0;
	for (char *s = p->buf[k], *end = s + len; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		if (p->n[k] == p->lcap[k]) {
			p->lcap[k] = p->lcap[k] ? p->lcap[k] * 2 : 4096;
			p->lines[k] = realloc(p->lines[k], p->lcap[k] * sizeof(struct line));
		}
		p->lines[k][p->n[k]++] = (struct line){strtoul(s, NULL, 10), s, (size_t)(nl - s)};
		s = nl + 1;
	}
	qsort(p->lines[k], p->n[k], sizeof(struct line), cmp_line);
	p->reads++;
	return 0;
}

/* Lines of @a not in @b, and changed ones, counted once each (a merge). */
static uint64_t poller_diff(const struct poller *p, int a, int b)
{
	const struct line *x = p->lines[a], *y = p->lines[b];
	size_t i = 0, j = 0, na = p->n[a], nb = p->n[b];
	uint64_t d = 0;

	while (i < na || j < nb) {
		if (j == nb || (i < na && x[i].id < y[j].id)) {
			d++, i++;
		} else if (i == na || y[j].id < x[i].id) {
			d++, j++;
		} else {
			d += x[i].len != y[j].len || memcmp(x[i].s, y[j].s, x[i].len);
			i++, j++;
		}
	}
	return d;
}

static void *poller_main(void *arg)
{
	struct poller *p = arg;
	uint64_t cpu0 = thread_cpu_ns();
	int cur = 0;

	poller_read(p, cur);
	for (;;) {
		struct pollfd pf[2] = {{.fd = p->fd, .events = POLLPRI}, {.fd = p->stopfd, .events = POLLIN}};
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;
		if (!(pf[0].revents & POLLPRI))
			continue;
		if (poller_read(p, !cur) < 0)
			break;
		uint64_t d = poller_diff(p, cur, !cur);
		cur = !cur;
		atomic_fetch_add(&p->seen, d);
	}
	p->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

/* ---- a router, driven on a thread of ours so its CPU time is known ---- */

struct router {
	const char *source;
	mr_router *r;
	mr_sub *s;
	pthread_t th;
	int stopfd;
	uint64_t cpu_ns, syscalls0;
	uint64_t kind_ns[2]; /* CPU for attaches, detaches (read from the driver) */
	_Atomic uint64_t seen;
};

static void *router_main(void *arg)
{
	struct router *c = arg;
	uint64_t cpu0 = thread_cpu_ns();

	for (;;) {
		/* Dispatch first: it submits the watches the fd then reports on. */
		int n = mr_router_dispatch(c->r);
		if (n < 0 && n != -EINTR && n != -EAGAIN && n != -EBUSY)
			break;
		struct pollfd pf[2] = {{.fd = mr_router_fd(c->r), .events = POLLIN},
				       {.fd = c->stopfd, .events = POLLIN}};
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;
	}
	c->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

/* The driver takes the events (off the router's thread, not charged to it). */
static void router_drain(struct router *c)
{
	const struct mr_event *ev;

	while (mr_sub_next(c->s, &ev) == 0) {
		if (ev->kind == MR_EVENT_MOUNT || ev->kind == MR_EVENT_UNMOUNT)
			atomic_fetch_add(&c->seen, 1);
		mr_event_unref(ev);
	}
}

static int setup_ns(unsigned mounts)
{
	char p[128];

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("attach_detach: private mount namespace");
		return -1;
	}
	if (!mkdtemp(root) || mount("bench", root, "tmpfs", 0, "size=64m") < 0) {
		perror("attach_detach: tmpfs");
		return -1;
	}
	snprintf(p, sizeof(p), "%s/src", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/new", root);
	mkdir(p, 0755);
	for (unsigned i = 0; i < mounts; i++) {
		char src[128];
		snprintf(src, sizeof(src), "%s/src", root);
		snprintf(p, sizeof(p), "%s/m%u", root, i);
		if (mkdir(p, 0755) < 0 || mount(src, p, NULL, MS_BIND, NULL) < 0) {
			perror("attach_detach: bind mount");
			return -1;
		}
	}
	return 0;
}

static bool all_seen(struct router *rs, size_t nr, struct poller *p, uint64_t want)
{
	bool ok = atomic_load(&p->seen) >= want;

	for (size_t i = 0; i < nr; i++) {
		router_drain(&rs[i]);
		ok &= atomic_load(&rs[i].seen) >= want;
	}
	return ok;
}

int main(int argc, char **argv)
{
	unsigned mounts = 10000, changes = 200;
	const char *sources = "listmount";
	struct router rs[MAX_ROUTERS] = {0};
	struct poller p = {0};
	size_t nr = 0;
	int stop[2];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--mounts"))
			mounts = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--changes"))
			changes = (unsigned)strtoul(argv[i + 1], NULL, 10) & ~1u;
		else if (!strcmp(argv[i], "--sources"))
			sources = argv[i + 1];
	}
	if (setup_ns(mounts) < 0)
		return 1;
	if (pipe(stop) < 0)
		return 1;

	char *list = strdup(sources), *save = NULL;
	for (char *tok = strtok_r(list, ",", &save); tok && nr < MAX_ROUTERS;
	     tok = strtok_r(NULL, ",", &save)) {
		struct mr_opts o = {.size = sizeof(o), .source = tok};
		struct mr_sub_opts so = {.size = sizeof(so), .subtree = root,
					 .kinds = MR_KIND(MR_EVENT_MOUNT) | MR_KIND(MR_EVENT_UNMOUNT),
					 .capacity = 1024};
		struct router *c = &rs[nr];
		int err = mr_router_new(&o, &c->r);
		if (err < 0) {
			fprintf(stderr, "attach_detach: source %s: %s\n", tok, strerror(-err));
			return err == -ENOSYS ? 77 : 1;
		}
		if (mr_subscribe(c->r, &so, &c->s) < 0)
			return 1;
		c->source = tok;
		c->stopfd = stop[0];
		pthread_create(&c->th, NULL, router_main, c);
		nr++;
	}
	p.fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	p.stopfd = stop[0];
	pthread_create(&p.th, NULL, poller_main, &p);
	usleep(200000); /* every contender has read its first table */

	char path[128], src[128];
	snprintf(path, sizeof(path), "%s/new", root);
	snprintf(src, sizeof(src), "%s/src", root);
	for (size_t i = 0; i < nr; i++) {
		struct mr_stats st;
		mr_router_stats(rs[i].r, &st);
		rs[i].syscalls0 = st.syscalls;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < changes; i++) {
		uint64_t pc0 = cpu_of(p.th), rc0[MAX_ROUTERS];
		for (size_t k = 0; k < nr; k++)
			rc0[k] = cpu_of(rs[k].th);
		int rc = i % 2 ? umount(path) : mount(src, path, NULL, MS_BIND, NULL);
		if (rc < 0) {
			perror("attach_detach: change");
			return 1;
		}
		/* Up to 10 s per change: a contender that misses one fails the run. */
		for (int w = 0; !all_seen(rs, nr, &p, i + 1); w++) {
			if (w == 100000) {
				fprintf(stderr, "attach_detach: change %u not seen by everyone (poller %llu",
					i, (unsigned long long)atomic_load(&p.seen));
				for (size_t k = 0; k < nr; k++)
					fprintf(stderr, ", %s %llu", rs[k].source,
						(unsigned long long)atomic_load(&rs[k].seen));
				fprintf(stderr, ")\n");
				return 1;
			}
			usleep(100);
		}
		p.kind_ns[i % 2] += cpu_of(p.th) - pc0;
		for (size_t k = 0; k < nr; k++)
			rs[k].kind_ns[i % 2] += cpu_of(rs[k].th) - rc0[k];
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	(void)!write(stop[1], "x", 1);
	pthread_join(p.th, NULL);
	for (size_t i = 0; i < nr; i++)
		pthread_join(rs[i].th, NULL);

	double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	double poll_us = (double)p.cpu_ns / changes / 1000;
	printf("attach_detach: %u mounts, %u changes (attach, detach), %.1f s\n", mounts + 1,
	       changes, wall);
	double half = changes / 2;
	printf("%-10s %10.1f us CPU per change (attach %.1f, detach %.1f; %llu reads, %llu changes "
	       "seen)\n", "poller", poll_us, p.kind_ns[0] / half / 1000, p.kind_ns[1] / half / 1000,
	       (unsigned long long)p.reads, (unsigned long long)atomic_load(&p.seen));
	for (size_t i = 0; i < nr; i++) {
		struct mr_stats st;
		mr_router_stats(rs[i].r, &st);
		double us = (double)rs[i].cpu_ns / changes / 1000;
		printf("%-10s %10.1f us CPU per change (attach %.1f, detach %.1f; poller/this %.1fx; "
		       "%.1f syscalls per change, %llu changes seen)\n",
		       rs[i].source, us, rs[i].kind_ns[0] / half / 1000, rs[i].kind_ns[1] / half / 1000,
		       poll_us / us, (double)(st.syscalls - rs[i].syscalls0) / changes,
		       (unsigned long long)atomic_load(&rs[i].seen));
		mr_unsubscribe(rs[i].s);
		mr_router_free(rs[i].r);
	}
	umount2(root, MNT_DETACH);
	rmdir(root);
	free(list);
	return 0;
}
