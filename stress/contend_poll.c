/* SPDX-License-Identifier: MIT */
/*
 * The alternatives a user would pick instead of the router:
 *
 *  - "poller": what systemd and libmount do.  Wait for POLLPRI on
 *    /proc/self/mountinfo, re-read and re-parse all of it, diff against the
 *    previous copy.  Naive on purpose, like them: the whole file every time.
 *    The diff itself is a merge of two ID-sorted tables (O(n log n)), which
 *    is kinder than util-linux's O(n^2) mnt_diff_tables(); whatever the
 *    poller costs here, theirs costs more.
 *  - "findmnt": `findmnt --poll` itself, spawned in the storm's namespace,
 *    its lines read as they come.  Skipped when findmnt is not installed
 *    (the project's VM has none).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"

extern char **environ;

struct poller {
	struct ms_storm *st;
	int fd;
	pthread_t thread;
	_Atomic bool stop;
	pthread_mutex_t lock; /* cur: the poller replaces it, the driver checks it */
	struct ms_table cur;
	char *buf;
	size_t cap;
	uint64_t seen[MS_MAX_WAVES];
	uint64_t reads;
	struct ms_samples samples;
	int err;
	uint64_t cpu_ns;
};

static void note(struct poller *p, const char *path, unsigned cls, unsigned wave, uint64_t t)
{
	if (wave >= MS_MAX_WAVES)
		return;
	p->seen[wave]++;
	if (wave > 0 && ms_samples_push(&p->samples, ms_key_mix(ms_key(p->st->root, path), wave, cls), t) < 0)
		p->err = -ENOMEM;
}

static void diff_and_note(struct poller *p, const struct ms_table *a, const struct ms_table *b,
			  uint64_t t)
{
	unsigned wave = atomic_load_explicit(&p->st->cur_wave, memory_order_relaxed);
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		const struct ms_entry *x = i < a->n ? &a->v[i] : NULL;
		const struct ms_entry *y = j < b->n ? &b->v[j] : NULL;
		if (x && (!y || x->id < y->id)) {
			note(p, x->path, MS_DEPART, wave, t);
			i++;
		} else if (y && (!x || y->id < x->id)) {
			note(p, y->path, MS_ARRIVE, wave, t);
			j++;
		} else {
			if (strcmp(x->path, y->path))
				note(p, y->path, MS_ARRIVE, wave, t);
			else if (strcmp(x->mopts, y->mopts))
				note(p, y->path, MS_ATTR, wave, t);
			i++;
			j++;
		}
	}
}

static int poller_read(struct poller *p, struct ms_table *ret)
{
	long n = ms_read_all(p->fd, &p->buf, &p->cap);

	if (n < 0)
		return (int)n;
	return ms_mountinfo_parse(p->buf, ret);
}

static void *poller_main(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLPRI };

	while (!atomic_load(&p->stop) && !p->err) {
		int n = poll(&pfd, 1, 50);
		if (n <= 0 || !(pfd.revents & (POLLPRI | POLLERR)))
			continue;
		struct ms_table next = {0};
		int err = poller_read(p, &next);
		if (err) {
			p->err = err;
			ms_table_clear(&next);
			break;
		}
		p->reads++;
		/* The change is in hand once the diff is done: that is the poller's latency. */
		diff_and_note(p, &p->cur, &next, ms_now_ns());
		pthread_mutex_lock(&p->lock);
		struct ms_table old = p->cur;
		p->cur = next;
		pthread_mutex_unlock(&p->lock);
		ms_table_clear(&old);
	}
	p->cpu_ns = ms_thread_cpu_ns();
	return NULL;
}

static int poller_check(void *ctx, unsigned i, const struct ms_table *truth, char *why, size_t len)
{
	struct poller *p = ctx;
	int ok = 1;

	(void)i;
	pthread_mutex_lock(&p->lock);
	if (p->cur.n != truth->n) {
		snprintf(why, len, "poller has %zu mounts, truth %zu", p->cur.n, truth->n);
		ok = 0;
	}
	for (size_t k = 0; ok && k < truth->n; k++) {
		const struct ms_entry *a = &p->cur.v[k], *b = &truth->v[k];
		if (a->id != b->id || strcmp(a->path, b->path) || strcmp(a->mopts, b->mopts)) {
			snprintf(why, len, "poller %llu %s %s, truth %llu %s %s",
				 (unsigned long long)a->id, a->path, a->mopts,
				 (unsigned long long)b->id, b->path, b->mopts);
			ok = 0;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return ok;
}

static uint64_t poller_seen(void *ctx, unsigned i, unsigned w)
{
	(void)i;
	return ((struct poller *)ctx)->seen[w];
}

static void fill_common(struct ms_storm *st, struct ms_result *res, struct ms_driver *d,
			const uint64_t *seen, struct ms_samples *samples)
{
	res->n_subs = 1;
	snprintf(res->subs[0].subtree, sizeof(res->subs[0].subtree), "/");
	for (unsigned w = 0; w < st->n_waves; w++) {
		res->waves[w].seen = seen[w];
		res->waves[w].expected = d->expected[w * MS_MAX_SUBS];
		res->subs[0].seen += seen[w];
		res->subs[0].expected += d->expected[w * MS_MAX_SUBS];
	}
	res->changes_seen = res->subs[0].seen;
	ms_latency_files(st, samples, res);
	res->maxrss_kb = ms_maxrss_kb();
}

int ms_run_poller(struct ms_storm *st, struct ms_result *res)
{
	struct poller *p = calloc(1, sizeof(*p));
	struct ms_driver *d = calloc(1, sizeof(*d));
	uint64_t t0 = ms_now_ns();
	int err;

	if (!p || !d) {
		free(p);
		free(d);
		return -ENOMEM;
	}
	p->st = st;
	pthread_mutex_init(&p->lock, NULL);
	p->fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		err = -errno;
		goto out_free;
	}
	/* The first table is read before the storm: the thread diffs from it. */
	err = poller_read(p, &p->cur);
	if (err)
		goto out_free;
	if (pthread_create(&p->thread, NULL, poller_main, p)) {
		err = -EAGAIN;
		goto out_free;
	}
	*d = (struct ms_driver){ .st = st, .res = res, .ctx = p, .n = 1, .prefix = { "/" },
				 .mountinfo_ids = true,
				 .verbose = st->o->verbose, .settle_ms = st->o->alt_settle_ms,
				 .check = poller_check, .seen = poller_seen };
	err = ms_drive(d);
	if (err == -ETIMEDOUT)
		err = 0; /* fell behind: that is a figure (status "lagging"), not an error */
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	res->wall_ns = ms_now_ns() - t0;
	res->cpu_ns = p->cpu_ns;
	res->reads = p->reads;
	fill_common(st, res, d, p->seen, &p->samples);
	if (p->err)
		snprintf(res->reason, sizeof(res->reason), "poller: %s", strerror(-p->err));
	res->status = err || p->err ? MS_ERROR : res->subs[0].consistent == 1 ? MS_OK : MS_LAGGING;
	for (unsigned w = 0; w < st->n_waves; w++)
		if (res->waves[w].consistent != 1 && res->status == MS_OK)
			res->status = MS_LAGGING;
out_free:
	if (p->fd >= 0)
		close(p->fd);
	ms_table_clear(&p->cur);
	free(p->buf);
	free(p->samples.v);
	free(p);
	free(d);
	return err;
}

/* ---- findmnt --poll ---- */

struct fm {
	struct ms_storm *st;
	int out;             /* read end of findmnt's stdout */
	pid_t pid;
	pthread_t thread;
	_Atomic bool warm;   /* storm started: lines count */
	_Atomic uint64_t probe_lines;
	uint64_t seen[MS_MAX_WAVES];
	uint64_t lines;
	struct ms_samples samples;
	int err;
};

static void fm_line(struct fm *f, char *line, uint64_t t)
{
	char *sp = strchr(line, ' ');
	unsigned cls;

	if (!sp)
		return;
	*sp = '\0';
	const char *target = sp + 1;
	if (!atomic_load(&f->warm)) {
		atomic_fetch_add(&f->probe_lines, 1);
		return;
	}
	if (!strcmp(line, "umount"))
		cls = MS_DEPART;
	else if (!strcmp(line, "remount"))
		cls = MS_ATTR;
	else
		cls = MS_ARRIVE; /* mount, move */
	unsigned wave = atomic_load_explicit(&f->st->cur_wave, memory_order_relaxed);
	if (wave >= MS_MAX_WAVES)
		return;
	f->seen[wave]++;
	f->lines++;
	if (wave > 0 && ms_samples_push(&f->samples, ms_key_mix(ms_key(f->st->root, target), wave, cls), t) < 0)
		f->err = -ENOMEM;
}

static void *fm_main(void *arg)
{
	struct fm *f = arg;
	char buf[65536];
	size_t have = 0;

	for (;;) {
		ssize_t n = read(f->out, buf + have, sizeof(buf) - have - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		uint64_t t = ms_now_ns();
		have += (size_t)n;
		buf[have] = '\0';
		char *s = buf, *nl;
		while ((nl = strchr(s, '\n'))) {
			*nl = '\0';
			fm_line(f, s, t);
			s = nl + 1;
		}
		have -= (size_t)(s - buf);
		memmove(buf, s, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: not findmnt's output */
	}
	return NULL;
}

static int fm_check(void *ctx, unsigned i, const struct ms_table *truth, char *why, size_t len)
{
	(void)ctx;
	(void)i;
	(void)truth;
	(void)why;
	(void)len;
	return -1; /* findmnt keeps no table we could read */
}

static uint64_t fm_seen(void *ctx, unsigned i, unsigned w)
{
	(void)i;
	return ((struct fm *)ctx)->seen[w];
}

int ms_run_findmnt(struct ms_storm *st, struct ms_result *res)
{
	struct fm *f = calloc(1, sizeof(*f));
	struct ms_driver *d = calloc(1, sizeof(*d));
	char *argv[] = { "findmnt", "--poll", "--raw", "--noheadings", "--output", "ACTION,TARGET",
			 NULL };
	posix_spawn_file_actions_t fa;
	int pfd[2] = { -1, -1 }, err;
	uint64_t t0 = ms_now_ns();

	if (!f || !d) {
		free(f);
		free(d);
		return -ENOMEM;
	}
	f->st = st;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		err = -errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	err = -posix_spawnp(&f->pid, "findmnt", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	f->out = pfd[0];
	if (err == -ENOENT) {
		res->status = MS_UNAVAILABLE;
		snprintf(res->reason, sizeof(res->reason), "findmnt not installed");
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	if (pthread_create(&f->thread, NULL, fm_main, f)) {
		err = -EAGAIN;
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
		goto out;
	}
	/*
	 * findmnt has started watching once it reports a probe.  The probe
	 * is held for 100 ms each way: findmnt diffs whole tables, so a mount
	 * gone before its next read is a change it never sees, and one made
	 * before its first read is no change at all.
	 */
	char probe[MS_PATH];
	bool mounted = false;
	snprintf(probe, sizeof(probe), "%s/probe", st->root);
	mkdir(probe, 0755);
	for (int i = 0; i < 50 && !atomic_load(&f->probe_lines); i++) {
		if (mounted)
			mounted = umount2(probe, MNT_DETACH) < 0;
		else
			mounted = mount("probe", probe, "tmpfs", 0, "size=1m") == 0;
		poll(NULL, 0, 100);
	}
	if (mounted)
		umount2(probe, MNT_DETACH);
	/* Then let its last probe line through before the storm's count. */
	for (uint64_t last = UINT64_MAX; last != atomic_load(&f->probe_lines);) {
		last = atomic_load(&f->probe_lines);
		poll(NULL, 0, 200);
	}
	if (!atomic_load(&f->probe_lines)) {
		res->status = MS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "findmnt --poll did not report a probe mount in 5 s");
		err = -ETIMEDOUT;
	} else {
		atomic_store(&f->warm, true);
		*d = (struct ms_driver){ .st = st, .res = res, .ctx = f, .n = 1, .prefix = { "/" },
					 .verbose = st->o->verbose,
					 .settle_ms = st->o->alt_settle_ms, .check = fm_check,
					 .seen = fm_seen };
		err = ms_drive(d);
		if (err == -ETIMEDOUT)
			err = 0; /* fell behind: status "lagging" */
	}
	struct rusage ru;
	int status;
	kill(f->pid, SIGTERM);
	wait4(f->pid, &status, 0, &ru);
	pthread_join(f->thread, NULL);
	res->wall_ns = ms_now_ns() - t0;
	res->cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
		      (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	res->reads = f->lines;
	if (res->status != MS_ERROR) {
		fill_common(st, res, d, f->seen, &f->samples);
		/* findmnt's own peak, not ours. */
		res->maxrss_kb = (uint64_t)ru.ru_maxrss;
		res->subs[0].consistent = -1;
		/* Judged per wave by counts of net changes (flaps it cannot see are "coalesced"). */
		res->status = MS_OK;
		for (unsigned w = 0; w < st->n_waves; w++)
			if (res->waves[w].consistent != 1)
				res->status = MS_LAGGING;
	}
out:
	if (f->out > 0)
		close(f->out);
	free(f->samples.v);
	free(f);
	free(d);
	return err;
}
