/* SPDX-License-Identifier: MIT */
/*
 * mountstorm: mount-propagation storms on demand, and what the router (on
 * each kernel source) and the usual alternatives make of them.
 *
 * Each contender runs in a forked child, in a private mount namespace of
 * its own with a tmpfs root under /tmp, against the same planned storm.
 * The parent collects the results, prints them, and exits 0 when every
 * router contender that could run ended with every subscriber consistent,
 * 1 when one did not, 77 when storms cannot be made here at all.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mountrouter-uapi.h"
#include "mountrouter.h"
#include "storm.h"

#define MAX_CONTENDERS 8

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mountstorm [options]\n"
		"  --quick             1,000-mount storm sized for CI\n"
		"  --total N           live storm mounts to reach (10000)\n"
		"  --peers P           peer groups of shared mounts (4)\n"
		"  --members K         shared members per group: propagation fan-out (4)\n"
		"  --no-slave          no slave member per group\n"
		"  --no-unbindable     no unbindable member per group\n"
		"  --mounts M          operations per wave (250)\n"
		"  --depth D           nesting of the mounts a mount wave makes (2, max %d)\n"
		"  --threads T         threads issuing each wave (1)\n"
		"  --rate OPS          operations per second, 0 for as fast as possible (0)\n"
		"  --build-at-max      build up to --total as fast as possible, pace the rest\n"
		"  --subs S            subscribers per router, one of them stalled (8, max %d)\n"
		"  --stall-capacity N  ring slots of the stalled subscriber (64)\n"
		"  --queue-notes N     watch_mount: notification pipe slots, 1-512; small\n"
		"                      values force kernel losses and resyncs (library default)\n"
		"  --hold-waves N      routers read nothing from the kernel during waves 1..N,\n"
		"                      so that its queue overflows (fanotify holds 16,384\n"
		"                      records): times the recovery from a loss (0)\n"
		"  --settle-ms MS      per-wave limit to reach consistency (10000)\n"
		"  --contenders LIST   watch_mount,fanotify,mountinfo,poller,findmnt\n"
		"  --router-thread     run the router with mr_router_start(), not our dispatch loop\n"
		"  --backend B         epoll or io_uring: what the routers read through\n"
		"                      (default: each source's own choice, see MR_OPT_EPOLL)\n"
		"  --json FILE         every figure as JSON\n"
		"  --plot PREFIX       PREFIX.svg, .gp and .dat files (default: mountstorm)\n"
		"  --no-plot           no plot files\n"
		"  --verbose           one line per wave on stderr\n",
		MS_MAX_DEPTH, MS_MAX_SUBS);
}

static int parse_uint(const char *s, unsigned *ret)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);

	if (errno || *end || end == s || v > 100000000ul)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct ms_opts *o)
{
	enum { O_TOTAL = 256, O_PEERS, O_MEMBERS, O_NOSLAVE, O_NOUNB, O_MOUNTS, O_DEPTH,
	       O_THREADS, O_RATE, O_SUBS, O_STALL, O_QNOTES, O_SETTLE, O_CONT, O_RTHREAD, O_JSON,
	       O_PLOT, O_NOPLOT, O_QUICK, O_VERBOSE, O_HOLD, O_BUILDMAX, O_BACKEND, O_HELP };
	static const struct option lo[] = {
		{ "total", 1, 0, O_TOTAL }, { "peers", 1, 0, O_PEERS },
		{ "members", 1, 0, O_MEMBERS }, { "no-slave", 0, 0, O_NOSLAVE },
		{ "no-unbindable", 0, 0, O_NOUNB }, { "mounts", 1, 0, O_MOUNTS },
		{ "depth", 1, 0, O_DEPTH }, { "threads", 1, 0, O_THREADS },
		{ "rate", 1, 0, O_RATE }, { "subs", 1, 0, O_SUBS },
		{ "stall-capacity", 1, 0, O_STALL }, { "settle-ms", 1, 0, O_SETTLE },
		{ "queue-notes", 1, 0, O_QNOTES },
		{ "contenders", 1, 0, O_CONT }, { "router-thread", 0, 0, O_RTHREAD },
		{ "json", 1, 0, O_JSON }, { "plot", 1, 0, O_PLOT }, { "no-plot", 0, 0, O_NOPLOT },
		{ "quick", 0, 0, O_QUICK }, { "verbose", 0, 0, O_VERBOSE },
		{ "hold-waves", 1, 0, O_HOLD }, { "build-at-max", 0, 0, O_BUILDMAX },
		{ "backend", 1, 0, O_BACKEND },
		{ "help", 0, 0, O_HELP }, { 0 } };
	bool quick_sizes[4] = { false };
	int c, err = 0;

	*o = (struct ms_opts){ .peers = 4, .members = 4, .slave = true, .unbindable = true,
			       .mounts = 250, .depth = 2, .total = 10000, .threads = 1,
			       .subs = 8, .stall_capacity = 64, .settle_ms = 10000,
			       .contenders = "watch_mount,fanotify,mountinfo,poller,findmnt",
			       .plot = "mountstorm" };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case O_TOTAL: err = parse_uint(optarg, &o->total); quick_sizes[0] = true; break;
		case O_PEERS: err = parse_uint(optarg, &o->peers); break;
		case O_MEMBERS: err = parse_uint(optarg, &o->members); break;
		case O_NOSLAVE: o->slave = false; break;
		case O_NOUNB: o->unbindable = false; break;
		case O_MOUNTS: err = parse_uint(optarg, &o->mounts); quick_sizes[1] = true; break;
		case O_DEPTH: err = parse_uint(optarg, &o->depth); break;
		case O_THREADS: err = parse_uint(optarg, &o->threads); break;
		case O_RATE: err = parse_uint(optarg, &o->rate); break;
		case O_SUBS: err = parse_uint(optarg, &o->subs); break;
		case O_STALL: err = parse_uint(optarg, &o->stall_capacity); break;
		case O_QNOTES: err = parse_uint(optarg, &o->queue_notes); break;
		case O_SETTLE: err = parse_uint(optarg, &o->settle_ms); quick_sizes[2] = true; break;
		case O_CONT: o->contenders = optarg; break;
		case O_RTHREAD: o->router_thread = true; break;
		case O_JSON: o->json = optarg; break;
		case O_PLOT: o->plot = optarg; break;
		case O_NOPLOT: o->plot = NULL; break;
		case O_QUICK: o->quick = true; break;
		case O_VERBOSE: o->verbose = true; break;
		case O_HOLD: err = parse_uint(optarg, &o->hold_waves); break;
		case O_BUILDMAX: o->build_at_max = true; break;
		case O_BACKEND:
			if (!strcmp(optarg, "epoll"))
				o->router_flags = MR_OPT_EPOLL;
			else if (!strcmp(optarg, "io_uring"))
				o->router_flags = MR_OPT_IO_URING;
			else
				err = -EINVAL;
			break;
		case O_HELP: usage(stdout); exit(0);
		default: return -EINVAL;
		}
		if (err) {
			const struct option *bad = lo;
			while (bad->val != c)
				bad++;
			fprintf(stderr, "mountstorm: bad value for --%s: %s\n", bad->name, optarg);
			return err;
		}
	}
	if (optind < argc)
		return -EINVAL;
	if (o->quick) {
		/* Explicit sizes win over --quick's. */
		if (!quick_sizes[0])
			o->total = 1000;
		if (!quick_sizes[1])
			o->mounts = 100;
	}
	o->alt_settle_ms = o->settle_ms * 2;
	if (!o->peers || !o->members || !o->mounts || !o->depth || o->depth > MS_MAX_DEPTH ||
	    !o->threads || o->threads > 64 || o->subs < 2 || o->subs > MS_MAX_SUBS ||
	    o->peers > 1000 || o->members > 64 || !o->total) {
		fprintf(stderr, "mountstorm: option out of range (see --help)\n");
		return -EINVAL;
	}
	if (o->hold_waves && o->router_thread) {
		/* Only our own dispatch loop can stop reading. */
		fprintf(stderr, "mountstorm: --hold-waves cannot be used with --router-thread\n");
		return -EINVAL;
	}
	if (o->mounts < o->depth)
		o->mounts = o->depth;
	return 0;
}

/* Can storms be made here at all?  0, or the reason in @why. */
static int probe_host(char *why, size_t len)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		struct mr_mnt_id_req req = { .size = MR_MNT_ID_REQ_SIZE_VER0, .mnt_id = LSMT_ROOT };
		uint64_t id;
		if (unshare(CLONE_NEWNS) < 0)
			_exit(1);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(2);
		if (syscall(__NR_listmount, &req, &id, 1, 0) < 0)
			_exit(3);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	switch (WIFEXITED(status) ? WEXITSTATUS(status) : -1) {
	case 1: snprintf(why, len, "cannot unshare a mount namespace (needs root)"); break;
	case 2: snprintf(why, len, "cannot make the private namespace's mounts private"); break;
	case 3: snprintf(why, len, "no listmount(2) (Linux 6.8+): no ground truth"); break;
	default: snprintf(why, len, "probe child died");
	}
	return -EPERM;
}

static void run_child(const struct ms_opts *o, const char *name, int out)
{
	struct ms_storm *st = calloc(1, sizeof(*st));
	struct ms_result *res = calloc(1, sizeof(*res));
	int err;

	if (!st || !res)
		_exit(2);
	snprintf(res->name, sizeof(res->name), "%s", name);
	st->o = o;
	st->mult = o->members + (o->slave ? 1 : 0);
	err = ms_namespace_enter(st);
	if (err) {
		res->status = MS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "namespace: %s", strerror(-err));
		goto send;
	}
	err = ms_plan(st);
	if (err) {
		res->status = MS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "plan: %s", strerror(-err));
		goto teardown;
	}
	if (!strcmp(name, "poller"))
		err = ms_run_poller(st, res);
	else if (!strcmp(name, "findmnt"))
		err = ms_run_findmnt(st, res);
	else
		err = ms_run_router(st, name, res);
	if (err && res->status == MS_OK)
		res->status = MS_ERROR;
	if (err && !res->reason[0])
		snprintf(res->reason, sizeof(res->reason), "%s", strerror(-err));
teardown:
	ms_plan_free(st);
	ms_topology_teardown(st);
send:;
	const char *p = (const char *)res;
	size_t left = sizeof(*res);
	while (left) {
		ssize_t n = write(out, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(2);
		p += n;
		left -= (size_t)n;
	}
	_exit(0);
}

static void run_contender(const struct ms_opts *o, const char *name, struct ms_result *res)
{
	int pfd[2];
	pid_t pid;

	memset(res, 0, sizeof(*res));
	snprintf(res->name, sizeof(res->name), "%s", name);
	if (pipe(pfd) < 0) {
		res->status = MS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		run_child(o, name, pfd[1]);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		res->status = MS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "fork: %s", strerror(errno));
		return;
	}
	char *p = (char *)res;
	size_t got = 0;
	while (got < sizeof(*res)) {
		ssize_t n = read(pfd[0], p + got, sizeof(*res) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(pfd[0]);
	int status;
	waitpid(pid, &status, 0);
	if (got != sizeof(*res)) {
		memset(res, 0, sizeof(*res));
		snprintf(res->name, sizeof(res->name), "%s", name);
		res->status = MS_ERROR;
		if (WIFSIGNALED(status))
			snprintf(res->reason, sizeof(res->reason), "child killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(res->reason, sizeof(res->reason), "child exited %d without a result",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

int main(int argc, char **argv)
{
	struct ms_opts o;
	static struct ms_result res[MAX_CONTENDERS];
	char why[160], list[256];
	size_t n = 0;

	if (parse_args(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	if (probe_host(why, sizeof(why)) < 0) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	snprintf(list, sizeof(list), "%s", o.contenders);
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && n < MAX_CONTENDERS;
	     tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "watch_mount") && strcmp(tok, "fanotify") && strcmp(tok, "mountinfo") &&
		    strcmp(tok, "auto") && strcmp(tok, "poller") && strcmp(tok, "findmnt")) {
			fprintf(stderr, "mountstorm: unknown contender '%s'\n", tok);
			return 2;
		}
		if (o.verbose)
			fprintf(stderr, "mountstorm: %s ...\n", tok);
		run_contender(&o, tok, &res[n++]);
	}
	ms_report_text(&o, res, n);
	if (o.json && ms_report_json(&o, res, n, o.json) < 0)
		fprintf(stderr, "mountstorm: cannot write %s: %s\n", o.json, strerror(errno));
	if (o.plot)
		ms_report_plot(&o, res, n);

	int rc = 0;
	bool any_router = false;
	for (size_t i = 0; i < n; i++) {
		bool router = strcmp(res[i].name, "poller") && strcmp(res[i].name, "findmnt");
		if (router && res[i].status == MS_OK)
			any_router = true;
		/* A router that ran and left a subscriber wrong is the failure this tool exists for. */
		if (router && (res[i].status == MS_FAILED || res[i].status == MS_ERROR))
			rc = 1;
		if (!router && res[i].status == MS_ERROR)
			rc = 1;
	}
	if (!rc && !any_router) {
		printf("SKIP: no router source available on this kernel\n");
		return 77;
	}
	return rc;
}
