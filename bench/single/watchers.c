/* SPDX-License-Identifier: MIT */
/* The watchers single_change compares: each takes a change and writes a line. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <mountrouter.h>

#include "mountrouter-uapi.h"
#include "single.h"

const char *const watcher_name[W__N] = {
	[W_FLOOR] = "floor (bare fanotify loop)",
	[W_FANOTIFY] = "mountrouter, fanotify",
	[W_FANOTIFY_1T] = "mountrouter, fanotify, one thread",
	[W_FANOTIFY_TOPO] = "mountrouter, fanotify, one thread, mount/umount/move only",
	[W_LISTMOUNT] = "mountrouter, listmount",
	[W_MOUNTINFO] = "mountrouter, mountinfo",
	[W_POLLER] = "bare mountinfo poller",
	[W_FINDMNT] = "findmnt --poll",
	[W_WATCH_MOUNT] = "mountrouter, watch_mount, one thread",
	[W_LISTMOUNT_1T] = "mountrouter, listmount, one thread",
	[W_MOUNTINFO_1T] = "mountrouter, mountinfo, one thread",
	[W_FLOOR_POLLED] = "polled floor (poll, then read)",
	[W_FLOOR_FIELDS] = "floor, statmount of the event's fields",
	[W_FLOOR_EPOLL] = "epoll floor (poll an epoll set, epoll_wait, read)",
	[W_FANOTIFY_WAIT] = "mountrouter, fanotify, one thread, mr_router_wait",
};

const char *const watcher_needs[W__N] = {
	[W_FLOOR] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
	[W_FANOTIFY] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
	[W_FANOTIFY_1T] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
	[W_FANOTIFY_TOPO] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
	[W_LISTMOUNT] = "listmount(2) and statmount(2) (6.8)",
	[W_MOUNTINFO] = "a pollable /proc/self/mountinfo",
	[W_POLLER] = "a pollable /proc/self/mountinfo",
	[W_FINDMNT] = "findmnt in PATH",
	[W_WATCH_MOUNT] = "watch_mount(2) (the series in kernel/patches)",
	[W_LISTMOUNT_1T] = "listmount(2) and statmount(2) (6.8)",
	[W_MOUNTINFO_1T] = "a pollable /proc/self/mountinfo",
	[W_FLOOR_POLLED] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
	[W_FLOOR_FIELDS] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
	[W_FLOOR_EPOLL] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
	[W_FANOTIFY_WAIT] = "fanotify mount events (FAN_REPORT_MNT, 6.14)",
};

unsigned watcher_router_flags;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void took(struct seen *seen)
{
	atomic_store(&seen->last_ns, now_ns());
	atomic_fetch_add(&seen->count, 1);
}

/* How the floor waits for a record. */
enum floor_wait {
	FLOOR_READ,  /* sleeps in read() */
	FLOOR_POLL,  /* poll() on the fanotify fd, then a non-blocking read() */
	FLOOR_EPOLL, /* poll() on an epoll set holding it, epoll_wait(), read() */
};

/*
 * ---- the floor: one fanotify record, one statmount, one line ----
 * @wait: FLOOR_POLL and FLOOR_EPOLL wait as a watcher driven by its
 * caller's event loop must, instead of sleeping in read().
 * @fields: ask statmount for every field a mountrouter event carries
 * (librouter/mirror/listmount.c asks for the same on this kernel) and
 * print them, not the mount point and type alone.
 */

static void run_floor(enum floor_wait wait, bool fields, struct seen *seen, int out)
{
	const bool polled = wait != FLOOR_READ;
	const uint64_t basic = STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT | STATMOUNT_FS_TYPE;
	const uint64_t event = basic | STATMOUNT_SB_BASIC | STATMOUNT_MNT_ROOT | STATMOUNT_MNT_OPTS |
			       STATMOUNT_FS_SUBTYPE | STATMOUNT_SB_SOURCE;
	int fd = fanotify_init(FAN_REPORT_MNT | FAN_CLASS_NOTIF | FAN_CLOEXEC |
				       (polled ? FAN_NONBLOCK : 0),
			       0);
	int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	int ep = wait == FLOOR_EPOLL ? epoll_create1(EPOLL_CLOEXEC) : -1;
	struct epoll_event ee = {.events = EPOLLIN};
	char buf[4096], line[8192];
	union {
		struct mr_statmount sm;
		char b[8192];
	} u;

	if (fd < 0 || ns < 0 ||
	    fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH | FAN_MNT_DETACH, ns,
			  NULL) < 0)
		exit(1);
	if (wait == FLOOR_EPOLL && (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee) < 0))
		exit(1);
	atomic_store(&seen->ready, 1);
	for (;;) {
		struct pollfd p = {.fd = wait == FLOOR_EPOLL ? ep : fd, .events = POLLIN};
		if (polled && poll(&p, 1, -1) < 0)
			exit(1);
		if (wait == FLOOR_EPOLL && epoll_wait(ep, &ee, 1, 0) < 0)
			exit(1);
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && polled && errno == EAGAIN)
			continue;
		if (n <= 0)
			exit(1);
		for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, n);
		     m = FAN_EVENT_NEXT(m, n)) {
			struct mr_fanotify_info_mnt *info = (void *)(m + 1);
			struct mr_mnt_id_req req = {.size = MR_MNT_ID_REQ_SIZE_VER0, .mnt_id = info->mnt_id,
						 .param = fields ? event : basic};
			const char *what = m->mask & FAN_MNT_ATTACH ? "attach" : "detach";
			int len;
			if (m->mask & FAN_MNT_ATTACH &&
			    syscall(__NR_statmount, &req, &u.sm, sizeof(u), 0) == 0)
				len = fields ? snprintf(line, sizeof(line), "%s %s %s %s %s %s\n", what,
							u.sm.str + u.sm.mnt_point,
							u.sm.str + u.sm.fs_type,
							u.sm.str + u.sm.sb_source,
							u.sm.str + u.sm.mnt_opts,
							u.sm.str + u.sm.mnt_root)
					     : snprintf(line, sizeof(line), "%s %s %s\n", what,
							u.sm.str + u.sm.mnt_point,
							u.sm.str + u.sm.fs_type);
			else
				len = snprintf(line, sizeof(line), "%s %llu\n", what,
					       (unsigned long long)info->mnt_id);
			(void)!write(out, line, (size_t)len);
			took(seen);
		}
	}
}

/* ---- mountrouter: a subscriber on @root asking for every kind ---- */

/* Who runs the router, and how its thread waits. */
enum drive {
	DRIVE_THREAD, /* mr_router_start(): its own thread */
	DRIVE_LOOP,   /* the subscriber's: poll(mr_router_fd()), mr_router_dispatch() */
	DRIVE_WAIT,   /* the subscriber's: mr_router_wait(), mr_router_dispatch() */
};

static void publish_syscalls(mr_router *r, struct seen *seen)
{
	struct mr_stats st;

	if (mr_router_stats(r, &st) == 0)
		atomic_store(&seen->syscalls, st.syscalls); /* io_uring_enters among them */
}

/*
 * Lets the router finish its start-up work before the first change (a
 * source's first pass after its start, which on epoll the registration of
 * mountinfo's doorbell always asks for): until its syscall count holds for
 * 20 ms, dispatching it meanwhile when it runs on this thread; on its own
 * thread, whose counts show only once a step is done, for 250 ms, longer
 * than a pass at 30,000 mounts takes.  Otherwise that work would be counted
 * against the first change.
 */
static void settle(mr_router *r, enum drive drive)
{
	struct mr_stats before, after;

	do {
		mr_router_stats(r, &before);
		if (drive != DRIVE_THREAD) {
			struct pollfd p = {.fd = mr_router_fd(r), .events = POLLIN};
			if (poll(&p, 1, 20) > 0)
				mr_router_dispatch(r);
		} else {
			usleep(250000);
		}
		mr_router_stats(r, &after);
	} while (after.syscalls != before.syscalls);
}

/*
 * @drive: DRIVE_THREAD runs the router on its own thread, which wakes the
 * subscriber's; the others on the subscriber's thread (wait,
 * mr_router_dispatch(), then read the ring), one wake-up a change, as the
 * floor has.
 */
static void run_router(const char *source, enum drive drive, uint32_t kinds, const char *root,
		       struct seen *seen, int out)
{
	const bool one_thread = drive != DRIVE_THREAD;
	struct mr_opts o = {.size = sizeof(o), .flags = watcher_router_flags, .source = source};
	struct mr_sub_opts so = {.size = sizeof(so), .subtree = root, .kinds = kinds};
	mr_router *r;
	mr_sub *s;
	char line[8192];

	if (mr_router_new(&o, &r) < 0 || mr_subscribe(r, &so, &s) < 0)
		exit(1);
	if (one_thread)
		mr_router_dispatch(r);
	else if (mr_router_start(r) < 0)
		exit(1);
	settle(r, drive);
	publish_syscalls(r, seen);
	atomic_store(&seen->ready, 1);
	for (;;) {
		const struct mr_event *ev;
		if (mr_sub_next(s, &ev) == -EAGAIN) {
			if (drive == DRIVE_WAIT) {
				if (mr_router_wait(r, -1) > 0)
					mr_router_dispatch(r);
			} else if (drive == DRIVE_LOOP) {
				struct pollfd p = {.fd = mr_router_fd(r), .events = POLLIN};
				poll(&p, 1, -1);
				mr_router_dispatch(r);
			} else {
				mr_sub_wait(s, -1);
			}
			continue;
		}
		int len = snprintf(line, sizeof(line), "%s %s %s %s\n", mr_event_kind_name(ev->kind),
				   ev->path ? ev->path : "", ev->fstype ? ev->fstype : "",
				   ev->options ? ev->options : "");
		(void)!write(out, line, (size_t)len);
		mr_event_unref(ev);
		publish_syscalls(r, seen);
		took(seen);
	}
}

/* ---- the bare poller: POLLPRI, read it all, diff lines by mount ID ---- */

struct line_at {
	unsigned long id;
	uint64_t hash;
};

static uint64_t hash_line(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static int by_id(const void *a, const void *b)
{
	const struct line_at *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static size_t read_lines(int fd, char **buf, size_t *cap, struct line_at **v, size_t *vcap)
{
	size_t len = 0, n = 0;
	ssize_t r;

	for (;;) {
		if (len == *cap) {
			*cap = *cap ? *cap * 2 : 1 << 20;
			*buf = realloc(*buf, *cap);
		}
		r = pread(fd, *buf + len, *cap - len, (off_t)len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	for (char *p = *buf, *end = *buf + len, *nl; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		if (n == *vcap) {
			*vcap = *vcap ? *vcap * 2 : 1024;
			*v = realloc(*v, *vcap * sizeof(**v));
		}
		(*v)[n++] = (struct line_at){strtoul(p, NULL, 10), hash_line(p, (size_t)(nl - p))};
	}
	qsort(*v, n, sizeof(**v), by_id);
	return n;
}

static void run_poller(struct seen *seen, int out)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t cap = 0, vcap[2] = {0, 0}, n[2];
	struct line_at *v[2] = {NULL, NULL};
	int cur = 0;
	char line[128];

	if (fd < 0)
		exit(1);
	n[cur] = read_lines(fd, &buf, &cap, &v[cur], &vcap[cur]);
	atomic_store(&seen->ready, 1);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLPRI};
		if (poll(&p, 1, -1) <= 0)
			continue;
		int nxt = !cur;
		n[nxt] = read_lines(fd, &buf, &cap, &v[nxt], &vcap[nxt]);
		size_t i = 0, j = 0, changes = 0;
		while (i < n[cur] || j < n[nxt]) {
			const char *what = NULL;
			unsigned long id;
			if (j == n[nxt] || (i < n[cur] && v[cur][i].id < v[nxt][j].id)) {
				what = "umount", id = v[cur][i++].id;
			} else if (i == n[cur] || v[nxt][j].id < v[cur][i].id) {
				what = "mount", id = v[nxt][j++].id;
			} else {
				if (v[cur][i].hash != v[nxt][j].hash)
					what = "change";
				id = v[nxt][j].id;
				i++, j++;
			}
			if (what) {
				int len = snprintf(line, sizeof(line), "%s %lu\n", what, id);
				(void)!write(out, line, (size_t)len);
				changes++;
			}
		}
		cur = nxt;
		if (changes)
			took(seen);
	}
}

/* ---- findmnt --poll, read through a pipe ---- */

static void run_findmnt(struct seen *seen)
{
	int p[2];
	char buf[65536];

	if (pipe(p) < 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execlp("findmnt", "findmnt", "--poll", "-n", "-r", "-o", "ACTION,TARGET", NULL);
		_exit(127);
	}
	close(p[1]);
	/* findmnt reads the table before it polls: give it that time. */
	usleep(200000);
	atomic_store(&seen->ready, 1);
	for (;;) {
		ssize_t n = read(p[0], buf, sizeof(buf));
		if (n <= 0)
			exit(0);
		took(seen);
	}
}

int watcher_probe(enum watcher w)
{
	struct mr_opts o = {.size = sizeof(o)};
	mr_router *r;
	int err;

	switch (w) {
	case W_FLOOR:
	case W_FLOOR_POLLED:
	case W_FLOOR_FIELDS:
	case W_FLOOR_EPOLL:
	case W_FANOTIFY:
	case W_FANOTIFY_1T:
	case W_FANOTIFY_TOPO:
	case W_FANOTIFY_WAIT:
		o.source = "fanotify";
		break;
	case W_LISTMOUNT:
	case W_LISTMOUNT_1T:
		o.source = "listmount";
		break;
	case W_MOUNTINFO:
	case W_MOUNTINFO_1T:
		o.source = "mountinfo";
		break;
	case W_WATCH_MOUNT:
		/* Named, so a kernel without it gives -ENOSYS, not another source. */
		o.source = "watch_mount";
		break;
	case W_FINDMNT:
		return system("findmnt --version >/dev/null 2>&1") == 0 ? 0 : -ENOENT;
	default:
		return 0;
	}
	err = mr_router_new(&o, &r);
	if (err < 0)
		return err;
	mr_router_free(r);
	return 0;
}

void watcher_run(enum watcher w, const char *root, struct seen *seen)
{
	int out = open("/dev/null", O_WRONLY | O_CLOEXEC);

	switch (w) {
	case W_FLOOR:
		run_floor(FLOOR_READ, false, seen, out);
		break;
	case W_FLOOR_POLLED:
		run_floor(FLOOR_POLL, false, seen, out);
		break;
	case W_FLOOR_FIELDS:
		run_floor(FLOOR_READ, true, seen, out);
		break;
	case W_FLOOR_EPOLL:
		run_floor(FLOOR_EPOLL, false, seen, out);
		break;
	case W_FANOTIFY:
		run_router("fanotify", DRIVE_THREAD, 0, root, seen, out);
		break;
	case W_FANOTIFY_1T:
		run_router("fanotify", DRIVE_LOOP, 0, root, seen, out);
		break;
	case W_FANOTIFY_WAIT:
		run_router("fanotify", DRIVE_WAIT, 0, root, seen, out);
		break;
	case W_FANOTIFY_TOPO:
		run_router("fanotify", DRIVE_LOOP,
			   MR_KIND(MR_EVENT_MOUNT) | MR_KIND(MR_EVENT_UNMOUNT) | MR_KIND(MR_EVENT_MOVE),
			   root, seen, out);
		break;
	case W_LISTMOUNT:
		run_router("listmount", DRIVE_THREAD, 0, root, seen, out);
		break;
	case W_MOUNTINFO:
		run_router("mountinfo", DRIVE_THREAD, 0, root, seen, out);
		break;
	case W_LISTMOUNT_1T:
		run_router("listmount", DRIVE_LOOP, 0, root, seen, out);
		break;
	case W_MOUNTINFO_1T:
		run_router("mountinfo", DRIVE_LOOP, 0, root, seen, out);
		break;
	case W_POLLER:
		run_poller(seen, out);
		break;
	case W_FINDMNT:
		run_findmnt(seen);
		break;
	case W_WATCH_MOUNT:
		/* As W_FANOTIFY_1T: one wake-up a change, comparable with the floor. */
		run_router("watch_mount", DRIVE_LOOP, 0, root, seen, out);
		break;
	default:
		break;
	}
	exit(1);
}
