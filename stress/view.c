/* SPDX-License-Identifier: MIT */
/*
 * A subscriber's view of its subtree, rebuilt from nothing but its events:
 * SNAPSHOT resets it, MOUNT adds, UNMOUNT/EXPIRY removes, MOVE renames (or
 * removes, when the mount left the subtree), READONLY/ATTR update options.
 * At the end of every wave it must equal the ground truth.
 *
 * Keyed by mount ID in an open-addressing table with linear probing and
 * backward-shift deletion (no tombstones, so a storm of unmounts does not
 * slowly fill the table with dead slots).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

static size_t slot_of(uint64_t id, size_t mask)
{
	uint64_t z = id * 0x9e3779b97f4a7c15ull;
	return (size_t)(z ^ (z >> 29)) & mask;
}

void ms_view_clear(struct ms_view *v)
{
	for (size_t i = 0; i < v->cap; i++)
		if (v->slots[i].id) {
			free(v->slots[i].path);
			v->slots[i] = (struct ms_view_slot){0};
		}
	v->n = 0;
}

void ms_view_free(struct ms_view *v)
{
	ms_view_clear(v);
	free(v->slots);
	*v = (struct ms_view){0};
}

static int grow(struct ms_view *v)
{
	size_t cap = v->cap ? v->cap * 2 : 1024;
	struct ms_view_slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < v->cap; i++) {
		if (!v->slots[i].id)
			continue;
		size_t j = slot_of(v->slots[i].id, cap - 1);
		while (s[j].id)
			j = (j + 1) & (cap - 1);
		s[j] = v->slots[i];
	}
	free(v->slots);
	v->slots = s;
	v->cap = cap;
	return 0;
}

const struct ms_view_slot *ms_view_get(const struct ms_view *v, uint64_t id)
{
	if (!v->cap)
		return NULL;
	for (size_t j = slot_of(id, v->cap - 1);; j = (j + 1) & (v->cap - 1)) {
		if (!v->slots[j].id)
			return NULL;
		if (v->slots[j].id == id)
			return &v->slots[j];
	}
}

int ms_view_put(struct ms_view *v, uint64_t id, const char *path, const char *mopts)
{
	if ((v->n + 1) * 2 > v->cap && grow(v) < 0)
		return -ENOMEM;
	size_t j = slot_of(id, v->cap - 1);
	while (v->slots[j].id && v->slots[j].id != id)
		j = (j + 1) & (v->cap - 1);
	struct ms_view_slot *s = &v->slots[j];
	if (!s->id || strcmp(s->path, path)) {
		char *p = strdup(path);
		if (!p)
			return -ENOMEM;
		free(s->path);
		s->path = p;
	}
	if (!s->id)
		v->n++;
	s->id = id;
	snprintf(s->mopts, sizeof(s->mopts), "%s", mopts);
	return 0;
}

bool ms_view_del(struct ms_view *v, uint64_t id)
{
	if (!v->cap)
		return false;
	size_t mask = v->cap - 1, j = slot_of(id, mask);

	while (v->slots[j].id != id) {
		if (!v->slots[j].id)
			return false;
		j = (j + 1) & mask;
	}
	free(v->slots[j].path);
	v->slots[j] = (struct ms_view_slot){0};
	v->n--;
	/* Backward shift: pull later members of the probe run into the hole. */
	for (size_t k = (j + 1) & mask; v->slots[k].id; k = (k + 1) & mask) {
		size_t home = slot_of(v->slots[k].id, mask);
		/* Move k to j if its home is not cyclically within (j, k]. */
		if ((j < k && (home <= j || home > k)) || (j > k && home <= j && home > k)) {
			v->slots[j] = v->slots[k];
			v->slots[k] = (struct ms_view_slot){0};
			j = k;
		}
	}
	return true;
}

bool ms_view_matches(const struct ms_view *v, const struct ms_table *truth, const char *prefix,
		     char *why, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < truth->n; i++) {
		const struct ms_entry *e = &truth->v[i];
		if (!ms_in_subtree(e->path, prefix))
			continue;
		n++;
		const struct ms_view_slot *s = ms_view_get(v, e->id);
		if (!s) {
			snprintf(why, len, "missing %llu %s", (unsigned long long)e->id, e->path);
			return false;
		}
		if (strcmp(s->path, e->path)) {
			snprintf(why, len, "%llu at %s, truth %s", (unsigned long long)e->id, s->path,
				 e->path);
			return false;
		}
		if (strcmp(s->mopts, e->mopts)) {
			snprintf(why, len, "%llu %s options %s, truth %s", (unsigned long long)e->id,
				 e->path, s->mopts, e->mopts);
			return false;
		}
	}
	if (n != v->n) {
		/* Find one mount the view has and the truth does not. */
		for (size_t i = 0; i < v->cap; i++) {
			const struct ms_view_slot *s = &v->slots[i];
			if (s->id && (!ms_table_find(truth, s->id) ||
				      !ms_in_subtree(ms_table_find(truth, s->id)->path, prefix))) {
				snprintf(why, len, "stale %llu %s (view %zu, truth %zu)",
					 (unsigned long long)s->id, s->path, v->n, n);
				return false;
			}
		}
		snprintf(why, len, "view has %zu mounts, truth %zu", v->n, n);
		return false;
	}
	return true;
}
