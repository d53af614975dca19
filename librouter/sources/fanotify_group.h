/* SPDX-License-Identifier: MIT */
/*
 * fanotify_group.c: one fanotify group for every namespace of a router.
 */
#ifndef MR_FANOTIFY_GROUP_H
#define MR_FANOTIFY_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "mountrouter.h"
#include "io/reactor.h"
#include "sources/decode.h"

struct mr__ns;

struct mr__fan_group;

/* A namespace's place in the group (in its source's state). */
struct mr__fan_member {
	struct mr__ns *ns;
	uint64_t ino; /* nsfs inode, to match a record's process with */
	/* Router thread: @c was applied to ns at @now_ns, taking @spent_ns. */
	void (*applied)(struct mr__fan_member *m, const struct mr__change *c, uint64_t spent_ns,
			uint64_t now_ns);
	struct mr__fan_group *group;
	bool started;
	bool attr_events; /* the kernel reports its attribute changes (FAN_MNT_ATTR_CHANGE) */
	uint64_t unclaimed_at_join;
};

/* Marks @m->ns in the router's group, making the group if needed (any thread). */
int mr__fan_group_join(mr_router *r, struct mr__fan_member *m);
/* Router thread: @m's records are routed to it from now on. */
int mr__fan_group_start(struct mr__fan_member *m, struct mr__reactor *re);
/* Notes the lines a record for @m uses in the group (warm.h).  Router thread. */
void mr__fan_group_warm(const struct mr__fan_member *m, struct mr__warm *w);
/* Unmarks @m; the last member out closes the group (through @re when it was started). */
void mr__fan_group_leave(struct mr__fan_member *m, struct mr__reactor *re);

#endif /* MR_FANOTIFY_GROUP_H */
