/* SPDX-License-Identifier: MIT */
/*
 * Reporting: a summary a person reads, JSON with every figure, and a plot
 * (latency histogram and a time series of changes made vs seen) drawn by
 * gnuplot when it is installed; the .dat and .gp files are written either
 * way, so a machine without gnuplot can still hand them to one that has.
 *
 * Definitions used throughout:
 *  - changes: what the storm did to the watcher's subtree: the listmount
 *    diff across each wave, plus the mounts a flap made and removed again
 *    (net zero, so no diff can see them);
 *  - seen: changes reported live (router: non-synthetic events);
 *  - synthetic: changes a router delivered from a resync after a loss;
 *  - coalesced: changes - seen - synthetic, when positive: the watcher never
 *    reported them one by one (they fell between two reads, or the mount
 *    was gone before it could be described);
 *  - CPU per change: the watcher's CPU divided by the changes it reported;
 *    for a router, those of its subscriber on "/", so that each change
 *    counts once however many subscribers it reached.
 * The wave table of a router is likewise that of its subscriber on "/".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mountrouter.h"
#include "storm.h"

static const char *status_name(int s)
{
	switch (s) {
	case MS_OK: return "ok";
	case MS_UNAVAILABLE: return "unavailable";
	case MS_FAILED: return "FAILED";
	case MS_LAGGING: return "lagging";
	default: return "ERROR";
	}
}

/* enum ms_class, as the report names it. */
static const char *const class_name[MS_NCLASS] = {
	[MS_ARRIVE] = "arrive", [MS_DEPART] = "depart", [MS_ATTR] = "attributes",
};

static bool is_router(const struct ms_result *r)
{
	return strcmp(r->name, "poller") && strcmp(r->name, "findmnt");
}

/* "n N  p50 .. us  p90 ..  p99 ..  p99.9 ..  max .." of one latency set. */
static void print_lat(const struct ms_lat *l)
{
	printf("n %llu  p50 %.1f us  p90 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us",
	       (unsigned long long)l->n, l->p50 / 1e3, l->p90 / 1e3, l->p99 / 1e3, l->p999 / 1e3,
	       l->max / 1e3);
}

static void print_lat_by_class(const struct ms_lat *l)
{
	for (unsigned c = 0; c < MS_NCLASS; c++) {
		const struct ms_lat_class *lc = &l->by_class[c];
		printf("%s %s n %llu p50 %.1f us p99 %.1f us max %.1f us", c ? ";" : "", class_name[c],
		       (unsigned long long)lc->n, lc->p50 / 1e3, lc->p99 / 1e3, lc->max / 1e3);
	}
	printf("\n");
}

static uint64_t coalesced(uint64_t expected, uint64_t seen, uint64_t synth)
{
	return expected > seen + synth ? expected - seen - synth : 0;
}

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void cpu_model(char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(out, len, "unknown");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(out, len, "%s", strchr(line, ':') + 2);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

void ms_report_text(const struct ms_opts *o, const struct ms_result *r, size_t n)
{
	struct utsname u;
	char cpu[128], rate[64] = "max";

	if (o->rate)
		snprintf(rate, sizeof(rate), "%u ops/s%s", o->rate,
			 o->build_at_max ? " after a build-up at max" : "");
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	printf("mountstorm: %u live mounts, %u peer groups x %u members%s%s, %u ops/wave, depth %u, "
	       "%u thread(s), rate %s, %u subscribers\n",
	       o->total, o->peers, o->members, o->slave ? " + slave" : "",
	       o->unbindable ? " + unbindable" : "", o->mounts, o->depth, o->threads,
	       rate, o->subs);
	printf("kernel %s, %s, %ld CPUs, mountrouter %s\n\n", u.release, cpu,
	       sysconf(_SC_NPROCESSORS_ONLN), mr_version());

	for (size_t i = 0; i < n; i++) {
		const struct ms_result *x = &r[i];
		printf("== %s: %s", x->name, status_name(x->status));
		if (x->reason[0])
			printf(" (%s)", x->reason);
		printf("\n");
		if (x->status == MS_UNAVAILABLE)
			continue;
		if (x->source_reason[0])
			printf("   source: %s\n", x->source_reason);
		printf("   %-11s %6s %8s %8s %8s %8s %6s %10s %s\n", "wave", "ops", "changes", "seen",
		       "synth", "coalesc", "loss", "settle ms", "consistent");
		for (unsigned w = 0; w < x->n_waves; w++) {
			const struct ms_wave_result *wr = &x->waves[w];
			printf("   %-11s %6u %8llu %8llu %8llu %8llu %6llu %10.2f %s%s\n", wr->name,
			       wr->ops, (unsigned long long)wr->expected,
			       (unsigned long long)wr->seen, (unsigned long long)wr->synthetic,
			       (unsigned long long)coalesced(wr->expected, wr->seen, wr->synthetic),
			       (unsigned long long)wr->kernel_losses, (double)wr->settle_ns / 1e6,
			       wr->consistent == 1 ? "yes" : wr->consistent == 0 ? "NO" : "held",
			       wr->issued != UINT64_MAX && wr->issued != wr->net ? "  (model != diff)"
										 : "");
		}
		if (is_router(x)) {
			printf("   %-28s %8s %8s %8s %7s %8s %6s %5s %s\n", "subscriber", "changes",
			       "seen", "synth", "dropped", "overruns", "snaps", "miss", "consistent");
			for (unsigned s = 0; s < x->n_subs; s++) {
				const struct ms_sub_result *sr = &x->subs[s];
				const char *p = sr->subtree;
				size_t pl = strlen(p);
				char note[48] = "";
				if (sr->stalled)
					snprintf(note, sizeof(note), " (stalled, %u slots)", sr->capacity);
				printf("   %-28s %8llu %8llu %8llu %7llu %8llu %6llu %5llu %s%s\n",
				       pl > 28 ? p + pl - 28 : p, (unsigned long long)sr->expected,
				       (unsigned long long)sr->seen, (unsigned long long)sr->synthetic,
				       (unsigned long long)sr->dropped, (unsigned long long)sr->overruns,
				       (unsigned long long)sr->snapshots,
				       (unsigned long long)sr->misrouted,
				       sr->consistent == 1 ? "yes" : "NO", note);
				if (sr->consistent == 0)
					printf("      first difference: %s\n", sr->diff);
			}
		}
		printf("   latency (op return -> watcher has it): ");
		print_lat(&x->lat);
		printf(" (unmatched %llu, early %llu)\n", (unsigned long long)x->unmatched,
		       (unsigned long long)x->lat.early);
		printf("   latency by change:");
		print_lat_by_class(&x->lat);
		if (is_router(x) && x->router_lat.n) {
			printf("   of which the router's (op return -> router read it): ");
			print_lat(&x->router_lat);
			printf("\n   the router's by change:");
			print_lat_by_class(&x->router_lat);
		}
		printf("   CPU %.1f ms: %.2f us per change seen", x->cpu_ns / 1e6,
		       per(x->cpu_ns, x->changes_seen) / 1e3);
		if (is_router(x))
			printf(", %.2f us per event routed; %llu events, %.2f syscalls/event, "
			       "kernel losses %llu, resyncs %llu (%.1f ms, %.1f ms CPU), sweeps %llu (%.1f ms CPU), "
			       "ring drops %llu, loss->consistent %.1f ms",
			       per(x->cpu_ns, x->events) / 1e3, (unsigned long long)x->events,
			       per(x->syscalls, x->events), (unsigned long long)x->kernel_losses,
			       (unsigned long long)x->resyncs, x->resync_ns / 1e6, x->resync_cpu_ns / 1e6,
			       (unsigned long long)x->sweeps, x->sweep_ns / 1e6,
			       (unsigned long long)x->ring_drops, x->loss_to_consistent_ns / 1e6);
		else
			printf(", %llu %s", (unsigned long long)x->reads,
			       strcmp(x->name, "findmnt") ? "full re-reads" : "lines");
		printf("\n   peak mounts %llu, peak RSS %llu KiB%s, wall %.2f s\n\n",
		       (unsigned long long)x->peak_mounts, (unsigned long long)x->maxrss_kb,
		       strcmp(x->name, "findmnt") ? " (whole contender process)" : " (findmnt)",
		       x->wall_ns / 1e9);
	}

	/* The comparison the storm is for: CPU per change and what was missed. */
	const struct ms_result *base = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, "poller") && r[i].status != MS_ERROR && r[i].changes_seen)
			base = &r[i];
	printf("%-12s %12s %12s %12s %10s %12s\n", "contender", "changes", "seen+synth",
	       "coalesced", "CPU us/chg", "poller/this");
	for (size_t i = 0; i < n; i++) {
		const struct ms_result *x = &r[i];
		uint64_t exp = 0, seen = 0, syn = 0;
		if (x->status == MS_UNAVAILABLE) {
			printf("%-12s unavailable\n", x->name);
			continue;
		}
		/* Subscriber "/" (index 1; 0 is the stalled one) matches the alternatives' view. */
		unsigned s = is_router(x) && x->n_subs > 1 ? 1 : 0;
		exp = x->subs[s].expected;
		seen = x->subs[s].seen;
		syn = x->subs[s].synthetic;
		double cpc = per(x->cpu_ns, x->changes_seen) / 1e3;
		double base_cpc = base ? per(base->cpu_ns, base->changes_seen) / 1e3 : 0;
		printf("%-12s %12llu %12llu %12llu %10.2f %11.2fx\n", x->name, (unsigned long long)exp,
		       (unsigned long long)(seen + syn), (unsigned long long)coalesced(exp, seen, syn),
		       cpc, cpc > 0 && base_cpc > 0 ? base_cpc / cpc : 0.0);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* ,\n "name": {"n": .., "p50": .., ..., "arrive": {..}, ...} */
static void json_lat(FILE *f, const char *name, const struct ms_lat *l)
{
#define U(k, v) fprintf(f, "\"%s\": %llu", k, (unsigned long long)(v))
	fprintf(f, ",\n     \"%s\": {", name);
	U("n", l->n); fprintf(f, ", "); U("p50", l->p50); fprintf(f, ", ");
	U("p90", l->p90); fprintf(f, ", "); U("p99", l->p99); fprintf(f, ", ");
	U("p99_9", l->p999); fprintf(f, ", "); U("max", l->max); fprintf(f, ", ");
	U("early", l->early);
	for (unsigned c = 0; c < MS_NCLASS; c++) {
		const struct ms_lat_class *lc = &l->by_class[c];
		fprintf(f, ", \"%s\": {", class_name[c]);
		U("n", lc->n); fprintf(f, ", "); U("p50", lc->p50); fprintf(f, ", ");
		U("p99", lc->p99); fprintf(f, ", "); U("max", lc->max); fprintf(f, "}");
	}
	fprintf(f, "}");
#undef U
}

int ms_report_json(const struct ms_opts *o, const struct ms_result *r, size_t n, const char *path)
{
	FILE *f = fopen(path, "w");
	struct utsname u;
	char cpu[128];

	if (!f)
		return -errno;
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
#define U(k, v) fprintf(f, "\"%s\": %llu", k, (unsigned long long)(v))
	fprintf(f, "{\n  \"kernel\": ");
	json_str(f, u.release);
	fprintf(f, ", \"cpu\": ");
	json_str(f, cpu);
	fprintf(f, ", \"mountrouter\": ");
	json_str(f, mr_version());
	fprintf(f, ",\n  \"options\": {");
	U("total", o->total); fprintf(f, ", "); U("peers", o->peers); fprintf(f, ", ");
	U("members", o->members); fprintf(f, ", \"slave\": %s, \"unbindable\": %s, ",
					   o->slave ? "true" : "false", o->unbindable ? "true" : "false");
	U("mounts_per_wave", o->mounts); fprintf(f, ", "); U("depth", o->depth); fprintf(f, ", ");
	U("threads", o->threads); fprintf(f, ", "); U("rate", o->rate); fprintf(f, ", ");
	fprintf(f, "\"build_at_max\": %s, ", o->build_at_max ? "true" : "false");
	U("hold_waves", o->hold_waves); fprintf(f, ", ");
	U("subs", o->subs); fprintf(f, ", "); U("stall_capacity", o->stall_capacity);
	fprintf(f, ", \"router_thread\": %s, \"backend\": \"%s\"},\n  \"contenders\": [",
		o->router_thread ? "true" : "false",
		o->router_flags & MR_OPT_EPOLL ? "epoll" :
		o->router_flags & MR_OPT_IO_URING ? "io_uring" : "default");
	for (size_t i = 0; i < n; i++) {
		const struct ms_result *x = &r[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_str(f, x->name);
		fprintf(f, ", \"status\": \"%s\", \"reason\": ", status_name(x->status));
		json_str(f, x->reason);
		fprintf(f, ", \"source\": ");
		json_str(f, x->source_reason);
		fprintf(f, ",\n     ");
		U("cpu_ns", x->cpu_ns); fprintf(f, ", "); U("events", x->events); fprintf(f, ", ");
		U("changes_seen", x->changes_seen); fprintf(f, ", ");
		U("changes_made", x->changes_issued); fprintf(f, ", ");
		U("reads", x->reads); fprintf(f, ", "); U("syscalls", x->syscalls); fprintf(f, ", ");
		fprintf(f, "\"cpu_ns_per_event\": %.1f, \"cpu_ns_per_change\": %.1f, "
			   "\"syscalls_per_event\": %.3f,\n     ",
			per(x->cpu_ns, x->events), per(x->cpu_ns, x->changes_seen),
			per(x->syscalls, x->events));
		U("kernel_losses", x->kernel_losses); fprintf(f, ", ");
		U("resyncs", x->resyncs); fprintf(f, ", "); U("resync_ns", x->resync_ns);
		fprintf(f, ", "); U("resync_cpu_ns", x->resync_cpu_ns);
		fprintf(f, ", "); U("sweeps", x->sweeps); fprintf(f, ", "); U("sweep_ns", x->sweep_ns);
		fprintf(f, ", "); U("ring_drops", x->ring_drops); fprintf(f, ", ");
		U("loss_to_consistent_ns", x->loss_to_consistent_ns); fprintf(f, ", ");
		U("maxrss_kb", x->maxrss_kb); fprintf(f, ", "); U("wall_ns", x->wall_ns);
		fprintf(f, ", "); U("peak_mounts", x->peak_mounts); fprintf(f, ", ");
		U("unmatched", x->unmatched);
		json_lat(f, "latency_ns", &x->lat);
		if (is_router(x))
			json_lat(f, "router_latency_ns", &x->router_lat);
		fprintf(f, ",\n     \"waves\": [");
		for (unsigned w = 0; w < x->n_waves; w++) {
			const struct ms_wave_result *wr = &x->waves[w];
			fprintf(f, "%s\n       {\"name\": ", w ? "," : "");
			json_str(f, wr->name);
			fprintf(f, ", ");
			U("ops", wr->ops); fprintf(f, ", "); U("failed", wr->failed); fprintf(f, ", ");
			if (wr->issued == UINT64_MAX)
				fprintf(f, "\"modelled\": null, ");
			else
				U("modelled", wr->issued), fprintf(f, ", ");
			U("net_diff", wr->net); fprintf(f, ", "); U("mounts", wr->mounts);
			fprintf(f, ", "); U("changes", wr->expected);
			fprintf(f, ", "); U("seen", wr->seen); fprintf(f, ", ");
			U("synthetic", wr->synthetic); fprintf(f, ", ");
			U("coalesced", coalesced(wr->expected, wr->seen, wr->synthetic));
			fprintf(f, ", "); U("op_ns", wr->op_ns); fprintf(f, ", ");
			U("settle_ns", wr->settle_ns); fprintf(f, ", \"consistent\": %s, ",
							    wr->consistent == 1 ? "true" : wr->consistent ? "null" : "false");
			U("kernel_losses", wr->kernel_losses); fprintf(f, ", ");
			U("ring_drops", wr->ring_drops); fprintf(f, ", "); U("resyncs", wr->resyncs);
			fprintf(f, "}");
		}
		fprintf(f, "],\n     \"subscribers\": [");
		for (unsigned s = 0; s < x->n_subs; s++) {
			const struct ms_sub_result *sr = &x->subs[s];
			fprintf(f, "%s\n       {\"subtree\": ", s ? "," : "");
			json_str(f, sr->subtree);
			fprintf(f, ", \"stalled\": %s, \"consistent\": %s, ", sr->stalled ? "true" : "false",
				sr->consistent == 1 ? "true" : sr->consistent ? "null" : "false");
			U("capacity", sr->capacity); fprintf(f, ", "); U("changes", sr->expected);
			fprintf(f, ", "); U("seen", sr->seen); fprintf(f, ", ");
			U("synthetic", sr->synthetic); fprintf(f, ", ");
			U("coalesced", coalesced(sr->expected, sr->seen, sr->synthetic));
			fprintf(f, ", "); U("delivered", sr->delivered); fprintf(f, ", ");
			U("dropped", sr->dropped); fprintf(f, ", "); U("overruns", sr->overruns);
			fprintf(f, ", "); U("snapshots", sr->snapshots); fprintf(f, ", ");
			U("resync_brackets", sr->resync_brackets); fprintf(f, ", ");
			U("misrouted", sr->misrouted); fprintf(f, ", ");
			U("recovery_ns_max", sr->recovery_ns_max); fprintf(f, ", \"difference\": ");
			json_str(f, sr->diff);
			fprintf(f, "}");
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ]\n}\n");
#undef U
	return fclose(f) ? -errno : 0;
}

int ms_report_plot(const struct ms_opts *o, const struct ms_result *r, size_t n)
{
	char gp[512], svg[512];
	bool any = false;
	FILE *f;

	snprintf(gp, sizeof(gp), "%s.gp", o->plot);
	snprintf(svg, sizeof(svg), "%s.svg", o->plot);
	f = fopen(gp, "w");
	if (!f)
		return -errno;
	fprintf(f, "# mountstorm: gnuplot %s  ->  %s\n", gp, svg);
	fprintf(f, "set terminal svg size 1200,900 dynamic background rgb 'white'\n");
	fprintf(f, "set output '%s'\nset multiplot layout 2,1\n", svg);
	fprintf(f, "set title 'Latency: mount syscall return -> watcher has the change (%u mounts)'\n",
		o->total);
	fprintf(f, "set logscale x\nset xlabel 'latency, microseconds (log scale)'\n"
		   "set ylabel 'fraction of changes seen within'\nset yrange [0:1]\n"
		   "set format x '%%g'\nset grid\nset key bottom right\n");
	fprintf(f, "plot ");
	for (size_t i = 0; i < n; i++) {
		if (r[i].status == MS_UNAVAILABLE || r[i].status == MS_ERROR || !r[i].lat.n)
			continue;
		fprintf(f, "%s'%s-%s.lat.dat' using 1:2 with lines linewidth 2 title '%s'",
			any ? ", \\\n     " : "", o->plot, r[i].name, r[i].name);
		any = true;
	}
	if (!any)
		fprintf(f, "NaN notitle");
	fprintf(f, "\nunset logscale x\nset yrange [*:*]\nset format x '%%g'\n");
	fprintf(f, "set title 'Changes seen per 10 ms, summed over subscribers (ops issued, dashed)'\n"
		   "set xlabel 'seconds since the first wave'\nset ylabel 'per 10 ms'\n");
	fprintf(f, "plot ");
	any = false;
	for (size_t i = 0; i < n; i++) {
		if (r[i].status == MS_UNAVAILABLE || r[i].status == MS_ERROR || !r[i].lat.n)
			continue;
		fprintf(f, "%s'%s-%s.ts.dat' using 1:3 with lines title '%s seen'",
			any ? ", \\\n     " : "", o->plot, r[i].name, r[i].name);
		fprintf(f, ", \\\n     '%s-%s.ts.dat' using 1:2 with lines dashtype 2 title '%s ops'",
			o->plot, r[i].name, r[i].name);
		any = true;
	}
	if (!any)
		fprintf(f, "NaN notitle");
	fprintf(f, "\nunset multiplot\n");
	fclose(f);

	char cmd[1200];
	/* gnuplot is optional (the VM has none): the .gp and .dat files stay either way. */
	if (system("command -v gnuplot >/dev/null 2>&1") != 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "gnuplot '%s'", gp);
	return system(cmd) == 0 ? 0 : -EIO;
}
