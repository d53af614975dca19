/* SPDX-License-Identifier: MIT */
/*
 * container-manager: how a container manager embeds mountrouter.
 *
 * It starts a child in a new mount namespace (as a runtime would start a
 * container's init), watches that namespace with mr_router_add_ns_pid()
 * and reports what the child mounts, from its own poll() loop:
 *
 *   - mr_router_fd(): readable when the kernel has something; then
 *     mr_router_dispatch() does the work without blocking;
 *   - mr_sub_fd(): readable when the subscription has events;
 *   - a pidfd: the child exited, stop watching its namespace.
 *
 * The child waits until the namespace is watched before it runs the
 * command, so nothing it mounts goes unseen.
 *
 *   container-manager [-s SUBTREE] [COMMAND [ARG...]]
 *
 * Needs CAP_SYS_ADMIN (a mount namespace, and fanotify on another one).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mountrouter.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* What the container does when no command is given. */
static char *const demo[] = {
	"/bin/sh", "-c",
	"mkdir -p /tmp/cm-demo && mount -t tmpfs cm-demo /tmp/cm-demo && "
	"mount -o remount,ro /tmp/cm-demo && umount /tmp/cm-demo && rmdir /tmp/cm-demo",
	NULL,
};

/*
 * The child: a private copy of the parent's mounts, so that nothing it
 * does propagates back to the host, then wait for the go-ahead.
 */
static void child(int ready_w, int go_r, char *const argv[])
{
	char c;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "container: cannot set up a mount namespace: %s\n", strerror(errno));
		_exit(126);
	}
	if (write(ready_w, "r", 1) != 1 || read(go_r, &c, 1) != 1)
		_exit(126); /* the manager went away */
	close(ready_w);
	close(go_r);
	execvp(argv[0], argv);
	fprintf(stderr, "container: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static void report(const struct mr_event *ev)
{
	switch (ev->kind) {
	case MR_EVENT_SNAPSHOT:
		printf("manager: container starts with %zu mounts under its subtree\n", ev->n_mounts);
		break;
	case MR_EVENT_OVERRUN:
		/* A snapshot follows: rebuild whatever state was kept from it. */
		printf("manager: missed %llu changes, resynchronising\n",
		       (unsigned long long)ev->lost);
		break;
	case MR_EVENT_RESYNC_BEGIN:
	case MR_EVENT_RESYNC_END:
		break;
	case MR_EVENT_MOVE:
		printf("manager: ns %llu: move %s -> %s\n", (unsigned long long)ev->ns_id,
		       ev->old_path, ev->path);
		break;
	default:
		printf("manager: ns %llu: %s %s (%s %s, %s)%s\n", (unsigned long long)ev->ns_id,
		       mr_event_kind_name(ev->kind), ev->path, ev->fstype, ev->source, ev->options,
		       ev->flags & MR_EVF_SYNTHETIC ? " [found by resync]" : "");
	}
}

int main(int argc, char **argv)
{
	const char *subtree = "/";
	int ready[2], go[2], opt, err, status = 0;
	mr_router *r = NULL;
	mr_sub *sub = NULL;
	uint64_t ns_id;
	char c;

	while ((opt = getopt(argc, argv, "+s:h")) != -1) {
		if (opt == 's') {
			subtree = optarg;
		} else {
			fprintf(stderr, "usage: %s [-s SUBTREE] [COMMAND [ARG...]]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	char *const *cmd = optind < argc ? argv + optind : demo;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		perror("pipe2");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0)
		child(ready[1], go[0], cmd);
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		return 1;
	}

	/* Not our own namespace: only the container's. */
	struct mr_opts ro = {.size = sizeof(ro), .flags = MR_OPT_NO_SELF_NS};
	if ((err = mr_router_new(&ro, &r)) < 0) {
		fprintf(stderr, "manager: mr_router_new: %s\n", strerror(-err));
		goto kill_child;
	}
	if ((err = mr_router_add_ns_pid(r, pid, &ns_id)) < 0) {
		fprintf(stderr, "manager: mr_router_add_ns_pid(%d): %s\n", (int)pid, strerror(-err));
		goto kill_child;
	}
	struct mr_sub_opts so = {
		.size = sizeof(so), .flags = MR_SUB_SNAPSHOT, .ns_id = ns_id, .subtree = subtree};
	if ((err = mr_subscribe(r, &so, &sub)) < 0) {
		fprintf(stderr, "manager: mr_subscribe(%s): %s\n", subtree, strerror(-err));
		goto kill_child;
	}
	printf("manager: watching container %d, mount namespace %llu, subtree %s, via %s\n",
	       (int)pid, (unsigned long long)ns_id, subtree, mr_router_source(r));
	/* Applies the subscription: from here on, nothing the child mounts is missed. */
	if ((err = mr_router_dispatch(r)) < 0)
		goto kill_child;
	if (write(go[1], "g", 1) != 1) {
		err = -errno;
		goto kill_child;
	}
	close(go[1]);
	go[1] = -1;

	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		err = -errno;
		goto kill_child;
	}
	struct pollfd fds[3] = {
		{.fd = mr_router_fd(r), .events = POLLIN},
		{.fd = mr_sub_fd(sub), .events = POLLIN},
		{.fd = pidfd, .events = POLLIN},
	};
	for (;;) {
		const struct mr_event *ev;

		/* Drain first: the fd only turns readable after an -EAGAIN. */
		while (mr_sub_next(sub, &ev) == 0) {
			report(ev);
			mr_event_unref(ev);
		}
		fflush(stdout);
		if (fds[2].revents & POLLIN)
			break;
		if (poll(fds, 3, -1) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		if (fds[0].revents & POLLIN) {
			err = mr_router_dispatch(r);
			if (err < 0)
				break;
		}
		if (fds[1].revents & POLLIN) {
			uint64_t n;
			(void)!read(fds[1].fd, &n, sizeof(n)); /* an eventfd: reset it */
		}
		if (fds[2].revents & POLLIN) {
			/* Changes the child made just before exiting may still be queued. */
			err = mr_router_dispatch(r);
			if (err < 0)
				break;
		}
	}
	close(pidfd);
	waitpid(pid, &status, 0);
	printf("manager: container exited with status %d; namespace %llu no longer watched\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
	       (unsigned long long)ns_id);
	mr_unsubscribe(sub);
	mr_router_remove_ns(r, ns_id);
	mr_router_free(r);
	return err < 0 ? 1 : 0;

kill_child:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	mr_unsubscribe(sub);
	mr_router_free(r);
	return 1;
}
