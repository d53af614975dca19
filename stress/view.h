/* SPDX-License-Identifier: MIT */
/* A subscriber's rebuilt view of its subtree (view.c). Not thread-safe: callers lock. */
#ifndef MOUNTSTORM_VIEW_H
#define MOUNTSTORM_VIEW_H

#include "storm.h"

struct ms_view_slot {
	uint64_t id; /* 0: empty */
	char *path;
	char mopts[96];
};

struct ms_view {
	struct ms_view_slot *slots;
	size_t cap, n; /* cap: power of two, kept at least twice n */
};

void ms_view_clear(struct ms_view *v);
void ms_view_free(struct ms_view *v);
const struct ms_view_slot *ms_view_get(const struct ms_view *v, uint64_t id);
/* Adds or updates.  Returns 0 or -ENOMEM. */
int ms_view_put(struct ms_view *v, uint64_t id, const char *path, const char *mopts);
/* Returns whether @id was there. */
bool ms_view_del(struct ms_view *v, uint64_t id);
/* Whether the view equals @truth (sorted by ID) under @prefix; else says why. */
bool ms_view_matches(const struct ms_view *v, const struct ms_table *truth, const char *prefix,
		     char *why, size_t len);

#endif
