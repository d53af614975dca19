/* SPDX-License-Identifier: MIT */
/*
 * The mountinfo source, for any kernel: poll /proc/PID/mountinfo for
 * POLLPRI (the namespace's event counter moved), re-read it, and compare
 * each line with the one its mount ID had last time (mountinfo_diff.c):
 * only new and changed lines are parsed, so a change costs one read of the
 * file and a hash of it, less than a poller that parses every line.  It
 * cannot say what happened between two reads: changes that cancel out are
 * not seen, and IDs are mountinfo's reused 32-bit IDs.  The kernel never
 * drops anything here, so there is no loss signal.
 *
 * While changes keep coming, reads are spaced so that reading takes at most
 * half the time: a read that took T is followed by the next no sooner than
 * T after it ends.  A change made while nothing else is changing is read at
 * once; in a storm a change waits at most one read's time more, and the
 * source reads about half as often as a poller that re-reads at every
 * POLLPRI (each read also holds off the writers of the mount table: the
 * kernel formats the file under namespace_sem).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "io/reactor.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"
#include "mirror/mountinfo_diff.h"
#include "namespace.h"
#include "router/upcalls.h"
#include "sources/source.h"

struct mi_state {
	struct mr__source_base base; /* first: the reactor's release finds it */
	struct mr__ns *ns;
	int fd;
	struct mr__watch watch;
	struct mr__source_timer timer; /* the next read, when it must wait */
	bool pending;                  /* a POLLPRI not yet answered by a read */
	uint64_t next_read_ns;         /* no read before this (CLOCK_MONOTONIC) */
	struct mr__mi_diff diff;
	struct mr__mountinfo_scratch scratch;
	struct mr__table fresh; /* lines new or changed in this read */
	struct mr__table gone;  /* mirror records of mounts no longer listed */
};

static int mi_probe(void)
{
	return 0;
}

static void state_free(void *p)
{
	struct mi_state *st = p;

	if (st->fd >= 0)
		close(st->fd);
	mr__mi_diff_free(&st->diff);
	mr__mountinfo_scratch_free(&st->scratch);
	mr__table_clear(&st->fresh);
	mr__table_clear(&st->gone);
	mr__free(st);
}

static int line_changed(void *arg, uint32_t id, const char *line, size_t n,
			struct mr__mi_slot *slot, bool known)
{
	struct mi_state *st = arg;
	struct mr__mount *m;
	int err;

	(void)id;
	(void)slot;
	(void)known;
	err = mr__mountinfo_parse_line(line, n, &st->scratch, &m);
	return err < 0 ? err : mr__table_push(&st->fresh, m);
}

static int line_gone(void *arg, uint32_t id, struct mr__mi_slot *slot)
{
	struct mi_state *st = arg;
	struct mr__mount *m = mr__mirror_get(&st->ns->mirror, id);

	(void)slot;
	return m ? mr__table_push(&st->gone, mr__mount_ref(m)) : 0;
}

static const struct mr__mi_diff_ops diff_ops = {.changed = line_changed, .gone = line_gone};

/* The whole table, for the first read and resyncs: every line is new. */
static int mi_read_table(struct mr__ns *ns, struct mr__table *ret)
{
	struct mi_state *st = ns->src;
	uint64_t calls = 0;
	int err;

	mr__mi_diff_reset(&st->diff);
	err = mr__mi_diff_run(&st->diff, st->fd, &diff_ops, st, &calls);
	mr__router_count_syscalls(ns->r, calls);
	mr__table_clear(&st->gone);
	if (err < 0) {
		mr__table_clear(&st->fresh);
		mr__mi_diff_reset(&st->diff);
		return err;
	}
	*ret = st->fresh;
	st->fresh = (struct mr__table){0};
	return 0;
}

/* Reads the file and routes what changed since the last read. */
static void read_changes(struct mi_state *st)
{
	uint64_t calls = 0, t0 = mr__now_ns(), cpu0 = mr__thread_cpu_ns();
	int err;

	st->pending = false;
	mr__router_stamp(st->ns->r);
	mr__router_reading(st->ns);
	err = mr__mi_diff_run(&st->diff, st->fd, &diff_ops, st, &calls);
	mr__router_count_syscalls(st->ns->r, calls);
	/* Every read here is a read of the whole table: counted as a sweep. */
	mr__router_count_sweep(st->ns->r, mr__thread_cpu_ns() - cpu0);
	mr__router_observed(st->ns);
	/* Children go before their parents, and come after them. */
	if (!err)
		err = mr__order_parents_first(st->gone.v, st->gone.n, true);
	if (!err)
		err = mr__order_parents_first(st->fresh.v, st->fresh.n, false);
	if (err < 0) {
		/* Half a diff says nothing reliable: read it all again. */
		mr__table_clear(&st->fresh);
		mr__table_clear(&st->gone);
		mr__router_loss(st->ns);
	} else {
		for (size_t i = 0; i < st->gone.n; i++)
			mr__router_remove(st->ns, st->gone.v[i]->pub.id);
		for (size_t i = 0; i < st->fresh.n; i++) {
			mr__router_update(st->ns, st->fresh.v[i]);
			st->fresh.v[i] = NULL;
		}
		st->fresh.n = 0;
		mr__table_clear(&st->gone);
	}
	uint64_t end = mr__now_ns();
	st->next_read_ns = end + (end - t0);
}

static void on_pollpri(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct mi_state *st = w->owner;

	(void)buf;
	(void)len;
	if (res >= 0) {
		st->pending = true; /* read in mi_after_batch, now or when due */
		mr__router_due(st->ns);
	}
}

static void mi_after_batch(struct mr__ns *ns)
{
	struct mi_state *st = ns->src;
	uint64_t now;

	if (!st->pending)
		return;
	now = mr__now_ns();
	if (now >= st->next_read_ns)
		read_changes(st);
	else
		mr__source_timer_arm(&st->timer, mr__router_reactor(ns->r), st->next_read_ns - now,
				     now);
}

/* Before a snapshot: a read put off is made now, so the snapshot is current. */
static void mi_settle(struct mr__ns *ns)
{
	struct mi_state *st = ns->src;

	if (st->pending)
		read_changes(st);
}

static int mi_open(struct mr__ns *ns)
{
	struct mi_state *st = mr__calloc(1, sizeof(*st));
	char path[64];

	if (!st)
		return -ENOMEM;
	st->base.free_state = state_free;
	st->ns = ns;
	if (ns->pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)ns->pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	st->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (st->fd < 0) {
		int err = -errno;
		mr__free(st);
		return err;
	}
	ns->src = st;
	return 0;
}

static int mi_start(struct mr__ns *ns, struct mr__reactor *re)
{
	struct mi_state *st = ns->src;

	st->watch = (struct mr__watch){.fd = st->fd, .mode = MR__WATCH_POLLPRI, .fn = on_pollpri,
				       .owner = st, .release = mr__source_watch_released};
	mr__source_timer_init(&st->timer, st, ns);
	st->base.live = 2;
	return mr__reactor_add(re, &st->watch);
}

static int mi_lookup(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret)
{
	(void)ns;
	(void)mnt_id;
	(void)ret;
	return -ENOTSUP; /* never asked: this source reads whole lines */
}

static void mi_close(struct mr__ns *ns, struct mr__reactor *re)
{
	struct mi_state *st = ns->src;

	if (!st)
		return;
	ns->src = NULL;
	st->ns = NULL;
	mr__source_end(&st->base, re, (struct mr__watch *const[]){&st->watch, &st->timer.watch}, 2);
}

const struct mr__source_ops mr__source_mountinfo = {
	.name = "mountinfo",
	.prefers_io_uring = true,
	.probe = mi_probe,
	.open = mi_open,
	.start = mi_start,
	.after_batch = mi_after_batch,
	.settle = mi_settle,
	.read_table = mi_read_table,
	.lookup = mi_lookup,
	.close = mi_close,
};
