/* SPDX-License-Identifier: MIT */
/*
 * event.c: events shared by every ring they are routed to.
 */
#ifndef MR_EVENT_H
#define MR_EVENT_H

#include <stdatomic.h>
#include <stdint.h>

#include "mountrouter.h"
#include "mirror/mount.h"

struct mr__event {
	struct mr_event pub;
	_Atomic uint32_t refs;
	struct mr__mount *now;  /* strings of pub point into these two */
	struct mr__mount *old;
	struct mr__mount **snap; /* SNAPSHOT: the records pub.mounts copies */
};

/*
 * A change event about @now (the mount after) and/or @old (before); holds a
 * reference to each.  refs starts at 0: the router sets it to the number of
 * rings the event goes to before enqueuing it anywhere.
 */
struct mr__event *mr__event_new(uint32_t kind, struct mr__mount *old, struct mr__mount *now);
/* The event kind that turns @old into @now (MOVE, READONLY or ATTR). */
uint32_t mr__event_kind_of(const struct mr__mount *old, const struct mr__mount *now);
struct mr__event *mr__event_marker(uint32_t kind);
/* A SNAPSHOT holding references to @n records of @v (copied). */
struct mr__event *mr__event_snapshot(struct mr__mount **v, size_t n);
/* Frees an event no ring took (refs still 0). */
void mr__event_discard(struct mr__event *ev);

#endif /* MR_EVENT_H */
