/* SPDX-License-Identifier: MIT */
/*
 * One fanotify group for every namespace a router watches through fanotify.
 * fanotify allows 128 groups per user by default (fs.fanotify.
 * max_user_groups) and 8,192 marks (max_user_marks); a node with hundreds
 * of container namespaces would run out of groups with one each, so each
 * namespace is a mark (FAN_MARK_MNTNS) on the router's one group.
 *
 * A record carries a mount ID and no namespace, so the group finds it one:
 *  - with one namespace marked, that one (no cost);
 *  - a detach, a move or an attribute change: the namespace whose mirror
 *    holds the mount,
 *    looked for most recently used first;
 *  - an attach: the namespace of the process that made it (the record's
 *    pid, /proc/PID/ns/mnt), confirmed by a statmount of the mount's flags
 *    there; failing that (a copy propagated into another namespace, a
 *    process gone), each namespace in turn, most recently used first.
 * A record no namespace claims is a mount gone before it could be looked
 * up, or one of a namespace not started yet: the latter resyncs when it
 * starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/fanotify_group.h"
#include "internal.h"
#include "alloc.h"
#include "clock.h"
#include "io/reactor.h"
#include "mirror/listmount.h"
#include "mirror/mirror.h"
#include "namespace.h"
#include "probe.h"
#include "router/upcalls.h"
#include "sources/decode.h"
#include "mountrouter-uapi.h"

#define MASK (FAN_MNT_ATTACH | FAN_MNT_DETACH)

struct mr__fan_group {
	int fd;
	mr_router *r;
	struct mr__watch watch;
	bool watching;           /* watch registered with the reactor */
	unsigned joined;         /* members marked (under the router's group lock) */
	/*
	 * Marks by namespace (under the lock): a namespace opened twice (added
	 * again while watched) shares one mark, removed with its last member.
	 */
	struct mark {
		uint64_t ino;
		unsigned users;
		bool attr; /* the mark asks for FAN_MNT_ATTR_CHANGE too */
	} *marks;
	size_t n_marks, cap_marks;
	struct mr__fan_member **members; /* started members, most recently used first */
	size_t n, cap;
	_Atomic uint64_t unclaimed; /* records no started member claimed */
	struct mr__change changes[2048];
};

static void group_free(struct mr__fan_group *g)
{
	if (g->fd >= 0)
		close(g->fd);
	mr__free(g->members);
	mr__free(g->marks);
	mr__free(g);
}

static struct mark *mark_of(struct mr__fan_group *g, uint64_t ino)
{
	for (size_t i = 0; i < g->n_marks; i++)
		if (g->marks[i].ino == ino)
			return &g->marks[i];
	return NULL;
}

static void watch_released(struct mr__watch *w)
{
	group_free(w->owner);
}

/* Moves member @i to the front: a container's changes come in runs. */
static struct mr__fan_member *use(struct mr__fan_group *g, size_t i)
{
	struct mr__fan_member *m = g->members[i];

	memmove(g->members + 1, g->members, i * sizeof(*g->members));
	g->members[0] = m;
	return m;
}

/* The nsfs inode of @pid's mount namespace, or 0. */
static uint64_t pid_ns_ino(uint64_t pid)
{
	char path[64], link[64];
	unsigned long long ino;

	snprintf(path, sizeof(path), "/proc/%llu/ns/mnt", (unsigned long long)pid);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	return sscanf(link, "mnt:[%llu]", &ino) == 1 ? ino : 0;
}

static bool holds(struct mr__fan_member *m, uint64_t mnt_id)
{
	struct mr__mount_basic b;
	uint64_t calls = 0;
	int err = mr__statmount_basic(m->ns->id, mnt_id, &calls, &b);

	mr__router_count_syscalls(m->ns->r, calls);
	return err == 0;
}

static struct mr__fan_member *claim(struct mr__fan_group *g, const struct mr__change *c)
{
	if (g->n == 1)
		return g->members[0];
	if (c->kind != MR__CHANGE_ATTACH) {
		for (size_t i = 0; i < g->n; i++)
			if (mr__mirror_get(&g->members[i]->ns->mirror, c->mnt_id))
				return use(g, i);
		if (c->kind != MR__CHANGE_MOVE)
			return NULL; /* a detach of a mount never mirrored: nothing to say */
	}
	uint64_t ino = c->other_id ? pid_ns_ino(c->other_id) : 0;
	size_t tried = SIZE_MAX;
	for (size_t i = 0; ino && i < g->n; i++)
		if (g->members[i]->ino == ino) {
			if (holds(g->members[i], c->mnt_id))
				return use(g, i);
			tried = i;
			break;
		}
	for (size_t i = 0; i < g->n; i++)
		if (i != tried && holds(g->members[i], c->mnt_id))
			return use(g, i);
	return NULL;
}

static void on_records(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct mr__fan_group *g = w->owner;
	uint64_t bad = 0;

	if (res < 0) {
		if (res != -EAGAIN && res != -EINTR)
			for (size_t i = 0; i < g->n; i++)
				mr__router_loss(g->members[i]->ns);
		return;
	}
	if (!g->n)
		return;
	/* One clock read a record: each one's work ends where the next one's starts. */
	uint64_t t0 = mr__router_stamp(g->r);
	size_t n = mr__decode_fanotify(buf, len, g->changes, MR__ARRAY_SIZE(g->changes), &bad);
	if (bad)
		mr__router_count_bad(g->r, bad);
	for (size_t i = 0; i < n; i++) {
		const struct mr__change *c = &g->changes[i];
		if (c->kind == MR__CHANGE_LOSS) {
			/* The group's queue overflowed: every namespace lost records. */
			for (size_t j = 0; j < g->n; j++)
				mr__router_change(g->members[j]->ns, c);
			continue;
		}
		struct mr__fan_member *m = claim(g, c);
		if (!m) {
			atomic_fetch_add_explicit(&g->unclaimed, 1, memory_order_relaxed);
			continue;
		}
		mr__router_change(m->ns, c);
		uint64_t t1 = mr__now_ns();
		m->applied(m, c, t1 - t0, t1);
		t0 = t1;
	}
}

void mr__fan_group_warm(const struct mr__fan_member *m, struct mr__warm *w)
{
	const struct mr__fan_group *g = m->group;

	if (!g)
		return;
	mr__warm_add(w, g, offsetof(struct mr__fan_group, changes) + sizeof(g->changes[0]));
	mr__warm_add(w, g->members, g->n * sizeof(*g->members));
}

int mr__fan_group_join(mr_router *r, struct mr__fan_member *m)
{
	pthread_mutex_t *lock;
	struct mr__fan_group **slot = mr__router_fan_group(r, &lock);
	struct stat st;
	int err = 0;

	if (fstat(m->ns->nsfd, &st) < 0)
		return -errno;
	m->ino = st.st_ino;
	pthread_mutex_lock(lock);
	struct mr__fan_group *g = *slot;
	if (!g) {
		g = mr__calloc(1, sizeof(*g));
		if (!g) {
			err = -ENOMEM;
			goto out;
		}
		g->r = r;
		/* Non-blocking: io_uring retries a read that would block by polling. */
		g->fd = fanotify_init(FAN_REPORT_MNT | FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, 0);
		if (g->fd < 0) {
			err = -errno;
			mr__free(g);
			goto out;
		}
		*slot = g;
	}
	struct mark *mk = mark_of(g, m->ino);
	if (!mk && g->n_marks == g->cap_marks) {
		size_t cap = g->cap_marks ? g->cap_marks * 2 : 8;
		struct mark *v = mr__realloc(g->marks, cap * sizeof(*v));
		if (!v)
			err = -ENOMEM;
		else
			g->marks = v, g->cap_marks = cap;
	}
	bool attr = false;
	if (!err && !mk) {
		/*
		 * The project kernel names the mount an attribute change touched
		 * (FAN_MNT_ATTR_CHANGE): ask for it where it is allowed, attach and
		 * detach alone where it is not.
		 */
		attr = mr__probe()->fanotify_mnt_attr &&
		       fanotify_mark(g->fd, FAN_MARK_ADD | FAN_MARK_MNTNS, MASK | FAN_MNT_ATTR_CHANGE,
				     m->ns->nsfd, NULL) == 0;
		if (!attr &&
		    fanotify_mark(g->fd, FAN_MARK_ADD | FAN_MARK_MNTNS, MASK, m->ns->nsfd, NULL) < 0)
			err = -errno;
	}
	if (err < 0) {
		if (!g->joined) {
			*slot = NULL;
			group_free(g);
		}
		goto out;
	}
	if (!mk) {
		mk = &g->marks[g->n_marks++];
		*mk = (struct mark){.ino = m->ino, .attr = attr};
	}
	mk->users++;
	m->attr_events = mk->attr;
	g->joined++;
	m->group = g;
	m->unclaimed_at_join = atomic_load_explicit(&g->unclaimed, memory_order_relaxed);
out:
	pthread_mutex_unlock(lock);
	return err;
}

int mr__fan_group_start(struct mr__fan_member *m, struct mr__reactor *re)
{
	struct mr__fan_group *g = m->group;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8;
		struct mr__fan_member **v = mr__realloc(g->members, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		g->members = v;
		g->cap = cap;
	}
	memmove(g->members + 1, g->members, g->n * sizeof(*g->members));
	g->members[0] = m;
	g->n++;
	m->started = true;
	/* Records of this namespace may have come before it started: read it again. */
	if (atomic_load_explicit(&g->unclaimed, memory_order_relaxed) != m->unclaimed_at_join)
		mr__router_loss(m->ns);
	if (g->watching)
		return 0;
	g->watch = (struct mr__watch){.fd = g->fd, .mode = MR__WATCH_READ, .fn = on_records,
				      .owner = g, .release = watch_released};
	int err = mr__reactor_add(re, &g->watch);
	if (err == 0)
		g->watching = true;
	return err;
}

void mr__fan_group_leave(struct mr__fan_member *m, struct mr__reactor *re)
{
	struct mr__fan_group *g = m->group;
	pthread_mutex_t *lock;
	struct mr__fan_group **slot;

	if (!g)
		return;
	slot = mr__router_fan_group(g->r, &lock);
	if (m->started) {
		for (size_t i = 0; i < g->n; i++)
			if (g->members[i] == m) {
				memmove(g->members + i, g->members + i + 1,
					(g->n - i - 1) * sizeof(*g->members));
				g->n--;
				break;
			}
		m->started = false;
	}
	m->group = NULL;
	pthread_mutex_lock(lock);
	struct mark *mk = mark_of(g, m->ino);
	if (mk && --mk->users == 0) {
		/* The namespace may be gone already: then so is its mark. */
		(void)fanotify_mark(g->fd, FAN_MARK_REMOVE | FAN_MARK_MNTNS,
				    MASK | (mk->attr ? FAN_MNT_ATTR_CHANGE : 0), m->ns->nsfd, NULL);
		*mk = g->marks[--g->n_marks];
	}
	bool last = --g->joined == 0;
	if (last)
		*slot = NULL;
	pthread_mutex_unlock(lock);
	if (!last)
		return;
	if (g->watching && re) {
		g->watch.owner = g;
		mr__reactor_remove(re, &g->watch); /* its release frees the group */
	} else if (!g->watching) {
		group_free(g);
	}
	/* Watching but no reactor: the router is being torn down without one; it frees the group. */
}
