/* SPDX-License-Identifier: MIT */
/*
 * Choosing a source: by name, or the best one this kernel offers, found by
 * probing (never by version number: distributions backport).  A namespace
 * that the chosen source cannot watch (a per-user limit, a kernel that
 * cannot name another namespace) falls back to the next one that can.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sources/source.h"
#include "internal.h"

static const struct mr__source_ops *const by_preference[] = {
	&mr__source_watch_mount, /* every kind of change, filtered in the kernel */
	&mr__source_fanotify,    /* attach/detach from the kernel, the rest by sweep */
	&mr__source_listmount,   /* a doorbell, then a list of IDs and a diff */
	&mr__source_mountinfo,   /* any kernel: re-read and diff */
};

#ifdef MR_TEST_HOOKS
/* Test builds only: one more source, by its name (the model kernel of tests/). */
const struct mr__source_ops *mr__source_test;
#endif
/* Why each source is the best available, given that the ones above it are not. */
static const char *const why_chosen[] = {
	"watch_mount(2) is available: every change kind, per subtree",
	"no watch_mount(2); fanotify mount events (6.15+) are available",
	"no watch_mount(2) nor fanotify mount events; listmount(2) (6.8+) is available: "
	"mountinfo POLLPRI as a doorbell, a diff of mount IDs",
	"no watch_mount(2), fanotify mount events nor listmount(2): re-reading mountinfo",
};

int mr__source_pick(const char *name, const struct mr__source_ops **ret, const char **ret_reason)
{
#ifdef MR_TEST_HOOKS
	if (name && mr__source_test && !strcmp(name, mr__source_test->name)) {
		*ret = mr__source_test;
		*ret_reason = "chosen by name";
		return 0;
	}
#endif
	if (name && strcmp(name, "auto")) {
		for (size_t i = 0; i < MR__ARRAY_SIZE(by_preference); i++) {
			const struct mr__source_ops *ops = by_preference[i];
			if (strcmp(name, ops->name))
				continue;
			int err = ops->probe();
			if (err < 0)
				return err;
			*ret = ops;
			*ret_reason = "chosen by name";
			return 0;
		}
		return -EINVAL;
	}

	/* mountinfo, last, always probes 0. */
	bool unprivileged = false;
	for (size_t i = 0; i < MR__ARRAY_SIZE(by_preference); i++) {
		int err = by_preference[i]->probe();
		if (err == -EPERM || err == -EACCES)
			unprivileged = true; /* the kernel has it; this caller may not use it */
		if (err == 0) {
			*ret = by_preference[i];
			*ret_reason = unprivileged && i > 1
				? "fanotify mount events need CAP_SYS_ADMIN, which this process "
				  "lacks: the next source that probes"
				: why_chosen[i];
			return 0;
		}
	}
	return -ENOSYS;
}

const struct mr__source_ops *mr__source_fallback(const struct mr__source_ops *failed, int err,
						 const char **ret_reason)
{
	size_t i = 0;

	/* Only what says "not for this namespace": other errors are the caller's. */
	if (err != -EMFILE && err != -ENFILE && err != -ENOSPC && err != -EOPNOTSUPP &&
	    err != -ENOSYS && err != -EPERM && err != -EACCES)
		return NULL;
	while (i < MR__ARRAY_SIZE(by_preference) && by_preference[i] != failed)
		i++;
	for (i++; i < MR__ARRAY_SIZE(by_preference); i++) {
		if (by_preference[i]->probe() < 0)
			continue;
		switch (err) {
		case -EMFILE:
		case -ENFILE:
		case -ENOSPC:
			*ret_reason = "the chosen source hit a limit (fanotify groups or marks, "
				      "open files) for this namespace: the next one that probes";
			break;
		case -EOPNOTSUPP:
			*ret_reason = "the chosen source cannot watch this namespace on this kernel "
				      "(no mnt_ns_id, or another namespace's paths come back empty): "
				      "the next one that probes";
			break;
		default:
			*ret_reason = "the chosen source was refused for this namespace: the next "
				      "one that probes";
			break;
		}
		return by_preference[i];
	}
	return NULL;
}
