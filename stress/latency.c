/* SPDX-License-Identifier: MIT */
/*
 * Latency: from the moment a mount syscall returned to the moment a
 * watcher had the change in hand (a subscriber's dequeue, a poller's diff,
 * a findmnt line).  Matching is done after the storm, so that nothing on
 * the measured path shares a data structure: each op keeps its own
 * completion times, each watcher thread its own sample log.
 *
 * An op and a sample meet on (wave, class, key): the key names the path
 * relative to the peer-group member (see ms_key()), so every propagated
 * copy matches the op on the origin that caused it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storm.h"

int ms_samples_push(struct ms_samples *s, uint64_t key, uint64_t t)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		struct ms_sample *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct ms_sample){ .key = key, .t = t };
	return 0;
}

static void level_path(char *out, size_t len, const char *base, unsigned level)
{
	size_t w = (size_t)snprintf(out, len, "%s", base);

	for (unsigned i = 0; i < level && w < len; i++)
		w += (size_t)snprintf(out + w, len - w, "/n");
}

/* The (key, time) pairs one op produced; mirrors run_op() in waves.c. */
static int op_marks(const struct ms_storm *st, unsigned wave, const struct ms_op *op,
		    struct ms_samples *out)
{
	char base[MS_PATH], p[MS_PATH + 32];
	int err = 0;

	if (op->err)
		return 0; /* a failed op has no well-defined effect to time */
	if (op->group == UINT16_MAX)
		snprintf(base, sizeof(base), "%s/stage/%s", st->root, op->rel);
	else
		snprintf(base, sizeof(base), "%s/g%u/m0/%s", st->root, op->group, op->rel);
#define MARK(path, c, t)                                                                   \
	(err = err ? err : ms_samples_push(out, ms_key_mix(ms_key(st->root, path), wave, c), t), \
	 err ? 0 : (out->v[out->n - 1].cls = (c)))
	switch (op->kind) {
	case OP_MOUNT:
		for (unsigned l = 0; l < op->depth; l++) {
			level_path(p, sizeof(p), base, l);
			MARK(p, MS_ARRIVE, op->t[l]);
		}
		break;
	case OP_BIND:
	case OP_STAGE:
	case OP_MOVE:
		MARK(base, MS_ARRIVE, op->t[0]);
		break;
	case OP_REMOUNT_RO:
	case OP_REMOUNT_RW:
		MARK(base, MS_ATTR, op->t[0]);
		break;
	case OP_SETATTR:
		for (unsigned l = 0; l < op->depth; l++) {
			level_path(p, sizeof(p), base, l);
			MARK(p, MS_ATTR, op->t[0]);
		}
		break;
	case OP_FLAP:
		MARK(base, MS_ARRIVE, op->t[0]);
		MARK(base, MS_DEPART, op->t[1]);
		break;
	case OP_UMOUNT:
		level_path(p, sizeof(p), base, op->depth - 1u);
		MARK(p, MS_DEPART, op->t[0]);
		break;
	case OP_UMOUNT_LAZY:
		for (unsigned l = 0; l < op->depth; l++) {
			level_path(p, sizeof(p), base, l);
			MARK(p, MS_DEPART, op->t[0]);
		}
		break;
	}
#undef MARK
	return err;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct ms_sample *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(const uint64_t *v, size_t n, double q)
{
	if (!n)
		return 0;
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

void ms_latency(const struct ms_storm *st, struct ms_samples *all, struct ms_lat *ret,
		uint64_t *ret_unmatched, const char *dat_path, const char *ts_path)
{
	struct ms_samples ops = {0};
	uint64_t *lat = NULL, *by_class[MS_NCLASS] = {0};
	size_t n_lat = 0, unmatched = 0, n_class[MS_NCLASS] = {0};

	*ret = (struct ms_lat){0};
	for (size_t w = 1; w < st->n_waves; w++)
		for (size_t i = 0; i < st->waves[w].n_ops; i++)
			if (op_marks(st, (unsigned)w, &st->waves[w].ops[i], &ops) < 0)
				goto out;
	qsort(ops.v, ops.n, sizeof(*ops.v), cmp_sample);
	lat = malloc((all->n + 1) * sizeof(*lat));
	if (!lat)
		goto out;
	for (unsigned c = 0; c < MS_NCLASS; c++)
		if (!(by_class[c] = malloc((all->n + 1) * sizeof(*lat))))
			goto out;
	for (size_t i = 0; i < all->n; i++) {
		const struct ms_sample *s = &all->v[i];
		size_t lo = 0, hi = ops.n;
		/* First op with this key; ops of one key differ only in level time. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (ops.v[mid].key < s->key)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == ops.n || ops.v[lo].key != s->key) {
			unmatched++;
			continue;
		}
		/*
		 * The kernel notifies before the syscall returns, so a fast
		 * watcher can dequeue before the storm thread took its
		 * timestamp: that is a latency of zero, counted apart.
		 */
		uint64_t l = 0;
		if (ops.v[lo].t > s->t)
			ret->early++;
		else
			l = s->t - ops.v[lo].t;
		lat[n_lat++] = l;
		by_class[ops.v[lo].cls][n_class[ops.v[lo].cls]++] = l;
	}
	for (unsigned c = 0; c < MS_NCLASS; c++) {
		struct ms_lat_class *lc = &ret->by_class[c];
		size_t n = n_class[c];

		qsort(by_class[c], n, sizeof(uint64_t), cmp_u64);
		*lc = (struct ms_lat_class){ .n = n, .p50 = pct(by_class[c], n, 0.50),
					     .p99 = pct(by_class[c], n, 0.99),
					     .max = n ? by_class[c][n - 1] : 0 };
	}
	if (ts_path) {
		/* Time series, 10 ms bins from the first op: ops done vs changes seen. */
		FILE *f = fopen(ts_path, "w");
		uint64_t t0 = st->n_waves > 1 ? st->waves[1].t_start : 0, t1 = t0;
		for (size_t i = 0; i < all->n; i++)
			if (all->v[i].t > t1)
				t1 = all->v[i].t;
		for (size_t i = 0; i < ops.n; i++)
			if (ops.v[i].t > t1)
				t1 = ops.v[i].t;
		size_t bins = t1 > t0 ? (size_t)((t1 - t0) / 10000000u) + 1 : 1;
		uint64_t *b = calloc(bins * 2, sizeof(*b));
		if (f && b) {
			for (size_t i = 0; i < ops.n; i++)
				if (ops.v[i].t >= t0)
					b[2 * ((ops.v[i].t - t0) / 10000000u)]++;
			for (size_t i = 0; i < all->n; i++)
				if (all->v[i].t >= t0)
					b[2 * ((all->v[i].t - t0) / 10000000u) + 1]++;
			fprintf(f, "# time_s ops_per_10ms seen_per_10ms\n");
			for (size_t i = 0; i < bins; i++)
				fprintf(f, "%.2f %llu %llu\n", (double)i * 0.01,
					(unsigned long long)b[2 * i], (unsigned long long)b[2 * i + 1]);
		}
		free(b);
		if (f)
			fclose(f);
	}
	qsort(lat, n_lat, sizeof(*lat), cmp_u64);
	ret->n = n_lat;
	ret->p50 = pct(lat, n_lat, 0.50);
	ret->p90 = pct(lat, n_lat, 0.90);
	ret->p99 = pct(lat, n_lat, 0.99);
	ret->p999 = pct(lat, n_lat, 0.999);
	ret->max = n_lat ? lat[n_lat - 1] : 0;
	if (dat_path) {
		/*
		 * The distribution as a CDF: the latency below which each
		 * fraction of the changes was seen, at up to 2,000 ranks (every
		 * change when there are fewer) and the last.
		 */
		FILE *f = fopen(dat_path, "w");
		if (f) {
			fprintf(f, "# latency_us fraction_seen_within\n");
			size_t step = n_lat > 2000 ? n_lat / 2000 : 1;
			for (size_t j = 0; j < n_lat; j += step)
				fprintf(f, "%.3f %.6f\n", (double)lat[j] / 1000.0,
					(double)(j + 1) / (double)n_lat);
			if (n_lat)
				fprintf(f, "%.3f 1\n", (double)lat[n_lat - 1] / 1000.0);
			fclose(f);
		}
	}
out:
	if (ret_unmatched)
		*ret_unmatched = unmatched;
	free(lat);
	for (unsigned c = 0; c < MS_NCLASS; c++)
		free(by_class[c]);
	free(ops.v);
}

void ms_latency_files(const struct ms_storm *st, struct ms_samples *all, struct ms_result *res)
{
	char dat[512], ts[512];
	const char *plot = st->o->plot;

	if (plot) {
		snprintf(dat, sizeof(dat), "%s-%s.lat.dat", plot, res->name);
		snprintf(ts, sizeof(ts), "%s-%s.ts.dat", plot, res->name);
	}
	ms_latency(st, all, &res->lat, &res->unmatched, plot ? dat : NULL, plot ? ts : NULL);
}
