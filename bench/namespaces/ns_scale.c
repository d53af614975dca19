/* SPDX-License-Identifier: MIT */
/*
 * ns_scale: how the router's cost grows with the number of mount
 * namespaces it watches, one change at a time on a quiet host.
 *
 *   ns_scale [--namespaces 1,100,300,1000] [--mounts-per-ns 20]
 *            [--sources fanotify,listmount,mountinfo] [--changes 40]
 *            [--interval-ms 30] [--rounds 1] [--json FILE]
 *
 * In a private mount namespace (tmpfs root under /tmp): as many mount
 * namespaces as the largest count K (namespaces.c), each a copy of this
 * one's table plus a tmpfs with --mounts-per-ns tmpfs mounts under it.
 * Then, --rounds times, for each K and each source in turn, in a child
 * process of its own, a router watching the first K as `mountwatch -A`
 * does (watcher.c).  Per source and K, over all its rounds:
 *  - setup: the wall time and the watcher's CPU to add the K namespaces,
 *    subscribe to each and have the router take them over; its VmRSS
 *    then, its VmHWM (the peak, setup included), and the KB each
 *    namespace costs: (RSS at K - RSS at K0) / (K - K0), K0 the smallest
 *    count measured on that source (these from the last round);
 *  - --changes probes mounted in the busy namespace, one at a time, each
 *    waited for until the watcher holds it, then unmounted the same way:
 *    per change the CPU of all the watcher's threads (its process CPU
 *    clock from before the syscall to the end of the quiet --interval-ms
 *    after it), the median over the changes, mounts and unmounts apart
 *    (they need not cost the same: on fanotify a mount costs a statmount
 *    an unmount does not); the syscalls the router counted per change;
 *    the latency from mount(2)'s return to the subscriber holding the
 *    event (p50, p99; unmounts' in the JSON).
 * Only the busy namespace changes, so what grows with K in the cost of a
 * change is what the router spends on the namespaces that did not change.
 * After the changes the results are checked: every change seen once, no
 * event on any other namespace's subscriber, no loss marker, and the
 * mirrors holding every mount; the last column says what was not so.
 *
 * The median, not the mean: on a shared VM a change now and then loses the
 * CPU to the host midway, and a mean carries that change's cost.  A source
 * this kernel cannot run gets one row per K saying so and why, and a
 * "skipped" JSON line, never figures.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ns_scale.h"
#include "watcher_cost.h"

#define MAX_SIZES 16
#define MAX_SOURCES 8
#define MAX_NAMESPACES 20000

void die(const char *what)
{
	fprintf(stderr, "ns_scale: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* KB each namespace costs over @base, the smallest count measured on the same source. */
static bool kb_per_ns(const struct result *res, const struct result *base, double *ret)
{
	if (!base || base == res || res->k == base->k)
		return false;
	*ret = ((double)res->rep.rss_kb - (double)base->rep.rss_kb) / (double)(res->k - base->k);
	return true;
}

static void json_line(FILE *js, const struct result *res, const struct result *base,
		      unsigned mounts_per_ns)
{
	double kb;

	fprintf(js, "{\"source\":\"%s\",\"namespaces\":%u,\"mounts_per_ns\":%u,", res->source,
		res->k, mounts_per_ns);
	if (res->why[0]) {
		bool skipped = !strncmp(res->why, "left out", 8);
		fprintf(js, "\"%s\":\"%s\"}\n", skipped ? "skipped" : "failed", res->why);
		return;
	}
	const struct ns_report *r = &res->rep;
	fprintf(js,
		"\"mounts\":%llu,\"setup_ms\":%.2f,\"setup_cpu_ms\":%.2f,\"rss_kb\":%llu,"
		"\"hwm_kb\":%llu,\"rss_end_kb\":%llu,",
		(unsigned long long)r->mounts, (double)r->setup_ns / 1e6,
		(double)r->setup_cpu_ns / 1e6, (unsigned long long)r->rss_kb,
		(unsigned long long)r->hwm_kb, (unsigned long long)r->rss_end_kb);
	if (kb_per_ns(res, base, &kb))
		fprintf(js, "\"kb_per_ns\":%.2f,\"kb_per_ns_over\":%u,", kb, base->k);
	fprintf(js,
		"\"changes\":%u,\"rounds\":%u,\"interval_ms\":%u,\"cpu_mount_us\":%.2f,\"cpu_umount_us\":%.2f,"
		"\"syscalls_per_change\":%.2f,\"mount_p50_us\":%.2f,\"mount_p99_us\":%.2f,"
		"\"umount_p50_us\":%.2f,\"umount_p99_us\":%.2f,\"missed\":%u,\"stray\":%llu,"
		"\"check\":\"%s\"}\n",
		changes, rounds, interval_ms, res->cpu_mount, res->cpu_umount, res->syscalls,
		res->mount_p50, res->mount_p99, res->umount_p50, res->umount_p99, res->missed,
		(unsigned long long)r->stray, res->check);
	fflush(js);
}

/* @k0: the smallest count asked for, which the header names as the base. */
static void table_row(const struct result *res, const struct result *base, unsigned k0)
{
	const struct ns_report *r = &res->rep;
	char kb[32] = "";
	double v;

	if (res->why[0]) {
		printf("| %s | %u | | | | | | | | | | | | %s |\n", res->source, res->k, res->why);
		return;
	}
	if (kb_per_ns(res, base, &v) && base->k == k0)
		snprintf(kb, sizeof(kb), "%.1f", v);
	else if (kb_per_ns(res, base, &v))
		/* The smallest count failed on this source: say which one is the base. */
		snprintf(kb, sizeof(kb), "%.1f over K=%u", v, base->k);
	else if (base == res)
		snprintf(kb, sizeof(kb), "(base)");
	printf("| %s | %u | %llu | %.1f | %.1f | %.1f | %.1f | %s | %.1f | %.1f | %.1f | %.1f "
	       "| %.1f | %s |\n",
	       res->source, res->k, (unsigned long long)r->mounts, (double)r->setup_ns / 1e6,
	       (double)r->setup_cpu_ns / 1e6, (double)r->rss_kb / 1024, (double)r->hwm_kb / 1024,
	       kb, res->cpu_mount, res->cpu_umount, res->syscalls, res->mount_p50, res->mount_p99,
	       res->check);
}

static int usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: ns_scale [--namespaces K,K..] [--mounts-per-ns N] [--sources S,S..]\n"
		"                [--changes N] [--interval-ms MS] [--rounds R] [--json FILE]\n"
		"  --namespaces    namespace counts, 1..%u each, at most %u (1,100,300,1000)\n"
		"  --mounts-per-ns tmpfs mounts in each namespace's tree, 0..1000 (20)\n"
		"  --sources       of fanotify, listmount, mountinfo, watch_mount "
		"(fanotify,listmount,mountinfo)\n"
		"  --changes       probes mounted and unmounted per run, 1..100000 (40)\n"
		"  --interval-ms   quiet time after each change, 0..10000 (30)\n"
		"  --rounds        runs of each source and count, taken in turn, 1..64 (1)\n"
		"  --json FILE     one JSON line per source and count, too\n"
		"Needs root: it makes mount namespaces and watches other processes' ones.\n",
		MAX_NAMESPACES, MAX_SIZES);
	return code;
}

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *ret)
{
	char *end;

	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *s == '+' || v < lo || v > hi)
		return false;
	*ret = (unsigned)v;
	return true;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/*
 * A comma-separated list of counts, sorted, each once; false on a bad or
 * empty item.  @arg is left as it was, for the message.
 */
static bool parse_sizes(const char *arg, unsigned *v, unsigned *n)
{
	char buf[256], *rest = buf, *item;
	unsigned m = 0;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return false;
	while ((item = strsep(&rest, ","))) {
		if (m == MAX_SIZES || !parse_uint(item, 1, MAX_NAMESPACES, &v[m]))
			return false;
		m++;
	}
	qsort(v, m, sizeof(*v), cmp_unsigned);
	*n = 0;
	for (unsigned i = 0; i < m; i++)
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	return *n > 0;
}

/* A comma-separated list of source names, each once, in the order given. */
static bool parse_sources(const char *arg, const char **v, unsigned *n)
{
	static const char *const known[] = {"fanotify", "listmount", "mountinfo", "watch_mount"};
	char buf[256], *rest = buf, *item;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return false;
	*n = 0;
	while ((item = strsep(&rest, ","))) {
		const char *name = NULL;
		bool again = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(item, known[i]))
				name = known[i];
		if (!name) {
			fprintf(stderr, "ns_scale: --sources: unknown source '%s' (fanotify, "
					"listmount, mountinfo or watch_mount)\n", item);
			return false;
		}
		for (unsigned i = 0; i < *n; i++)
			again |= v[i] == name;
		if (!again)
			v[(*n)++] = name;
	}
	return true;
}

/* Per namespace the router holds an nsfs fd, a mountinfo fd and maybe a kernel queue. */
static void raise_nofile(unsigned namespaces)
{
	struct rlimit rl;
	rlim_t want = 4 * (rlim_t)namespaces + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_max < want)
		rl.rlim_max = want;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		fprintf(stderr, "ns_scale: RLIMIT_NOFILE not raised to %llu: %s\n",
			(unsigned long long)want, strerror(errno));
}

/* uname -r and the CPU, for the line that goes with the table. */
static void say_machine(unsigned mounts_each, unsigned mounts_per_ns)
{
	struct utsname u;
	char line[256], cpu[256] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(cpu, sizeof(cpu), "%s", strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	fprintf(stderr, "ns_scale: Linux %s, %s, %ld CPUs; each namespace holds %u mounts (%u of "
			"its own); %u changes per run, %u ms apart, %u round%s\n",
		u.release, cpu, sysconf(_SC_NPROCESSORS_ONLN), mounts_each, mounts_per_ns + 1,
		2 * changes, interval_ms, rounds, rounds == 1 ? "" : "s");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"namespaces", required_argument, 0, 'n'}, {"mounts-per-ns", required_argument, 0, 'm'},
		{"sources", required_argument, 0, 's'},    {"changes", required_argument, 0, 'c'},
		{"interval-ms", required_argument, 0, 'i'}, {"json", required_argument, 0, 'j'},
		{"rounds", required_argument, 0, 'r'},
		{"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
	unsigned sizes[MAX_SIZES] = {1, 100, 300, 1000}, n_sizes = 4, mounts_per_ns = 20;
	const char *sources[MAX_SOURCES] = {"fanotify", "listmount", "mountinfo"};
	unsigned n_sources = 3;
	const char *json = NULL;
	int o, li = 0;

	while ((o = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		bool ok = true;
		switch (o) {
		case 'n':
			ok = parse_sizes(optarg, sizes, &n_sizes);
			break;
		case 'm':
			ok = parse_uint(optarg, 0, 1000, &mounts_per_ns);
			break;
		case 's':
			ok = parse_sources(optarg, sources, &n_sources);
			break;
		case 'c':
			ok = parse_uint(optarg, 1, 100000, &changes);
			break;
		case 'i':
			ok = parse_uint(optarg, 0, 10000, &interval_ms);
			break;
		case 'j':
			json = optarg;
			break;
		case 'r':
			ok = parse_uint(optarg, 1, 64, &rounds);
			break;
		case 'h':
			return usage(0);
		default:
			return usage(2);
		}
		if (!ok) {
			fprintf(stderr, "ns_scale: bad value for --%s: '%s'\n", opts[li].name,
				optarg);
			return usage(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ns_scale: unexpected argument '%s'\n", argv[optind]);
		return usage(2);
	}
	if (geteuid() != 0) {
		fprintf(stderr, "ns_scale: needs root: it makes mount namespaces, mounts in them and "
				"watches other processes' namespaces\n");
		return 1;
	}
	unsigned biggest = sizes[n_sizes - 1];
	raise_nofile(biggest);

	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int watcher_cpu = cpus > 1 ? (int)cpus - 1 : -1;
	pin_to(cpus > 1 ? 0 : -1, "ns_scale");

	static char root[64] = "/tmp/ns_scale.XXXXXX";
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("private mount namespace");
	if (!mkdtemp(root) || mount("ns_scale", root, "tmpfs", 0, "size=16m") < 0)
		die("tmpfs root");

	int left_out[MAX_SOURCES];
	for (unsigned i = 0; i < n_sources; i++)
		if ((left_out[i] = watcher_probe(sources[i])) < 0)
			fprintf(stderr, "ns_scale: %s left out: needs %s: %s\n", sources[i],
				watcher_needs(sources[i]), strerror(-left_out[i]));

	struct ns_report *rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	FILE *js = json ? fopen(json, "w") : NULL;
	struct result *results = calloc((size_t)n_sources * n_sizes, sizeof(*results));
	if (rep == MAP_FAILED || (json && !js) || !results)
		die(json && !js ? json : "setup");

	/*
	 * Every namespace up front, then the rounds: each round runs every
	 * K and source in turn, so that a drift of the machine's load over
	 * minutes falls on every cell alike instead of on the later ones.
	 */
	struct ns_holders h;
	ns_holders_init(&h, root, mounts_per_ns, biggest);
	ns_holders_grow(&h, biggest);
	unsigned mounts_each = ns_holders_mounts_each(&h);
	say_machine(mounts_each, mounts_per_ns);
	for (unsigned round = 0; round < rounds; round++)
		for (unsigned z = 0; z < n_sizes; z++)
			for (unsigned i = 0; i < n_sources; i++) {
				struct result *res = &results[i * n_sizes + z];
				res->source = sources[i];
				res->k = sizes[z];
				res->mounts_expected = sizes[z] * mounts_each;
				if (left_out[i] < 0)
					snprintf(res->why, sizeof(res->why),
						 "left out: needs %s: %s", watcher_needs(sources[i]),
						 strerror(-left_out[i]));
				else
					run_one(&h, rep, watcher_cpu, res);
				fprintf(stderr, "ns_scale: round %u, %s, %u namespaces: %s\n",
					round + 1, res->source, res->k,
					res->why[0] ? res->why : res->check);
			}
	ns_holders_end(&h);
	for (unsigned i = 0; i < n_sources; i++) {
		const struct result *base = NULL;
		for (unsigned z = 0; z < n_sizes; z++) {
			struct result *res = &results[i * n_sizes + z];
			run_finish(res);
			if (!base && !res->why[0])
				base = res;
			if (js)
				json_line(js, res, base, mounts_per_ns);
		}
	}

	printf("| source | namespaces K | mounts | setup ms | setup CPU ms | RSS MB | peak RSS MB "
	       "| KB/namespace, (RSS - RSS at K=%u) / (K - %u) | CPU us/mount | CPU us/umount "
	       "| syscalls/change | mount latency p50 us | p99 us | check |\n",
	       sizes[0], sizes[0]);
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (unsigned i = 0; i < n_sources; i++) {
		const struct result *base = NULL;
		for (unsigned z = 0; z < n_sizes; z++) {
			const struct result *res = &results[i * n_sizes + z];
			if (!base && !res->why[0])
				base = res;
			table_row(res, base, sizes[0]);
		}
	}
	if (js)
		fclose(js);
	umount2(root, MNT_DETACH);
	rmdir(root);
	return 0;
}
