/* SPDX-License-Identifier: MIT */
/*
 * The contracts mountrouter.h states that need no mount namespace: what
 * each call refuses and with which error, out-parameters left untouched on
 * failure, NULL accepted by every free, kind names and MR_KIND_LIMIT,
 * start/stop/dispatch exclusion.  Public API only.  Routers are made
 * without a namespace (io_uring alone; skipped without it).
 */
#include <errno.h>
#include <string.h>

#include "testutil.h"

/* A value no call may write: out-parameters must be left as they were. */
#define UNTOUCHED ((void *)0x5a5a5a5a)

static int new_router(mr_router **ret)
{
	struct mr_opts o = {.size = sizeof(o), .flags = MR_OPT_NO_SELF_NS, .source = "mountinfo"};

	return mr_router_new(&o, ret);
}

static int test_null_accepted(void)
{
	/* Every free and unref accepts NULL; every other call says -EINVAL. */
	mr_router_free(NULL);
	mr_unsubscribe(NULL);
	mr_event_unref(NULL);
	const struct mr_event *ev = UNTOUCHED;
	struct mr_stats st;
	CHECK(mr_sub_next(NULL, &ev) == -EINVAL && ev == UNTOUCHED);
	CHECK(mr_sub_fd(NULL) == -EINVAL);
	CHECK(mr_sub_wait(NULL, 0) == -EINVAL);
	CHECK(mr_router_fd(NULL) == -EINVAL);
	CHECK(mr_router_stats(NULL, &st) == -EINVAL);
	CHECK(mr_router_dispatch(NULL) == -EINVAL);
	CHECK(mr_router_wait(NULL, 0) == -EINVAL);
	CHECK_STR(mr_router_source(NULL), "");
	CHECK_STR(mr_router_source_reason(NULL), "");
	return 0;
}

static int test_kinds(void)
{
	unsigned known = 0;

	/* Every kind has a name below MR_KIND_LIMIT, and every name parses back. */
	for (uint32_t k = 0; k < MR_KIND_LIMIT; k++) {
		const char *name = mr_event_kind_name(k);
		uint32_t back = 0;
		bool named = strcmp(name, "unknown") != 0;
		CHECK(named == (k >= MR_EVENT_MOUNT && k <= MR_EVENT_NS_GONE));
		CHECK(!(MR_KIND(k) & MR_KINDS_ALL) || named);
		if (!named)
			continue;
		known++;
		CHECK(mr_event_kind_parse(name, &back) == 0 && back == k);
	}
	CHECK(known == MR_EVENT_NS_GONE);
	CHECK_STR(mr_event_kind_name(MR_KIND_LIMIT), "unknown");
	CHECK_STR(mr_event_kind_name(UINT32_MAX), "unknown");

	uint32_t kind = 12345;
	CHECK(mr_event_kind_parse("umount", &kind) == 0 && kind == MR_EVENT_UNMOUNT);
	kind = 12345;
	CHECK(mr_event_kind_parse("no-such-kind", &kind) == -EINVAL && kind == 12345);
	CHECK(mr_event_kind_parse(NULL, &kind) == -EINVAL);
	return 0;
}

/* mr_router_new's refusals, each before any kernel object is made. */
static int test_router_new_refusals(void)
{
	mr_router *r = UNTOUCHED;
	struct mr_opts o = {.size = sizeof(o), .flags = MR_OPT_NO_SELF_NS};

	o.batch = 4097; /* 1..4096 */
	CHECK(mr_router_new(&o, &r) == -EINVAL && r == UNTOUCHED);
	o.batch = 0x80000000u; /* twice that wraps to 0 in an unsigned */
	CHECK(mr_router_new(&o, &r) == -EINVAL && r == UNTOUCHED);
	o.batch = 0;
	o.flags = 1u << 31;
	CHECK(mr_router_new(&o, &r) == -EINVAL && r == UNTOUCHED);
	o.flags = MR_OPT_NO_SELF_NS;
	o.source = "no-such-source";
	CHECK(mr_router_new(&o, &r) == -EINVAL && r == UNTOUCHED);
	o.source = NULL;
	o.size = sizeof(size_t); /* shorter than the oldest layout (up to 'source') */
	CHECK(mr_router_new(&o, &r) == -EINVAL && r == UNTOUCHED);
	CHECK(mr_router_new(&o, NULL) == -EINVAL);
	return 0;
}

/* The largest batch is taken (an io_uring of 8192 entries). */
static int test_router_new_largest_batch(void)
{
	struct mr_opts o = {.size = sizeof(o), .flags = MR_OPT_NO_SELF_NS, .source = "mountinfo",
			    .batch = 4096};
	mr_router *r;

	CHECK(mr_router_new(&o, &r) == 0);
	mr_router_free(r);
	return 0;
}

static int test_subscribe_refusals(void)
{
	mr_router *r;
	mr_sub *s = UNTOUCHED;

	CHECK(new_router(&r) == 0);
	struct mr_sub_opts big = {.size = sizeof(big), .capacity = (1u << 22) + 1};
	CHECK(mr_subscribe(r, &big, &s) == -EINVAL && s == UNTOUCHED);
	struct mr_sub_opts o = {.size = sizeof(o)};
	/* No namespace at all: "0, the first added" names none. */
	CHECK(mr_subscribe(r, &o, &s) == -ENOENT && s == UNTOUCHED);
	CHECK(mr_subscribe(r, NULL, &s) == -ENOENT && s == UNTOUCHED);
	o.ns_id = 42;
	CHECK(mr_subscribe(r, &o, &s) == -ENOENT && s == UNTOUCHED);
	o.ns_id = 0;
	o.flags = 1u << 31;
	CHECK(mr_subscribe(r, &o, &s) == -EINVAL && s == UNTOUCHED);
	o.flags = 0;
	o.kinds = MR_KIND(MR_EVENT_OVERRUN); /* markers are not asked for, they come */
	CHECK(mr_subscribe(r, &o, &s) == -EINVAL && s == UNTOUCHED);
	o.kinds = 0;
	o.subtree = "relative/path";
	CHECK(mr_subscribe(r, &o, &s) == -EINVAL && s == UNTOUCHED);
	o.subtree = NULL;
	o.size = sizeof(o) - sizeof(uint32_t); /* every field is read */
	CHECK(mr_subscribe(r, &o, &s) == -EINVAL && s == UNTOUCHED);
	CHECK(mr_router_remove_ns(r, 42) == -ENOENT);
	mr_router_free(r);
	return 0;
}

/* One router thread, or one dispatching caller: never both. */
static int test_start_stop_dispatch(void)
{
	mr_router *r;

	CHECK(new_router(&r) == 0);
	CHECK(mr_router_stop(r) == -EALREADY);
	CHECK(mr_router_dispatch(r) >= 0);
	CHECK(mr_router_fd(r) >= 0);
	CHECK(mr_router_start(r) == 0);
	CHECK(mr_router_start(r) == -EALREADY);
	CHECK(mr_router_dispatch(r) == -EBUSY);
	CHECK(mr_router_wait(r, 0) == -EBUSY);
	CHECK(mr_router_stop(r) == 0);
	CHECK(mr_router_stop(r) == -EALREADY);
	CHECK(mr_router_dispatch(r) >= 0);
	/* Freed while running: free stops the thread itself. */
	CHECK(mr_router_start(r) == 0);
	mr_router_free(r);
	return 0;
}

int main(void)
{
	int fail = 0, err;
	mr_router *r;

	fail |= RUN(test_null_accepted);
	fail |= RUN(test_kinds);
	fail |= RUN(test_router_new_refusals);
	err = new_router(&r);
	if (err == -ENOSYS || err == -EPERM || err == -EACCES) {
		tu_skip("no io_uring for a router (%s): the calls on a router untried",
			strerror(-err));
		return fail ? T_EXIT_FAIL : T_EXIT_SKIP;
	}
	mr_router_free(r);
	fail |= RUN(test_router_new_largest_batch);
	fail |= RUN(test_subscribe_refusals);
	fail |= RUN(test_start_stop_dispatch);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
