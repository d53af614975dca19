/* SPDX-License-Identifier: MIT */
/*
 * The mountinfo source, for any kernel: poll /proc/PID/mountinfo for
 * POLLPRI (the namespace's event counter moved), re-read it, and diff it
 * against the mirror keyed by mount ID, in O(n).  It cannot say what
 * happened between two reads: changes that cancel out are not seen, and
 * IDs are mountinfo's reused 32-bit IDs.  The kernel never drops anything
 * here, so there is no loss signal: every read is a full resync.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

struct mi_state {
	struct mr__ns *ns;
	int fd;
	struct mr__watch watch;
	bool live;
	char *buf;
	size_t cap;
};

static int mi_probe(void)
{
	return 0;
}

static void state_free(struct mi_state *st)
{
	if (st->fd >= 0)
		close(st->fd);
	mr__free(st->buf);
	mr__free(st);
}

static void watch_released(struct mr__watch *w)
{
	state_free(w->owner);
}

static int mi_read_table(struct mr__ns *ns, struct mr__table *ret)
{
	struct mi_state *st = ns->src;
	size_t len;
	int err;

	err = mr__mountinfo_read_fd(st->fd, &st->buf, &st->cap, &len);
	mr__router_count_syscalls(ns->r, 1 + len / 65536);
	if (err < 0)
		return err;
	err = mr__mountinfo_parse(st->buf, len, ret);
	return err < 0 ? err : 0;
}

static void on_pollpri(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct mi_state *st = w->owner;
	struct mr__table t = {0};

	(void)buf;
	(void)len;
	if (res < 0)
		return;
	mr__router_stamp(st->ns->r);
	if (mi_read_table(st->ns, &t) < 0) {
		mr__table_clear(&t);
		mr__router_loss(st->ns);
		return;
	}
	mr__router_sync(st->ns, &t, 0);
	mr__table_clear(&t);
}

static int mi_open(struct mr__ns *ns)
{
	struct mi_state *st = mr__calloc(1, sizeof(*st));
	char path[64];

	if (!st)
		return -ENOMEM;
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
				       .owner = st, .release = watch_released};
	st->live = true;
	return mr__reactor_add(re, &st->watch);
}

static int mi_lookup(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret)
{
	(void)ns;
	(void)mnt_id;
	(void)ret;
	return -ENOTSUP; /* never asked: this source only diffs whole tables */
}

static void mi_close(struct mr__ns *ns, struct mr__reactor *re)
{
	struct mi_state *st = ns->src;

	if (!st)
		return;
	ns->src = NULL;
	if (!re || !st->live) {
		state_free(st);
		return;
	}
	mr__reactor_remove(re, &st->watch);
}

const struct mr__source_ops mr__source_mountinfo = {
	.name = "mountinfo",
	.probe = mi_probe,
	.open = mi_open,
	.start = mi_start,
	.read_table = mi_read_table,
	.lookup = mi_lookup,
	.close = mi_close,
};
