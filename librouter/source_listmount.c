/* SPDX-License-Identifier: MIT */
/*
 * The listmount source (6.8+), for kernels without fanotify mount events
 * (6.8-6.14: Ubuntu 24.04, Debian 13, RHEL 10) or where fanotify cannot be
 * had.  /proc/PID/mountinfo polls POLLPRI when the namespace's event
 * counter moves; the file is never read.  Each POLLPRI lists the mount IDs
 * with listmount(2) (one call for the whole table: 10,000 IDs in about
 * 0.6 ms, some 20x less than one mountinfo read), diffs them against the IDs
 * of the last listing, and statmounts new IDs only: attach and detach cost
 * one listmount plus O(changed).
 *
 * IDs come sorted (the namespace keeps its mounts in an rbtree by unique ID)
 * and the diff is a merge of two sorted arrays, which are swapped after it,
 * so no allocation happens once they are big enough.
 *
 * Where NS_MNT_GET_INFO (6.12) counts the namespace's mounts, an attach
 * costs O(new) instead: list only the IDs above the last one known (new
 * mounts get new, higher IDs), and if the count is the known one plus those,
 * nothing went away.  The count cannot tell every case apart: a mount made
 * earlier and attached now (fsmount(2), then move_mount(2)) has an older ID
 * and is not listed, and if one went away meanwhile the counts agree.  So a
 * conclusion drawn from counts is checked by a whole listing later, once the
 * namespace is quiet (at most VERIFY_MAX_NS after, and no more than
 * 1/VERIFY_DUTY of the router's time).  A detach, where counts fall short,
 * lists everything at once.  LISTMOUNT_REVERSE adds nothing to this: new
 * IDs are the highest, and listing above the last known one finds them
 * in the same O(new).
 *
 * Moves, remounts and mount_setattr(2) leave the ID set as it was.  A
 * POLLPRI the ID set does not explain therefore gets an O(table) pass, but
 * only while a subscriber of the namespace asks for those kinds
 * (pass_unexplained()).  A POLLPRI that the ID set does explain may still
 * hide one (the kernel coalesces events between two polls): while such
 * kinds are wanted, the same pass runs once the namespace has been quiet
 * for VERIFY_QUIET_NS, and at the latest VERIFY_MAX_NS after it was owed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "mountrouter-uapi.h"

#define IDS_MIN 1024
#define VERIFY_QUIET_NS 50000000ull      /* 50 ms */
#define VERIFY_MAX_NS 1000000000ull      /* 1 s */
#define VERIFY_DUTY 100

/* The kinds an ID set cannot tell: they need a pass over the table. */
#define KINDS_FLAGS (MR_KIND(MR_EVENT_READONLY) | MR_KIND(MR_EVENT_ATTR) | MR_KIND(MR_EVENT_MOVE))
/* Of those, the ones flags, parent and propagation may miss (options, same-parent moves). */
#define KINDS_FULL (MR_KIND(MR_EVENT_ATTR) | MR_KIND(MR_EVENT_MOVE))

struct lm_ids {
	uint64_t *v;
	size_t n, cap;
};

struct lm_state {
	struct mr__ns *ns;
	int mi_fd;
	uint64_t ns_id;          /* for the syscalls: 0 names our own namespace */
	struct mr__watch mi_watch, timer;
	unsigned live;           /* watches the reactor still holds */
	bool timer_armed;
	struct lm_ids known, next; /* the last listing; the one being read */
	uint64_t owed_since_ns;  /* a pass owed for coalesced POLLPRIs, or 0 */
	uint64_t last_pollpri_ns;
	bool counts_ok;          /* NS_MNT_GET_INFO counts what listmount lists */
	uint64_t verify_since_ns; /* known rests on counts since then, or 0 */
	uint64_t full_cpu_ns;    /* CPU time of the last whole listing */
	struct mr__table scratch; /* mounts a pass looks at */
};

static int lm_probe(void)
{
	return mr__probe()->listmount ? 0 : -ENOSYS;
}

static void state_free(struct lm_state *st)
{
	if (st->mi_fd >= 0)
		close(st->mi_fd);
	mr__free(st->known.v);
	mr__free(st->next.v);
	mr__table_clear(&st->scratch);
	mr__free(st->scratch.v);
	mr__free(st);
}

static void watch_released(struct mr__watch *w)
{
	struct lm_state *st = w->owner;

	if (--st->live == 0)
		state_free(st);
}

/*
 * Every mount ID of the namespace into @ids, ascending, in one listmount
 * call when the array has room (it is kept at least half empty).
 */
static int list_ids(struct lm_state *st, struct lm_ids *ids)
{
	struct mr_mnt_id_req req = {
		.size = st->ns_id ? MR_MNT_ID_REQ_SIZE_VER1 : MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = LSMT_ROOT,
		.mnt_ns_id = st->ns_id,
	};
	uint64_t calls = 0;
	int err = 0;

	ids->n = 0;
	for (;;) {
		if (ids->cap < IDS_MIN || ids->cap - ids->n < ids->cap / 2) {
			size_t cap = ids->cap < IDS_MIN ? IDS_MIN : ids->cap * 2;
			uint64_t *v = mr__realloc(ids->v, cap * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			ids->v = v;
			ids->cap = cap;
		}
		size_t room = ids->cap - ids->n;
		long got = syscall(__NR_listmount, &req, ids->v + ids->n, room, 0);
		calls++;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err = errno == E2BIG && st->ns_id ? -EOPNOTSUPP : -errno;
			break;
		}
		ids->n += (size_t)got;
		if ((size_t)got < room)
			break;
		req.param = ids->v[ids->n - 1]; /* IDs above the last one */
	}
	mr__router_count_syscalls(st->ns->r, calls);
	return err;
}

/* The number of mounts in the namespace (NS_MNT_GET_INFO, 6.12), or -errno. */
static long count_mounts(struct lm_state *st)
{
	struct mr_mnt_ns_info info = {.size = MR_MNT_NS_INFO_SIZE_VER0};

	mr__router_count_syscalls(st->ns->r, 1);
	if (ioctl(st->ns->nsfd, NS_MNT_GET_INFO, &info) < 0)
		return -errno;
	return info.nr_mounts;
}

/*
 * The IDs above the last known one, appended to st->known (they sort after
 * it).  Returns how many, or -errno.
 */
static long list_new_ids(struct lm_state *st)
{
	struct mr_mnt_id_req req = {
		.size = st->ns_id ? MR_MNT_ID_REQ_SIZE_VER1 : MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = LSMT_ROOT,
		.param = st->known.n ? st->known.v[st->known.n - 1] : 0,
		.mnt_ns_id = st->ns_id,
	};
	struct lm_ids *ids = &st->known;
	size_t start = ids->n;

	for (;;) {
		if (ids->cap - ids->n < 64) {
			size_t cap = ids->cap < IDS_MIN ? IDS_MIN : ids->cap * 2;
			uint64_t *v = mr__realloc(ids->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			ids->v = v;
			ids->cap = cap;
		}
		size_t room = ids->cap - ids->n;
		long got = syscall(__NR_listmount, &req, ids->v + ids->n, room, 0);
		mr__router_count_syscalls(st->ns->r, 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			ids->n = start;
			return -errno;
		}
		ids->n += (size_t)got;
		if ((size_t)got < room)
			return (long)(ids->n - start);
		req.param = ids->v[ids->n - 1];
	}
}

static int lm_lookup(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret)
{
	struct lm_state *st = ns->src;
	uint64_t calls = 0;
	int err = mr__statmount(st->ns_id, mnt_id, &ns->smbuf, &calls, ret);

	mr__router_count_syscalls(ns->r, calls);
	return err;
}

/* Lines of the namespace's mountinfo, as seen by the process we know in it. */
static long mountinfo_lines(struct lm_state *st)
{
	char buf[16384];
	long lines = 0;
	ssize_t n;

	if (lseek(st->mi_fd, 0, SEEK_SET) < 0)
		return -errno;
	while ((n = read(st->mi_fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	mr__router_count_syscalls(st->ns->r, 2);
	return n < 0 ? -errno : lines;
}

/*
 * Whether listmount sees all of another namespace: as many mounts as its
 * mountinfo lists (once, at open; the doorbell never reads it).  Counts
 * taken a moment apart may differ while mounts come and go: asked again
 * before concluding.  -EOPNOTSUPP when listmount sees fewer.
 */
static int check_foreign(struct lm_state *st, size_t listed)
{
	uint64_t calls = 0;

	for (int tries = 0; tries < 3; tries++) {
		long lines = mountinfo_lines(st);
		if (lines < 0)
			return (int)lines;
		if ((size_t)lines <= listed)
			return 0;
		/* Recount what listmount sees now. */
		struct mr_mnt_id_req req = {.size = MR_MNT_ID_REQ_SIZE_VER1, .mnt_id = LSMT_ROOT,
					    .mnt_ns_id = st->ns_id};
		uint64_t ids[1024];
		long got, total = 0;
		do {
			got = syscall(__NR_listmount, &req, ids, MR__ARRAY_SIZE(ids), 0);
			calls++;
			if (got < 0)
				return -errno;
			total += got;
			if (got)
				req.param = ids[got - 1];
		} while (got == (long)MR__ARRAY_SIZE(ids));
		listed = (size_t)total;
	}
	mr__router_count_syscalls(st->ns->r, calls);
	return -EOPNOTSUPP;
}

static int lm_read_table(struct mr__ns *ns, struct mr__table *ret)
{
	struct lm_state *st = ns->src;
	uint64_t calls = 0;
	size_t start = ret->n;
	long before = mr__probe()->ns_mnt_next ? count_mounts(st) : -ENOTTY;
	int err = mr__listmount_table(st->ns_id, &ns->smbuf, &calls, ret);

	mr__router_count_syscalls(ns->r, calls);
	if (err < 0)
		return err;
	/*
	 * 6.11-6.12 resolve another namespace's paths from the lowest-ID child
	 * of its root (kernel/patches/0006 fixes it for the project's kernel):
	 * listmount sees only the mounts under that child.  Such a namespace
	 * needs another source.
	 */
	if (st->ns_id && ns->pid) {
		err = check_foreign(st, ret->n - start);
		if (err < 0)
			return err;
	}
	/* The table is what the next listing is compared with. */
	if (st->known.cap < ret->n - start) {
		size_t cap = ret->n - start < IDS_MIN ? IDS_MIN : 2 * (ret->n - start);
		uint64_t *v = mr__realloc(st->known.v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->known.v = v;
		st->known.cap = cap;
	}
	st->known.n = 0;
	for (size_t i = start; i < ret->n; i++)
		st->known.v[st->known.n++] = ret->v[i]->pub.id;
	/* Mounts vanishing between listmount and statmount make this differ: no harm. */
	st->counts_ok = before >= 0 && (size_t)before == st->known.n && count_mounts(st) == before;
	st->verify_since_ns = 0;
	return 0;
}

static int collect(struct mr__mount *m, void *arg)
{
	return mr__table_push(arg, mr__mount_ref(m));
}

/*
 * The O(table) pass for changes that leave the ID set alone: moves,
 * remounts, mount_setattr(2).  Flags, parent and propagation first (a
 * statmount without strings per mount); if that finds nothing and a
 * subscriber wants options or moves, every mount in full, for a remount that
 * changed filesystem options only or a move under the same parent.  One
 * function, so that a cheaper pass can take its place.
 */
static int cmp_depth(const void *a, const void *b)
{
	const struct mr__mount *x = *(struct mr__mount *const *)a;
	const struct mr__mount *y = *(struct mr__mount *const *)b;

	if (x->path_len != y->path_len)
		return x->path_len < y->path_len ? -1 : 1;
	return x->pub.id < y->pub.id ? -1 : x->pub.id > y->pub.id;
}

static void pass_unexplained(struct lm_state *st, uint32_t wanted)
{
	struct mr__ns *ns = st->ns;
	uint64_t cpu0 = mr__thread_cpu_ns();
	size_t found = 0;

	st->owed_since_ns = 0;
	if (mr__mirror_each(&ns->mirror, collect, &st->scratch) < 0) {
		/* No memory to list the mounts: a resync reads them all instead. */
		mr__table_clear(&st->scratch);
		mr__router_loss(ns);
		return;
	}
	/*
	 * Shallowest first: a moved tree is then reported from its top (which
	 * reports the mounts below it), not from a submount the mirror's hash
	 * order happens to reach first.
	 */
	qsort(st->scratch.v, st->scratch.n, sizeof(*st->scratch.v), cmp_depth);
	mr__router_stamp(ns->r);
	for (size_t i = 0; i < st->scratch.n; i++)
		found += mr__router_recheck_flags(ns, st->scratch.v[i]->pub.id);
	if (!found && (wanted & KINDS_FULL))
		for (size_t i = 0; i < st->scratch.n; i++)
			mr__router_recheck(ns, st->scratch.v[i]->pub.id);
	mr__table_clear(&st->scratch);
	mr__router_count_sweep(ns->r, mr__thread_cpu_ns() - cpu0);
}

/* Routes what differs between the last listing and this one; returns how many. */
static size_t diff_ids(struct lm_state *st)
{
	const struct lm_ids *a = &st->known, *b = &st->next;
	size_t i = 0, j = 0, changed = 0;

	/* Detaches first: an ID that went and one that came are unrelated mounts. */
	while (i < a->n) {
		if (j < b->n && b->v[j] < a->v[i]) {
			j++;
		} else if (j < b->n && b->v[j] == a->v[i]) {
			i++;
			j++;
		} else {
			mr__router_change(st->ns, &(struct mr__change){.kind = MR__CHANGE_DETACH,
								 .mnt_id = a->v[i++]});
			changed++;
		}
	}
	/* Attaches in ID order, which is the order they were made: parents first. */
	for (i = 0, j = 0; j < b->n; j++) {
		while (i < a->n && a->v[i] < b->v[j])
			i++;
		if (i < a->n && a->v[i] == b->v[j])
			continue;
		mr__router_change(st->ns, &(struct mr__change){.kind = MR__CHANGE_ATTACH,
							 .mnt_id = b->v[j]});
		changed++;
	}
	return changed;
}

/*
 * Lists every ID and routes the difference; returns how many changed, or
 * -errno.  Learns again whether the counts can be trusted.
 */
static long full_listing(struct lm_state *st)
{
	uint64_t cpu0 = mr__thread_cpu_ns();
	long before = mr__probe()->ns_mnt_next ? count_mounts(st) : -ENOTTY;
	struct lm_ids t;
	int err = list_ids(st, &st->next);

	if (err < 0)
		return err;
	size_t changed = diff_ids(st);
	t = st->known;
	st->known = st->next;
	st->next = t;
	st->counts_ok = before >= 0 && (size_t)before == st->known.n;
	st->verify_since_ns = 0;
	st->full_cpu_ns = mr__thread_cpu_ns() - cpu0;
	return (long)changed;
}

/*
 * New IDs only, if the counts say nothing went away: the number of new
 * mounts (routed), or -1 when a whole listing must tell.
 */
static long quick_listing(struct lm_state *st)
{
	long n = count_mounts(st);

	if (n < 0) {
		st->counts_ok = false;
		return -1;
	}
	size_t old_n = st->known.n;
	long k = list_new_ids(st);
	if (k < 0)
		return -1;
	if ((size_t)n != old_n + (size_t)k) {
		st->known.n = old_n; /* the whole listing diffs against what was known */
		return -1;
	}
	for (size_t i = old_n; i < st->known.n; i++)
		mr__router_change(st->ns, &(struct mr__change){.kind = MR__CHANGE_ATTACH,
							 .mnt_id = st->known.v[i]});
	if (!st->verify_since_ns)
		st->verify_since_ns = mr__now_ns();
	return k;
}

static void on_pollpri(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct lm_state *st = w->owner;
	long changed = -1;

	(void)buf;
	(void)len;
	if (res < 0)
		return;
	mr__router_stamp(st->ns->r);
	st->last_pollpri_ns = mr__now_ns();
	if (st->counts_ok)
		changed = quick_listing(st);
	if (changed < 0)
		changed = full_listing(st);
	if (changed < 0) {
		mr__router_loss(st->ns);
		return;
	}

	uint32_t wanted = mr__router_kinds_wanted(st->ns);
	if (!(wanted & KINDS_FLAGS))
		return;
	if (!changed)
		pass_unexplained(st, wanted);
	else if (!st->owed_since_ns)
		st->owed_since_ns = st->last_pollpri_ns;
}

static void on_timer(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct lm_state *st = w->owner;

	(void)res;
	(void)buf;
	(void)len;
	st->timer_armed = false;
	/* after_batch of this step runs the pass if it is due. */
}

/* When the deferred work of @since is due: quiet, or waited long enough. */
static uint64_t due_at(const struct lm_state *st, uint64_t since, uint64_t min_wait)
{
	uint64_t quiet = st->last_pollpri_ns + VERIFY_QUIET_NS;
	uint64_t at = quiet > since + min_wait ? quiet : since + min_wait;

	return at < since + VERIFY_MAX_NS ? at : since + VERIFY_MAX_NS;
}

static void lm_after_batch(struct mr__ns *ns)
{
	struct lm_state *st = ns->src;
	uint64_t now = mr__now_ns(), next = UINT64_MAX;

	if (st->verify_since_ns) {
		uint64_t at = due_at(st, st->verify_since_ns, st->full_cpu_ns * VERIFY_DUTY);
		if (now >= at) {
			mr__router_stamp(ns->r);
			if (full_listing(st) < 0)
				mr__router_loss(ns);
		} else {
			next = at;
		}
	}
	if (st->owed_since_ns) {
		uint64_t at = due_at(st, st->owed_since_ns, 0);
		if (now >= at) {
			uint32_t wanted = mr__router_kinds_wanted(ns);
			if (wanted & KINDS_FLAGS)
				pass_unexplained(st, wanted);
			else
				st->owed_since_ns = 0;
		} else if (at < next) {
			next = at;
		}
	}
	if (next != UINT64_MAX && !st->timer_armed) {
		st->timer.timeout_ns = next - now;
		if (mr__reactor_add(mr__router_reactor(ns->r), &st->timer) == 0)
			st->timer_armed = true;
	}
}

static int lm_open(struct mr__ns *ns)
{
	const struct mr__features *f = mr__probe();
	struct lm_state *st;
	char path[64];

	/* Another namespace is named by mnt_ns_id (6.11); before, only our own. */
	if (ns->pid && !f->statmount_ns)
		return -EOPNOTSUPP;
	st = mr__calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ns = ns;
	st->ns_id = ns->pid ? ns->id : 0;
	if (ns->pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)ns->pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	st->mi_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (st->mi_fd < 0) {
		int err = -errno;
		mr__free(st);
		return err;
	}
	ns->src = st;
	return 0;
}

static int lm_start(struct mr__ns *ns, struct mr__reactor *re)
{
	struct lm_state *st = ns->src;

	st->mi_watch = (struct mr__watch){.fd = st->mi_fd, .mode = MR__WATCH_POLLPRI,
					  .fn = on_pollpri, .owner = st, .release = watch_released};
	st->timer = (struct mr__watch){.mode = MR__WATCH_TIMER, .fd = -1, .fn = on_timer,
				       .owner = st, .release = watch_released};
	st->live = 2;
	return mr__reactor_add(re, &st->mi_watch);
}

static void lm_close(struct mr__ns *ns, struct mr__reactor *re)
{
	struct lm_state *st = ns->src;

	if (!st)
		return;
	ns->src = NULL;
	if (!re || !st->live) {
		state_free(st);
		return;
	}
	st->ns = NULL;
	/* Each watch is released once the kernel lets go; the last frees st. */
	mr__reactor_remove(re, &st->mi_watch);
	mr__reactor_remove(re, &st->timer);
}

const struct mr__source_ops mr__source_listmount = {
	.name = "listmount",
	.probe = lm_probe,
	.open = lm_open,
	.start = lm_start,
	.after_batch = lm_after_batch,
	.read_table = lm_read_table,
	.lookup = lm_lookup,
	.close = lm_close,
};
