/* SPDX-License-Identifier: MIT */
/*
 * The namespaces ns_scale watches.  Each is made and held by a process of
 * its own: unshare(CLONE_NEWNS), everything private, a tmpfs on its own
 * directory and --mounts-per-ns tmpfs mounts under it, then asleep.  The
 * first is the busy one: it mounts and unmounts a probe when the driver
 * says so, so that each change is made inside the namespace, by a process
 * of it, as a container's would be.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns_scale.h"

/* What the busy namespace answers each command with: one write, atomic on a pipe. */
struct change_ack {
	int err;      /* 0 or the syscall's -errno */
	uint64_t ns;  /* CLOCK_MONOTONIC just after the syscall returned */
};

/*
 * Holder @i: builds its namespace, says so on @ready with one byte (0 or
 * the errno that stopped it), then sleeps until killed; the busy one
 * (@cmd >= 0) instead serves commands until @cmd closes.
 */
static void hold(const struct ns_holders *h, unsigned i, int ready, int cmd, int ack)
{
	char dir[512], p[640];
	int err = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	snprintf(dir, sizeof(dir), "%s/ns/%u", h->root, i);
	/* The copy of the driver's table is private already; this one must be too. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    (mkdir(dir, 0755) < 0 && errno != EEXIST) ||
	    mount("ns_scale", dir, "tmpfs", 0, "size=1m") < 0)
		err = errno;
	for (unsigned m = 0; !err && m < h->mounts_per_ns; m++) {
		snprintf(p, sizeof(p), "%s/m%u", dir, m);
		if (mkdir(p, 0755) < 0 || mount("ns_scale", p, "tmpfs", 0, "size=16k") < 0)
			err = errno;
	}
	snprintf(p, sizeof(p), "%s/probe", dir);
	if (!err && cmd >= 0 && mkdir(p, 0755) < 0)
		err = errno;
	unsigned char b = (unsigned char)err;
	(void)!write(ready, &b, 1);
	if (err)
		_exit(1);
	if (cmd < 0)
		for (;;)
			pause();
	char op;
	while (read(cmd, &op, 1) == 1) {
		int rc = op == 'm' ? mount("probe", p, "tmpfs", 0, "size=64k") : umount2(p, 0);
		struct change_ack a = {.ns = now_ns(), .err = rc < 0 ? -errno : 0};
		(void)!write(ack, &a, sizeof(a));
	}
	_exit(0);
}

void ns_holders_init(struct ns_holders *h, const char *root, unsigned mounts_per_ns,
		     unsigned cap)
{
	char p[512];

	*h = (struct ns_holders){.root = root, .mounts_per_ns = mounts_per_ns, .cap = cap,
				 .cmd = -1, .ack = -1};
	h->pid = calloc(cap, sizeof(*h->pid));
	snprintf(p, sizeof(p), "%s/ns", root);
	if (!h->pid || mkdir(p, 0755) < 0)
		die("namespaces");
}

/*
 * Forks every new holder first and then waits for them all: each one's
 * unshare and mounts overlap the next one's fork.
 */
void ns_holders_grow(struct ns_holders *h, unsigned n)
{
	int ready[2];
	unsigned from = h->n;

	if (n > h->cap || pipe(ready) < 0)
		die("namespaces");
	fflush(NULL); /* the children leave with _exit(): nothing buffered twice */
	for (; h->n < n; h->n++) {
		int to[2] = {-1, -1}, back[2] = {-1, -1};
		if (h->n == 0) {
			if (pipe(to) < 0 || pipe(back) < 0)
				die("pipe");
			h->cmd = to[1];
			h->ack = back[0];
		}
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			close(ready[0]);
			close(h->cmd);
			close(h->ack);
			hold(h, h->n, ready[1], to[0], back[1]);
		}
		if (to[0] >= 0) {
			close(to[0]);
			close(back[1]);
		}
		h->pid[h->n] = pid;
	}
	close(ready[1]);
	for (unsigned i = from; i < n; i++) {
		struct pollfd p = {.fd = ready[0], .events = POLLIN};
		unsigned char b = 0;
		if (poll(&p, 1, 60000) <= 0 || read(ready[0], &b, 1) != 1) {
			errno = ETIMEDOUT;
			die("a namespace did not say it was ready");
		}
		if (b) {
			errno = b;
			die("a namespace's mounts");
		}
	}
	close(ready[0]);
}

unsigned ns_holders_mounts_each(const struct ns_holders *h)
{
	char p[64], line[4096];
	unsigned n = 0;

	snprintf(p, sizeof(p), "/proc/%d/mountinfo", (int)h->pid[0]);
	FILE *f = fopen(p, "r");
	if (!f)
		die(p);
	while (fgets(line, sizeof(line), f))
		n += strchr(line, '\n') != NULL;
	fclose(f);
	return n;
}

int ns_busy_change(struct ns_holders *h, char op, uint64_t *ret_ns)
{
	struct change_ack a;

	if (write(h->cmd, &op, 1) != 1 || read(h->ack, &a, sizeof(a)) != (ssize_t)sizeof(a))
		die("the busy namespace");
	if (a.err)
		return a.err;
	*ret_ns = a.ns;
	return 0;
}

void ns_holders_end(struct ns_holders *h)
{
	for (unsigned i = 0; i < h->n; i++)
		kill(h->pid[i], SIGKILL);
	for (unsigned i = 0; i < h->n; i++)
		waitpid(h->pid[i], NULL, 0);
	if (h->cmd >= 0) {
		close(h->cmd);
		close(h->ack);
	}
	free(h->pid);
	*h = (struct ns_holders){.cmd = -1, .ack = -1};
}
