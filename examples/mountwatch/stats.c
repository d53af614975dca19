/* SPDX-License-Identifier: MIT */
/* mountwatch --stats: what was seen, what was lost, and how late. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mountwatch.h"

/*
 * Latencies go into a log-linear histogram, so that a watcher running for
 * months holds every sample in fixed memory (18 KiB): below 64 ns one
 * bucket a nanosecond, above it each power of two split into 64 buckets,
 * so a percentile is reported within 1/128 of a sample's value (the middle
 * of its bucket).  Up to 2^40 ns (18 minutes); longer counts as that.
 */
#define MW_LAT_SUB_BITS 6
#define MW_LAT_SUB (1u << MW_LAT_SUB_BITS)
#define MW_LAT_TOP_BIT 40
#define MW_LAT_BUCKETS (MW_LAT_SUB * (MW_LAT_TOP_BIT - MW_LAT_SUB_BITS + 1))

static unsigned lat_bucket(uint64_t ns)
{
	if (ns >= (1ull << MW_LAT_TOP_BIT))
		return MW_LAT_BUCKETS - 1;
	if (ns < MW_LAT_SUB)
		return (unsigned)ns;
	unsigned shift = 63u - (unsigned)__builtin_clzll(ns) - MW_LAT_SUB_BITS;
	return (shift + 1) * MW_LAT_SUB + (unsigned)(ns >> shift) - MW_LAT_SUB;
}

/* The middle of bucket @b, in ns. */
static uint64_t lat_value(unsigned b)
{
	if (b < MW_LAT_SUB)
		return b;
	unsigned shift = b / MW_LAT_SUB - 1;
	uint64_t low = (uint64_t)(b % MW_LAT_SUB + MW_LAT_SUB) << shift;
	return low + ((1ull << shift) >> 1);
}

struct mw_stats {
	uint64_t events;            /* changes printed */
	uint64_t by_kind[MR_KIND_LIMIT];
	uint64_t lost_kernel, lost_ring;
	uint64_t overruns_kernel, overruns_ring;
	uint64_t resyncs, synthetic;
	/* Latencies of changes, kernel read to print: every one counted. */
	uint64_t lat[MW_LAT_BUCKETS];
	uint64_t n_lat, max_lat;
};

uint64_t mw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int mw_stats_new(struct mw_stats **ret)
{
	struct mw_stats *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

void mw_stats_free(struct mw_stats *s)
{
	if (!s)
		return;
	free(s);
}

void mw_stats_event(struct mw_stats *s, const struct mr_event *ev, uint64_t printed_ns)
{
	if (ev->kind < MR_KIND_LIMIT)
		s->by_kind[ev->kind]++;
	switch (ev->kind) {
	case MR_EVENT_OVERRUN:
		if (ev->flags & MR_EVF_KERNEL_LOSS) {
			s->overruns_kernel++;
			s->lost_kernel += ev->lost;
		} else {
			s->overruns_ring++;
			s->lost_ring += ev->lost;
		}
		return;
	case MR_EVENT_RESYNC_BEGIN:
		s->resyncs++;
		return;
	case MR_EVENT_RESYNC_END:
	case MR_EVENT_SNAPSHOT:
		return;
	default:
		break;
	}
	s->events++;
	if (ev->flags & MR_EVF_SYNTHETIC)
		s->synthetic++;
	uint64_t ns = printed_ns > ev->time_ns ? printed_ns - ev->time_ns : 0;
	s->lat[lat_bucket(ns)]++;
	s->n_lat++;
	if (ns > s->max_lat)
		s->max_lat = ns;
}

/* Nearest-rank percentile @p of the samples, as the middle of its bucket. */
static uint64_t pct(const struct mw_stats *s, unsigned p)
{
	uint64_t rank = (s->n_lat * p + 99) / 100, seen = 0;

	for (unsigned b = 0; b < MW_LAT_BUCKETS; b++) {
		seen += s->lat[b];
		if (seen >= rank && seen) {
			uint64_t v = lat_value(b);
			return v < s->max_lat ? v : s->max_lat;
		}
	}
	return s->max_lat;
}

static void print_us(FILE *f, const char *name, uint64_t ns)
{
	fprintf(f, " %s %.1f us", name, (double)ns / 1000.0);
}

void mw_stats_print(struct mw_stats *s, const mr_router *r, FILE *f)
{
	struct mr_stats rs = {0};

	mr_router_stats(r, &rs);
	fprintf(f, "mountwatch: %llu change%s", (unsigned long long)s->events,
		s->events == 1 ? "" : "s");
	const char *sep = " (";
	for (uint32_t k = 1; k < MR_KIND_LIMIT; k++)
		if ((MR_KIND(k) & MR_KINDS_ALL) && s->by_kind[k]) {
			fprintf(f, "%s%s %llu", sep, mr_event_kind_name(k),
				(unsigned long long)s->by_kind[k]);
			sep = ", ";
		}
	fprintf(f, "%s\n", *sep == ',' ? ")" : "");
	fprintf(f, "mountwatch: lost: %llu by the kernel (%llu overrun%s), %llu in our ring "
		   "(%llu overrun%s); %llu resync%s delivered %llu synthetic change%s\n",
		(unsigned long long)s->lost_kernel, (unsigned long long)s->overruns_kernel,
		s->overruns_kernel == 1 ? "" : "s", (unsigned long long)s->lost_ring,
		(unsigned long long)s->overruns_ring, s->overruns_ring == 1 ? "" : "s",
		(unsigned long long)s->resyncs, s->resyncs == 1 ? "" : "s",
		(unsigned long long)s->synthetic, s->synthetic == 1 ? "" : "s");
	fprintf(f, "mountwatch: router: %llu records read, %llu events routed, %llu syscalls "
		   "(%llu io_uring_enter or epoll_wait), %.2f syscalls/event, %llu bad records, "
		   "%llu kernel losses, %llu resyncs, %llu sweeps (%.1f ms CPU), %llu namespaces, "
		   "%llu mounts\n",
		(unsigned long long)rs.records_read, (unsigned long long)rs.events_routed,
		(unsigned long long)rs.syscalls, (unsigned long long)rs.io_uring_enters,
		rs.events_routed ? (double)rs.syscalls / (double)rs.events_routed : 0.0,
		(unsigned long long)rs.bad_records, (unsigned long long)rs.kernel_losses,
		(unsigned long long)rs.resyncs, (unsigned long long)rs.sweeps,
		(double)rs.sweep_ns_total / 1e6, (unsigned long long)rs.namespaces,
		(unsigned long long)rs.mounts);
	fprintf(f, "mountwatch: latency (kernel read to print):");
	if (!s->n_lat) {
		fprintf(f, " no samples\n");
		return;
	}
	print_us(f, "p50", pct(s, 50));
	print_us(f, "p90", pct(s, 90));
	print_us(f, "p99", pct(s, 99));
	print_us(f, "max", s->max_lat);
	fprintf(f, " (%llu samples)\n", (unsigned long long)s->n_lat);
}
