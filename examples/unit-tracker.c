/* SPDX-License-Identifier: MIT */
/*
 * unit-tracker: a service manager's table of every mount in its namespace,
 * one unit per mount point (path -> mounted, read-only or gone), kept from
 * mountrouter's events.
 *
 *   unit-tracker [--compare] [--source NAME] [--units]
 *
 * With --compare it keeps the same table a second way, the way service
 * managers do today: on every POLLPRI of /proc/self/mountinfo, re-read the
 * whole file and diff it against the table.  Both run on this one thread,
 * on the same changes, and the CPU time of each is measured around its own
 * work only.  On SIGINT or SIGTERM it lets both catch up, compares them
 * with each other and with what listmount(2)/statmount(2) say, prints the
 * CPU of each, and exits 1 if any two differ.  --units prints the table.
 *
 * A unit's state is a function of the mounts at its path: gone when there
 * are none (a unit, once seen, is kept, as a service manager keeps an
 * inactive unit), read-only when every mount there is read-only (the mount
 * or its superblock), mounted otherwise.
 *
 * The router is driven from this thread's poll loop (mr_router_fd(),
 * mr_router_dispatch()): no lock anywhere, and the router's CPU is this
 * thread's CPU inside mr_router_dispatch() and the event handling.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, unshare, signalfd, twalk_r: glibc */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <search.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <mountrouter.h>

#include "kernel-table.h"

/* ---- a table of units, fed by mount ID ---- */

struct unit {
	char *path;
	unsigned n, n_ro; /* mounts at the path, and how many are read-only */
};

struct mnt {
	uint64_t id;
	struct unit *u;
	bool ro;
	unsigned gen; /* the poller's mark: last re-read that listed it */
};

struct table {
	void *ids;   /* tsearch tree of struct mnt, by id */
	void *units; /* tsearch tree of struct unit, by path */
	size_t n_mounts;
};

static int by_id(const void *a, const void *b)
{
	const struct mnt *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct unit *)a)->path, ((const struct unit *)b)->path);
}

static void oom(void)
{
	fputs("unit-tracker: out of memory\n", stderr);
	exit(1);
}

static struct unit *unit_get(struct table *t, const char *path)
{
	struct unit key = {.path = (char *)path}, **found = tfind(&key, &t->units, by_path);

	if (found)
		return *found;
	struct unit *u = calloc(1, sizeof(*u));
	if (!u || !(u->path = strdup(path)) || !tsearch(u, &t->units, by_path))
		oom();
	return u;
}

static struct mnt *mnt_find(struct table *t, uint64_t id)
{
	struct mnt key = {.id = id}, **found = tfind(&key, &t->ids, by_id);
	return found ? *found : NULL;
}

static void attach(struct mnt *m, struct unit *u, bool ro)
{
	m->u = u;
	m->ro = ro;
	u->n++;
	u->n_ro += ro;
}

static void detach(struct mnt *m)
{
	m->u->n--;
	m->u->n_ro -= m->ro;
}

/* A mount appeared, moved or changed: the table says where it is now. */
static struct mnt *table_set(struct table *t, uint64_t id, const char *path, bool ro)
{
	struct mnt *m = mnt_find(t, id);

	if (!m) {
		if (!(m = calloc(1, sizeof(*m))))
			oom();
		m->id = id;
		if (!tsearch(m, &t->ids, by_id))
			oom();
		t->n_mounts++;
	} else if (strcmp(m->u->path, path) == 0) {
		m->u->n_ro += (int)ro - (int)m->ro;
		m->ro = ro;
		return m;
	} else {
		detach(m);
	}
	attach(m, unit_get(t, path), ro);
	return m;
}

static void table_del(struct table *t, uint64_t id)
{
	struct mnt *m = mnt_find(t, id);

	if (!m)
		return; /* e.g. unmounted before anyone could look it up */
	detach(m);
	tdelete(m, &t->ids, by_id);
	t->n_mounts--;
	free(m);
}

static void free_mnt(void *p)
{
	struct mnt *m = p;
	detach(m);
	free(m);
}

/* Forgets every mount; units stay, as gone, until mounts show up again. */
static void table_clear_mounts(struct table *t)
{
	tdestroy(t->ids, free_mnt);
	t->ids = NULL;
	t->n_mounts = 0;
}

static void free_unit(void *p)
{
	struct unit *u = p;
	free(u->path);
	free(u);
}

static void table_free(struct table *t)
{
	table_clear_mounts(t);
	tdestroy(t->units, free_unit);
	t->units = NULL;
}

/* ---- flattening a table for comparison and printing ---- */

enum state { GONE, MOUNTED, READONLY };
static const char *const state_name[] = {"gone", "mounted", "read-only"};

static enum state state_of(const struct unit *u)
{
	return !u->n ? GONE : u->n_ro == u->n ? READONLY : MOUNTED;
}

struct flat {
	const struct unit **u;
	size_t n, cap;
	size_t live, ro, gone;
};

static void flatten_one(const void *node, VISIT v, void *arg)
{
	struct flat *f = arg;
	const struct unit *u = *(const struct unit *const *)node;

	if (v != postorder && v != leaf)
		return; /* in order: each node once, paths sorted */
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 1024;
		if (!(f->u = realloc(f->u, f->cap * sizeof(*f->u))))
			oom();
	}
	f->u[f->n++] = u;
	switch (state_of(u)) {
	case GONE: f->gone++; break;
	case READONLY: f->ro++; f->live++; break;
	case MOUNTED: f->live++; break;
	}
}

static struct flat flatten(const struct table *t)
{
	struct flat f = {0};
	twalk_r(t->units, flatten_one, &f);
	return f;
}

/*
 * Compares the live units (gone ones depend on what each way happened to
 * see: a re-read never sees a mount that came and went between two reads).
 * Prints the first differences; returns true when equal.
 */
static bool same_units(const char *na, const struct flat *a, const char *nb, const struct flat *b)
{
	size_t i = 0, j = 0, diffs = 0;

	while (i < a->n || j < b->n) {
		if (i < a->n && state_of(a->u[i]) == GONE) { i++; continue; }
		if (j < b->n && state_of(b->u[j]) == GONE) { j++; continue; }
		int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->u[i]->path, b->u[j]->path);
		if (c == 0 && state_of(a->u[i]) == state_of(b->u[j])) {
			i++, j++;
			continue;
		}
		if (diffs++ < 10) {
			const struct unit *u = c <= 0 ? a->u[i] : b->u[j];
			printf("  %s: %s %s, %s %s\n", u->path, na,
			       c <= 0 ? state_name[state_of(a->u[i])] : "absent", nb,
			       c >= 0 ? state_name[state_of(b->u[j])] : "absent");
		}
		i += c <= 0;
		j += c >= 0;
	}
	if (diffs)
		printf("unit-tracker: %s and %s differ in %zu units\n", na, nb, diffs);
	return diffs == 0;
}

/* ---- way 1: mountrouter's events ---- */

/* An mr_mount is read-only by its mount attribute or a superblock "ro". */
static bool mount_ro(const struct mr_mount *m)
{
	const char *o = m->options;

	if (m->attr & MOUNT_ATTR_RDONLY)
		return true;
	while (*o) {
		size_t n = strcspn(o, ",");
		if (n == 2 && strncmp(o, "ro", 2) == 0)
			return true;
		o += n + (o[n] == ',');
	}
	return false;
}

static void apply_event(struct table *t, const struct mr_event *ev)
{
	switch (ev->kind) {
	case MR_EVENT_SNAPSHOT:
		/* At subscribe time, and after an OVERRUN: the whole table anew. */
		table_clear_mounts(t);
		for (size_t i = 0; i < ev->n_mounts; i++)
			table_set(t, ev->mounts[i].id, ev->mounts[i].path, mount_ro(&ev->mounts[i]));
		break;
	case MR_EVENT_MOUNT:
	case MR_EVENT_MOVE:
	case MR_EVENT_READONLY:
	case MR_EVENT_ATTR:
		table_set(t, ev->mnt_id, ev->path, ev->flags & MR_EVF_READONLY);
		break;
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		table_del(t, ev->mnt_id);
		break;
	default:
		/* OVERRUN (a SNAPSHOT follows), RESYNC_BEGIN/END (the events between are applied as they come). */
		break;
	}
}

/* ---- way 2: re-read /proc/self/mountinfo on every POLLPRI ---- */

struct poller {
	int fd;
	char *buf;
	size_t cap;
	unsigned gen;
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* The whole file, from the start: one read(2) per buffer-full. */
static ssize_t slurp(struct poller *p)
{
	size_t len = 0;

	if (lseek(p->fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		if (p->cap - len < 4096) {
			p->cap = p->cap ? p->cap * 2 : 1 << 16;
			if (!(p->buf = realloc(p->buf, p->cap)))
				oom();
		}
		ssize_t n = read(p->fd, p->buf + len, p->cap - len - 1);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	p->buf[len] = '\0';
	return (ssize_t)len;
}

struct sweep {
	struct mnt **gone;
	size_t n, cap;
	unsigned gen;
};

static void collect_unmarked(const void *node, VISIT v, void *arg)
{
	struct sweep *s = arg;
	struct mnt *m = *(struct mnt *const *)node;

	if ((v != postorder && v != leaf) || m->gen == s->gen)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		if (!(s->gone = realloc(s->gone, s->cap * sizeof(*s->gone))))
			oom();
	}
	s->gone[s->n++] = m;
}

/* Re-reads the table and brings @t up to it: mark what is listed, sweep the rest. */
static int poller_reread(struct poller *p, struct table *t)
{
	ssize_t len = slurp(p);
	if (len < 0)
		return (int)len;
	p->gen++;
	for (char *line = p->buf, *next; *line; line = next) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT MOUNTOPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS */
		char *f[6], *save = NULL;
		next = strchr(line, '\n');
		next = next ? (*next = '\0', next + 1) : line + strlen(line);
		f[0] = strtok_r(line, " ", &save);
		for (int i = 1; i < 6 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &save);
		if (!f[0] || !f[5])
			continue;
		char *tok, *super = NULL;
		while ((tok = strtok_r(NULL, " ", &save)) && strcmp(tok, "-") != 0)
			;
		if (tok && strtok_r(NULL, " ", &save) && strtok_r(NULL, " ", &save))
			super = strtok_r(NULL, " ", &save);
		bool ro = strncmp(f[5], "ro", 2) == 0 && (f[5][2] == ',' || !f[5][2]);
		ro |= super && strncmp(super, "ro", 2) == 0 && (super[2] == ',' || !super[2]);
		unescape(f[4]);
		table_set(t, strtoull(f[0], NULL, 10), f[4], ro)->gen = p->gen;
	}
	struct sweep s = {.gen = p->gen};
	twalk_r(t->ids, collect_unmarked, &s);
	for (size_t i = 0; i < s.n; i++)
		table_del(t, s.gone[i]->id);
	free(s.gone);
	return 0;
}

/* ---- main ---- */

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct tracker {
	mr_router *r;
	mr_sub *sub;
	struct table by_events, by_reread;
	struct poller poll;
	bool compare;
	uint64_t events, rereads, router_cpu, reread_cpu;
};

/* The router's turn: its work, then every event it routed. */
static int router_turn(struct tracker *tk)
{
	const struct mr_event *ev;
	uint64_t t0 = cpu_ns();
	int err = mr_router_dispatch(tk->r);

	while (err >= 0 && (err = mr_sub_next(tk->sub, &ev)) == 0) {
		apply_event(&tk->by_events, ev);
		mr_event_unref(ev);
		tk->events++;
	}
	tk->router_cpu += cpu_ns() - t0;
	return err == -EAGAIN ? 0 : err;
}

static int reread_turn(struct tracker *tk)
{
	uint64_t t0 = cpu_ns();
	int err = poller_reread(&tk->poll, &tk->by_reread);

	tk->reread_cpu += cpu_ns() - t0;
	tk->rereads++;
	return err;
}

/*
 * One round of the loop: waits up to @timeout_ms, then gives each way
 * whose fd fired its turn.  Returns 1 if something fired, 0 on a timeout,
 * 2 on SIGINT/SIGTERM, or -errno.
 */
static int round_once(struct tracker *tk, struct pollfd *fds, int nfds, int timeout_ms)
{
	int n = poll(fds, (nfds_t)nfds, timeout_ms), err;

	if (n < 0)
		return errno == EINTR ? 1 : -errno;
	if (n == 0)
		return 0;
	if (fds[0].revents && (err = router_turn(tk)) < 0)
		return err;
	if (nfds > 2 && fds[2].revents & (POLLPRI | POLLERR) && (err = reread_turn(tk)) < 0)
		return err;
	return fds[1].revents ? 2 : 1;
}

static void print_units(const char *name, const struct flat *f)
{
	printf("unit-tracker: %s: %zu units: %zu mounted, %zu read-only, %zu gone\n", name,
	       f->live + f->gone, f->live - f->ro, f->ro, f->gone);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"compare", no_argument, NULL, 'c'},
		{"source", required_argument, NULL, 's'},
		{"units", no_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct mr_opts ro = {.size = sizeof(ro)};
	struct tracker tk = {.poll.fd = -1};
	bool dump = false, equal = true;
	int opt, err, sfd = -1;
	sigset_t sigs;

	while ((opt = getopt_long(argc, argv, "cs:uh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': tk.compare = true; break;
		case 's': ro.source = optarg; break;
		case 'u': dump = true; break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [--compare] [--source NAME] [--units]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}

	/* Signals as fd events, blocked before any thread exists: the loop sees them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		perror("unit-tracker: signalfd");
		return 1;
	}

	uint64_t t0 = cpu_ns();
	if ((err = mr_router_new(&ro, &tk.r)) < 0) {
		fprintf(stderr, "unit-tracker: mr_router_new: %s\n", strerror(-err));
		goto out;
	}
	struct mr_sub_opts so = {.size = sizeof(so), .flags = MR_SUB_SNAPSHOT, .capacity = 16384};
	if ((err = mr_subscribe(tk.r, &so, &tk.sub)) < 0) {
		fprintf(stderr, "unit-tracker: mr_subscribe: %s\n", strerror(-err));
		goto out;
	}
	if ((err = router_turn(&tk)) < 0) /* applies the subscription: the SNAPSHOT */
		goto out;
	uint64_t router_start = cpu_ns() - t0, reread_start = 0;
	struct mr_stats st0;
	mr_router_stats(tk.r, &st0);
	tk.router_cpu = tk.events = 0;

	struct pollfd fds[3] = {
		{.fd = mr_router_fd(tk.r), .events = POLLIN},
		{.fd = sfd, .events = POLLIN},
		{.fd = -1, .events = POLLPRI},
	};
	if (tk.compare) {
		tk.poll.fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (tk.poll.fd < 0) {
			err = -errno;
			perror("unit-tracker: /proc/self/mountinfo");
			goto out;
		}
		fds[2].fd = tk.poll.fd;
		/* Opened before the first read: any change after it fires POLLPRI. */
		if ((err = reread_turn(&tk)) < 0)
			goto out;
		reread_start = tk.reread_cpu;
		tk.reread_cpu = tk.rereads = 0;
	}
	struct flat f = flatten(&tk.by_events);
	print_units("ready: events", &f);
	free(f.u);
	printf("unit-tracker: source %s (%s); start-up cpu: router %.1f ms%s", mr_router_source(tk.r),
	       mr_router_source_reason(tk.r), router_start / 1e6, tk.compare ? "," : "\n");
	if (tk.compare)
		printf(" mountinfo re-read %.1f ms\n", reread_start / 1e6);
	fflush(stdout);

	while ((err = round_once(&tk, fds, tk.compare ? 3 : 2, -1)) == 1)
		;
	if (err < 0)
		goto out;
	/*
	 * Stopping: whatever the kernel has queued is still to be read.  Let
	 * both ways catch up until neither fd has fired for 300 ms (at most 10 s).
	 */
	fds[1].fd = -1;
	for (uint64_t until = mono_ms() + 10000;
	     mono_ms() < until && (err = round_once(&tk, fds, tk.compare ? 3 : 2, 300)) > 0;)
		;
	if (err < 0)
		goto out;
	err = 0;

	struct flat fe = flatten(&tk.by_events), fr = {0}, fk;
	struct table kernel = {0};
	struct kt_table kt;
	print_units("events", &fe);
	if (tk.compare) {
		fr = flatten(&tk.by_reread);
		print_units("re-read", &fr);
		equal &= same_units("events", &fe, "re-read", &fr);
	}
	if ((err = kt_read(0, &kt)) == 0) {
		for (size_t i = 0; i < kt.n; i++)
			table_set(&kernel, kt.m[i].id, kt.m[i].path, kt.m[i].readonly);
		kt_free(&kt);
		fk = flatten(&kernel);
		print_units("listmount", &fk);
		equal &= same_units("events", &fe, "listmount", &fk);
		if (tk.compare)
			equal &= same_units("re-read", &fr, "listmount", &fk);
		free(fk.u);
		table_free(&kernel);
	} else {
		fprintf(stderr, "unit-tracker: listmount: %s: not compared\n", strerror(-err));
		err = err == -ENOSYS ? 0 : err;
	}
	if (dump)
		for (size_t i = 0; i < fe.n; i++)
			printf("%s %s\n", state_name[state_of(fe.u[i])], fe.u[i]->path);
	printf("unit-tracker: cpu after start-up: events %.1f ms (%llu events, %.1f us each)",
	       tk.router_cpu / 1e6, (unsigned long long)tk.events,
	       tk.events ? tk.router_cpu / 1e3 / tk.events : 0.0);
	if (tk.compare)
		printf(", mountinfo re-read %.1f ms (%llu re-reads, %.1f us each)",
		       tk.reread_cpu / 1e6, (unsigned long long)tk.rereads,
		       tk.rereads ? tk.reread_cpu / 1e3 / tk.rereads : 0.0);
	/* Where the router's time went (its counters, any thread may read them). */
	struct mr_stats st;
	mr_router_stats(tk.r, &st);
	printf("\nunit-tracker: router after start-up: %llu records, %llu syscalls, %llu table sweeps "
	       "(%.1f ms), %llu resyncs\n",
	       (unsigned long long)(st.records_read - st0.records_read),
	       (unsigned long long)(st.syscalls - st0.syscalls),
	       (unsigned long long)(st.sweeps - st0.sweeps), (st.sweep_ns_total - st0.sweep_ns_total) / 1e6,
	       (unsigned long long)(st.resyncs - st0.resyncs));
	printf("unit-tracker: tables %s\n", equal ? "equal" : "DIFFER");
	free(fe.u);
	free(fr.u);
out:
	/* Shutdown order: the subscription, then the router; our own state last. */
	mr_unsubscribe(tk.sub);
	mr_router_free(tk.r);
	table_free(&tk.by_events);
	table_free(&tk.by_reread);
	free(tk.poll.buf);
	if (tk.poll.fd >= 0)
		close(tk.poll.fd);
	if (sfd >= 0)
		close(sfd);
	return err < 0 || !equal;
}
