/* SPDX-License-Identifier: MIT */
/*
 * A host with 1,000 mount namespaces, watched the way `mountwatch -A`
 * watches them: one router, every namespace added by the PID of a process
 * inside it, a subscriber on each.  A mount made in the first, the middle
 * and the last namespace is reported to that namespace's subscriber, with
 * its namespace ID, and to no other.  fanotify allows 128 groups per user
 * by default, so a source with a group per namespace must share groups or
 * hand the rest to another source; none may be dropped.
 *
 * Usage: test_many_namespaces [SOURCE]   (auto by default)
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define N_NS 1000

static char root[256], dir[512];

/*
 * One process in a fresh mount namespace: says it is ready, then mounts a
 * tmpfs on @dir each time it reads 'm', until the pipe closes.
 */
static void child(int cmd, int ack)
{
	char b;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(1);
	(void)!write(ack, "r", 1);
	while (read(cmd, &b, 1) == 1) {
		int ok = mount("many", dir, "tmpfs", 0, "size=64k");
		(void)!write(ack, ok == 0 ? "y" : "n", 1);
	}
	_exit(0);
}

struct ns {
	pid_t pid;
	int cmd, ack;
	uint64_t id;
	mr_sub *sub;
};

static mr_router *r;
static struct ns *v;

static int test_first_middle_last(void)
{
	const int which[] = {0, N_NS / 2, N_NS - 1};

	for (size_t k = 0; k < sizeof(which) / sizeof(which[0]); k++) {
		struct ns *n = &v[which[k]];
		char b;

		CHECK(write(n->cmd, "m", 1) == 1);
		CHECK(read(n->ack, &b, 1) == 1 && b == 'y');
		const struct mr_event *ev = tu_next(n->sub, 10000, false);
		if (!ev)
			fprintf(stderr, "namespace %d of %d: no event (source %s)\n", which[k], N_NS,
				mr_router_source(r));
		CHECK(ev);
		CHECK(ev->kind == MR_EVENT_MOUNT && ev->ns_id == n->id);
		CHECK_STR(ev->path, dir);
		mr_event_unref(ev);
	}
	/* Nobody else saw anything: events stay in their namespace. */
	for (int i = 0; i < N_NS; i++) {
		const struct mr_event *ev;
		if (mr_sub_next(v[i].sub, &ev) == 0) {
			fprintf(stderr, "namespace %d got %s %s\n", i, mr_event_kind_name(ev->kind),
				ev->path);
			mr_event_unref(ev);
			return T_EXIT_FAIL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mr_opts o = {.size = sizeof(o), .source = argc > 1 ? argv[1] : "auto"};
	int err, fail = 0;

	v = calloc(N_NS, sizeof(*v));

	err = tu_private_root(root, sizeof(root));
	if (err)
		return err;
	tu_path(dir, sizeof(dir), root, "many");
	CHECK(tu_mkdir(dir) == 0);
	/* Per namespace: an nsfs fd, a mountinfo fd, maybe a kernel queue. */
	struct rlimit rl = {.rlim_cur = 8192, .rlim_max = 8192};
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	err = mr_router_new(&o, &r);
	if (err == -ENOSYS)
		return tu_skip("the %s source is not available on this kernel", o.source);
	CHECK(err == 0);
	CHECK(mr_router_start(r) == 0);

	for (int i = 0; i < N_NS; i++) {
		int to[2], from[2];
		char b;

		CHECK(pipe(to) == 0 && pipe(from) == 0);
		v[i].pid = fork();
		CHECK(v[i].pid >= 0);
		if (v[i].pid == 0) {
			close(to[1]);
			close(from[0]);
			child(to[0], from[1]);
		}
		close(to[0]);
		close(from[1]);
		v[i].cmd = to[1];
		v[i].ack = from[0];
		CHECK(read(v[i].ack, &b, 1) == 1 && b == 'r');
	}
	unsigned others = 0;
	for (int i = 0; i < N_NS; i++) {
		const char *name = "", *why = "";
		err = mr_router_add_ns_pid(r, v[i].pid, &v[i].id);
		if (err)
			fprintf(stderr, "namespace %d of %d: %s\n", i, N_NS, strerror(-err));
		CHECK(err == 0);
		CHECK(mr_router_ns_source(r, v[i].id, &name, &why) == 0);
		if (strcmp(name, mr_router_source(r)) && others++ == 0)
			fprintf(stderr, "namespace %d on, source %s: %s\n", i, name, why);
		struct mr_sub_opts so = {.size = sizeof(so), .subtree = dir, .ns_id = v[i].id,
					 .capacity = 8};
		CHECK(mr_subscribe(r, &so, &v[i].sub) == 0);
	}
	fprintf(stderr, "%d namespaces: %u on source %s, %u on another\n", N_NS, N_NS - others,
		mr_router_source(r), others);

	fail |= RUN(test_first_middle_last);

	for (int i = 0; i < N_NS; i++) {
		mr_unsubscribe(v[i].sub);
		close(v[i].cmd);
		close(v[i].ack);
	}
	mr_router_free(r);
	for (int i = 0; i < N_NS; i++)
		waitpid(v[i].pid, NULL, 0);
	free(v);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
