/* SPDX-License-Identifier: MIT */
/*
 * container-manager: how a container manager embeds mountrouter.
 *
 *   container-manager [--containers N] [--seconds S] [--lifetime-ms MS]
 *                     [--source NAME] [--seed SEED]
 *
 * It runs N containers: child processes, each in a mount namespace of its
 * own with a private tmpfs as its root (pivot_root), mounting, moving and
 * unmounting at random, exiting after a random lifetime and then replaced
 * by a new one.  All of them are watched through one router, driven from
 * this one thread's poll() loop, with one subscription per container to
 * its root file system's subtree; from the events it keeps each
 * container's mount list.  SIGUSR1 prints the lists.
 *
 *   - a container is picked up when it says it is set up, with the mounts
 *     it already has (the subscription's SNAPSHOT);
 *   - its pidfd says when it exits: what the router still holds for it is
 *     read, then its namespace is removed; the subscription hears of it as
 *     its last event, NS_GONE, and is ended there;
 *   - after S seconds (or SIGINT/SIGTERM) every container is frozen
 *     (SIGSTOP), the router is let catch up, and each list is compared with
 *     listmount(2)/statmount(2) of that namespace.  It prints "M/N matched",
 *     its CPU time and peak RSS, and exits 1 if any list did not match.
 *
 * Needs CAP_SYS_ADMIN.  With the fanotify source each namespace takes a
 * fanotify group, and a user may have 128 (fs.fanotify.max_user_groups).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, unshare, signalfd, twalk_r: glibc */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mountrouter.h>

#include "kernel-table.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define SLOTS 8

/* ---- a container: what runs in the child ---- */

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void die(const char *what)
{
	fprintf(stderr, "container %d: %s: %s\n", (int)getpid(), what, strerror(errno));
	_exit(126);
}

/* A runtime's setup: a new namespace, nothing shared with the host, a tmpfs root. */
static void enter_rootfs(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		die("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("make / private");
	/* Over /tmp of this namespace's own copy: the host's /tmp is untouched. */
	if (mount("rootfs", "/tmp", "tmpfs", 0, "size=1m,mode=0755") < 0)
		die("mount the rootfs");
	if (mkdir("/tmp/oldroot", 0700) < 0)
		die("mkdir oldroot");
	if (syscall(SYS_pivot_root, "/tmp", "/tmp/oldroot") < 0)
		die("pivot_root");
	if (chdir("/") < 0 || umount2("/oldroot", MNT_DETACH) < 0 || rmdir("/oldroot") < 0)
		die("drop the old root");
	for (int i = 0; i < SLOTS; i++) {
		char p[16];
		snprintf(p, sizeof(p), "/s%d", i);
		if (mkdir(p, 0755) < 0)
			die("mkdir slot");
	}
}

/*
 * One random step on the slots /s0../s7: mount a tmpfs on an empty one;
 * on a mounted one unmount it, mount a second tmpfs inside it (/sN/n), or
 * move it to an empty slot; a slot with a mount inside is unmounted whole.
 */
static void step(unsigned *seed, int state[SLOTS])
{
	int s = rand_r(seed) % SLOTS, to = rand_r(seed) % SLOTS;
	char p[16], q[16];

	snprintf(p, sizeof(p), "/s%d", s);
	snprintf(q, sizeof(q), "/s%d/n", s);
	switch (state[s]) {
	case 0:
		if (mount("ctr", p, "tmpfs", 0, "size=64k") < 0)
			die("mount");
		state[s] = 1;
		return;
	case 1:
		switch (rand_r(seed) % 3) {
		case 0:
			if (umount(p) < 0)
				die("umount");
			state[s] = 0;
			return;
		case 1:
			if ((mkdir(q, 0755) < 0 && errno != EEXIST) ||
			    mount("ctr-inner", q, "tmpfs", 0, "size=64k") < 0)
				die("mount inside");
			state[s] = 2;
			return;
		default:
			if (state[to] != 0)
				return;
			snprintf(q, sizeof(q), "/s%d", to);
			if (mount(p, q, NULL, MS_MOVE, NULL) < 0)
				die("move");
			state[to] = 1;
			state[s] = 0;
			return;
		}
	default:
		if (umount2(p, MNT_DETACH) < 0)
			die("umount -l");
		state[s] = 0;
	}
}

/*
 * The child: set up, make a few mounts, say "ready" on @ready_fd, then
 * change its mounts at random for @lifetime_ms (0: until killed) and exit.
 */
static void container(int ready_fd, unsigned seed, unsigned lifetime_ms)
{
	int state[SLOTS] = {0};
	struct timespec start, now;

	/* Nothing of the manager's (router fds, pidfds) stays open in here. */
	if (dup2(ready_fd, 3) < 0 || syscall(SYS_close_range, 4, ~0u, 0) < 0)
		die("close fds");
	enter_rootfs();
	for (int i = rand_r(&seed) % 4; i > 0; i--)
		step(&seed, state);
	if (write(3, "r", 1) != 1)
		_exit(126);
	close(3);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		sleep_ms(10 + rand_r(&seed) % 90);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (lifetime_ms &&
		    (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >=
			    (long)lifetime_ms)
			_exit(0);
		step(&seed, state);
	}
}

/* ---- the manager's record of a container ---- */

struct mnt {
	uint64_t id;
	char *path, *fstype;
};

enum ctr_state { EMPTY, STARTING, RUNNING, FROZEN };

struct ctr {
	enum ctr_state state;
	unsigned serial; /* the how-many-th container started */
	pid_t pid;
	int pidfd, ready_fd;
	uint64_t ns_id;
	mr_sub *sub;
	bool gone; /* NS_GONE came: nothing follows, unsubscribe */
	uint64_t events;
	struct mnt *m; /* the live list, from events */
	size_t n, cap;
};

struct manager {
	mr_router *r;
	struct ctr *c;
	unsigned n_ctr, started, ended, told_gone, untold;
	unsigned seed, lifetime_ms;
	uint64_t events, deadline_ms;
};

static void oom(void)
{
	fputs("container-manager: out of memory\n", stderr);
	exit(1);
}

static void list_clear(struct ctr *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->m[i].path);
		free(c->m[i].fstype);
	}
	c->n = 0;
}

static struct mnt *list_find(struct ctr *c, uint64_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->m[i].id == id)
			return &c->m[i];
	return NULL;
}

static void list_add(struct ctr *c, uint64_t id, const char *path, const char *fstype)
{
	struct mnt *m = list_find(c, id);

	if (!m) {
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 16;
			if (!(c->m = realloc(c->m, c->cap * sizeof(*c->m))))
				oom();
		}
		m = &c->m[c->n++];
		m->id = id;
	} else {
		free(m->path);
		free(m->fstype);
	}
	if (!(m->path = strdup(path)) || !(m->fstype = strdup(fstype)))
		oom();
}

static void list_del(struct ctr *c, uint64_t id)
{
	struct mnt *m = list_find(c, id);

	if (!m)
		return; /* unmounted before the router could look it up: never listed */
	free(m->path);
	free(m->fstype);
	*m = c->m[--c->n];
}

static void apply(struct ctr *c, const struct mr_event *ev)
{
	switch (ev->kind) {
	case MR_EVENT_SNAPSHOT:
		/* On pick-up (its mounts so far), and after an OVERRUN: start over. */
		list_clear(c);
		for (size_t i = 0; i < ev->n_mounts; i++)
			list_add(c, ev->mounts[i].id, ev->mounts[i].path, ev->mounts[i].fstype);
		break;
	case MR_EVENT_MOUNT:
	case MR_EVENT_MOVE:
		list_add(c, ev->mnt_id, ev->path, ev->fstype);
		break;
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		list_del(c, ev->mnt_id);
		break;
	case MR_EVENT_NS_GONE:
		c->gone = true;
		break;
	default:
		break; /* OVERRUN and RESYNC markers: what follows them says it all */
	}
}

/* Takes every event the router has routed to each container. */
static void drain(struct manager *mg)
{
	const struct mr_event *ev;

	for (unsigned i = 0; i < mg->n_ctr; i++) {
		struct ctr *c = &mg->c[i];
		if (!c->sub)
			continue;
		while (mr_sub_next(c->sub, &ev) == 0) {
			apply(c, ev);
			mr_event_unref(ev);
			c->events++;
			mg->events++;
		}
	}
}

/* The router's turn: its work, then the subscribers' reads, on this thread. */
static int turn(struct manager *mg)
{
	int err = mr_router_dispatch(mg->r);

	if (err < 0) {
		fprintf(stderr, "container-manager: mr_router_dispatch: %s\n", strerror(-err));
		return err;
	}
	drain(mg);
	return 0;
}

static int by_path(const void *a, const void *b)
{
	const struct mnt *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : strcmp(x->fstype, y->fstype);
}

static void print_list(const char *why, struct ctr *c)
{
	qsort(c->m, c->n, sizeof(*c->m), by_path);
	printf("  #%u pid %d ns %llu %s: %zu mounts:", c->serial, (int)c->pid,
	       (unsigned long long)c->ns_id, why, c->n);
	for (size_t i = 0; i < c->n; i++)
		printf(" %s(%s)", c->m[i].path, c->m[i].fstype);
	putchar('\n');
}

/* ---- starting and ending containers ---- */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int start_container(struct manager *mg, struct ctr *c)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	unsigned serial = ++mg->started;
	unsigned seed = mg->seed * 2654435761u + serial;
	unsigned lifetime = mg->lifetime_ms / 2 + (unsigned)rand_r(&seed) % (mg->lifetime_ms + 1);
	/*
	 * One that would end in the last two seconds lives on instead: at the
	 * end each of the N is being compared, not replaced (and its set-up,
	 * before its lifetime starts, may take a while on a busy machine).
	 */
	if (now_ms() + lifetime + 2000 > mg->deadline_ms)
		lifetime = 0;
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		container(p[1], seed, lifetime);
	}
	close(p[1]);
	*c = (struct ctr){.state = STARTING, .serial = serial, .pid = pid, .ready_fd = p[0],
			  .pidfd = (int)syscall(SYS_pidfd_open, pid, 0)};
	if (c->pidfd < 0)
		return -errno;
	return 0;
}

/* The container said it is set up: watch its namespace, subscribe to its root. */
static int pick_up(struct manager *mg, struct ctr *c)
{
	char b;
	int err;

	if (read(c->ready_fd, &b, 1) != 1)
		return 0; /* it died during set-up: its pidfd tells */
	close(c->ready_fd);
	c->ready_fd = -1;
	err = mr_router_add_ns_pid(mg->r, c->pid, &c->ns_id);
	if (err == -ESRCH)
		return 0; /* already gone: its pidfd tells */
	if (err < 0) {
		fprintf(stderr, "container-manager: mr_router_add_ns_pid(%d): %s%s\n", (int)c->pid,
			strerror(-err),
			err == -EMFILE ? " (fanotify: 128 groups per user; try --source mountinfo)"
				       : "");
		return err;
	}
	/* Its root file system is the namespace's root: pivot_root put it there. */
	struct mr_sub_opts so = {.size = sizeof(so), .flags = MR_SUB_SNAPSHOT, .ns_id = c->ns_id,
				 .subtree = "/",
				 .kinds = MR_KIND(MR_EVENT_MOUNT) | MR_KIND(MR_EVENT_UNMOUNT) |
					  MR_KIND(MR_EVENT_MOVE) | MR_KIND(MR_EVENT_EXPIRY)};
	err = mr_subscribe(mg->r, &so, &c->sub);
	if (err < 0) {
		fprintf(stderr, "container-manager: mr_subscribe(ns %llu): %s\n",
			(unsigned long long)c->ns_id, strerror(-err));
		mr_router_remove_ns(mg->r, c->ns_id);
		return err;
	}
	c->state = RUNNING;
	return 0;
}

/*
 * The container exited.  Order matters: first read what the router still
 * has for it, then remove the namespace; the router's next turn tells the
 * subscription with NS_GONE, after which it is freed.
 */
static int end_container(struct manager *mg, struct ctr *c, bool quiet)
{
	int status = 0, err = 0;

	if (c->sub && (err = turn(mg)) < 0)
		return err;
	if (c->ns_id)
		mr_router_remove_ns(mg->r, c->ns_id);
	if (c->sub) {
		if ((err = turn(mg)) < 0)
			return err;
		if (c->gone)
			mg->told_gone++;
		else {
			mg->untold++;
			fprintf(stderr, "container-manager: #%u: namespace %llu removed, no NS_GONE\n",
				c->serial, (unsigned long long)c->ns_id);
		}
	}
	mr_unsubscribe(c->sub);
	c->sub = NULL;
	waitpid(c->pid, &status, 0);
	if (!quiet)
		printf("container-manager: #%u pid %d exited (%d): namespace %llu removed, "
		       "subscription ended on %s after %llu events with %zu mounts listed\n",
		       c->serial, (int)c->pid,
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
		       (unsigned long long)c->ns_id, c->gone ? "ns-gone" : "removal",
		       (unsigned long long)c->events, c->n);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->ready_fd >= 0)
		close(c->ready_fd);
	list_clear(c);
	free(c->m);
	*c = (struct ctr){.state = EMPTY, .pidfd = -1, .ready_fd = -1};
	mg->ended++;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 126) {
		fprintf(stderr, "container-manager: a container could not set itself up\n");
		return -EIO;
	}
	return 0;
}

/* ---- the end: freeze, catch up, compare ---- */

/* Stops every running container where it is; those that exited meanwhile end. */
static int freeze(struct manager *mg)
{
	int err;

	for (unsigned i = 0; i < mg->n_ctr; i++) {
		struct ctr *c = &mg->c[i];
		siginfo_t si = {0};

		if (c->state == EMPTY)
			continue;
		if (c->state == STARTING) {
			/* Started just before the end: let it finish setting up (at most 10 s). */
			struct pollfd pfd = {.fd = c->ready_fd, .events = POLLIN};
			if (poll(&pfd, 1, 10000) > 0 && (err = pick_up(mg, c)) < 0)
				return err;
		}
		if (c->state == RUNNING && kill(c->pid, SIGSTOP) == 0 &&
		    waitid(P_PID, (id_t)c->pid, &si, WSTOPPED | WEXITED | WNOWAIT) == 0 &&
		    si.si_code == CLD_STOPPED) {
			c->state = FROZEN;
			continue;
		}
		if ((err = end_container(mg, c, false)) < 0)
			return err;
	}
	return 0;
}

/* Lets the router read what the kernel still holds: until quiet for 300 ms, at most 10 s. */
static int catch_up(struct manager *mg)
{
	struct pollfd pfd = {.fd = mr_router_fd(mg->r), .events = POLLIN};
	int err;

	if ((err = turn(mg)) < 0)
		return err;
	for (uint64_t until = now_ms() + 10000; now_ms() < until && poll(&pfd, 1, 300) > 0;)
		if ((err = turn(mg)) < 0)
			return err;
	return 0;
}

static bool matches(struct ctr *c)
{
	struct kt_table kt;
	int err = kt_read(c->ns_id, &kt);

	if (err < 0) {
		printf("  #%u: listmount of ns %llu: %s\n", c->serial,
		       (unsigned long long)c->ns_id, strerror(-err));
		return false;
	}
	struct mnt *want = calloc(kt.n + 1, sizeof(*want));
	if (!want)
		oom();
	for (size_t i = 0; i < kt.n; i++)
		want[i] = (struct mnt){.id = kt.m[i].id, .path = kt.m[i].path, .fstype = kt.m[i].fstype};
	qsort(want, kt.n, sizeof(*want), by_path);
	qsort(c->m, c->n, sizeof(*c->m), by_path);
	bool same = kt.n == c->n;
	for (size_t i = 0; same && i < c->n; i++)
		same = by_path(&want[i], &c->m[i]) == 0;
	if (!same) {
		print_list("kept", c);
		printf("  #%u pid %d ns %llu listmount: %zu mounts:", c->serial, (int)c->pid,
		       (unsigned long long)c->ns_id, kt.n);
		for (size_t i = 0; i < kt.n; i++)
			printf(" %s(%s)", want[i].path, want[i].fstype);
		putchar('\n');
	}
	free(want);
	kt_free(&kt);
	return same;
}

static double tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

/* ---- main ---- */

static int usage(const char *argv0, int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: %s [--containers N] [--seconds S] [--lifetime-ms MS] [--source NAME] "
		"[--seed SEED]\n", argv0);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"containers", required_argument, NULL, 'n'},
		{"seconds", required_argument, NULL, 't'},
		{"lifetime-ms", required_argument, NULL, 'l'},
		{"source", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct manager mg = {.n_ctr = 4, .seed = 1, .lifetime_ms = 3000};
	struct mr_opts ro = {.size = sizeof(ro), .flags = MR_OPT_NO_SELF_NS};
	unsigned seconds = 10;
	struct pollfd *fds = NULL;
	int opt, err = 0, sfd = -1;
	bool stopping = false;

	while ((opt = getopt_long(argc, argv, "n:t:l:s:S:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n': mg.n_ctr = (unsigned)atoi(optarg); break;
		case 't': seconds = (unsigned)atoi(optarg); break;
		case 'l': mg.lifetime_ms = (unsigned)atoi(optarg); break;
		case 's': ro.source = optarg; break;
		case 'S': mg.seed = (unsigned)atoi(optarg); break;
		case 'h': return usage(argv[0], 0);
		default: return usage(argv[0], 2);
		}
	}
	if (mg.n_ctr == 0 || mg.n_ctr > 10000 || optind != argc)
		return usage(argv[0], 2);

	/* Several fds a container (pidfd, pipe, the router's own per namespace). */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	/* Signals as an fd in the loop; blocked before the first fork, unblocked in children. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		perror("container-manager: signalfd");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Only the containers' namespaces: not our own. */
	if ((err = mr_router_new(&ro, &mg.r)) < 0) {
		fprintf(stderr, "container-manager: mr_router_new: %s\n", strerror(-err));
		goto out;
	}
	if (!(mg.c = calloc(mg.n_ctr, sizeof(*mg.c))) || !(fds = calloc(2 + 2 * mg.n_ctr, sizeof(*fds))))
		oom();
	printf("container-manager: %u containers for %u s through %s, one router, one thread\n",
	       mg.n_ctr, seconds, mr_router_source(mg.r));
	mg.deadline_ms = now_ms() + seconds * 1000ull;
	uint64_t deadline = mg.deadline_ms;
	for (unsigned i = 0; i < mg.n_ctr; i++)
		if ((err = start_container(&mg, &mg.c[i])) < 0) {
			fprintf(stderr, "container-manager: start: %s\n", strerror(-err));
			goto out;
		}

	while (!stopping) {
		/* Rebuilt each round: containers come and go.  [0] router, [1] signals. */
		size_t nfds = 2;
		fds[0] = (struct pollfd){.fd = mr_router_fd(mg.r), .events = POLLIN};
		fds[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
		for (unsigned i = 0; i < mg.n_ctr; i++) {
			fds[nfds++] = (struct pollfd){.fd = mg.c[i].pidfd, .events = POLLIN};
			fds[nfds++] = (struct pollfd){.fd = mg.c[i].ready_fd, .events = POLLIN};
		}
		uint64_t now = now_ms();
		int n = poll(fds, nfds, now >= deadline ? 0 : (int)(deadline - now));
		if (n < 0 && errno != EINTR) {
			err = -errno;
			goto out;
		}
		if (n == 0 && now_ms() >= deadline)
			break;
		if (fds[0].revents && (err = turn(&mg)) < 0)
			goto out;
		for (unsigned i = 0; i < mg.n_ctr; i++) {
			struct ctr *c = &mg.c[i];
			if (fds[3 + 2 * i].revents && c->state == STARTING && (err = pick_up(&mg, c)) < 0)
				goto out;
			if (fds[2 + 2 * i].revents) {
				if ((err = end_container(&mg, c, false)) < 0 ||
				    (err = start_container(&mg, c)) < 0)
					goto out;
			}
		}
		if (fds[1].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo != SIGUSR1) {
				stopping = true;
				break;
			}
			if ((err = turn(&mg)) < 0)
				goto out;
			printf("container-manager: %u containers, %llu events so far\n", mg.n_ctr,
			       (unsigned long long)mg.events);
			for (unsigned i = 0; i < mg.n_ctr; i++)
				if (mg.c[i].state == RUNNING)
					print_list("live", &mg.c[i]);
		}
	}

	/* The same point for both sides: containers stopped, the router caught up. */
	if ((err = freeze(&mg)) < 0 || (err = catch_up(&mg)) < 0)
		goto out;
	unsigned matched = 0, total = 0;
	printf("container-manager: at the end:\n");
	for (unsigned i = 0; i < mg.n_ctr; i++) {
		struct ctr *c = &mg.c[i];
		if (c->state != FROZEN)
			continue;
		total++;
		bool ok = matches(c);
		matched += ok;
		if (ok)
			print_list("matched", c);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("container-manager: %u/%u matched listmount; %u containers started, %u ended, "
	       "%u told by ns-gone; %llu events\n", matched, total, mg.started, mg.ended,
	       mg.told_gone, (unsigned long long)mg.events);
	printf("container-manager: cpu %.0f ms (user %.0f, system %.0f), peak rss %ld KiB\n",
	       tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime), tv_ms(ru.ru_utime), tv_ms(ru.ru_stime),
	       ru.ru_maxrss);
	if (matched != total || total != mg.n_ctr || mg.untold)
		err = -EPROTO;
out:
	/* Containers first (their namespaces and subscriptions), then the router. */
	for (unsigned i = 0; mg.c && i < mg.n_ctr; i++)
		if (mg.c[i].state != EMPTY) {
			kill(mg.c[i].pid, SIGKILL);
			end_container(&mg, &mg.c[i], true);
		}
	mr_router_free(mg.r);
	free(mg.c);
	free(fds);
	close(sfd);
	return err < 0;
}
