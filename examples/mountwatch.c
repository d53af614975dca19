/* SPDX-License-Identifier: MIT */
/*
 * mountwatch: prints every change to the mount table as it happens.
 *
 * findmnt --poll re-reads and diffs all of /proc/self/mountinfo on every
 * change, in the caller's namespace only.  mountwatch asks the router,
 * which reads typed changes from the kernel, for the subtrees and
 * namespaces named on the command line.
 *
 * One thread, one poll() loop: the router's fd, a signalfd (SIGINT,
 * SIGTERM, SIGWINCH) and, with --all-namespaces, a timerfd for rescans of
 * /proc.  The subscriptions' fds are not polled: in this mode every event
 * reaches a ring inside our own mr_router_dispatch() call, and the rings
 * are drained right after it, so a ring's fd could only say what we know.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "mountwatch/mountwatch.h"

/* Mount IDs already printed from the snapshots of one drain (nested subtrees). */
struct idset {
	uint64_t *v; /* open addressing, 0 = empty (mount IDs are never 0) */
	size_t cap, n;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Returns 1 if @key was added, 0 if it was there, -ENOMEM. */
static int idset_add(struct idset *s, uint64_t key)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		uint64_t *v = calloc(cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i])
				for (size_t h = mix(s->v[i]) & (cap - 1);; h = (h + 1) & (cap - 1))
					if (!v[h]) {
						v[h] = s->v[i];
						break;
					}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	for (size_t h = mix(key) & (s->cap - 1);; h = (h + 1) & (s->cap - 1)) {
		if (s->v[h] == key)
			return 0;
		if (!s->v[h]) {
			s->v[h] = key;
			s->n++;
			return 1;
		}
	}
}

static void idset_clear(struct idset *s)
{
	if (s->n)
		memset(s->v, 0, s->cap * sizeof(*s->v));
	s->n = 0;
}

struct mw {
	struct mw_opts o;
	mr_router *r;
	struct mw_out *out;
	struct mw_stats *stats;
	struct mw_watch *watch;
	struct idset snap_ids;
	uint64_t changes;      /* change events printed */
	uint64_t last_change_ns;
	bool done;             /* --first-only or --count reached */
	int out_err;           /* a write failed: -errno */
};

static bool is_change(uint32_t kind)
{
	return kind < MR_KIND_LIMIT && (MR_KIND(kind) & MR_KINDS_ALL);
}

static int print_snapshot(struct mw *m, const struct mr_event *ev)
{
	for (size_t i = 0; i < ev->n_mounts; i++) {
		const struct mr_mount *mnt = &ev->mounts[i];
		if (m->o.mountpoint && strcmp(mnt->path, m->o.mountpoint))
			continue;
		/* ns IDs and mount IDs are both small: fold them into one key. */
		int fresh = idset_add(&m->snap_ids, mix(ev->ns_id) ^ mnt->id);
		if (fresh < 0)
			return fresh;
		if (!fresh)
			continue;
		int err = mw_out_snapshot_mount(m->out, ev, mnt);
		if (err < 0)
			return err;
	}
	return 0;
}

static int on_event(const struct mr_event *ev, void *arg)
{
	struct mw *m = arg;
	int err;

	if (m->done)
		return 0; /* --first-only means one line, even from a batch */
	if (ev->kind == MR_EVENT_SNAPSHOT) {
		err = print_snapshot(m, ev);
	} else {
		if (m->o.mountpoint && is_change(ev->kind) && strcmp(ev->path, m->o.mountpoint) &&
		    !(ev->kind == MR_EVENT_MOVE && !strcmp(ev->old_path, m->o.mountpoint)))
			return 0;
		err = mw_out_event(m->out, ev);
	}
	if (err < 0)
		return err;
	mw_stats_event(m->stats, ev, mw_now_ns());
	if (is_change(ev->kind)) {
		m->changes++;
		m->last_change_ns = mw_now_ns();
		if (m->o.first_only || (m->o.count && m->changes >= m->o.count))
			m->done = true;
	}
	return 0;
}

/*
 * Runs the router and prints what it delivered.  A subscriber that
 * overran is caught up (OVERRUN, then SNAPSHOT) by a later step once its
 * ring has room, so step again while steps keep producing.
 */
static int pump(struct mw *m)
{
	for (int round = 0; round < 8; round++) {
		int n = mr_router_dispatch(m->r);
		if (n < 0 && n != -EINTR && n != -EAGAIN && n != -EBUSY)
			return n;
		idset_clear(&m->snap_ids);
		int err = mw_watch_drain(m->watch, on_event, m);
		if (err < 0)
			return err;
		if (n <= 0)
			break;
	}
	return mw_out_flush(m->out);
}

static int open_signalfd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static int open_timerfd(unsigned ms)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = {
		.it_interval = {ms / 1000, (long)(ms % 1000) * 1000000},
		.it_value = {ms / 1000, (long)(ms % 1000) * 1000000},
	};

	if (fd < 0)
		return -errno;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* The documented exit code for a failure (mountwatch.h, mountwatch(1)). */
static int exit_code(int err)
{
	switch (err) {
	case 0:
		return MW_EXIT_EVENT;
	case -MW_ENSGONE:
		return MW_EXIT_NSGONE;
	case -EINVAL:
		return MW_EXIT_USAGE; /* a value only checked once the router runs */
	case -ENOENT:
	case -ESRCH:
	case -ENOTDIR:
		return MW_EXIT_NOTFOUND;
	case -EPERM:
	case -EACCES:
		return MW_EXIT_PERM;
	case -ENOSYS:
	case -EOPNOTSUPP:
		return MW_EXIT_NOTSUP;
	case -EBADF:
	case -EIO:
	case -ENOSPC:
	case -EFBIG:
		return MW_EXIT_OUTPUT;
	default:
		return MW_EXIT_FAILURE;
	}
}

/*
 * fds 0-2 closed by the caller would be handed to the router's first
 * fds, and stdout would then write into an io_uring.  Hold them with
 * /dev/null; returns false if stdout itself was closed.
 */
static bool hold_std_fds(void)
{
	bool out_open = fcntl(STDOUT_FILENO, F_GETFD) >= 0;

	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int nfd = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (nfd >= 0 && nfd != fd) {
			dup2(nfd, fd);
			close(nfd);
		}
	}
	return out_open;
}

/* The poll loop.  Returns 0 (stop), 1 (timeout) or -errno. */
static int run(struct mw *m, int sfd, int tfd)
{
	enum { FD_ROUTER, FD_SIGNAL, FD_STDOUT, FD_PIDS, FD_TIMER, FD_N };
	struct pollfd fds[FD_N] = {
		[FD_ROUTER] = {.fd = mr_router_fd(m->r), .events = POLLIN},
		[FD_SIGNAL] = {.fd = sfd, .events = POLLIN},
		/*
		 * No events asked: a pipe whose reader went away (| head)
		 * reports POLLERR by itself, so we leave then and not at the
		 * next change, which may be hours away.
		 */
		[FD_STDOUT] = {.fd = fileno(stdout), .events = 0},
		/* Negative fds are ignored by poll(). */
		[FD_PIDS] = {.fd = mw_watch_pid_fd(m->watch), .events = POLLIN},
		[FD_TIMER] = {.fd = tfd, .events = POLLIN},
	};
	int err;

	m->last_change_ns = mw_now_ns();
	while (!m->done) {
		int timeout = -1;
		if (m->o.timeout_ms >= 0) {
			uint64_t idle_ms = (mw_now_ns() - m->last_change_ns) / 1000000u;
			if (idle_ms >= (uint64_t)m->o.timeout_ms)
				return 1;
			/* Up to a year in 64 bits; poll() takes an int: wait in slices. */
			uint64_t left = (uint64_t)m->o.timeout_ms - idle_ms;
			timeout = left > INT_MAX ? INT_MAX : (int)left;
		}
		if (poll(fds, FD_N, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fds[FD_STDOUT].revents & (POLLERR | POLLHUP | POLLNVAL))
			return -EPIPE;
		if (fds[FD_SIGNAL].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGWINCH)
					mw_out_resize(m->out);
				else
					return 0;
			}
		}
		if (tfd >= 0 && (fds[FD_TIMER].revents & POLLIN)) {
			uint64_t ticks;
			(void)!read(tfd, &ticks, sizeof(ticks));
			/*
			 * Print what a dying namespace still had queued before
			 * its subscriptions go, then look for new namespaces.
			 */
			if ((err = pump(m)) < 0)
				return err;
			if ((err = mw_watch_rescan(m->watch)) < 0)
				return err;
		}
		if ((err = pump(m)) < 0)
			return err;
		if (fds[FD_PIDS].revents & POLLIN) {
			/* What the namespace said before its end is printed first. */
			if ((err = mw_watch_pid_exited(m->watch)) < 0)
				return err;
			fds[FD_PIDS].fd = mw_watch_pid_fd(m->watch);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mw m = {0};
	int code, err, sfd = -1, tfd = -1;

	setlocale(LC_CTYPE, "");
	if (mw_parse_options(argc, argv, &m.o, &code) < 0) {
		mw_opts_free(&m.o);
		return code;
	}
	if (!hold_std_fds()) {
		fprintf(stderr, "mountwatch: standard output is closed; redirect it to a file or "
				"/dev/null\n");
		mw_opts_free(&m.o);
		return MW_EXIT_OUTPUT;
	}
	/* A closed stdout (| head) shows up as EPIPE from the write: leave quietly. */
	signal(SIGPIPE, SIG_IGN);

	if ((sfd = open_signalfd()) < 0) {
		err = sfd;
		fprintf(stderr, "mountwatch: signalfd: %s\n", strerror(-err));
		goto out;
	}

	struct mr_opts ro = {
		.size = sizeof(ro),
		.flags = m.o.n_ns_args || m.o.all_namespaces ? MR_OPT_NO_SELF_NS : 0,
		.source = m.o.source,
	};
	err = mr_router_new(&ro, &m.r);
	if (err < 0) {
		/* One line: what failed, and what to do about it. */
		if (err == -ENOSYS || err == -EOPNOTSUPP)
			fprintf(stderr, "mountwatch: source %s is not supported by this kernel (%s); "
					"try --source auto\n", m.o.source ? m.o.source : "auto",
				strerror(-err));
		else if (err == -EPERM || err == -EACCES)
			fprintf(stderr, "mountwatch: source %s: %s: it needs CAP_SYS_ADMIN; run as "
					"root or try --source mountinfo\n",
				m.o.source ? m.o.source : "auto", strerror(-err));
		else if (err == -EMFILE)
			/* fanotify_init(): fs.fanotify.max_user_groups (128) reached. */
			fprintf(stderr, "mountwatch: cannot start the router: %s (this user's fanotify "
					"groups may be used up, see fs.fanotify.max_user_groups; try "
					"--source mountinfo)\n", strerror(-err));
		else
			fprintf(stderr, "mountwatch: cannot start the router: %s\n", strerror(-err));
		goto out;
	}
	fprintf(stderr, "mountwatch: source %s: %s\n", mr_router_source(m.r),
		mr_router_source_reason(m.r));

	if ((err = mw_out_new(&m.o, stdout, &m.out)) < 0 || (err = mw_stats_new(&m.stats)) < 0) {
		fprintf(stderr, "mountwatch: %s\n", strerror(-err));
		goto out;
	}
	/* Each failure here has been reported, once, by namespaces.c. */
	if ((err = mw_watch_new(m.r, &m.o, &m.watch)) < 0)
		goto out;
	mw_out_set_watch(m.out, m.watch);
	if (m.o.all_namespaces && (tfd = err = open_timerfd(m.o.rescan_ms)) < 0) {
		fprintf(stderr, "mountwatch: timerfd: %s\n", strerror(-err));
		goto out;
	}

	/* Applies the subscriptions (and sends their snapshots) before "ready". */
	if ((err = pump(&m)) < 0)
		goto failed;
	fprintf(stderr, "mountwatch: ready, %zu namespace%s\n", mw_watch_namespaces(m.watch),
		mw_watch_namespaces(m.watch) == 1 ? "" : "s");
	err = m.done ? 0 : run(&m, sfd, tfd);
	if (err == 0 || err == 1)
		(void)mw_out_flush(m.out);
failed:
	if (err == -EPIPE)
		err = 0; /* the reader has all it wanted */
	else if (err < 0 && err != -MW_ENSGONE)
		fprintf(stderr, "mountwatch: %s%s\n", strerror(-err),
			err == -EBADF || err == -EIO || err == -ENOSPC ? " (writing the output)" : "");
out:
	if (m.o.stats && m.stats && m.r)
		mw_stats_print(m.stats, m.r, stderr);
	if (err == 1)
		code = m.changes ? MW_EXIT_EVENT : MW_EXIT_TIMEOUT;
	else
		code = exit_code(err);
	mw_watch_free(m.watch);
	mr_router_free(m.r);
	mw_stats_free(m.stats);
	mw_out_free(m.out);
	free(m.snap_ids.v);
	mw_opts_free(&m.o);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	/* stdout may be a closed pipe: its error was seen and is not news. */
	fclose(stdout);
	return code;
}
