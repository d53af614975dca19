/* SPDX-License-Identifier: MIT */
/*
 * The watch_mount source when an LSM refuses the watch (the test kernel's
 * test-only LSM, kernel patch 0030, refusing root through
 * /sys/kernel/security/watch_mount_test/deny_uid), as mountrouter.h
 * documents it:
 *  - named "watch_mount": mr_router_new() fails with the hook's -EACCES
 *    (the -errno of adding the caller's namespace) and leaves *ret_router
 *    untouched; so does mr_router_add_ns_self() with MR_OPT_NO_SELF_NS;
 *  - picked by probing: the router's source is still watch_mount (its
 *    probe sets no watch), and the namespace it was refused for falls back
 *    to the next source that probes (fanotify on this kernel), which
 *    mr_router_ns_source() names with the reason, and its events arrive;
 *  - with the knob off again, the named source works.
 * Runs in the VM only (vm_lsm_denial); exits 77 without the LSM.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "testutil.h"

#define KNOB "/sys/kernel/security/watch_mount_test/deny_uid"
#define WAIT_MS 5000

static char root[256];

static int set_deny(const char *uid)
{
	int fd = open(KNOB, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(uid);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, uid, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

/* The knob is global to the guest: never leave it refusing. */
static void reset_knob(void)
{
	set_deny("-1");
}

/* Subscribes to @r's namespace @ns_id, mounts at @rel, expects its MOUNT. */
static int expect_mount_event(mr_router *r, uint64_t ns_id, const char *rel)
{
	struct mr_sub_opts so = {.size = sizeof(so), .ns_id = ns_id, .subtree = root,
				 .kinds = MR_KIND(MR_EVENT_MOUNT)};
	const struct mr_event *ev;
	mr_sub *s = NULL;
	char p[512];

	CHECK(mr_subscribe(r, &so, &s) == 0);
	tu_path(p, sizeof(p), root, rel);
	CHECK(tu_mkdir(p) == 0);
	CHECK(mount("lsm", p, "tmpfs", 0, "size=1m") == 0);
	ev = tu_next(s, WAIT_MS, false);
	CHECK(ev != NULL);
	CHECK(ev->kind == MR_EVENT_MOUNT);
	CHECK_STR(ev->path, p);
	CHECK_EQ_U64(ev->mnt_id, tu_mnt_id(p));
	mr_event_unref(ev);
	mr_unsubscribe(s);
	return T_EXIT_PASS;
}

static int test_named_allowed(void)
{
	struct mr_opts o = {.size = sizeof(o), .source = "watch_mount"};
	mr_router *r = NULL;
	uint64_t id = 0;

	CHECK(mr_router_new(&o, &r) == 0);
	CHECK_STR(mr_router_source(r), "watch_mount");
	CHECK(mr_router_add_ns_self(r, &id) == -EEXIST && id);
	CHECK(mr_router_start(r) == 0);
	if (expect_mount_event(r, id, "allowed"))
		return T_EXIT_FAIL;
	mr_router_free(r);
	return T_EXIT_PASS;
}

static int test_named_refused(void)
{
	struct mr_opts o = {.size = sizeof(o), .source = "watch_mount"};
	mr_router *r = (mr_router *)&o; /* must stay as it is */
	uint64_t id = 7;
	int err;

	CHECK(set_deny("0") == 0);
	err = mr_router_new(&o, &r);
	if (err != -EACCES) {
		fprintf(stderr, "mr_router_new(watch_mount) refused: want -EACCES, got %d %s\n",
			err, strerror(-err));
		return T_EXIT_FAIL;
	}
	CHECK(r == (mr_router *)&o);

	/* Without the caller's namespace the router is made; adding it is refused. */
	o.flags = MR_OPT_NO_SELF_NS;
	r = NULL;
	CHECK(mr_router_new(&o, &r) == 0);
	CHECK(mr_router_add_ns_self(r, &id) == -EACCES);
	CHECK(id == 7);
	mr_router_free(r);
	CHECK(set_deny("-1") == 0);
	return T_EXIT_PASS;
}

static int test_auto_falls_back(void)
{
	struct mr_opts o = {.size = sizeof(o)};
	const char *name = "", *why = "";
	mr_router *r = NULL;
	uint64_t id = 0;

	CHECK(set_deny("0") == 0);
	CHECK(mr_router_new(&o, &r) == 0);
	CHECK_STR(mr_router_source(r), "watch_mount");
	CHECK(mr_router_add_ns_self(r, &id) == -EEXIST && id);
	CHECK(mr_router_ns_source(r, id, &name, &why) == 0);
	fprintf(stderr, "namespace on %s: %s\n", name, why);
	CHECK_STR(name, "fanotify");
	CHECK_STR(why, "the chosen source was refused for this namespace: the next one that probes");
	CHECK(mr_router_start(r) == 0);
	/* The fallback watches: its events arrive while the LSM still refuses. */
	if (expect_mount_event(r, id, "fallback"))
		return T_EXIT_FAIL;
	mr_router_free(r);
	CHECK(set_deny("-1") == 0);
	return T_EXIT_PASS;
}

int main(void)
{
	int fail = 0, err;

	err = tu_private_root(root, sizeof(root));
	if (err)
		return err;
	/* securityfs in this private namespace; EBUSY: already there. */
	if (mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL) < 0 &&
	    errno != EBUSY)
		return tu_skip("no securityfs: %s", strerror(errno));
	if (access(KNOB, F_OK) < 0)
		return tu_skip("no watch_mount_test LSM (kernel patch 0030, CONFIG_LSM)");
	{
		struct mr_opts o = {.size = sizeof(o), .source = "watch_mount"};
		mr_router *r = NULL;

		err = mr_router_new(&o, &r);
		if (err == -ENOSYS)
			return tu_skip("the watch_mount source is not available on this kernel");
		mr_router_free(r);
	}
	atexit(reset_knob);

	fail |= RUN(test_named_allowed);
	fail |= RUN(test_named_refused);
	fail |= RUN(test_auto_falls_back);
	/* Off again: the named source is allowed once more. */
	fail |= RUN(test_named_allowed);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
