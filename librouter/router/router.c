/* SPDX-License-Identifier: MIT */
/*
 * The router object: made, probed for a source, counted and freed here.
 * It is one thread's (the caller's, or its own) that owns every mirror,
 * trie and ring producer; nothing on its data path takes a lock:
 *
 *  - other threads reach it through a lock-free command stack
 *    (commands.c), drained once per step (loop.c);
 *  - subscribers read their own SPSC rings;
 *  - counters are relaxed atomics.
 *
 * The data flow, file by file: a source decodes its kernel's records
 * (../source_*.c) -> apply.c updates the mirror (refresh.c for what a
 * change drags along) -> route.c puts the event in the rings; recovery.c
 * repairs after losses and overruns; registry.c is the callers' control.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "router.h"

struct mr__fan_group **mr__router_fan_group(mr_router *r, pthread_mutex_t **ret_lock)
{
	*ret_lock = &r->group_lock;
	return &r->fan_group;
}

void mr__router_count_bad(mr_router *r, uint64_t n)
{
	mr__count(&r->bad_records, n);
}

void mr__router_count_syscalls(mr_router *r, uint64_t n)
{
	mr__count(&r->syscalls, n);
}

void mr__router_count_sweep(mr_router *r, uint64_t ns)
{
	mr__count(&r->sweeps, 1);
	mr__count(&r->sweep_ns_total, ns);
}

uint64_t mr__router_stamp(mr_router *r)
{
	return r->now_ns = mr__now_ns();
}

void mr__router_reading(struct mr__ns *ns)
{
	mr_router *r = ns->r;
	void (*fn)(void *) = r->before_read;

	if (fn) {
		r->before_read = NULL;
		fn(r->before_read_arg);
	}
}

void mr__router_before_read(mr_router *r, void (*fn)(void *arg), void *arg)
{
	r->before_read_arg = arg;
	r->before_read = fn;
}

int mr_router_new(const struct mr_opts *opts, mr_router **ret)
{
	struct mr_opts o = {0};
	mr_router *r;
	int err;

	if (!ret)
		return -EINVAL;
	if (opts) {
		if (opts->size < offsetof(struct mr_opts, source) + sizeof(const char *))
			return -EINVAL;
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	}
	if (o.flags & ~(MR_OPT_NO_SELF_NS | MR_OPT_EPOLL | MR_OPT_IO_URING))
		return -EINVAL;
	if ((o.flags & MR_OPT_EPOLL) && (o.flags & MR_OPT_IO_URING))
		return -EINVAL;
	/* Documented ranges; batch * 2 must also stay a sane io_uring size. */
	if (o.queue_notes > MR__QUEUE_NOTES_MAX || o.batch > MR__BATCH_MAX)
		return -EINVAL;

	r = mr__calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->opts = o;
	r->wake_efd = -1;
	pthread_mutex_init(&r->ctl_lock, NULL);
	pthread_mutex_init(&r->group_lock, NULL);

	err = mr__source_pick(o.source, &r->ops, &r->reason);
	if (err < 0)
		goto fail;
	r->source_auto = !o.source || !strcmp(o.source, "auto");

	/* The backend the source reads best through (MR_OPT_EPOLL says why). */
	bool epoll = o.flags & MR_OPT_EPOLL ||
		     (!(o.flags & MR_OPT_IO_URING) && !r->ops->prefers_io_uring);
	struct mr__reactor_opts ro = {.entries = o.batch ? o.batch * 2 : 256, .epoll = epoll};
	err = mr__reactor_new(&ro, &r->re);
	if (err < 0)
		goto fail;

	r->wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->wake_efd < 0) {
		err = -errno;
		goto fail;
	}
	r->wake_watch = (struct mr__watch){
		.fd = r->wake_efd, .mode = MR__WATCH_READ, .fn = mr__loop_wake_cb, .owner = r};
	err = mr__reactor_add(r->re, &r->wake_watch);
	if (err < 0)
		goto fail;

	if (!(o.flags & MR_OPT_NO_SELF_NS)) {
		err = mr_router_add_ns_self(r, NULL);
		if (err < 0)
			goto fail;
		/* Apply it now, so a caller's first dispatch or start finds it in place. */
		mr__commands_run(r);
	}
	*ret = r;
	return 0;
fail:
	mr_router_free(r);
	return err;
}

void mr_router_free(mr_router *r)
{
	if (!r)
		return;
	if (r->threaded)
		mr_router_stop(r);
	mr__commands_run(r);
	while (r->subs)
		mr__commands_del_sub(r, r->subs);
	while (r->active)
		mr__commands_del_ns(r, r->active);
	if (r->re) {
		/* Let the cancellations complete so every watch is released. */
		mr__reactor_remove(r->re, &r->wake_watch);
		mr__reactor_drain(r->re, 2000);
	}
	mr__reactor_free(r->re);
	if (r->wake_efd >= 0)
		close(r->wake_efd);
	mr__free(r->registry);
	mr__free(r->match);
	mr__free(r->below);
	mr__free(r->same_sb);
	mr__free(r->deferred);
	pthread_mutex_destroy(&r->ctl_lock);
	pthread_mutex_destroy(&r->group_lock);
	mr__free(r);
}

const char *mr_router_source(const mr_router *r)
{
	return r && r->ops ? r->ops->name : "";
}

const char *mr_router_source_reason(const mr_router *r)
{
	return r && r->reason ? r->reason : "";
}

int mr_router_stats(const mr_router *r, struct mr_stats *ret)
{
	if (!r || !ret)
		return -EINVAL;
#define LOAD(f) atomic_load_explicit(&r->f, memory_order_relaxed)
	*ret = (struct mr_stats){
		.records_read = LOAD(records_read),
		.events_routed = LOAD(events_routed),
		.deliveries = LOAD(deliveries),
		.ring_drops = LOAD(ring_drops),
		.kernel_losses = LOAD(kernel_losses),
		.resyncs = LOAD(resyncs),
		.syscalls = LOAD(syscalls) + LOAD(enters) + LOAD(reactor_calls),
		.io_uring_enters = LOAD(enters),
		.bad_records = LOAD(bad_records),
		.namespaces = LOAD(n_ns),
		.subscribers = LOAD(n_subs),
		.mounts = LOAD(n_mounts),
		.resync_ns_total = LOAD(resync_ns_total),
		.resync_cpu_ns_total = LOAD(resync_cpu_ns_total),
		.sweeps = LOAD(sweeps),
		.sweep_ns_total = LOAD(sweep_ns_total),
	};
#undef LOAD
	return 0;
}


struct mr__reactor *mr__router_reactor(mr_router *r)
{
	return r->re;
}

const struct mr_opts *mr__router_opts(mr_router *r)
{
	return &r->opts;
}

uint32_t mr__router_kinds_wanted(const struct mr__ns *ns)
{
	return ns->kinds_wanted;
}
