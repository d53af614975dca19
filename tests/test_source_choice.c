/* SPDX-License-Identifier: MIT */
/*
 * The source picked by probing is the best one this kernel offers
 * (watch_mount, fanotify, listmount, mountinfo, in that order), it says
 * why, and a source named that the kernel lacks is -ENOSYS, not a silent
 * fallback.  Built with MR_EXPECT_SOURCE (the stock-kernel VMs: Debian 12's
 * 6.1 must pick mountinfo, the 6.12 line listmount), the pick must also be
 * that one.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "probe.h"
#include "testutil.h"

static const char *best_by_probe(void)
{
	const struct mr__features *f = mr__probe();

	if (f->watch_mount && f->listmount)
		return "watch_mount";
	if (f->fanotify_mnt && f->listmount)
		return "fanotify";
	if (f->listmount)
		return "listmount";
	return "mountinfo";
}

static int test_auto(void)
{
	struct mr_opts o = {.size = sizeof(o)};
	mr_router *r = NULL;
	uint64_t id = 0;
	const char *name = "", *why = "";

	CHECK(mr_router_new(&o, &r) == 0);
	fprintf(stderr, "source %s: %s\n", mr_router_source(r), mr_router_source_reason(r));
	CHECK_STR(mr_router_source(r), best_by_probe());
#ifdef MR_EXPECT_SOURCE
	CHECK_STR(mr_router_source(r), MR_EXPECT_SOURCE);
#endif
	CHECK(strlen(mr_router_source_reason(r)) > 20);
	/* Our own namespace is on the router's source. */
	CHECK(mr_router_add_ns_self(r, &id) == -EEXIST && id);
	CHECK(mr_router_ns_source(r, id, &name, &why) == 0);
	CHECK_STR(name, mr_router_source(r));
	CHECK_STR(why, mr_router_source_reason(r));
	CHECK(mr_router_ns_source(r, id + 1, &name, &why) == -ENOENT);
	mr_router_free(r);
	return 0;
}

/* Every source by name: available ones are chosen "by name", others -ENOSYS. */
static int test_by_name(void)
{
	static const char *const names[] = {"watch_mount", "fanotify", "listmount", "mountinfo"};
	const struct mr__features *f = mr__probe();
	const bool have[] = {f->watch_mount && f->listmount, f->fanotify_mnt && f->listmount,
			     f->listmount, true};

	for (size_t i = 0; i < MR__ARRAY_SIZE(names); i++) {
		struct mr_opts o = {.size = sizeof(o), .source = names[i]};
		mr_router *r = NULL;
		int err = mr_router_new(&o, &r);

		fprintf(stderr, "  %-12s %s\n", names[i], err ? strerror(-err) : "available");
		if (!have[i]) {
			CHECK(err < 0);
			continue;
		}
		CHECK(err == 0);
		CHECK_STR(mr_router_source(r), names[i]);
		CHECK_STR(mr_router_source_reason(r), "chosen by name");
		mr_router_free(r);
	}
	struct mr_opts o = {.size = sizeof(o), .source = "nonesuch"};
	mr_router *r = NULL;
	CHECK(mr_router_new(&o, &r) == -EINVAL);
	return 0;
}

/* What the kernel offers, for the log: the features each source rests on. */
static int test_features(void)
{
	const struct mr__features *f = mr__probe();

	fprintf(stderr,
		"  listmount %d mnt_ns_id %d statmount opts %d listmount reverse %d "
		"NS_MNT_GET_NEXT %d fanotify mount events %d watch_mount %d\n",
		f->listmount, f->statmount_ns, f->statmount_opts, f->listmount_reverse,
		f->ns_mnt_next, f->fanotify_mnt, f->watch_mount);
	/* Each 6.11+ feature comes with listmount (6.8) or not at all. */
	CHECK(f->listmount || (!f->statmount_ns && !f->statmount_opts && !f->listmount_reverse));
	return 0;
}

int main(void)
{
	char root[256];
	int fail = 0, err = tu_private_root(root, sizeof(root));

	if (err)
		return err;
	fail |= RUN(test_features);
	fail |= RUN(test_auto);
	fail |= RUN(test_by_name);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
