/* SPDX-License-Identifier: MIT */
/*
 * Kernel loss: make the kernel's queue overflow while the router is not
 * reading, then check the router notices (FAN_Q_OVERFLOW or
 * WATCH_META_LOSS_NOTIFICATION), resyncs, and that a subscriber rebuilding
 * its view from events alone ends up with exactly what listmount(2) and
 * statmount(2) say.
 *
 * Usage: test_overflow SOURCE   (fanotify | watch_mount)
 *
 * The router runs on this thread (mr_router_dispatch), so "not reading" is
 * simply not calling it while the storm is made.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "mirror/listmount.h"
#include "mirror/mount.h"
#include "testutil.h"

/* The source when none is named: the VM build compiles in watch_mount. */
#ifndef MR_TEST_SOURCE
#define MR_TEST_SOURCE "fanotify"
#endif

static char root[256];

/* A subscriber's idea of its subtree, built from events only. */
struct view {
	char **paths;
	size_t n, cap;
	unsigned resync_begin, resync_end, synthetic, snapshots, overruns;
};

static ssize_t view_find(const struct view *v, const char *p)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->paths[i], p))
			return (ssize_t)i;
	return -1;
}

static void view_add(struct view *v, const char *p)
{
	if (view_find(v, p) >= 0)
		return;
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 256;
		v->paths = realloc(v->paths, v->cap * sizeof(*v->paths));
	}
	v->paths[v->n++] = strdup(p);
}

static void view_del(struct view *v, const char *p)
{
	ssize_t i = view_find(v, p);

	if (i < 0)
		return;
	free(v->paths[i]);
	v->paths[i] = v->paths[--v->n];
}

static void view_clear(struct view *v)
{
	while (v->n)
		free(v->paths[--v->n]);
}

static void view_apply(struct view *v, const struct mr_event *ev)
{
	if (ev->flags & MR_EVF_SYNTHETIC)
		v->synthetic++;
	switch (ev->kind) {
	case MR_EVENT_MOUNT:
		view_add(v, ev->path);
		break;
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		view_del(v, ev->path);
		break;
	case MR_EVENT_MOVE:
		view_del(v, ev->old_path);
		view_add(v, ev->path);
		break;
	case MR_EVENT_SNAPSHOT:
		v->snapshots++;
		view_clear(v);
		for (size_t i = 0; i < ev->n_mounts; i++)
			view_add(v, ev->mounts[i].path);
		break;
	case MR_EVENT_RESYNC_BEGIN:
		v->resync_begin++;
		break;
	case MR_EVENT_RESYNC_END:
		v->resync_end++;
		break;
	case MR_EVENT_OVERRUN:
		v->overruns++;
		break;
	}
}

/* Runs the router until it has nothing left to do for a while. */
static int drain(mr_router *r, mr_sub *s, struct view *v)
{
	int idle = 0;

	while (idle < 5) {
		int n = mr_router_dispatch(r);
		if (n < 0)
			return n;
		const struct mr_event *ev;
		while (mr_sub_next(s, &ev) == 0) {
			view_apply(v, ev);
			mr_event_unref(ev);
		}
		struct pollfd pfd = {.fd = mr_router_fd(r), .events = POLLIN};
		idle = poll(&pfd, 1, 50) == 0 ? idle + 1 : 0;
	}
	return 0;
}

/* The view must equal the kernel's table under root, path for path. */
static int check_view(const struct view *v)
{
	struct mr__table t = {0};
	struct mr__statmount_buf buf = {0};
	uint64_t calls = 0;
	size_t rl = strlen(root), expect = 0;

	CHECK(mr__listmount_table(0, &buf, &calls, &t) >= 0);
	for (size_t i = 0; i < t.n; i++) {
		const char *p = t.v[i]->pub.path;
		if (strncmp(p, root, rl) || (p[rl] && p[rl] != '/'))
			continue;
		expect++;
		if (view_find(v, p) < 0) {
			fprintf(stderr, "view lacks %s\n", p);
			return T_EXIT_FAIL;
		}
	}
	if (expect != v->n) {
		fprintf(stderr, "view has %zu mounts, the kernel %zu\n", v->n, expect);
		return T_EXIT_FAIL;
	}
	mr__table_clear(&t);
	mr__statmount_buf_free(&buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *source = argc > 1 ? argv[1] : MR_TEST_SOURCE;
	struct mr_opts o = {.size = sizeof(o), .source = source, .queue_notes = 16};
	struct mr_sub_opts so = {.size = sizeof(so), .capacity = 1u << 20, .flags = MR_SUB_SNAPSHOT};
	struct view v = {0};
	struct mr_stats st;
	mr_router *r;
	mr_sub *s;
	char p[512];
	int err;

	err = tu_private_root(root, sizeof(root));
	if (err)
		return err;
	err = mr_router_new(&o, &r);
	if (err == -ENOSYS)
		return tu_skip("the %s source is not available on this kernel", source);
	CHECK(err == 0);
	so.subtree = root;
	CHECK(mr_subscribe(r, &so, &s) == 0);
	CHECK(drain(r, s, &v) == 0);
	CHECK(v.snapshots == 1 && v.n == 1);

	/*
	 * A shared mount with 8 peers: each mount under it appears 9 times.
	 * fanotify queues 16,384 events per group.  The notification pipe here
	 * holds 16 records, but io_uring keeps reading it into the router's
	 * 64 provided buffers whenever this thread returns from a syscall (a
	 * mount's 9 records a read), so the storm must outgrow those too:
	 * 400 x 9 records against some 600 absorbed.
	 */
	unsigned waves = strcmp(source, "fanotify") ? 400 : 1900;
	CHECK(tu_mkdir(tu_path(p, sizeof(p), root, "s")) == 0);
	CHECK(mount("s", p, "tmpfs", 0, "size=1m") == 0);
	CHECK(mount(NULL, p, NULL, MS_SHARED, NULL) == 0);
	for (int i = 0; i < 8; i++) {
		char q[512], rel[32];
		snprintf(rel, sizeof(rel), "p%d", i);
		CHECK(tu_mkdir(tu_path(q, sizeof(q), root, rel)) == 0);
		CHECK(mount(p, q, NULL, MS_BIND, NULL) == 0);
	}
	for (unsigned i = 0; i < waves; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "s/m%u", i);
		CHECK(tu_mkdir(tu_path(p, sizeof(p), root, rel)) == 0);
		CHECK(mount("m", p, "tmpfs", 0, "size=64k") == 0);
	}

	CHECK(drain(r, s, &v) == 0);
	CHECK(mr_router_stats(r, &st) == 0);
	fprintf(stderr,
		"%s: %u mounts x 9 copies: records %llu bad %llu routed %llu losses %llu resyncs %llu "
		"view %zu synthetic %u\n",
		source, waves, (unsigned long long)st.records_read, (unsigned long long)st.bad_records,
		(unsigned long long)st.events_routed, (unsigned long long)st.kernel_losses,
		(unsigned long long)st.resyncs, v.n, v.synthetic);
	CHECK(st.kernel_losses >= 1 && st.resyncs >= 1);
	CHECK(v.resync_begin >= 1 && v.resync_begin == v.resync_end);
	CHECK(v.synthetic >= 1);
	CHECK(check_view(&v) == 0);
	CHECK_EQ_U64(v.n, 1 + 1 + 8 + 9ull * waves);

	/* Tear it all down the same way: the view must come back to the root alone. */
	CHECK(umount2(tu_path(p, sizeof(p), root, "s"), MNT_DETACH) == 0);
	for (int i = 0; i < 8; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "p%d", i);
		CHECK(umount2(tu_path(p, sizeof(p), root, rel), MNT_DETACH) == 0);
	}
	CHECK(drain(r, s, &v) == 0);
	CHECK(check_view(&v) == 0);
	CHECK_EQ_U64(v.n, 1);

	view_clear(&v);
	free(v.paths);
	mr_unsubscribe(s);
	mr_router_free(r);
	return T_EXIT_PASS;
}
