/* SPDX-License-Identifier: MIT */
/*
 * path_trace: what one change makes a watcher execute, instruction by
 * instruction.
 *
 *   path_trace [--mounts 10000] [--changes 10] [--watchers 0,14] [--top 25]
 *
 * CPU time on a quiet table is mostly misses (BENCHMARKS.md, "the pages
 * under a cold change"), and this VM has no PMU to count them.  What can be
 * counted exactly, without one and without noise, is the code a change
 * runs: the watcher (watchers.c, in a child process, in a private mount
 * namespace of --mounts tmpfs mounts) is stopped before the system call
 * it waits in, a probe is mounted (later unmounted), and the watcher is
 * single-stepped (ptrace) until it stands before its next wait.  Per
 * kind, for the median change: the user-space instructions it executes,
 * and the distinct 64-byte lines and 4 KiB pages of code they come from,
 * each object apart (the program with the library linked in, libc, the
 * vDSO); then the functions that ran the most instructions.  The vDSO's
 * instructions are left out of the count (stepped, clock_gettime() retries
 * its seqlock dozens of times); its calls are counted instead.
 * The kernel's side of the system calls is not seen; the system calls
 * themselves are counted.  Only one-thread watchers: the floors (0, 11,
 * 12, 13) and the router on the subscriber's thread (2, 3, 14).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "single.h"

/* Kept per change: a change's path is thousands; a pass's millions are counted, not kept. */
#define MAX_STEPS (1u << 20)
#define MAX_OBJECTS 32
#define MAX_FUNCS 4096

enum kind { K_MOUNT, K_UMOUNT, K__N };
static const char *const kind_name[K__N] = {"mount", "umount"};

struct object {
	unsigned long start, end, base; /* an executable mapping; base: its file's load address */
	char path[256];
};

static struct object objects[MAX_OBJECTS];
static unsigned n_objects;

struct func {
	unsigned object;
	char name[128];
	double instructions; /* in the median change */
};

static void die(const char *what)
{
	fprintf(stderr, "path_trace: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The executable mappings of @pid, each with its file's load address. */
static void read_maps(pid_t pid)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		die("maps");
	n_objects = 0;
	unsigned long first_start = 0;
	char first_path[256] = "";
	while (fgets(line, sizeof(line), f) && n_objects < MAX_OBJECTS) {
		unsigned long start, end, off;
		char perms[8], name[256] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &start, &end, perms, &off, name) < 4)
			continue;
		if (off == 0 && strcmp(name, first_path)) {
			first_start = start; /* a file's first mapping: where its offset 0 lies */
			snprintf(first_path, sizeof(first_path), "%s", name);
		}
		if (perms[2] != 'x')
			continue;
		struct object *o = &objects[n_objects++];
		*o = (struct object){start, end, strcmp(name, first_path) ? start : first_start, ""};
		snprintf(o->path, sizeof(o->path), "%s", *name ? name : "[anon]");
	}
	fclose(f);
}

static int object_of(unsigned long ip)
{
	for (unsigned i = 0; i < n_objects; i++)
		if (ip >= objects[i].start && ip < objects[i].end)
			return (int)i;
	return -1;
}

static const char *short_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->instructions < y->instructions ? 1 : x->instructions > y->instructions ? -1 : 0;
}

/* Waits for @pid to stop, up to @ms; false if it is still running (blocked, or looping). */
static bool stopped_within(pid_t pid, unsigned ms)
{
	/* A step takes a few us: looked for at once first, then every 50 us. */
	for (unsigned i = 0; i < 1000 + ms * 20; i++) {
		int st;
		pid_t got = waitpid(pid, &st, __WALL | WNOHANG);
		if (got == pid) {
			if (!WIFSTOPPED(st)) {
				fprintf(stderr, "path_trace: the watcher ended (status %#x)\n", st);
				exit(1);
			}
			return true;
		}
		if (got < 0)
			die("waitpid");
		if (i >= 1000)
			nanosleep(&(struct timespec){0, 50000}, NULL);
	}
	return false;
}

static void interrupt(pid_t pid)
{
	int st;

	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) != pid)
		die("PTRACE_INTERRUPT");
}

/*
 * The system calls a watcher waits in: read, poll, epoll_wait, ppoll,
 * epoll_pwait, io_uring_enter, epoll_pwait2 (x86-64 numbers).
 */
static bool is_wait(unsigned long long nr)
{
	return nr == 0 || nr == 7 || nr == 232 || nr == 271 || nr == 281 || nr == 426 || nr == 441;
}

/* The instruction at @pid's @ip is a syscall (0f 05). */
static bool at_syscall(pid_t pid, unsigned long ip)
{
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, pid, ip, 0);

	return !errno && (word & 0xffff) == 0x050f;
}

/* One traced change: where it ran (the first MAX_STEPS), and what it called. */
struct change {
	unsigned long *ips;
	size_t n, outside_vdso;
	unsigned syscalls, vdso_calls;
};

static bool in_vdso(unsigned long ip)
{
	int o = object_of(ip);

	return o >= 0 && !strcmp(objects[o].path, "[vdso]");
}

/*
 * Steps @pid, stopped before the system call it waits in, through one
 * change, and leaves it stopped before the next wait once it holds the
 * change: no interruption, so no wait of its ends early (an interrupted
 * epoll_wait() returns EINTR) and nothing of the next change is counted.
 * @ips (MAX_STEPS of them) receives where it ran.
 */
static void trace_change(pid_t pid, struct seen *seen, uint64_t had, unsigned long *ips,
			 struct change *c)
{
	struct user_regs_struct regs;
	bool vdso = false, stepped = false;

	*c = (struct change){.ips = ips};
	for (;;) {
		if (stepped && atomic_load(&seen->count) > had && is_wait(regs.rax) &&
		    at_syscall(pid, regs.rip))
			return;
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0)
			die("PTRACE_SINGLESTEP");
		if (!stopped_within(pid, 2000)) {
			fprintf(stderr, "path_trace: the watcher did not take the change within 2 s\n");
			exit(1);
		}
		if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
			die("PTRACE_GETREGS");
		stepped = true;
		if (c->n < MAX_STEPS)
			ips[c->n++] = regs.rip;
		bool was_vdso = vdso;
		vdso = in_vdso(regs.rip);
		c->vdso_calls += vdso && !was_vdso;
		c->outside_vdso += !vdso;
		/*
		 * Just past a system call, one made; not one the kernel will
		 * restart (-ERESTARTSYS .. -ERESTART_RESTARTBLOCK): it is made
		 * again, and counted then.
		 */
		long long ret = (long long)regs.rax;
		if (at_syscall(pid, regs.rip - 2) && (ret < -516 || ret > -512))
			c->syscalls++;
	}
}

/* Adds @n instruction pointers to the per-function tally (symbols by addr2line). */
static void tally_functions(unsigned long *ips, size_t n, struct func *funcs, unsigned *n_funcs)
{
	qsort(ips, n, sizeof(*ips), cmp_ul);
	for (unsigned o = 0; o < n_objects; o++) {
		if (!n || ips[n - 1] < objects[o].start || ips[0] >= objects[o].end)
			continue; /* wholly outside the steps: no file, no addr2line */
		char tmp[] = "/tmp/path_trace.XXXXXX", cmd[512];
		int fd = mkstemp(tmp);
		FILE *in = fd >= 0 ? fdopen(fd, "w") : NULL;
		unsigned long *addr = malloc(n * sizeof(*addr));
		double *count = malloc(n * sizeof(*count));
		size_t k = 0;

		if (!in || !addr || !count)
			die("tally");
		for (size_t i = 0; i < n; i++) {
			if (ips[i] < objects[o].start || ips[i] >= objects[o].end)
				continue;
			if (k && addr[k - 1] == ips[i] - objects[o].base) {
				count[k - 1]++;
				continue;
			}
			addr[k] = ips[i] - objects[o].base;
			count[k++] = 1;
			fprintf(in, "%lx\n", addr[k - 1]);
		}
		fclose(in);
		FILE *out = NULL;
		if (k && objects[o].path[0] == '/') {
			snprintf(cmd, sizeof(cmd), "addr2line -f -e '%s' < %s", objects[o].path, tmp);
			out = popen(cmd, "r");
		}
		for (size_t i = 0; i < k; i++) {
			char name[128] = "?", where[512];
			/* Without addr2line (binutils), or past what it answered: "?". */
			if (out && (!fgets(name, sizeof(name), out) || !fgets(where, sizeof(where), out))) {
				pclose(out);
				out = NULL;
				snprintf(name, sizeof(name), "?");
			}
			name[strcspn(name, "\n")] = '\0';
			unsigned f = 0;
			while (f < *n_funcs && (funcs[f].object != o || strcmp(funcs[f].name, name)))
				f++;
			if (f == *n_funcs) {
				if (*n_funcs == MAX_FUNCS)
					continue;
				funcs[f] = (struct func){o, "", 0};
				snprintf(funcs[f].name, sizeof(funcs[f].name), "%s", name);
				(*n_funcs)++;
			}
			funcs[f].instructions += count[i];
		}
		if (out)
			pclose(out);
		unlink(tmp);
		free(addr);
		free(count);
	}
}

/* Distinct lines and pages of code in @ips (sorted in place), per object. */
static void footprint(unsigned long *ips, size_t n, unsigned lines[], unsigned pages[])
{
	unsigned long last_line = 0, last_page = 0;

	memset(lines, 0, MAX_OBJECTS * sizeof(*lines));
	memset(pages, 0, MAX_OBJECTS * sizeof(*pages));
	for (size_t i = 0; i < n; i++)
		ips[i] >>= 6; /* lines first, pages from them */
	qsort(ips, n, sizeof(*ips), cmp_ul);
	for (size_t i = 0; i < n; i++) {
		int o = object_of(ips[i] << 6);
		if (o < 0 || ips[i] == last_line)
			continue;
		last_line = ips[i];
		lines[o]++;
		if (ips[i] >> 6 != last_page) {
			last_page = ips[i] >> 6;
			pages[o]++;
		}
	}
}

static void mount_probe(const char *root, enum kind k, unsigned i)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/probe/%u", root, i);
	if (k == K_MOUNT ? mount("probe", p, "tmpfs", 0, "size=64k") : umount2(p, 0))
		die(kind_name[k]);
}

static int cmp_change(const void *a, const void *b)
{
	const struct change *x = a, *y = b;

	return x->outside_vdso < y->outside_vdso ? -1 : x->outside_vdso > y->outside_vdso;
}

/* The median change of @c (sorted), its code by object and its functions. */
static void report(enum watcher w, enum kind k, struct change *c, unsigned changes, unsigned top)
{
	static struct func funcs[MAX_FUNCS];
	unsigned lines[MAX_OBJECTS], pages[MAX_OBJECTS], n_funcs = 0, all_lines = 0, all_pages = 0;
	struct change *m = &c[changes / 2];
	char each[1024] = "";

	for (unsigned i = 0; i < changes; i++) {
		size_t used = strlen(each);
		snprintf(each + used, sizeof(each) - used, " %zu", c[i].outside_vdso);
	}
	printf("\n### %s, %s: %zu instructions, %u system calls, %u vDSO calls\n\n"
	       "The median change. Every change, fewest first:%s\n\n",
	       watcher_name[w], kind_name[k], m->outside_vdso, m->syscalls, m->vdso_calls, each);
	tally_functions(m->ips, m->n, funcs, &n_funcs); /* sorts m->ips */
	footprint(m->ips, m->n, lines, pages);
	printf("| object | code lines | code pages |\n|---|---:|---:|\n");
	for (unsigned o = 0; o < n_objects; o++) {
		if (!lines[o])
			continue;
		all_lines += lines[o];
		all_pages += pages[o];
		printf("| %s | %u | %u |\n", short_name(objects[o].path), lines[o], pages[o]);
	}
	printf("| all | %u | %u |\n", all_lines, all_pages);
	qsort(funcs, n_funcs, sizeof(*funcs), cmp_func);
	printf("\n| function | object | instructions |\n|---|---|---:|\n");
	for (unsigned f = 0, shown = 0; f < n_funcs && shown < top; f++) {
		if (!strcmp(objects[funcs[f].object].path, "[vdso]"))
			continue; /* its count is the stepping's, see the top */
		printf("| %s | %s | %.0f |\n", funcs[f].name,
		       short_name(objects[funcs[f].object].path), funcs[f].instructions);
		shown++;
	}
}

static void trace_watcher(enum watcher w, const char *root, unsigned changes, unsigned top)
{
	struct seen *seen = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	unsigned long *ips = malloc(MAX_STEPS * sizeof(*ips));
	struct change *c = calloc(changes, sizeof(*c));

	if (seen == MAP_FAILED || !ips || !c)
		die("setup");
	fflush(stdout); /* or the child's copy of the buffer is written twice */
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		watcher_run(w, root, seen);
	}
	for (int t = 0; t < 60000 && !atomic_load(&seen->ready); t++)
		usleep(1000);
	usleep(300000); /* past the start-up work that follows ready */
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_EXITKILL) < 0)
		die("PTRACE_SEIZE");
	read_maps(pid);
	/*
	 * Stopped wherever it waited, then a mount and its unmount traced and
	 * left out: from here on it is stopped before its wait each time.
	 */
	interrupt(pid);
	for (int k = 0; k < K__N; k++) {
		uint64_t had = atomic_load(&seen->count);
		mount_probe(root, (enum kind)k, changes);
		trace_change(pid, seen, had, ips, &c[0]);
	}

	for (int k = 0; k < K__N; k++) {
		for (unsigned i = 0; i < changes; i++) {
			uint64_t had = atomic_load(&seen->count);
			mount_probe(root, (enum kind)k, i);
			trace_change(pid, seen, had, ips, &c[i]);
			if (!(c[i].ips = malloc(c[i].n * sizeof(*ips) + 1)))
				die("malloc");
			memcpy(c[i].ips, ips, c[i].n * sizeof(*ips));
		}
		qsort(c, changes, sizeof(*c), cmp_change);
		report(w, (enum kind)k, c, changes, top);
		for (unsigned i = 0; i < changes; i++)
			free(c[i].ips);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	munmap(seen, 4096);
	free(ips);
	free(c);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mounts", required_argument, 0, 'm'}, {"changes", required_argument, 0, 'c'},
		{"watchers", required_argument, 0, 'w'}, {"top", required_argument, 0, 't'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	static const enum watcher one_thread[] = {W_FLOOR, W_FLOOR_POLLED, W_FLOOR_FIELDS,
						  W_FLOOR_EPOLL, W_FANOTIFY_1T, W_FANOTIFY_TOPO,
						  W_FANOTIFY_WAIT};
	unsigned mounts = 10000, changes = 10, top = 25;
	char list[128] = "0,14";
	int o;

	while ((o = getopt_long(argc, argv, "m:c:w:t:h", opts, NULL)) != -1) {
		char *end;
		unsigned long v = optarg ? strtoul(optarg, &end, 10) : 0;
		if (o == 'w') {
			snprintf(list, sizeof(list), "%s", optarg);
			continue;
		}
		if ((o == 'm' || o == 'c' || o == 't') && (!*optarg || *end || !v || v > 100000))
			o = '?';
		if (o == 'm')
			mounts = (unsigned)v;
		else if (o == 'c')
			changes = (unsigned)v;
		else if (o == 't')
			top = (unsigned)v;
		else {
			fprintf(stderr, "usage: path_trace [--mounts N] [--changes N] [--watchers N,N..] "
					"[--top N]\n");
			return o == 'h' ? 0 : 2;
		}
	}

	char root[] = "/tmp/path_trace.XXXXXX", p[512];
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("private mount namespace");
	if (!mkdtemp(root) || mount("path_trace", root, "tmpfs", 0, "size=64m") < 0)
		die("tmpfs root");
	snprintf(p, sizeof(p), "%s/probe", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/fill", root);
	mkdir(p, 0755);
	for (unsigned i = 0; i <= changes; i++) { /* the last one for the warm-up */
		snprintf(p, sizeof(p), "%s/probe/%u", root, i);
		mkdir(p, 0755);
	}
	for (unsigned i = 0; i < mounts; i++) {
		snprintf(p, sizeof(p), "%s/fill/%u", root, i);
		if ((mkdir(p, 0755) < 0 && errno != EEXIST) || mount("fill", p, "tmpfs", 0, "size=16k") < 0)
			die("fill mount");
	}

	for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
		char *end;
		long w = strtol(s, &end, 10);
		bool ok = false;
		for (size_t i = 0; *s && !*end && i < sizeof(one_thread) / sizeof(*one_thread); i++)
			ok |= one_thread[i] == w;
		if (!ok) {
			fprintf(stderr, "path_trace: watcher %s: not a one-thread watcher (0 11 12 13 2 3 14)\n", s);
			return 2;
		}
		int err = watcher_probe((enum watcher)w);
		if (err) {
			fprintf(stderr, "path_trace: %s left out: %s\n", watcher_name[w], strerror(-err));
			continue;
		}
		printf("\n## %s, %u mounts, %u changes of each kind\n", watcher_name[w], mounts, changes);
		trace_watcher((enum watcher)w, root, changes, top);
	}
	return 0;
}
