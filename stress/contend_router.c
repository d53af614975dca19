/* SPDX-License-Identifier: MIT */
/*
 * The router as a contender: one mr_router on the source under test,
 * subscribers on assorted subtrees each drained by its own reader thread,
 * and one subscriber that is deliberately stalled (a small ring it does not
 * read until the storm is over) to force ring overruns and recovery.
 *
 * The router runs in our own thread through mr_router_dispatch(), so its
 * CPU time is that thread's CLOCK_THREAD_CPUTIME_ID and nothing else; with
 * --router-thread it runs on the library's thread instead and its CPU is
 * the process's minus every thread of ours.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "driver.h"
#include "mountrouter.h"
#include "view.h"

struct rsub {
	struct rctx *c;
	mr_sub *s;
	char prefix[MS_PATH];
	uint32_t capacity;
	bool stalled;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock; /* view: the reader applies, the driver checks */
	struct ms_view view;
	struct ms_samples samples;      /* (change, dequeued at) */
	struct ms_samples read_samples; /* (change, the router read it at) */
	int err;
	_Atomic bool primed;  /* first SNAPSHOT applied */
	uint64_t seen[MS_MAX_WAVES], synth[MS_MAX_WAVES];
	uint64_t misrouted, brackets, overruns_seen, snapshots_seen;
	uint64_t overrun_router_ns, recovery_ns_max;
	uint64_t applied, lost_told; /* events applied; drops OVERRUN markers told of */
	uint64_t cpu_ns;
};

struct rctx {
	struct ms_storm *st;
	mr_router *r;
	struct rsub subs[MS_MAX_SUBS];
	unsigned n_subs;
	_Atomic bool stop, release;
	pthread_t dispatcher;
	bool dispatching;
	_Atomic bool held;  /* --hold-waves: the dispatcher reads nothing */
	int dispatch_err;
	uint64_t dispatch_cpu_ns;
	_Atomic uint64_t first_resync_ns; /* of the current wave */
	uint64_t loss_to_consistent_max;
	struct mr_stats prev;
};

static unsigned class_of(uint32_t kind)
{
	switch (kind) {
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		return MS_DEPART;
	case MR_EVENT_READONLY:
	case MR_EVENT_ATTR:
		return MS_ATTR;
	default:
		return MS_ARRIVE;
	}
}

static void apply(struct rsub *rs, const struct mr_event *ev, uint64_t t)
{
	struct rctx *c = rs->c;
	unsigned wave = atomic_load_explicit(&c->st->cur_wave, memory_order_relaxed);
	char mopts[96];
	int err = 0;

	rs->applied++;
	switch (ev->kind) {
	case MR_EVENT_SNAPSHOT:
		ms_view_clear(&rs->view);
		for (size_t i = 0; i < ev->n_mounts && !err; i++) {
			const struct mr_mount *m = &ev->mounts[i];
			if (!ms_in_subtree(m->path, rs->prefix)) {
				rs->misrouted++;
				continue;
			}
			ms_mopts_prefix(m->options, mopts, sizeof(mopts));
			err = ms_view_put(&rs->view, m->id, m->path, mopts);
		}
		rs->snapshots_seen++;
		if (rs->overrun_router_ns && (ev->flags & MR_EVF_RING_LOSS)) {
			uint64_t d = t - rs->overrun_router_ns;
			if (d > rs->recovery_ns_max)
				rs->recovery_ns_max = d;
			rs->overrun_router_ns = 0;
		}
		atomic_store(&rs->primed, true);
		break;
	case MR_EVENT_OVERRUN:
		rs->overruns_seen++;
		rs->lost_told += ev->lost;
		rs->overrun_router_ns = ev->time_ns;
		break;
	case MR_EVENT_RESYNC_BEGIN: {
		uint64_t zero = 0;
		rs->brackets++;
		atomic_compare_exchange_strong(&c->first_resync_ns, &zero, ev->time_ns);
		break;
	}
	case MR_EVENT_RESYNC_END:
		break;
	case MR_EVENT_MOUNT:
	case MR_EVENT_MOVE:
	case MR_EVENT_READONLY:
	case MR_EVENT_ATTR:
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY: {
		bool in = ms_in_subtree(ev->path, rs->prefix);
		bool was = ev->kind == MR_EVENT_MOVE && ms_in_subtree(ev->old_path, rs->prefix);
		if (!in && !was)
			rs->misrouted++;
		if (ev->kind == MR_EVENT_UNMOUNT || ev->kind == MR_EVENT_EXPIRY || !in) {
			ms_view_del(&rs->view, ev->mnt_id);
		} else {
			ms_mopts_prefix(ev->options, mopts, sizeof(mopts));
			err = ms_view_put(&rs->view, ev->mnt_id, ev->path, mopts);
		}
		if (wave >= MS_MAX_WAVES)
			break;
		if (ev->flags & MR_EVF_SYNTHETIC) {
			rs->synth[wave]++;
		} else {
			rs->seen[wave]++;
			/*
			 * Wave 0 builds the topology: no op to match it to; held
			 * waves measure the hold, not the router.
			 */
			if (wave > c->st->o->hold_waves && !err) {
				uint64_t key = ms_key_mix(ms_key(c->st->root, ev->path), wave,
							  class_of(ev->kind));
				err = ms_samples_push(&rs->samples, key, t);
				if (!err)
					err = ms_samples_push(&rs->read_samples, key, ev->time_ns);
			}
		}
		break;
	}
	default:
		break;
	}
	if (err && !rs->err)
		rs->err = err;
}

static void *reader_main(void *arg)
{
	struct rsub *rs = arg;
	struct rctx *c = rs->c;

	if (rs->stalled)
		/* Reads nothing until the end: its ring fills, the router must cope. */
		while (!atomic_load(&c->release) && !atomic_load(&c->stop))
			poll(NULL, 0, 5);
	for (;;) {
		const struct mr_event *ev;
		int r = mr_sub_next(rs->s, &ev);

		if (r == -EAGAIN) {
			if (atomic_load(&c->stop))
				break;
			mr_sub_wait(rs->s, 50);
			continue;
		}
		if (r < 0) {
			rs->err = r;
			break;
		}
		uint64_t t = ms_now_ns();
		pthread_mutex_lock(&rs->lock);
		apply(rs, ev, t);
		pthread_mutex_unlock(&rs->lock);
		mr_event_unref(ev);
	}
	rs->cpu_ns = ms_thread_cpu_ns();
	return NULL;
}

static void *dispatch_main(void *arg)
{
	struct rctx *c = arg;
	struct pollfd p = { .fd = mr_router_fd(c->r), .events = POLLIN };

	pthread_setname_np(pthread_self(), "ms-router");
	while (!atomic_load(&c->stop)) {
		if (atomic_load(&c->held)) {
			poll(NULL, 0, 1);
			continue;
		}
		int n = mr_router_dispatch(c->r);
		if (n < 0 && n != -EAGAIN && n != -EINTR && n != -EBUSY && n != -ETIME) {
			c->dispatch_err = n;
			break;
		}
		/* Sleep only when the completion queue is empty. */
		if (n == 0)
			poll(&p, 1, 20);
	}
	c->dispatch_cpu_ns = ms_thread_cpu_ns();
	return NULL;
}

/* ---- driver callbacks ---- */

static int check(void *ctx, unsigned i, const struct ms_table *truth, char *why, size_t len)
{
	struct rsub *rs = &((struct rctx *)ctx)->subs[i];
	struct mr_sub_stats ss = {0};
	bool ok;

	/*
	 * A view is judged once its reader has applied all the router gave it
	 * and been told of every drop: a subscriber half-way through its ring
	 * can match the truth for a moment (its backlog of old changes passing
	 * through the final state) and then move on from it.
	 */
	if (rs->s)
		mr_sub_stats(rs->s, &ss);
	pthread_mutex_lock(&rs->lock);
	if (rs->applied < ss.delivered || rs->lost_told < ss.dropped) {
		snprintf(why, len, "catching up: %llu of %llu events read, told of %llu of %llu drops",
			 (unsigned long long)rs->applied, (unsigned long long)ss.delivered,
			 (unsigned long long)rs->lost_told, (unsigned long long)ss.dropped);
		ok = false;
	} else {
		ok = ms_view_matches(&rs->view, truth, rs->prefix, why, len);
	}
	pthread_mutex_unlock(&rs->lock);
	if (rs->err) {
		snprintf(why, len, "reader: %s", strerror(-rs->err));
		return 0;
	}
	return ok;
}

static uint64_t seen(void *ctx, unsigned i, unsigned w)
{
	return ((struct rctx *)ctx)->subs[i].seen[w];
}

static void wave_begin(void *ctx, unsigned w)
{
	(void)w;
	atomic_store(&((struct rctx *)ctx)->first_resync_ns, 0);
}

static void wave_end(void *ctx, unsigned w, struct ms_wave_result *wr)
{
	struct rctx *c = ctx;
	struct mr_stats s;
	uint64_t loss;

	(void)w;
	mr_router_stats(c->r, &s);
	wr->kernel_losses = s.kernel_losses - c->prev.kernel_losses;
	wr->ring_drops = s.ring_drops - c->prev.ring_drops;
	wr->resyncs = s.resyncs - c->prev.resyncs;
	c->prev = s;
	loss = atomic_load(&c->first_resync_ns);
	if (loss && wr->consistent) {
		uint64_t t = c->st->waves[w].t_end + wr->settle_ns;
		if (t > loss && t - loss > c->loss_to_consistent_max)
			c->loss_to_consistent_max = t - loss;
	}
}

static void hold(void *ctx, bool on)
{
	atomic_store(&((struct rctx *)ctx)->held, on);
}

static void release_stalled(void *ctx)
{
	atomic_store(&((struct rctx *)ctx)->release, true);
}

/* Assorted subtrees: everything, the storm, one group, one member, the slave, ... */
static unsigned pick_subtrees(struct rctx *c, unsigned n)
{
	const struct ms_opts *o = c->st->o;
	const char *root = c->st->root;
	unsigned k = 0;

#define SUB(cap, stall, ...)                                                            \
	do {                                                                            \
		if (k < n && k < MS_MAX_SUBS) {                                         \
			snprintf(c->subs[k].prefix, MS_PATH, __VA_ARGS__);              \
			c->subs[k].capacity = (cap);                                    \
			c->subs[k].stalled = (stall);                                   \
			k++;                                                            \
		}                                                                       \
	} while (0)
	/* The stalled one first: its subscription must be in place before any other's. */
	SUB(o->stall_capacity, true, "%s", root);
	SUB(0, false, "/");
	SUB(0, false, "%s", root);
	SUB(0, false, "%s/g0", root);
	if (o->members > 1)
		SUB(0, false, "%s/g0/m1", root);
	if (o->slave)
		SUB(0, false, "%s/g%u/s", root, o->peers > 1 ? 1 : 0);
	SUB(0, false, "%s/stage", root);
	if (o->unbindable)
		SUB(0, false, "%s/g0/u", root);
	for (unsigned g = 1; k < n && k < MS_MAX_SUBS; g++)
		SUB(0, false, "%s/g%u", root, g % o->peers);
#undef SUB
	return k;
}

int ms_run_router(struct ms_storm *st, const char *source, struct ms_result *res)
{
	struct rctx *c = calloc(1, sizeof(*c));
	struct ms_driver *d = calloc(1, sizeof(*d));
	struct mr_opts mo = { .size = sizeof(mo), .flags = st->o->router_flags, .source = source,
			       .queue_notes = st->o->queue_notes };
	struct rusage ru0, ru1;
	uint64_t t0 = ms_now_ns(), main_cpu0 = ms_thread_cpu_ns();
	int err;

	if (!c || !d) {
		free(c);
		free(d);
		return -ENOMEM;
	}
	c->st = st;
	getrusage(RUSAGE_SELF, &ru0);
	err = mr_router_new(&mo, &c->r);
	if (err == -ENOSYS || err == -EOPNOTSUPP || err == -EINVAL) {
		res->status = MS_UNAVAILABLE;
		snprintf(res->reason, sizeof(res->reason), "mr_router_new: %s", strerror(-err));
		free(c);
		free(d);
		return 0;
	}
	if (err) {
		res->status = MS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "mr_router_new: %s", strerror(-err));
		free(c);
		free(d);
		return err;
	}
	snprintf(res->source_reason, sizeof(res->source_reason), "%s: %s", mr_router_source(c->r),
		 mr_router_source_reason(c->r));

	c->n_subs = pick_subtrees(c, st->o->subs);
	for (unsigned i = 0; i < c->n_subs; i++) {
		struct rsub *rs = &c->subs[i];
		struct mr_sub_opts so = { .size = sizeof(so), .flags = MR_SUB_SNAPSHOT,
					  .subtree = rs->prefix, .capacity = rs->capacity };
		rs->c = c;
		pthread_mutex_init(&rs->lock, NULL);
		err = mr_subscribe(c->r, &so, &rs->s);
		if (err) {
			snprintf(res->reason, sizeof(res->reason), "mr_subscribe %s: %s", rs->prefix,
				 strerror(-err));
			goto out;
		}
		if (pthread_create(&rs->thread, NULL, reader_main, rs)) {
			err = -EAGAIN;
			goto out;
		}
		rs->running = true;
	}
	if (st->o->router_thread) {
		err = mr_router_start(c->r);
	} else {
		err = pthread_create(&c->dispatcher, NULL, dispatch_main, c) ? -EAGAIN : 0;
		c->dispatching = !err;
	}
	if (err)
		goto out;
	/* Every reading subscriber has its first SNAPSHOT before the storm starts. */
	for (unsigned i = 0; i < c->n_subs; i++) {
		uint64_t until = ms_now_ns() + 5000000000ull;
		while (!c->subs[i].stalled && !atomic_load(&c->subs[i].primed) && ms_now_ns() < until)
			poll(NULL, 0, 1);
		if (!c->subs[i].stalled && !atomic_load(&c->subs[i].primed)) {
			snprintf(res->reason, sizeof(res->reason), "%s: no initial SNAPSHOT in 5 s",
				 c->subs[i].prefix);
			err = -ETIMEDOUT;
			goto out;
		}
	}
	mr_router_stats(c->r, &c->prev);

	d->st = st;
	d->res = res;
	d->ctx = c;
	d->n = c->n_subs;
	d->mountinfo_ids = !strcmp(mr_router_source(c->r), "mountinfo");
	d->settle_ms = st->o->settle_ms;
	d->verbose = st->o->verbose;
	d->check = check;
	d->seen = seen;
	d->wave_begin = wave_begin;
	d->wave_end = wave_end;
	d->release_stalled = release_stalled;
	if (c->dispatching)
		d->hold = hold;
	for (unsigned i = 0; i < c->n_subs; i++) {
		d->prefix[i] = c->subs[i].prefix;
		d->stalled[i] = c->subs[i].stalled;
	}
	err = ms_drive(d);

out:
	atomic_store(&c->stop, true);
	atomic_store(&c->release, true);
	for (unsigned i = 0; i < c->n_subs; i++)
		if (c->subs[i].running)
			pthread_join(c->subs[i].thread, NULL);
	if (c->dispatching)
		pthread_join(c->dispatcher, NULL);
	else if (st->o->router_thread)
		mr_router_stop(c->r);
	getrusage(RUSAGE_SELF, &ru1);
	res->wall_ns = ms_now_ns() - t0;

	struct mr_stats s;
	mr_router_stats(c->r, &s);
	res->events = s.events_routed;
	res->syscalls = s.syscalls;
	res->kernel_losses = s.kernel_losses;
	res->resyncs = s.resyncs;
	res->resync_ns = s.resync_ns_total;
	res->resync_cpu_ns = s.resync_cpu_ns_total;
	res->sweeps = s.sweeps;
	res->sweep_ns = s.sweep_ns_total;
	res->ring_drops = s.ring_drops;
	res->loss_to_consistent_ns = c->loss_to_consistent_max;
	if (c->dispatching) {
		res->cpu_ns = c->dispatch_cpu_ns;
	} else {
		/* Process CPU in the run minus every thread of ours (storm threads add theirs). */
		uint64_t proc = (uint64_t)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec +
					   ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1000000000ull +
				(uint64_t)((ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) +
					   (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec)) * 1000ull;
		uint64_t ours = ms_thread_cpu_ns() - main_cpu0 + atomic_load(&ms_runner_cpu_ns);
		for (unsigned i = 0; i < c->n_subs; i++)
			ours += c->subs[i].cpu_ns;
		res->cpu_ns = proc > ours ? proc - ours : 0;
	}

	struct ms_samples all = {0}, all_read = {0};
	uint64_t unmatched_read = 0;
	res->n_subs = c->n_subs;
	for (unsigned i = 0; i < c->n_subs; i++) {
		struct rsub *rs = &c->subs[i];
		struct ms_sub_result *sr = &res->subs[i];
		struct mr_sub_stats ss = {0};
		/*
		 * Waves and CPU per change count the changes of the subscriber on
		 * "/" alone, the one watcher the poller and findmnt are too.
		 */
		bool whole = !rs->stalled && !strcmp(rs->prefix, "/");

		if (rs->s)
			mr_sub_stats(rs->s, &ss);
		snprintf(sr->subtree, sizeof(sr->subtree), "%s", rs->prefix);
		sr->capacity = rs->capacity ? rs->capacity : 4096;
		sr->stalled = rs->stalled;
		sr->delivered = ss.delivered;
		sr->dropped = ss.dropped;
		sr->overruns = ss.overruns;
		sr->snapshots = ss.snapshots;
		sr->misrouted = rs->misrouted;
		sr->resync_brackets = rs->brackets;
		sr->recovery_ns_max = rs->recovery_ns_max;
		for (unsigned w = 0; w < st->n_waves; w++) {
			sr->seen += rs->seen[w];
			sr->synthetic += rs->synth[w];
			sr->expected += d->expected[w * MS_MAX_SUBS + i];
			if (whole) {
				res->waves[w].seen = rs->seen[w];
				res->waves[w].synthetic = rs->synth[w];
				res->waves[w].expected = d->expected[w * MS_MAX_SUBS + i];
			}
		}
		if (whole)
			res->changes_seen = sr->seen + sr->synthetic;
		if (!rs->stalled) {
			for (size_t k = 0; k < rs->samples.n; k++)
				ms_samples_push(&all, rs->samples.v[k].key, rs->samples.v[k].t);
			for (size_t k = 0; k < rs->read_samples.n; k++)
				ms_samples_push(&all_read, rs->read_samples.v[k].key,
						rs->read_samples.v[k].t);
		}
		if (rs->err && !res->reason[0])
			snprintf(res->reason, sizeof(res->reason), "reader %s: %s", rs->prefix,
				 strerror(-rs->err));
	}
	ms_latency_files(st, &all, res);
	ms_latency(st, &all_read, &res->router_lat, &unmatched_read, NULL, NULL);
	free(all.v);
	free(all_read.v);
	res->maxrss_kb = ms_maxrss_kb();

	bool consistent = err == 0;
	for (unsigned i = 0; i < c->n_subs; i++)
		consistent &= res->subs[i].consistent == 1 && !res->subs[i].misrouted;
	res->status = consistent ? MS_OK : MS_FAILED;
	if (!consistent && !res->reason[0]) {
		for (unsigned i = 0; i < c->n_subs; i++)
			if (res->subs[i].consistent != 1 || res->subs[i].misrouted) {
				snprintf(res->reason, sizeof(res->reason), "%s: %s%s",
					 res->subs[i].subtree,
					 res->subs[i].misrouted ? "events outside the subtree; " : "",
					 res->subs[i].diff);
				break;
			}
	}

	for (unsigned i = 0; i < c->n_subs; i++) {
		mr_unsubscribe(c->subs[i].s);
		ms_view_free(&c->subs[i].view);
		free(c->subs[i].samples.v);
		free(c->subs[i].read_samples.v);
		pthread_mutex_destroy(&c->subs[i].lock);
	}
	mr_router_free(c->r);
	free(c);
	free(d);
	return err;
}
