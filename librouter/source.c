/* SPDX-License-Identifier: MIT */
/* Choosing a source: by name, or the best one this kernel offers. */
#include <errno.h>
#include <string.h>

#include "internal.h"

static const struct mr__source_ops *const by_preference[] = {
	&mr__source_watch_mount, /* every kind of change, filtered in the kernel */
	&mr__source_fanotify,    /* attach/detach from the kernel, the rest by sweep */
	&mr__source_mountinfo,   /* any kernel: re-read and diff */
};

int mr__source_pick(const char *name, const struct mr__source_ops **ret, const char **ret_reason)
{
	int err;

	if (name && strcmp(name, "auto")) {
		for (size_t i = 0; i < MR__ARRAY_SIZE(by_preference); i++) {
			const struct mr__source_ops *ops = by_preference[i];
			if (strcmp(name, ops->name))
				continue;
			err = ops->probe();
			if (err < 0)
				return err;
			*ret = ops;
			*ret_reason = "chosen by name";
			return 0;
		}
		return -EINVAL;
	}

	if (mr__source_watch_mount.probe() == 0) {
		*ret = &mr__source_watch_mount;
		*ret_reason = "watch_mount(2) is available: every change kind, per subtree";
	} else if ((err = mr__source_fanotify.probe()) == 0) {
		*ret = &mr__source_fanotify;
		*ret_reason = "no watch_mount(2); fanotify mount events (6.15+) are available";
	} else if (err == -EPERM || err == -EACCES) {
		/* The kernel has them; this caller may not use them. */
		*ret = &mr__source_mountinfo;
		*ret_reason = "fanotify mount events need CAP_SYS_ADMIN, which this process lacks: "
			      "re-reading mountinfo";
	} else {
		*ret = &mr__source_mountinfo;
		*ret_reason = "neither watch_mount(2) nor fanotify mount events: re-reading mountinfo";
	}
	return 0;
}
