/* SPDX-License-Identifier: MIT */
/*
 * single_change: what one change costs on a big, quiet mount table.
 *
 *   single_change [--mounts 1000,3000,10000,30000] [--changes 40]
 *                 [--interval-ms 30] [--findmnt-max 3000] [--json FILE]
 *                 [--watchers 0,3,..]   (numbers of enum watcher in single.h;
 *                                        8: watch_mount, the project's kernel;
 *                                        9, 10: listmount, mountinfo, one thread;
 *                                        11: the polled floor; 12: the floor
 *                                        asking for the event's fields)
 *                 [--propagation]       (MS_SHARED too: FAN_MNT_ATTR_CHANGE kernels)
 *                 [--rounds 1]          (each watcher this many times, interleaved)
 *                 [--interleave]        (every watcher and size at once, change by change)
 *                 [--epoll | --io-uring] (the routers made with MR_OPT_EPOLL
 *                                        or MR_OPT_IO_URING; else each
 *                                        source's own choice)
 *
 * In a private mount namespace (tmpfs root under /tmp), for each table size
 * N: N tmpfs mounts, then for each watcher (watchers.c), in a child process
 * of its own: --changes probes mounted one at a time, each waited for until
 * the watcher holds it, then moved, bind-mounted, remounted read-only,
 * changed with mount_setattr(2) and unmounted, the same way.  Per watcher,
 * table size and kind of change: the CPU time of all the watcher's threads
 * that one change cost (its process CPU clock from before the syscall to
 * the end of the quiet interval after it), the median over the changes;
 * the syscalls its library counted per change; and the latency from the
 * syscall's return to the watcher holding the change (p50, p99).  The
 * median, not the mean: on a shared VM a change now and then loses the
 * CPU to the host midway, and a mean carries that change's cost.  The
 * floor watcher sees only attach and detach, as fanotify does.  A watcher
 * this kernel cannot run (watch_mount anywhere but the project's kernel) gets
 * one row per table size saying so and why, and a "skipped" JSON line,
 * never figures.
 *
 * --rounds R runs the watchers R times in turn (floor, router, poller,
 * floor, router, poller, ...) and reports per cell the median of all
 * rounds' changes' CPU, the median of the rounds' syscalls and the
 * percentiles of all rounds' latencies together:
 * on a shared machine the load drifts over a minute, and a ratio of two
 * figures taken a minute apart measures the drift as much as the watchers.
 * --interleave goes further (see interleave() below): each (watcher, size)
 * in a namespace of its own, all at once, the changes dealt out one at a
 * time to each in turn, and the ratios printed with their spread over the
 * rounds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mountrouter-uapi.h"
#include <mountrouter.h>

#include "single.h"
#include "watcher_cost.h"

enum kind {
	K_MOUNT, K_MOVE, K_BIND, K_RO, K_SETATTR, K_PROPAGATION, K_UMOUNT, K_UMOUNT_BIND, K__N
};
static const char *const kind_name[K__N] = {"mount", "move", "bind", "ro remount", "setattr",
					    "propagation", "umount", "umount bind"};
/*
 * --propagation: MS_SHARED on each probe too.  No mainline kernel says so
 * (mountinfo does not even poll): only a kernel with FAN_MNT_ATTR_CHANGE
 * reports it, so it is left out unless asked for.
 */
static bool propagation;

/*
 * Which kinds a watcher can see at all.  watch_mount names every change,
 * a propagation change included (SETATTR, kernel/patches/0009).
 */
static bool sees(enum watcher w, enum kind k)
{
	if (k == K_PROPAGATION)
		return w == W_FANOTIFY || w == W_FANOTIFY_1T || w == W_FANOTIFY_WAIT || w == W_WATCH_MOUNT;
	return (w != W_FLOOR && w != W_FLOOR_POLLED && w != W_FLOOR_FIELDS &&
		w != W_FLOOR_EPOLL && w != W_FANOTIFY_TOPO) ||
	       (k != K_RO && k != K_SETATTR);
}

static char root[64];
static unsigned changes = 40, interval_ms = 30, findmnt_max = 3000, rounds = 1;
static bool interleaved;
static int watcher_cpu = -1; /* the last CPU, where every watcher runs; -1: one CPU */

static void die(const char *what)
{
	fprintf(stderr, "single_change: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void at(char *buf, size_t len, const char *fmt, unsigned i)
{
	int n = snprintf(buf, len, "%s/", root);
	snprintf(buf + n, len - (size_t)n, fmt, i);
}

/* findmnt is the watcher's child: count its CPU too. */
static uint64_t tree_cpu_ns(pid_t pid)
{
	char path[64], buf[256];
	uint64_t total = process_cpu_ns(pid);

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(path, "r");
	if (f) {
		while (fscanf(f, "%255s", buf) == 1)
			total += process_cpu_ns((pid_t)atoi(buf));
		fclose(f);
	}
	return total;
}

static int op(enum kind k, unsigned i)
{
	char a[512], b[512];
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID};

	switch (k) {
	case K_MOUNT:
		at(a, sizeof(a), "probe/%u", i);
		return mount("probe", a, "tmpfs", 0, "size=64k");
	case K_MOVE:
		at(a, sizeof(a), "probe/%u", i);
		at(b, sizeof(b), "moved/%u", i);
		return mount(a, b, NULL, MS_MOVE, NULL);
	case K_BIND:
		at(a, sizeof(a), "fill/%u", i);
		at(b, sizeof(b), "bind/%u", i);
		return mount(a, b, NULL, MS_BIND, NULL);
	case K_RO:
		at(a, sizeof(a), "moved/%u", i);
		return mount(NULL, a, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
	case K_SETATTR:
		at(a, sizeof(a), "moved/%u", i);
		return (int)syscall(SYS_mount_setattr, -1, a, 0, &attr, sizeof(attr));
	case K_PROPAGATION:
		at(a, sizeof(a), "moved/%u", i);
		return mount(NULL, a, NULL, MS_SHARED, NULL);
	case K_UMOUNT:
		at(a, sizeof(a), "moved/%u", i);
		return umount2(a, 0);
	case K_UMOUNT_BIND:
		at(a, sizeof(a), "bind/%u", i);
		return umount2(a, 0);
	default:
		return -1;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One watcher, one kind of change, over every round. */
struct cell {
	unsigned n, missed;  /* latencies held in lat[], changes never seen */
	uint64_t *lat;       /* changes * rounds */
	unsigned n_cpu;      /* CPU samples held in cpu_us[] */
	double *cpu_us;      /* each change's, changes * rounds */
	double syscalls[64]; /* per round */
	double round_cpu_us[64]; /* the median of each round's changes, set by report() */
};

/* Change @i of kind @k, for the watcher in @pid; its CPU and latency into @c. */
static void one_change(enum watcher w, pid_t pid, struct seen *seen, enum kind k, unsigned i,
		       struct cell *c)
{
	uint64_t before = atomic_load(&seen->count), cpu0 = tree_cpu_ns(pid);
	if (op(k, i) < 0)
		die(kind_name[k]);
	uint64_t t = now_ns(), deadline = t + 5000000000ull;
	bool got = false;
	if (sees(w, k)) {
		while (now_ns() < deadline) {
			if (atomic_load(&seen->count) > before) {
				got = true;
				break;
			}
			usleep(20);
		}
	}
	/* Seen before the syscall returned (a detach is posted first): 0. */
	if (got) {
		uint64_t at = atomic_load(&seen->last_ns);
		c->lat[c->n++] = at > t ? at - t : 0;
	}
	else if (sees(w, k))
		c->missed++;
	/* Quiet between changes: whatever the watcher does after, it does now. */
	usleep(interval_ms * 1000);
	c->cpu_us[c->n_cpu++] = (double)(tree_cpu_ns(pid) - cpu0) / 1e3;
}

/* One kind of change, --changes times, for the watcher in @pid: round @r of @c. */
static void measure(enum watcher w, pid_t pid, struct seen *seen, enum kind k, unsigned r,
		    struct cell *c)
{
	uint64_t sys0 = atomic_load(&seen->syscalls);

	for (unsigned i = 0; i < changes; i++)
		one_change(w, pid, seen, k, i, c);
	c->syscalls[r] = (double)(atomic_load(&seen->syscalls) - sys0) / changes;
}

static double mean(const double *v, unsigned n)
{
	double sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / n : 0;
}

static double percentile_us(struct cell *c, unsigned pct)
{
	if (!c->n)
		return 0;
	qsort(c->lat, c->n, sizeof(c->lat[0]), cmp_u64);
	unsigned i = (c->n * pct) / 100;
	return (double)c->lat[i < c->n ? i : c->n - 1] / 1e3;
}

/* The rows of watcher @w at @mounts, from its cells over every round. */
static void report(unsigned mounts, enum watcher w, struct cell cells[K__N], FILE *js)
{
	for (int k = 0; k < K__N; k++) {
		if (k == K_PROPAGATION && !propagation)
			continue;
		struct cell *c = &cells[k];
		/* Before median() below sorts the changes out of their rounds. */
		for (unsigned r = 0; r < rounds && c->n_cpu == changes * rounds; r++) {
			double v[changes];
			memcpy(v, c->cpu_us + r * changes, sizeof(v));
			c->round_cpu_us[r] = median(v, changes);
		}
		double cpu_mean = mean(c->cpu_us, c->n_cpu);
		double cpu = median(c->cpu_us, c->n_cpu), sys = median(c->syscalls, rounds);
		double p50 = percentile_us(c, 50), p99 = percentile_us(c, 99);
		bool seen_kind = sees(w, (enum kind)k);
		if (!seen_kind)
			printf("| %u | %s | %s | %.1f | | | | n/a |\n", mounts, watcher_name[w],
			       kind_name[k], cpu);
		else
			printf("| %u | %s | %s | %.1f | %.1f | %.1f | %.1f | %u |\n", mounts,
			       watcher_name[w], kind_name[k], cpu, sys, p50, p99, c->missed);
		fflush(stdout);
		if (js)
			fprintf(js,
				"{\"mounts\":%u,\"watcher\":\"%s\",\"kind\":\"%s\","
				"\"sees\":%s,\"cpu_us\":%.2f,\"cpu_mean_us\":%.2f,"
				"\"syscalls\":%.2f,\"p50_us\":%.2f,\"p99_us\":%.2f,"
				"\"missed\":%u,\"rounds\":%u,\"interleaved\":%s}\n",
				mounts, watcher_name[w], kind_name[k], seen_kind ? "true" : "false",
				cpu, cpu_mean, sys, p50, p99, c->missed, rounds,
				interleaved ? "true" : "false");
	}
}

static void mkdirs(const char *fmt, unsigned n)
{
	char p[512];

	for (unsigned i = 0; i < n; i++) {
		at(p, sizeof(p), fmt, i);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die("mkdir");
	}
}

/*
 * Starts watcher @w in a child process of its own, in the mount namespace
 * @ns (-1: this one), and returns once it is past its start-up work.
 */
static pid_t start_watcher(enum watcher w, int ns, struct seen *seen)
{
	memset(seen, 0, sizeof(*seen));
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char name[16];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Its own name, so that a profile (perf report --comm) tells the watchers apart. */
		snprintf(name, sizeof(name), "watcher-%d", (int)w);
		prctl(PR_SET_NAME, name);
		if (ns >= 0 && setns(ns, CLONE_NEWNS) < 0)
			die("setns (watcher)");
		pin_to(watcher_cpu, "single_change");
		watcher_run(w, root, seen);
	}
	for (int t = 0; t < 60000 && !atomic_load(&seen->ready); t++)
		usleep(1000);
	wait_quiet(pid, tree_cpu_ns);
	return pid;
}

static void fill(unsigned from, unsigned to)
{
	char p[512];

	for (unsigned i = from; i < to; i++) {
		at(p, sizeof(p), "fill/%u", i);
		if (mount("fill", p, "tmpfs", 0, "size=16k") < 0)
			die("fill mount");
	}
}

/*
 * --interleave: every watcher at every table size at once, each in a mount
 * namespace of its own that holds its N mounts, with the changes dealt out
 * in turn: change i of a kind goes to every (watcher, size) before change
 * i + 1 goes to any.  Two figures compared are then taken a few hundred ms
 * apart, not seconds or a minute, so the machine's drift moves both alike.
 * A watcher wakes only for its own namespace: fanotify marks a namespace,
 * and mountinfo polls its reader's.
 */
struct lane {
	enum watcher w;
	unsigned mounts;
	int ns;
	pid_t pid;
	struct seen *seen;
	struct cell cells[K__N];
};

/* Each kind's per-round ratios of @a to @b: "1.2x (1.0-1.4)"; "n/a" without rounds. */
static void print_ratio(const struct cell *a, const struct cell *b)
{
	double lo = 0, hi = 0;

	/* A kind the watcher cannot see has no changes to compare. */
	if (!a->n_cpu || !b->n_cpu || !median((double *)b->cpu_us, b->n_cpu)) {
		printf(" n/a |");
		return;
	}
	for (unsigned r = 0; r < rounds; r++) {
		double x = b->round_cpu_us[r] ? a->round_cpu_us[r] / b->round_cpu_us[r] : 0;
		lo = r == 0 || x < lo ? x : lo;
		hi = r == 0 || x > hi ? x : hi;
	}
	/* The ratio of the medians of all changes; report() left cpu_us sorted. */
	double ma = median((double *)a->cpu_us, a->n_cpu), mb = median((double *)b->cpu_us, b->n_cpu);
	printf(" %.2fx (%.2f-%.2f) |", ma / mb, lo, hi);
}

static void ratios(struct lane *lanes, unsigned n_lanes)
{
	static const enum kind topology[] = {K_MOUNT, K_UMOUNT, K_MOVE, K_BIND};
	static const enum kind every[] = {K_MOUNT, K_UMOUNT, K_MOVE, K_BIND, K_RO, K_SETATTR};

	printf("\nAgainst the floor at the same size: the ratio of the medians of every "
	       "change, and in brackets the lowest and highest ratio of one round's medians.\n\n"
	       "| mounts | watcher | mount | umount | move | bind |\n|---:|---|---:|---:|---:|---:|\n");
	for (unsigned i = 0; i < n_lanes; i++) {
		struct lane *floor = NULL;
		for (unsigned j = 0; j < n_lanes; j++)
			if (lanes[j].w == W_FLOOR && lanes[j].mounts == lanes[i].mounts)
				floor = &lanes[j];
		if (!floor || &lanes[i] == floor)
			continue;
		printf("| %u | %s |", lanes[i].mounts, watcher_name[lanes[i].w]);
		for (unsigned k = 0; k < sizeof(topology) / sizeof(topology[0]); k++)
			print_ratio(&lanes[i].cells[topology[k]], &floor->cells[topology[k]]);
		printf("\n");
	}
	printf("\nEach watcher's largest table against its smallest, the same way.\n\n"
	       "| watcher | sizes | mount | umount | move | bind | ro remount | setattr |\n"
	       "|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned i = 0; i < n_lanes; i++) {
		struct lane *small = &lanes[i], *big = &lanes[i];
		for (unsigned j = 0; j < n_lanes; j++) {
			if (lanes[j].w != lanes[i].w)
				continue;
			if (lanes[j].mounts < small->mounts)
				small = &lanes[j];
			if (lanes[j].mounts > big->mounts)
				big = &lanes[j];
		}
		/* One row a watcher: at its smallest lane. */
		if (small != &lanes[i] || big == small)
			continue;
		printf("| %s | %u / %u |", watcher_name[lanes[i].w], big->mounts, small->mounts);
		for (unsigned k = 0; k < sizeof(every) / sizeof(every[0]); k++)
			print_ratio(&big->cells[every[k]], &small->cells[every[k]]);
		printf("\n");
	}
	fflush(stdout);
}

static void interleave(struct lane *lanes, unsigned n_lanes, FILE *js)
{
	int home = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	struct seen *seen = mmap(NULL, n_lanes * sizeof(*seen), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (home < 0 || seen == MAP_FAILED)
		die("interleave setup");
	for (unsigned i = 0; i < n_lanes; i++) {
		struct lane *l = &lanes[i];
		/* A copy of this namespace (the tmpfs root, no fill), then its own N. */
		if (unshare(CLONE_NEWNS) < 0)
			die("unshare");
		fill(0, l->mounts);
		l->ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		if (l->ns < 0 || setns(home, CLONE_NEWNS) < 0)
			die("lane namespace");
		l->seen = &seen[i];
	}
	for (unsigned i = 0; i < n_lanes; i++)
		lanes[i].pid = start_watcher(lanes[i].w, lanes[i].ns, lanes[i].seen);
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < K__N; k++) {
			if (k == K_PROPAGATION && !propagation)
				continue;
			uint64_t sys0[n_lanes];
			for (unsigned i = 0; i < n_lanes; i++)
				sys0[i] = atomic_load(&lanes[i].seen->syscalls);
			for (unsigned c = 0; c < changes; c++) {
				for (unsigned i = 0; i < n_lanes; i++) {
					struct lane *l = &lanes[i];
					if (setns(l->ns, CLONE_NEWNS) < 0)
						die("setns");
					one_change(l->w, l->pid, l->seen, (enum kind)k, c, &l->cells[k]);
				}
			}
			for (unsigned i = 0; i < n_lanes; i++)
				lanes[i].cells[k].syscalls[r] =
					(double)(atomic_load(&lanes[i].seen->syscalls) - sys0[i]) / changes;
		}
	}
	for (unsigned i = 0; i < n_lanes; i++) {
		kill(lanes[i].pid, SIGKILL);
		waitpid(lanes[i].pid, NULL, 0);
	}
	for (unsigned i = 0; i < n_lanes; i++)
		report(lanes[i].mounts, lanes[i].w, lanes[i].cells, js);
	ratios(lanes, n_lanes);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mounts", required_argument, 0, 'm'},     {"changes", required_argument, 0, 'c'},
		{"interval-ms", required_argument, 0, 'i'}, {"findmnt-max", required_argument, 0, 'f'},
		{"json", required_argument, 0, 'j'},       {"help", no_argument, 0, 'h'},
		{"watchers", required_argument, 0, 'w'},
		{"propagation", no_argument, 0, 'p'},
		{"rounds", required_argument, 0, 'r'},
		{"interleave", no_argument, 0, 'I'},
		{"epoll", no_argument, 0, 'E'},
		{"io-uring", no_argument, 0, 'U'},
		{0, 0, 0, 0}};
	unsigned sizes[16] = {1000, 3000, 10000, 30000}, n_sizes = 4;
	const char *json = NULL, *only = NULL;
	int o;

	while ((o = getopt_long(argc, argv, "m:c:i:f:j:w:pr:IEUh", opts, NULL)) != -1) {
		switch (o) {
		case 'm':
			n_sizes = 0;
			for (char *s = strtok(optarg, ","); s && n_sizes < 16; s = strtok(NULL, ","))
				sizes[n_sizes++] = (unsigned)strtoul(s, NULL, 10);
			break;
		case 'c':
			changes = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'i':
			interval_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'f':
			findmnt_max = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'j':
			json = optarg;
			break;
		case 'w':
			only = optarg;
			break;
		case 'p':
			propagation = true;
			break;
		case 'r':
			rounds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'I':
			interleaved = true;
			break;
		case 'E':
			watcher_router_flags = MR_OPT_EPOLL;
			break;
		case 'U':
			watcher_router_flags = MR_OPT_IO_URING;
			break;
		default:
			fprintf(stderr, "usage: single_change [--mounts N,N..] [--changes N] "
					"[--interval-ms MS] [--findmnt-max N] [--json FILE] "
					"[--watchers N,N..] [--propagation] [--rounds R] "
					"[--interleave] [--epoll | --io-uring]\n");
			return o == 'h' ? 0 : 2;
		}
	}
	if (!changes || changes > 100000 || !n_sizes) {
		fprintf(stderr, "single_change: --changes must be 1..100000\n");
		return 2;
	}
	for (unsigned s = 0; s < n_sizes; s++) {
		/* A bind's source is fill/i: the smallest table must have --changes of them. */
		if (sizes[s] < changes) {
			fprintf(stderr, "single_change: --changes %u is more than --mounts %u: each "
					"bind change binds one of the table's mounts\n",
				changes, sizes[s]);
			return 2;
		}
	}
	if (!rounds || rounds > 64) {
		fprintf(stderr, "single_change: --rounds must be 1..64\n");
		return 2;
	}

	/* One CPU: nothing to pin apart. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	watcher_cpu = cpus > 1 ? (int)cpus - 1 : -1;
	pin_to(cpus > 1 ? 0 : -1, "single_change");

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("private mount namespace");
	strcpy(root, "/tmp/single_change.XXXXXX");
	if (!mkdtemp(root) || mount("single", root, "tmpfs", 0, "size=64m") < 0)
		die("tmpfs root");
	char p[512];
	for (const char *d = "fill\0probe\0moved\0bind\0"; *d; d += strlen(d) + 1) {
		snprintf(p, sizeof(p), "%s/%s", root, d);
		mkdir(p, 0755);
	}
	unsigned biggest = 0;
	for (unsigned s = 0; s < n_sizes; s++)
		biggest = sizes[s] > biggest ? sizes[s] : biggest;
	mkdirs("fill/%u", biggest);
	mkdirs("probe/%u", changes);
	mkdirs("moved/%u", changes);
	mkdirs("bind/%u", changes);

	bool usable[W__N];
	int left_out[W__N] = {0}; /* -errno of the probe, for the rows saying why */
	for (int w = 0; w < W__N; w++) {
		char key[8];
		snprintf(key, sizeof(key), ",%d,", w);
		char list[256];
		snprintf(list, sizeof(list), ",%s,", only ? only : "");
		if (only && !strstr(list, key)) {
			usable[w] = false;
			continue;
		}
		int err = watcher_probe((enum watcher)w);
		usable[w] = err == 0;
		left_out[w] = err;
		if (err)
			fprintf(stderr, "single_change: %s left out: needs %s: %s\n",
				watcher_name[w], watcher_needs[w], strerror(-err));
	}

	struct seen *seen = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	FILE *js = json ? fopen(json, "w") : NULL;
	if (seen == MAP_FAILED || (json && !js))
		die("setup");
	unsigned built = 0, n_lanes = 0;
	static struct lane lanes[16 * W__N];
	printf("| mounts | watcher | kind | CPU us/change | syscalls/change | latency p50 us | p99 us | missed |\n");
	printf("|---:|---|---|---:|---:|---:|---:|---:|\n");
	static struct cell cells[W__N][K__N];
	for (int w = 0; w < W__N; w++)
		for (int k = 0; k < K__N; k++)
			if (!(cells[w][k].lat = calloc((size_t)changes * rounds, sizeof(uint64_t))) ||
			    !(cells[w][k].cpu_us = calloc((size_t)changes * rounds, sizeof(double))))
				die("calloc");
	for (unsigned s = 0; s < n_sizes; s++) {
		if (!interleaved)
			fill(built, sizes[s]);
		built = sizes[s] > built ? sizes[s] : built;
		bool ran[W__N] = {false};
		for (int w = 0; w < W__N; w++) {
			for (int k = 0; k < K__N; k++)
				cells[w][k].n = cells[w][k].missed = cells[w][k].n_cpu = 0;
			if (w == W_FINDMNT && sizes[s] > findmnt_max)
				continue;
			if (left_out[w]) {
				/* In the table, not only on stderr: the VM's log keeps the table. */
				printf("| %u | %s | every kind | n/a | | | | left out: needs %s: %s |\n",
				       sizes[s], watcher_name[w], watcher_needs[w],
				       strerror(-left_out[w]));
				fflush(stdout);
				if (js)
					fprintf(js,
						"{\"mounts\":%u,\"watcher\":\"%s\","
						"\"skipped\":\"needs %s: %s\"}\n",
						sizes[s], watcher_name[w], watcher_needs[w],
						strerror(-left_out[w]));
				continue;
			}
			ran[w] = usable[w];
		}
		if (interleaved) {
			for (int w = 0; w < W__N; w++) {
				if (!ran[w])
					continue;
				struct lane *l = &lanes[n_lanes++];
				l->w = (enum watcher)w;
				l->mounts = sizes[s];
				for (int k = 0; k < K__N; k++)
					if (!(l->cells[k].lat = calloc((size_t)changes * rounds,
								       sizeof(uint64_t))) ||
					    !(l->cells[k].cpu_us = calloc((size_t)changes * rounds,
									  sizeof(double))))
						die("calloc");
			}
			continue;
		}
		for (unsigned r = 0; r < rounds; r++) {
			for (int w = 0; w < W__N; w++) {
				if (!ran[w])
					continue;
				pid_t pid = start_watcher((enum watcher)w, -1, seen);
				for (int k = 0; k < K__N; k++)
					if (k != K_PROPAGATION || propagation)
						measure((enum watcher)w, pid, seen, (enum kind)k, r,
							&cells[w][k]);
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				/* The probes back where the next watcher expects them: unmounted. */
			}
		}
		for (int w = 0; w < W__N; w++)
			if (ran[w])
				report(sizes[s], (enum watcher)w, cells[w], js);
	}
	if (interleaved)
		interleave(lanes, n_lanes, js);
	if (js)
		fclose(js);
	return 0;
}
