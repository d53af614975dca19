/* SPDX-License-Identifier: MIT */
/*
 * A program built only from what `cmake --install` put in a prefix: it
 * starts a router on the mountinfo source (any kernel, no privilege),
 * takes a snapshot of its own namespace and checks the root mount against
 * /proc/self/mountinfo, so that a library that links but does not work
 * fails here too.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <mountrouter.h>

/* The mountinfo ID of the mount at "/", from the file itself. */
static unsigned root_mountinfo_id(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];
	unsigned id, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char point[4096];
		if (sscanf(line, "%u %*u %*s %*s %4095s", &id, point) == 2 && !strcmp(point, "/"))
			found = id;
	}
	fclose(f);
	return found;
}

int main(void)
{
	struct mr_opts o = {.size = sizeof(o), .source = "mountinfo"};
	struct mr_sub_opts so = {.size = sizeof(so), .flags = MR_SUB_SNAPSHOT, .subtree = "/"};
	const struct mr_event *ev = NULL;
	mr_router *r;
	mr_sub *s;
	uint32_t kind;
	int err;

	if (strcmp(mr_version(), MR_VERSION_STRING)) {
		fprintf(stderr, "header %s, library %s\n", MR_VERSION_STRING, mr_version());
		return 1;
	}
	if (mr_event_kind_parse("umount", &kind) || kind != MR_EVENT_UNMOUNT)
		return 1;
	if ((err = mr_router_new(&o, &r)) < 0) {
		fprintf(stderr, "mr_router_new: %s\n", strerror(-err));
		return 1;
	}
	if ((err = mr_subscribe(r, &so, &s)) < 0) {
		fprintf(stderr, "mr_subscribe: %s\n", strerror(-err));
		return 1;
	}
	for (int i = 0; i < 100 && mr_sub_next(s, &ev) == -EAGAIN; i++) {
		struct pollfd p = {.fd = mr_router_fd(r), .events = POLLIN};
		poll(&p, 1, 10);
		mr_router_dispatch(r);
	}
	if (!ev || ev->kind != MR_EVENT_SNAPSHOT || !ev->n_mounts) {
		fprintf(stderr, "no snapshot\n");
		return 1;
	}
	unsigned want = root_mountinfo_id(), got = 0;
	for (size_t i = 0; i < ev->n_mounts; i++)
		if (!strcmp(ev->mounts[i].path, "/"))
			got = ev->mounts[i].mountinfo_id;
	if (!want || got != want) {
		fprintf(stderr, "root mount: mountinfo ID %u, the snapshot says %u\n", want, got);
		return 1;
	}
	printf("mountrouter %s: %zu mounts, / is mountinfo ID %u\n", mr_version(), ev->n_mounts,
	       got);
	mr_event_unref(ev);
	mr_unsubscribe(s);
	mr_router_free(r);
	return 0;
}
