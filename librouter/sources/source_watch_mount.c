/* SPDX-License-Identifier: MIT */
/*
 * The watch_mount source (the project's patched kernel, kernel/patches/):
 * a notification pipe per namespace with one watch on the namespace's root
 * dentry, which reports every change anywhere below it:
 * NOTIFY_MOUNT_NEW_MOUNT, UNMOUNT, EXPIRY, READONLY, SETATTR and the
 * MOVE_FROM/MOVE_TO pair.  Records name mounts by their 64-bit unique IDs,
 * so statmount(2) fills in details and listmount(2) resyncs after a
 * WATCH_META_LOSS_NOTIFICATION.  Kernels without the series get -ENOSYS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "io/reactor.h"
#include "namespace.h"
#include "probe.h"
#include "router/upcalls.h"
#include "sources/decode.h"
#include "sources/source.h"
#include "mountrouter-uapi.h"

#define ROOT_WATCH_ID 0

struct wm_state {
	struct mr__source_base base; /* first: the reactor's release finds it */
	struct mr__ns *ns;
	int pipe[2];
	struct mr__watch watch;
	struct mr__change *changes; /* MR__SOURCE_CHANGES_MAX: one read's records */
};

static int wm_probe(void)
{
	const struct mr__features *f = mr__probe();

	if (!f->watch_mount)
		return f->watch_mount_err ? f->watch_mount_err : -ENOSYS;
	if (!f->listmount)
		return -ENOSYS;
	return 0;
}

static void state_free(void *p)
{
	struct wm_state *st = p;

	for (int i = 0; i < 2; i++)
		if (st->pipe[i] >= 0)
			close(st->pipe[i]);
	mr__free(st->changes);
	mr__free(st);
}

static void on_records(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct wm_state *st = w->owner;

	mr__source_records(st->ns, res, buf, len, mr__decode_watch_queue, st->changes,
			   MR__SOURCE_CHANGES_MAX);
}

static int wm_open(struct mr__ns *ns)
{
	struct wm_state *st = mr__calloc(1, sizeof(*st));
	unsigned notes = 256;
	char path[64];
	int root = -1, err;

	if (!st)
		return -ENOMEM;
	st->base.free_state = state_free;
	st->ns = ns;
	st->pipe[0] = st->pipe[1] = -1;
	st->changes = mr__malloc(MR__SOURCE_CHANGES_MAX * sizeof(*st->changes));
	if (!st->changes) {
		err = -ENOMEM;
		goto fail;
	}
	if (pipe2(st->pipe, O_NOTIFICATION_PIPE | O_CLOEXEC | O_NONBLOCK) < 0) {
		err = errno == ENOPKG ? -ENOSYS : -errno;
		goto fail;
	}
	/* Slots in the queue: the kernel accepts 1..512 (16 pages of 32 notes). */
	if (mr__router_opts(ns->r)->queue_notes)
		notes = mr__router_opts(ns->r)->queue_notes;
	if (ioctl(st->pipe[0], IOC_WATCH_QUEUE_SET_SIZE, notes) < 0) {
		err = -errno;
		goto fail;
	}
	/* The namespace's root as its processes see it. */
	if (ns->pid)
		snprintf(path, sizeof(path), "/proc/%d/root", (int)ns->pid);
	else
		snprintf(path, sizeof(path), "/");
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		err = -errno;
		goto fail;
	}
	if (syscall(__NR_watch_mount, root, "", AT_EMPTY_PATH, st->pipe[0], ROOT_WATCH_ID) < 0) {
		err = errno == ENOSYS ? -ENOSYS : -errno;
		goto fail;
	}
	close(root);
	ns->src = st;
	return 0;
fail:
	if (root >= 0)
		close(root);
	state_free(st);
	return err;
}

static int wm_start(struct mr__ns *ns, struct mr__reactor *re)
{
	struct wm_state *st = ns->src;

	st->watch = (struct mr__watch){.fd = st->pipe[0], .mode = MR__WATCH_READ, .fn = on_records,
				       .owner = st, .release = mr__source_watch_released};
	st->base.live = 1;
	return mr__reactor_add(re, &st->watch);
}

static void wm_close(struct mr__ns *ns, struct mr__reactor *re)
{
	struct wm_state *st = ns->src;

	if (!st)
		return;
	ns->src = NULL;
	st->ns = NULL;
	mr__source_end(&st->base, re, (struct mr__watch *const[]){&st->watch}, 1);
}

const struct mr__source_ops mr__source_watch_mount = {
	.name = "watch_mount",
	.prefers_io_uring = true,
	.probe = wm_probe,
	.open = wm_open,
	.start = wm_start,
	.read_table = mr__ns_listmount,
	.lookup = mr__ns_statmount,
	.close = wm_close,
};
