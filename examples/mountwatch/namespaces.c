/* SPDX-License-Identifier: MIT */
/*
 * mountwatch: which namespaces are watched, and their subscriptions.
 *
 * Namespaces are known by their nsfs inode (dev, ino): stat() on
 * /proc/PID/ns/mnt is one cheap syscall, whereas adding a namespace to the
 * router reads its whole mount table before it can say "already watched".
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mountwatch.h"

struct ns_entry {
	uint64_t id;
	dev_t dev;
	ino_t ino;
	pid_t pid;          /* a process that was in it when it was added */
	int pidfd;          /* --ns PID: readable when that process exits (-1: none) */
	bool pinned;        /* named on the command line: never dropped */
	bool failed;        /* could not be added: do not retry every rescan */
	bool seen;          /* found by the current rescan */
	mr_sub **subs;
	size_t n_subs;
};

struct mw_watch {
	mr_router *r;
	const struct mw_opts *o;
	struct ns_entry *v;
	size_t n, cap;
	const struct mr_event **pending;
	size_t n_pending, cap_pending;
	int epfd;           /* the pidfds of --ns PID entries (-1: none yet) */
};

static struct ns_entry *find(struct mw_watch *w, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].dev == dev && w->v[i].ino == ino)
			return &w->v[i];
	return NULL;
}

static struct ns_entry *append(struct mw_watch *w, const struct stat *st)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct ns_entry *v = realloc(w->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		w->v = v;
		w->cap = cap;
	}
	struct ns_entry *e = &w->v[w->n++];
	*e = (struct ns_entry){.dev = st->st_dev, .ino = st->st_ino, .pidfd = -1};
	return e;
}

static int by_length(const void *a, const void *b)
{
	size_t x = strlen(*(const char *const *)a), y = strlen(*(const char *const *)b);

	return x < y ? -1 : x > y;
}

/* One subscription per subtree: the router's trie does the matching. */
static int subscribe(struct mw_watch *w, struct ns_entry *e)
{
	const struct mw_opts *o = w->o;
	const char *root = "/";
	char *const *paths = o->mountpoint ? &o->mountpoint : o->n_subtrees ? o->subtrees : (char **)&root;
	size_t n = o->mountpoint ? 1 : o->n_subtrees ? o->n_subtrees : 1;

	e->subs = calloc(n, sizeof(*e->subs));
	if (!e->subs)
		return -ENOMEM;
	/*
	 * Outer subtrees first: their snapshots come first (the router
	 * applies subscriptions in order), so the snapshot lines run parents
	 * first and the nested subtrees' copies of them are the ones dropped.
	 */
	const char **order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = paths[i];
	qsort(order, n, sizeof(*order), by_length);
	for (size_t i = 0; i < n; i++) {
		struct mr_sub_opts so = {
			.size = sizeof(so),
			.flags = o->snapshot ? MR_SUB_SNAPSHOT : 0,
			.ns_id = e->id,
			.subtree = order[i],
			.kinds = o->kinds,
			.capacity = o->queue,
		};
		int err = mr_subscribe(w->r, &so, &e->subs[i]);
		if (err < 0) {
			fprintf(stderr, "mountwatch: cannot subscribe to %s in namespace %llu: %s\n",
				order[i], (unsigned long long)e->id, strerror(-err));
			free(order);
			return err;
		}
		e->n_subs++;
	}
	free(order);
	return 0;
}

static void unsubscribe(struct ns_entry *e)
{
	for (size_t i = 0; i < e->n_subs; i++)
		mr_unsubscribe(e->subs[i]);
	free(e->subs);
	e->subs = NULL;
	e->n_subs = 0;
}

/*
 * One line per namespace, named as lsns names it (the nsfs inode), the
 * router's ID beside, and when it is watched by another source than the
 * router's (a limit reached, a kernel that cannot name it), a second one
 * saying which and why.
 */
static void announce(struct mw_watch *w, const struct ns_entry *e, const char *how)
{
	const char *name = "", *why = "";

	if (e->pid > 0)
		fprintf(stderr, "mountwatch: watching mount namespace %llu (id %llu, %s, pid %d)\n",
			(unsigned long long)e->ino, (unsigned long long)e->id, how, (int)e->pid);
	else
		fprintf(stderr, "mountwatch: watching mount namespace %llu (id %llu, %s)\n",
			(unsigned long long)e->ino, (unsigned long long)e->id, how);
	if (mr_router_ns_source(w->r, e->id, &name, &why) == 0 &&
	    strcmp(name, mr_router_source(w->r)))
		fprintf(stderr, "mountwatch: mount namespace %llu: source %s: %s\n",
			(unsigned long long)e->ino, name, why);
}

static int check_subtrees(const struct mw_watch *w, const struct ns_entry *e);

/* The caller's namespace, which mr_router_new() added already. */
static int add_self(struct mw_watch *w)
{
	struct stat st;
	uint64_t id = 0;

	if (stat("/proc/self/ns/mnt", &st) < 0) {
		int err = -errno;
		fprintf(stderr, "mountwatch: /proc/self/ns/mnt: %s (is /proc mounted?)\n",
			strerror(-err));
		return err;
	}
	/* -EEXIST still stores the ID: the cheap way to learn it. */
	int err = mr_router_add_ns_self(w->r, &id);
	if (err < 0 && err != -EEXIST) {
		fprintf(stderr, "mountwatch: cannot watch this process's mount namespace: %s\n",
			strerror(-err));
		return err;
	}
	struct ns_entry *e = append(w, &st);
	if (!e)
		return -ENOMEM;
	e->id = id;
	e->pinned = true;
	if ((err = check_subtrees(w, e)) < 0)
		return err;
	announce(w, e, "this process's");
	return subscribe(w, e);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/*
 * --ns PID: a pidfd (5.3+) tells when the process exits, so that the
 * watch can follow another process of the namespace, or end and say so,
 * instead of going silent.
 */
static int follow_pid(struct mw_watch *w, struct ns_entry *e, pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		return -errno;
	if (w->epfd < 0 && (w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	struct epoll_event ee = {.events = EPOLLIN, .data.u64 = e->ino};
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ee) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (e->pidfd >= 0)
		close(e->pidfd);
	e->pidfd = fd;
	e->pid = pid;
	return 0;
}

/* A process still in the namespace (dev, ino), or 0. */
static pid_t find_member(dev_t dev, ino_t ino)
{
	DIR *dir = opendir("/proc");
	struct dirent *d;
	pid_t found = 0;
	char p[64];

	if (!dir)
		return 0;
	while (!found && (d = readdir(dir))) {
		struct stat st;
		if (!all_digits(d->d_name))
			continue;
		snprintf(p, sizeof(p), "/proc/%.20s/ns/mnt", d->d_name);
		if (stat(p, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
			found = (pid_t)strtol(d->d_name, NULL, 10);
	}
	closedir(dir);
	return found;
}

int mw_watch_pid_fd(const struct mw_watch *w)
{
	return w->epfd;
}

int mw_watch_pid_exited(struct mw_watch *w)
{
	struct epoll_event ev[8];
	int n = epoll_wait(w->epfd, ev, 8, 0);

	for (int i = 0; i < n; i++) {
		struct ns_entry *e = NULL;
		for (size_t k = 0; k < w->n; k++)
			if (w->v[k].pidfd >= 0 && w->v[k].ino == (ino_t)ev[i].data.u64)
				e = &w->v[k];
		if (!e)
			continue;
		pid_t old = e->pid;
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, e->pidfd, NULL);
		close(e->pidfd);
		e->pidfd = -1;
		pid_t next = find_member(e->dev, e->ino);
		if (next && follow_pid(w, e, next) == 0) {
			fprintf(stderr, "mountwatch: pid %d exited; following pid %d, also in mount "
					"namespace %llu\n", (int)old, (int)next,
				(unsigned long long)e->ino);
			continue;
		}
		fprintf(stderr, "mountwatch: mount namespace %llu ended: pid %d, its last process, "
				"exited\n", (unsigned long long)e->ino, (int)old);
		return -MW_ENSGONE;
	}
	return 0;
}

/*
 * A subtree must exist where it is watched, seen through a process of the
 * namespace (/proc/PID/root): a typo would otherwise watch nothing,
 * silently.  Namespaces named by a file have no process to look through,
 * and --all-namespaces ones come and go: for those the subtree is taken on
 * trust (mountwatch(1) says so).
 */
static int check_subtrees(const struct mw_watch *w, const struct ns_entry *e)
{
	const struct mw_opts *o = w->o;
	char *const *paths = o->mountpoint ? &o->mountpoint : o->subtrees;
	size_t n = o->mountpoint ? 1 : o->n_subtrees;

	for (size_t i = 0; i < n; i++) {
		char p[4200];
		struct stat st;
		if (e->pid)
			snprintf(p, sizeof(p), "/proc/%d/root%s", (int)e->pid, paths[i]);
		else
			snprintf(p, sizeof(p), "%s", paths[i]);
		if (stat(p, &st) < 0) {
			int err = -errno;
			fprintf(stderr, "mountwatch: %s %s: %s in mount namespace %llu\n",
				o->mountpoint ? "--mountpoint" : "--subtree", paths[i],
				strerror(-err), (unsigned long long)e->ino);
			return err == -EACCES ? err : -ENOENT;
		}
	}
	return 0;
}

/* --ns PID or --ns PATH (an nsfs file, or a bind mount of one). */
static int add_named(struct mw_watch *w, const char *arg)
{
	struct stat st;
	uint64_t id = 0;
	int err, fd;
	pid_t pid = 0;

	if (all_digits(arg)) {
		char p[64];
		pid = (pid_t)strtol(arg, NULL, 10);
		snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = errno == ENOENT ? -ESRCH : -errno;
			fprintf(stderr, "mountwatch: --ns %s: %s\n", arg, strerror(-err));
			return err;
		}
	} else {
		fd = open(arg, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			fprintf(stderr, "mountwatch: --ns %s: %s\n", arg, strerror(-err));
			return err;
		}
		/* 4.11: NS_GET_NSTYPE; any other file fails it with ENOTTY. */
		if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNS) {
			fprintf(stderr, "mountwatch: --ns %s: not a mount namespace file (such as "
					"/proc/PID/ns/mnt)\n", arg);
			close(fd);
			return -EINVAL;
		}
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		fprintf(stderr, "mountwatch: --ns %s: %s\n", arg, strerror(-err));
		close(fd);
		return err;
	}
	if (find(w, st.st_dev, st.st_ino)) {
		close(fd); /* named twice: once is enough */
		return 0;
	}
	err = pid ? mr_router_add_ns_pid(w->r, pid, &id) : mr_router_add_ns_fd(w->r, fd, &id);
	close(fd);
	if (err < 0 && err != -EEXIST) {
		fprintf(stderr, "mountwatch: --ns %s: %s%s\n", arg, strerror(-err),
			err == -EINVAL && !pid ? " (not a mount namespace file?)" : "");
		return err;
	}
	struct ns_entry *e = append(w, &st);
	if (!e)
		return -ENOMEM;
	e->id = id;
	e->pid = pid;
	e->pinned = true;
	if (pid && (err = follow_pid(w, e, pid)) < 0) {
		fprintf(stderr, "mountwatch: --ns %s: cannot follow the process: %s\n", arg,
			strerror(-err));
		return err;
	}
	if (pid && (err = check_subtrees(w, e)) < 0)
		return err;
	announce(w, e, "--ns");
	return subscribe(w, e);
}

int mw_watch_rescan(struct mw_watch *w)
{
	DIR *dir;
	struct dirent *d;
	char p[64];

	if (!w->o->all_namespaces)
		return 0;
	for (size_t i = 0; i < w->n; i++)
		w->v[i].seen = false;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		struct stat st;
		uint64_t id = 0;

		if (!all_digits(d->d_name))
			continue;
		pid_t pid = (pid_t)strtol(d->d_name, NULL, 10);
		snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
		if (stat(p, &st) < 0)
			continue; /* gone, or a kernel thread */
		struct ns_entry *e = find(w, st.st_dev, st.st_ino);
		if (e) {
			e->seen = true;
			continue;
		}
		int err = mr_router_add_ns_pid(w->r, pid, &id);
		if (err == -ESRCH)
			continue; /* died while we looked */
		e = append(w, &st);
		if (!e) {
			closedir(dir);
			return -ENOMEM;
		}
		e->seen = true;
		e->pid = pid;
		if (err < 0 && err != -EEXIST) {
			e->failed = true;
			fprintf(stderr, "mountwatch: cannot watch the mount namespace of pid %d: %s\n",
				(int)pid, strerror(-err));
			continue;
		}
		e->id = id;
		announce(w, e, "new");
		if (subscribe(w, e) < 0)
			e->failed = true;
	}
	closedir(dir);

	/* No process holds it any more: it is gone, or about to be. */
	for (size_t i = 0; i < w->n;) {
		struct ns_entry *e = &w->v[i];
		if (e->seen || e->pinned) {
			i++;
			continue;
		}
		if (!e->failed) {
			unsubscribe(e);
			int err = mr_router_remove_ns(w->r, e->id);
			fprintf(stderr, "mountwatch: mount namespace %llu is gone%s\n",
				(unsigned long long)e->ino, err < 0 ? " (router did not know it)" : "");
		}
		w->v[i] = w->v[--w->n];
	}
	return 0;
}

int mw_watch_new(mr_router *r, const struct mw_opts *o, struct mw_watch **ret)
{
	struct mw_watch *w = calloc(1, sizeof(*w));
	int err = 0;

	if (!w)
		return -ENOMEM;
	w->r = r;
	w->o = o;
	w->epfd = -1;
	if (o->all_namespaces) {
		err = mw_watch_rescan(w);
		/* Without a process there is nothing to find, now or later. */
		if (err >= 0 && !w->n) {
			fprintf(stderr, "mountwatch: --all-namespaces: no process under /proc "
					"(is procfs mounted?)\n");
			err = -ENOENT;
		}
	}
	else if (o->n_ns_args)
		for (size_t i = 0; i < o->n_ns_args && err >= 0; i++)
			err = add_named(w, o->ns_args[i]);
	else
		err = add_self(w);
	if (err < 0) {
		mw_watch_free(w);
		return err;
	}
	*ret = w;
	return 0;
}

void mw_watch_free(struct mw_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++) {
		unsubscribe(&w->v[i]);
		if (w->v[i].pidfd >= 0)
			close(w->v[i].pidfd);
	}
	if (w->epfd >= 0)
		close(w->epfd);
	free(w->v);
	free(w->pending);
	free(w);
}

uint64_t mw_watch_ns_inode(const struct mw_watch *w, uint64_t ns_id)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].id == ns_id)
			return (uint64_t)w->v[i].ino;
	return 0;
}

size_t mw_watch_namespaces(const struct mw_watch *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += !w->v[i].failed;
	return n;
}

static int by_seq(const void *a, const void *b)
{
	const struct mr_event *x = *(const struct mr_event *const *)a;
	const struct mr_event *y = *(const struct mr_event *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int mw_watch_drain(struct mw_watch *w, int (*fn)(const struct mr_event *ev, void *arg), void *arg)
{
	int err = 0;

	w->n_pending = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct ns_entry *e = &w->v[i];
		for (size_t k = 0; k < e->n_subs; k++) {
			const struct mr_event *ev;
			while (mr_sub_next(e->subs[k], &ev) == 0) {
				if (w->n_pending == w->cap_pending) {
					size_t cap = w->cap_pending ? w->cap_pending * 2 : 256;
					const struct mr_event **v =
						realloc(w->pending, cap * sizeof(*v));
					if (!v) {
						mr_event_unref(ev);
						err = -ENOMEM;
						break;
					}
					w->pending = v;
					w->cap_pending = cap;
				}
				w->pending[w->n_pending++] = ev;
			}
		}
	}
	/*
	 * Each subscription's ring is in router order; merging them by the
	 * router-wide seq restores the kernel's order across subtrees, and
	 * puts the copies of an event that matched several subtrees side by
	 * side, where they are dropped.
	 */
	if (w->n_pending > 1) /* qsort(NULL, 0, ...) is undefined */
		qsort(w->pending, w->n_pending, sizeof(*w->pending), by_seq);
	for (size_t i = 0; i < w->n_pending; i++) {
		const struct mr_event *ev = w->pending[i];
		bool dup = i && w->pending[i - 1]->seq == ev->seq;
		if (!dup && err >= 0)
			err = fn(ev, arg);
	}
	for (size_t i = 0; i < w->n_pending; i++)
		mr_event_unref(w->pending[i]);
	w->n_pending = 0;
	return err;
}
