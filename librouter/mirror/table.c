/* SPDX-License-Identifier: MIT */
/*
 * A table: the mounts of one whole read of a namespace (mountinfo or
 * listmount), in the order the kernel gave them.
 */
#include <errno.h>

#include "alloc.h"
#include "mirror/mount.h"

/*
 * Takes the caller's reference to @m even on failure (it is dropped then),
 * so a reader can build and push without a cleanup path of its own.
 * Returns 0 or -ENOMEM.
 */
int mr__table_push(struct mr__table *t, struct mr__mount *m)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct mr__mount **v;

		if (cap > SIZE_MAX / sizeof(*v)) {
			mr__mount_unref(m);
			return -ENOMEM;
		}
		v = mr__realloc(t->v, cap * sizeof(*v));
		if (!v) {
			mr__mount_unref(m);
			return -ENOMEM;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = m;
	return 0;
}

/* Drops every reference and frees the array; the table is then empty and reusable. */
void mr__table_clear(struct mr__table *t)
{
	for (size_t i = 0; i < t->n; i++)
		mr__mount_unref(t->v[i]);
	mr__free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
