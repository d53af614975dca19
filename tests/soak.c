/* SPDX-License-Identifier: MIT */
/*
 * The soak: a router on its own thread and a mountwatch process watch one
 * subtree of a private mount namespace while a storm of mounts, binds,
 * moves, remounts and lazy unmounts runs for a given time.  Every few
 * seconds the storm pauses and the subscriber's view (rebuilt from its
 * events alone, snapshots included) must equal what listmount(2) says.
 * The resident set of this process and of mountwatch is sampled
 * throughout; the growth after the warm-up (the first tenth) is reported.
 *
 * Usage: soak [--seconds N] [--source NAME] [--mountwatch PATH]
 *   (ctest: 60 s; the documented long run: --seconds 600)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mirror/listmount.h"
#include "mirror/mount.h"
#include "probe.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif

#define MAX_VIEW 8192
#define MAX_DIRS 48

static char root[256];
static struct {
	uint64_t id;
	char *path;
} view[MAX_VIEW];
static size_t nview;
static uint64_t events, snapshots, overruns, resyncs;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static long rss_kb(pid_t pid)
{
	char p[64], line[256];
	long kb = -1;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static void view_clear(void)
{
	for (size_t i = 0; i < nview; i++)
		free(view[i].path);
	nview = 0;
}

static ssize_t view_find(uint64_t id)
{
	for (size_t i = 0; i < nview; i++)
		if (view[i].id == id)
			return (ssize_t)i;
	return -1;
}

static void view_set(uint64_t id, const char *path)
{
	ssize_t i = view_find(id);

	if (i < 0) {
		if (nview == MAX_VIEW)
			return;
		i = (ssize_t)nview++;
		view[i].path = NULL;
	}
	free(view[i].path);
	view[i].id = id;
	view[i].path = strdup(path);
}

static void view_del(uint64_t id)
{
	ssize_t i = view_find(id);

	if (i >= 0) {
		free(view[i].path);
		view[i] = view[--nview];
	}
}

static bool below_root(const char *p)
{
	size_t n = strlen(root);

	return !strncmp(p, root, n) && (p[n] == '\0' || p[n] == '/');
}

/* Applies every event queued; returns how many. */
static int drain(mr_sub *s)
{
	const struct mr_event *ev;
	int n = 0;

	while (mr_sub_next(s, &ev) == 0) {
		n++;
		events++;
		switch (ev->kind) {
		case MR_EVENT_SNAPSHOT:
			snapshots++;
			view_clear();
			for (size_t i = 0; i < ev->n_mounts; i++)
				view_set(ev->mounts[i].id, ev->mounts[i].path);
			break;
		case MR_EVENT_OVERRUN:
			overruns++;
			break;
		case MR_EVENT_RESYNC_BEGIN:
			resyncs++;
			break;
		case MR_EVENT_RESYNC_END:
			break;
		case MR_EVENT_UNMOUNT:
		case MR_EVENT_EXPIRY:
			view_del(ev->mnt_id);
			break;
		default:
			if (below_root(ev->path))
				view_set(ev->mnt_id, ev->path);
			else
				view_del(ev->mnt_id);
		}
		mr_event_unref(ev);
	}
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The view's paths equal listmount's under root (as multisets). */
static int compare_truth(void)
{
	struct mr__statmount_buf buf = { 0 };
	struct mr__table t = { 0 };
	uint64_t calls = 0;
	char **a = NULL, **b = NULL;
	size_t na = 0, nb = 0;
	int rc = 1;

	if (mr__listmount_table(0, &buf, &calls, &t) < 0)
		goto out;
	a = calloc(t.n + 1, sizeof(*a));
	b = calloc(nview + 1, sizeof(*b));
	if (!a || !b)
		goto out;
	for (size_t i = 0; i < t.n; i++)
		if (below_root(t.v[i]->pub.path))
			a[na++] = (char *)t.v[i]->pub.path;
	for (size_t i = 0; i < nview; i++)
		b[nb++] = view[i].path;
	qsort(a, na, sizeof(*a), cmp_str);
	qsort(b, nb, sizeof(*b), cmp_str);
	if (na != nb) {
		fprintf(stderr, "soak: the view holds %zu mounts, listmount %zu\n", nb, na);
		goto out;
	}
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i])) {
			fprintf(stderr, "soak: the view has %s where listmount has %s\n", b[i], a[i]);
			goto out;
		}
	rc = 0;
out:
	free(a);
	free(b);
	mr__table_clear(&t);
	mr__statmount_buf_free(&buf);
	return rc;
}

static uint64_t root_mnt;

/* A mount stands at @p (not just the root's directory). */
static bool is_mountpoint(const char *p)
{
	uint64_t id = tu_mnt_id(p);

	return id && id != root_mnt;
}

/*
 * One random operation of the storm on the directories d0..d(MAX_DIRS-1).
 * Nothing is stacked on a mount point (a full one is unmounted instead),
 * so the table stays bounded: at most a mount and a submount per directory.
 */
static bool storm_op(unsigned *seed)
{
	char p[512], q[512];
	int i = rand_r(seed) % MAX_DIRS, j = rand_r(seed) % MAX_DIRS;

	snprintf(p, sizeof(p), "%s/d%d", root, i);
	snprintf(q, sizeof(q), "%s/d%d", root, j);
	int r = -1;

	switch (rand_r(seed) % 8) {
	case 0:
	case 1:
		if (is_mountpoint(p))
			r = umount2(p, MNT_DETACH);
		else
			r = mount("soak", p, "tmpfs", 0, "size=64k");
		break;
	case 2:
		/* a submount inside a mount, on a directory made for it */
		snprintf(q, sizeof(q), "%s/d%d/s", root, i);
		if (is_mountpoint(p) && (mkdir(q, 0755) == 0 || errno == EEXIST) &&
		    !is_mountpoint(q))
			r = mount("soak", q, "tmpfs", 0, "size=64k");
		break;
	case 3:
		if (is_mountpoint(p) && !is_mountpoint(q))
			r = mount(p, q, NULL, MS_BIND, NULL);
		break;
	case 4:
		if (is_mountpoint(p) && !is_mountpoint(q))
			r = mount(p, q, NULL, MS_MOVE, NULL);
		break;
	case 5:
		r = mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | (rand_r(seed) & 1 ? MS_RDONLY : 0), NULL);
		break;
	case 6:
		if (is_mountpoint(p))
			r = mount(NULL, p, NULL, MS_REMOUNT, rand_r(seed) & 1 ? "size=128k" : "size=96k");
		break;
	default:
		r = umount2(p, MNT_DETACH);
		break;
	}
	return r == 0;
}

int main(int argc, char **argv)
{
	double seconds = 60;
	const char *source = NULL, *mountwatch = NULL;
	pid_t mw = 0;
	int rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--source"))
			source = argv[i + 1];
		else if (!strcmp(argv[i], "--mountwatch"))
			mountwatch = argv[i + 1];
	}
	rc = tu_private_root(root, sizeof(root));
	if (rc)
		return rc;
	if (!mr__probe()->listmount)
		return tu_skip("no listmount(2): the truth cannot be read");
	root_mnt = tu_mnt_id(root);
	for (int i = 0; i < MAX_DIRS; i++) {
		char p[512];
		snprintf(p, sizeof(p), "%s/d%d", root, i);
		if (mkdir(p, 0755) < 0) {
			perror("mkdir");
			return T_EXIT_FAIL;
		}
	}
	if (mountwatch && access(mountwatch, X_OK) == 0) {
		mw = fork();
		if (mw == 0) {
			/* Not left behind if the soak is killed (a ctest timeout). */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 1);
			execl(mountwatch, mountwatch, "--json", "-s", root, (char *)NULL);
			_exit(127);
		}
	}

	struct mr_opts o = { .size = sizeof(o), .source = source };
	mr_router *r;
	mr_sub *s;
	int err = mr_router_new(&o, &r);
	if (err < 0)
		return err == -ENOSYS ? tu_skip("source %s: not on this kernel", source)
				      : (fprintf(stderr, "mr_router_new: %s\n", strerror(-err)), 1);
	struct mr_sub_opts so = { .size = sizeof(so), .subtree = root, .flags = MR_SUB_SNAPSHOT,
				  .capacity = 1024 };
	CHECK(mr_subscribe(r, &so, &s) == 0);
	CHECK(mr_router_start(r) == 0);
	fprintf(stderr, "soak: %s source, %.0f s, mountwatch %s\n", mr_router_source(r), seconds,
		mw > 0 ? "running" : "not run");

	unsigned seed = 16;
	double t0 = now_s(), next_check = t0 + 2, warm = t0 + seconds / 10;
	long rss_warm = -1, mw_warm = -1, rss_max = 0, mw_max = 0;
	uint64_t ops = 0, checks = 0;
	for (;;) {
		double t = now_s();
		if (t >= next_check || t - t0 >= seconds) {
			/* Pause the storm; let the router catch up; compare. */
			int quiet = 0;
			double limit = now_s() + 60;
			while (quiet < 3 && now_s() < limit) {
				if (mr_sub_wait(s, 100) == -ETIMEDOUT)
					quiet++;
				else
					quiet = 0;
				drain(s);
			}
			if (quiet < 3) {
				fprintf(stderr, "soak: events still flowing 60 s after the storm paused\n");
				rc = T_EXIT_FAIL;
				break;
			}
			if (compare_truth()) {
				fprintf(stderr, "soak: after %.1f s, %llu operations\n", t - t0,
					(unsigned long long)ops);
				rc = T_EXIT_FAIL;
				break;
			}
			checks++;
			long rss = rss_kb(getpid()), m = mw > 0 ? rss_kb(mw) : -1;
			if (rss > rss_max)
				rss_max = rss;
			if (m > mw_max)
				mw_max = m;
			if (rss_warm < 0 && t >= warm) {
				rss_warm = rss;
				mw_warm = m;
			}
			if (t - t0 >= seconds) {
				if (rss_warm < 0) {
					rss_warm = rss;
					mw_warm = m;
				}
				struct mr_stats st;
				mr_router_stats(r, &st);
				printf("soak: %.0f s, %llu mount table changes made, %llu checks equal to listmount, "
				       "%llu events, %llu snapshots, %llu overruns, %llu resyncs "
				       "(%llu kernel losses, %llu bad records)\n",
				       t - t0, (unsigned long long)ops, (unsigned long long)checks,
				       (unsigned long long)events, (unsigned long long)snapshots,
				       (unsigned long long)overruns, (unsigned long long)st.resyncs,
				       (unsigned long long)st.kernel_losses,
				       (unsigned long long)st.bad_records);
				printf("soak: RSS after warm-up %ld kB, at the end %ld kB (growth %+ld kB, "
				       "peak %ld kB)\n", rss_warm, rss, rss - rss_warm, rss_max);
				if (mw > 0)
					printf("soak: mountwatch RSS after warm-up %ld kB, at the end %ld kB "
					       "(growth %+ld kB, peak %ld kB)\n", mw_warm, m, m - mw_warm,
					       mw_max);
				/*
				 * Gross growth only: allocators keep what they freed.
				 * Not judged under AddressSanitizer, whose quarantine
				 * holds freed memory by design (256 MiB).
				 */
				if (!UNDER_ASAN && (rss > 4 * rss_warm + 32768 ||
						    (mw > 0 && m > 4 * mw_warm + 32768))) {
					fprintf(stderr, "soak: resident set grew without bound\n");
					rc = T_EXIT_FAIL;
				} else {
					rc = T_EXIT_PASS;
				}
				break;
			}
			next_check = now_s() + 2;
			continue;
		}
		for (int i = 0; i < 50; i++)
			ops += storm_op(&seed);
		drain(s);
	}
	if (mw > 0) {
		int st;
		kill(mw, SIGTERM);
		waitpid(mw, &st, 0);
		if (!WIFEXITED(st) && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)) {
			fprintf(stderr, "soak: mountwatch died\n");
			rc = T_EXIT_FAIL;
		}
	}
	mr_router_free(r);
	view_clear();
	return rc;
}
