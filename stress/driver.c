/* SPDX-License-Identifier: MIT */
/*
 * The storm loop every contender shares: run a wave, read the ground truth,
 * work out what each watcher should have seen, and wait (up to a limit)
 * until every watcher's picture equals the truth.  The time that takes is
 * the wave's settle time; a watcher that never gets there fails the wave.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "driver.h"

static void sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)us * 1000 };
	nanosleep(&ts, NULL);
}

/* One pass over the views; returns true when all of @which are consistent. */
static bool all_consistent(struct ms_driver *d, const struct ms_table *truth, bool with_stalled,
			   const uint64_t *expected, unsigned wave, int *failed_view, char *why,
			   size_t len)
{
	for (unsigned i = 0; i < d->n; i++) {
		if (d->stalled[i] && !with_stalled)
			continue;
		int c = d->check(d->ctx, i, truth, why, len);
		if (c < 0) {
			/* No picture to compare (findmnt): enough lines is the best we can ask. */
			uint64_t seen = 0;
			for (unsigned w = 0; w <= wave; w++)
				seen += d->seen(d->ctx, i, w);
			c = seen >= expected[i];
			if (!c)
				snprintf(why, len, "%llu of %llu changes seen", (unsigned long long)seen,
					 (unsigned long long)expected[i]);
		}
		if (!c) {
			*failed_view = (int)i;
			return false;
		}
	}
	return true;
}

static int read_truth(struct ms_driver *d, struct ms_table *lm, struct ms_table *mi)
{
	int err = ms_truth_listmount(lm, NULL);

	if (!err && d->mountinfo_ids)
		err = ms_truth_mountinfo(mi);
	return err;
}

int ms_drive(struct ms_driver *d)
{
	struct ms_storm *st = d->st;
	struct ms_result *res = d->res;
	struct ms_table before = {0}, after = {0}, mi = {0};
	uint64_t expected_cum[MS_MAX_SUBS] = {0}; /* net changes, for watchers judged by counts */
	char why[160];
	bool failed = false;
	int err;

	err = ms_truth_listmount(&before, NULL);
	if (err)
		return err;
	res->n_waves = (uint32_t)st->n_waves;
	for (unsigned w = 0; w < st->n_waves; w++) {
		struct ms_wave *wave = &st->waves[w];
		struct ms_wave_result *wr = &res->waves[w];
		uint64_t net[MS_NCLASS] = {0};

		/* Held waves: the watcher reads nothing until the last one is done. */
		bool held = d->hold && w >= 1 && w <= st->o->hold_waves;

		atomic_store(&st->cur_wave, w);
		if (d->wave_begin)
			d->wave_begin(d->ctx, w);
		if (held && w == 1)
			d->hold(d->ctx, true);
		err = ms_wave_run(st, wave);
		if (held && w == st->o->hold_waves)
			d->hold(d->ctx, false);
		snprintf(wr->name, sizeof(wr->name), "%s", wave->name);
		wr->ops = (uint32_t)wave->n_ops;
		wr->failed = wave->failed;
		wr->op_ns = wave->t_end - wave->t_start;
		if (err) {
			snprintf(res->reason, sizeof(res->reason), "wave %u (%s): %s", w, wave->name,
				 strerror(-err));
			goto out;
		}
		if (wave->failed && !res->reason[0])
			snprintf(res->reason, sizeof(res->reason),
				 "wave %u (%s): %u ops failed, first: %s", w, wave->name, wave->failed,
				 strerror(wave->first_err));

		ms_table_clear(&after);
		ms_table_clear(&mi);
		err = read_truth(d, &after, &mi);
		if (err) {
			snprintf(res->reason, sizeof(res->reason), "ground truth: %s", strerror(-err));
			goto out;
		}
		wr->mounts = after.n;
		if (after.n > res->peak_mounts)
			res->peak_mounts = after.n;
		ms_table_diff(&before, &after, "/", net);
		wr->net = net[0] + net[1] + net[2] + ms_wave_transient(st, wave, "/");
		wr->issued = wave->issued[0] == UINT64_MAX
				     ? UINT64_MAX
				     : wave->issued[0] + wave->issued[1] + wave->issued[2];
		res->changes_issued += wr->net;
		for (unsigned i = 0; i < d->n; i++) {
			uint64_t e[MS_NCLASS] = {0};
			ms_table_diff(&before, &after, d->prefix[i], e);
			d->expected[w * MS_MAX_SUBS + i] =
				e[0] + e[1] + e[2] + ms_wave_transient(st, wave, d->prefix[i]);
			/* Flaps are net zero: a watcher judged by counts could never show them. */
			expected_cum[i] += e[0] + e[1] + e[2];
		}

		/* Settle: every live watcher's picture equals the truth. */
		const struct ms_table *truth = d->mountinfo_ids ? &mi : &after;
		/*
		 * After a failed wave a view may stay wrong for good; the storm
		 * goes on for its figures, but does not wait the full limit on
		 * every later wave.
		 */
		unsigned limit = failed && d->settle_ms > 1000 ? 1000 : d->settle_ms;
		uint64_t deadline = ms_now_ns() + (uint64_t)limit * 1000000u;
		int bad = -1;
		wr->consistent = held && w < st->o->hold_waves ? -1 : 0;
		while (wr->consistent == 0) {
			if (all_consistent(d, truth, false, expected_cum, w, &bad, why, sizeof(why))) {
				wr->consistent = 1;
				wr->settle_ns = ms_now_ns() - wave->t_end;
				break;
			}
			if (ms_now_ns() > deadline)
				break;
			sleep_us(2000);
		}
		if (d->wave_end)
			d->wave_end(d->ctx, w, wr);
		if (!wr->consistent) {
			wr->settle_ns = ms_now_ns() - wave->t_end;
			if (!failed)
				snprintf(res->reason, sizeof(res->reason),
					 "wave %u (%s): %s not consistent after %u ms: %s", w,
					 wave->name, d->prefix[bad >= 0 ? bad : 0], limit, why);
			failed = true;
		}
		if (d->verbose)
			fprintf(stderr, "mountstorm: %s wave %u %-10s ops %5zu net %6llu settle %8.2f ms %s\n",
				res->name, w, wave->name, wave->n_ops, (unsigned long long)wr->net,
				(double)wr->settle_ns / 1e6,
				wr->consistent == 1 ? "ok" : wr->consistent < 0 ? "held" : why);
		struct ms_table t = before;
		before = after;
		after = t;
	}

	/* The stalled subscriber reads at last; every view must now agree. */
	if (d->release_stalled)
		d->release_stalled(d->ctx);
	ms_table_clear(&after);
	ms_table_clear(&mi);
	err = read_truth(d, &after, &mi);
	if (err)
		goto out;
	const struct ms_table *truth = d->mountinfo_ids ? &mi : &after;
	uint64_t deadline = ms_now_ns() + (uint64_t)d->settle_ms * 1000000u;
	for (;;) {
		int bad = -1;
		if (all_consistent(d, truth, true, expected_cum, (unsigned)st->n_waves - 1, &bad, why,
				   sizeof(why)))
			break;
		if (ms_now_ns() > deadline)
			break;
		sleep_us(2000);
	}
	for (unsigned i = 0; i < d->n; i++) {
		int c = d->check(d->ctx, i, truth, why, sizeof(why));
		res->subs[i].consistent = c;
		if (c == 0)
			snprintf(res->subs[i].diff, sizeof(res->subs[i].diff), "%s", why);
	}
	if (failed && !err)
		err = -ETIMEDOUT;
out:
	ms_table_clear(&before);
	ms_table_clear(&after);
	ms_table_clear(&mi);
	return err;
}

uint64_t ms_maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_maxrss;
}
