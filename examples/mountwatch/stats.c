/* SPDX-License-Identifier: MIT */
/* mountwatch --stats: what was seen, what was lost, and how late. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mountwatch.h"

struct mw_stats {
	uint64_t events;            /* changes printed */
	uint64_t by_kind[MR_KIND_LIMIT];
	uint64_t lost_kernel, lost_ring;
	uint64_t overruns_kernel, overruns_ring;
	uint64_t resyncs, synthetic;
	/* Latencies of changes, kernel read to print; sorted at exit. */
	uint64_t *lat;
	size_t n_lat, cap_lat;
	uint64_t lat_dropped;       /* samples beyond the cap (counted, not kept) */
};

/* 8 MiB of samples at most: a long-running watcher must not grow forever. */
#define MW_LAT_MAX (1u << 20)

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
	free(s->lat);
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
	if (s->n_lat == s->cap_lat) {
		size_t cap = s->cap_lat ? s->cap_lat * 2 : 1024;
		uint64_t *v = cap <= MW_LAT_MAX ? realloc(s->lat, cap * sizeof(*v)) : NULL;
		if (!v) {
			s->lat_dropped++;
			return;
		}
		s->lat = v;
		s->cap_lat = cap;
	}
	s->lat[s->n_lat++] = printed_ns > ev->time_ns ? printed_ns - ev->time_ns : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of the sorted samples. */
static uint64_t pct(const uint64_t *v, size_t n, unsigned p)
{
	size_t rank = (n * p + 99) / 100;

	return v[rank ? rank - 1 : 0];
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
	qsort(s->lat, s->n_lat, sizeof(*s->lat), cmp_u64);
	print_us(f, "p50", pct(s->lat, s->n_lat, 50));
	print_us(f, "p90", pct(s->lat, s->n_lat, 90));
	print_us(f, "p99", pct(s->lat, s->n_lat, 99));
	print_us(f, "max", s->lat[s->n_lat - 1]);
	fprintf(f, " (%zu samples", s->n_lat);
	if (s->lat_dropped)
		fprintf(f, ", %llu more not kept", (unsigned long long)s->lat_dropped);
	fprintf(f, ")\n");
}
