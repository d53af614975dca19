/* SPDX-License-Identifier: MIT */
/*
 * Attribute changes that come among attach and detach records, on every
 * source: a subscriber's view, rebuilt from its snapshot and events alone,
 * converges to what listmount(2)/statmount(2) say, within the bound the
 * source states (source_fanotify.c, pass_schedule.c).  The interleavings:
 * a remount alone, a remount right after a bind (of the new mount and of
 * another), remounts inside an attach storm, an option-only remount.
 * Usage: test_attr_interleavings SOURCE.  Labels: kernel, root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>

#include "mirror/listmount.h"
#include "mirror/mount.h"
#include "probe.h"
#include "testutil.h"

#ifndef MR_TEST_SOURCE
#define MR_TEST_SOURCE "auto" /* the vm build names one */
#endif
#define MAX_VIEW 4096
#define CONVERGE_MS 5000
#define CHURN_MAX 20000

static char root[256];
static mr_router *router;
static mr_sub *sub;

/* The subscriber's view: path -> options, from its events alone. */
static struct entry {
	char *path, *options;
} view[MAX_VIEW];
static size_t n_view;

static struct entry *find(const char *path)
{
	for (size_t i = 0; i < n_view; i++)
		if (!strcmp(view[i].path, path))
			return &view[i];
	return NULL;
}

static void put(const char *path, const char *options)
{
	struct entry *e = find(path);

	if (!e) {
		if (n_view == MAX_VIEW)
			abort();
		e = &view[n_view++];
		e->path = strdup(path);
		e->options = NULL;
	}
	free(e->options);
	e->options = strdup(options ? options : "");
}

static void drop(const char *path)
{
	struct entry *e = find(path);

	if (!e)
		return;
	free(e->path);
	free(e->options);
	*e = view[--n_view];
}

static void apply(const struct mr_event *ev)
{
	switch (ev->kind) {
	case MR_EVENT_SNAPSHOT:
		while (n_view)
			drop(view[0].path);
		for (size_t i = 0; i < ev->n_mounts; i++)
			put(ev->mounts[i].path, ev->mounts[i].options);
		break;
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		drop(ev->path);
		break;
	case MR_EVENT_MOVE:
		if (ev->old_path)
			drop(ev->old_path);
		put(ev->path, ev->options);
		break;
	case MR_EVENT_MOUNT:
	case MR_EVENT_READONLY:
	case MR_EVENT_ATTR:
		put(ev->path, ev->options);
		break;
	default:
		break;
	}
}

/* Every mount under root, as the kernel has it now, equals the view. */
static bool matches_truth(char *why, size_t len)
{
	struct mr__table t = {0};
	struct mr__statmount_buf buf = {0};
	uint64_t calls = 0;
	size_t n = 0, rl = strlen(root);
	bool ok = true;

	if (mr__listmount_table(0, &buf, &calls, &t) < 0) {
		snprintf(why, len, "listmount failed");
		return false;
	}
	for (size_t i = 0; i < t.n && ok; i++) {
		const struct mr_mount *m = &t.v[i]->pub;
		if (strncmp(m->path, root, rl) || (m->path[rl] && m->path[rl] != '/'))
			continue;
		n++;
		struct entry *e = find(m->path);
		if (!e) {
			snprintf(why, len, "%s missing", m->path);
			ok = false;
		} else if (strcmp(e->options, m->options)) {
			snprintf(why, len, "%s: view %s, kernel %s", m->path, e->options, m->options);
			ok = false;
		}
	}
	if (ok && n != n_view) {
		snprintf(why, len, "view has %zu mounts, kernel %zu", n_view, n);
		ok = false;
	}
	mr__table_clear(&t);
	mr__statmount_buf_free(&buf);
	return ok;
}

static int churn_once(void);

/*
 * Applies events until the view equals the truth, or CONVERGE_MS pass.
 * @churn: the change may be one a source reports only within a bound of
 * work on other changes (a remount that shared its POLLPRI with an attach
 * on fanotify, pass_schedule.c): keep attaching and detaching a probe
 * mount meanwhile, as a busy host would, up to CHURN_MAX pairs.
 */
static int converge_churning(const char *what, bool churn)
{
	int pairs = 0;
	char why[1024] = "";
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		const struct mr_event *ev;
		while ((ev = tu_next(sub, 20, true))) {
			apply(ev);
			mr_event_unref(ev);
		}
		if (matches_truth(why, sizeof(why))) {
			if (pairs)
				fprintf(stderr, "%s: converged after %d attach/detach pairs\n", what,
					pairs);
			return 0;
		}
		for (int i = 0; churn && i < 100 && pairs < CHURN_MAX; i++, pairs++)
			if (churn_once() < 0)
				return -1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >
		    (churn ? 6 : 1) * CONVERGE_MS) {
			fprintf(stderr, "%s: not converged after %d ms: %s\n", what, CONVERGE_MS, why);
			return -1;
		}
	}
}

static int converge(const char *what)
{
	return converge_churning(what, false);
}

static const char *at(const char *fmt, int i);

static int churn_once(void)
{
	if (mount("churn", at("churn", 0), "tmpfs", 0, "size=16k") < 0 ||
	    umount2(at("churn", 0), 0) < 0) {
		fprintf(stderr, "churn: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static const char *at(const char *fmt, int i)
{
	static char bufs[4][512];
	static int k;
	char rel[128];

	k = (k + 1) % 4;
	snprintf(rel, sizeof(rel), fmt, i);
	return tu_path(bufs[k], sizeof(bufs[k]), root, rel);
}

static int mkmount(const char *path, const char *opts)
{
	int err = tu_mkdir(path);
	if (err < 0 && err != -EEXIST)
		return err;
	return mount("t", path, "tmpfs", 0, opts);
}

static int test_remount_alone(void)
{
	CHECK(mkmount(at("alone", 0), "size=1m") == 0);
	CHECK(converge("mount") == 0);
	CHECK(mount(NULL, at("alone", 0), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	CHECK(converge("remount alone") == 0);
	return 0;
}

static int test_remount_after_bind(void)
{
	CHECK(mkmount(at("src", 0), "size=1m") == 0 && mkmount(at("other", 0), "size=1m") == 0);
	CHECK(tu_mkdir(at("b%d", 1)) == 0 && tu_mkdir(at("b%d", 2)) == 0);
	CHECK(converge("mounts") == 0);
	/* The bound mount made read-only at once, as container runtimes do. */
	CHECK(mount(at("src", 0), at("b%d", 1), NULL, MS_BIND, NULL) == 0);
	CHECK(mount(NULL, at("b%d", 1), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	CHECK(converge("bind, then read-only") == 0);
	/*
	 * Another mount made read-only straight after a bind: on fanotify the
	 * two can share one POLLPRI, which the bind's record explains; the
	 * remount is then reported within the verification bound.
	 */
	CHECK(mount(at("src", 0), at("b%d", 2), NULL, MS_BIND, NULL) == 0);
	CHECK(mount(NULL, at("other", 0), NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	CHECK(converge_churning("bind, then another mount read-only", true) == 0);
	return 0;
}

static int test_remounts_in_storm(void)
{
	for (int i = 0; i < 10; i++)
		CHECK(mkmount(at("old%d", i), "size=1m") == 0);
	CHECK(converge("old mounts") == 0);
	for (int i = 0; i < 300; i++) {
		CHECK(mkmount(at("storm%d", i), "size=64k") == 0);
		if (i % 30 == 15)
			CHECK(mount(NULL, at("old%d", i / 30), NULL,
				    MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
	}
	CHECK(converge("remounts inside an attach storm") == 0);
	for (int i = 0; i < 300; i++)
		CHECK(umount2(at("storm%d", i), MNT_DETACH) == 0);
	CHECK(converge("unmounts") == 0);
	return 0;
}

static int test_option_only(void)
{
	CHECK(mkmount(at("opts", 0), "size=1m") == 0);
	CHECK(converge("mount") == 0);
	CHECK(mount(NULL, at("opts", 0), NULL, MS_REMOUNT, "size=2m") == 0);
	CHECK(converge("option-only remount") == 0);
	return 0;
}

int main(int argc, char **argv)
{
	struct mr_sub_opts so = {.size = sizeof(so), .flags = MR_SUB_SNAPSHOT};
	int fail = 0, err;

	err = tu_private_root(root, sizeof(root));
	if (err)
		return err;
	if (!mr__probe()->listmount)
		return tu_skip("no listmount(2): nothing to check the view against");
	err = tu_router_new(argc > 1 ? argv[1] : MR_TEST_SOURCE, &router);
	if (err)
		return err;
	so.subtree = root;
	CHECK(mr_subscribe(router, &so, &sub) == 0);
	CHECK(mr_router_start(router) == 0);
	CHECK(tu_mkdir(at("churn", 0)) == 0);
	CHECK(converge("snapshot") == 0);

	fail |= RUN(test_remount_alone);
	fail |= RUN(test_remount_after_bind);
	fail |= RUN(test_remounts_in_storm);
	fail |= RUN(test_option_only);

	mr_unsubscribe(sub);
	mr_router_free(router);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
