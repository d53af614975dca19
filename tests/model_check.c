/* SPDX-License-Identifier: MIT */
/* The model kernel behind a router, and the router's invariants (model.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static bool lenient;

/* Lenient: the views follow the events but nothing is judged (under a fault). */
#define FAILF(...)                                                                       \
	do {                                                                             \
		if (!lenient) {                                                          \
			fprintf(stderr, "invariant: " __VA_ARGS__);                      \
			fputc('\n', stderr);                                             \
			return 1;                                                        \
		}                                                                        \
	} while (0)

extern const struct mr__source_ops *mr__source_test;

int model_router(struct model *k, mr_router **ret, struct view *views, size_t nviews,
		 const char *const *prefixes, uint32_t capacity)
{
	struct mr_opts o = { .size = sizeof(o), .source = "model" };
	int err;

	model_current = k;
	mr__source_test = &model_source_ops;
	*ret = NULL;
	for (size_t i = 0; i < nviews; i++)
		views[i].s = NULL;
	err = mr_router_new(&o, ret);
	if (err < 0)
		return err;
	for (size_t i = 0; i < nviews; i++) {
		struct view *v = &views[i];
		memset(v, 0, sizeof(*v));
		snprintf(v->prefix, sizeof(v->prefix), "%s", prefixes && prefixes[i] ? prefixes[i] : "/");
		struct mr_sub_opts so = { .size = sizeof(so), .subtree = v->prefix,
					  .flags = MR_SUB_SNAPSHOT, .capacity = capacity };
		err = mr_subscribe(*ret, &so, &v->s);
		if (err < 0)
			return err;
	}
	return 0;
}

static bool in_subtree(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1)
		return true;
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

static struct view_ent *view_find(struct view *v, uint64_t id)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->e[i].id == id)
			return &v->e[i];
	return NULL;
}

static void view_del(struct view *v, uint64_t id)
{
	struct view_ent *e = view_find(v, id);

	if (e)
		*e = v->e[--v->n];
}

static int view_set(struct view *v, uint64_t id, uint64_t parent, const char *path)
{
	struct view_ent *e = view_find(v, id);

	if (!e) {
		if (v->n == MR__ARRAY_SIZE(v->e)) {
			fprintf(stderr, "invariant: view of %s overflows\n", v->prefix);
			return 1;
		}
		e = &v->e[v->n++];
	}
	e->id = id;
	e->parent = parent;
	snprintf(e->path, sizeof(e->path), "%s", path);
	return 0;
}

static int view_event(struct view *v, const struct mr_event *ev)
{
	if (ev->seq <= v->last_seq)
		FAILF("%s: seq %llu after %llu", v->prefix, (unsigned long long)ev->seq,
		      (unsigned long long)v->last_seq);
	v->last_seq = ev->seq;
	v->events++;
	if (getenv("FUZZ_TRACE"))
		fprintf(stderr, "  %s: %s %llu %s (old %s) parent %llu%s\n", v->prefix,
			mr_event_kind_name(ev->kind), (unsigned long long)ev->mnt_id, ev->path,
			ev->old_path, (unsigned long long)ev->parent_id,
			ev->flags & MR_EVF_SYNTHETIC ? " synthetic" : "");
	switch (ev->kind) {
	case MR_EVENT_SNAPSHOT:
		v->snapshots++;
		v->n = 0;
		for (size_t i = 0; i < ev->n_mounts; i++) {
			const struct mr_mount *m = &ev->mounts[i];
			if (!in_subtree(m->path, v->prefix))
				FAILF("%s: snapshot holds %s", v->prefix, m->path);
			/* Parents first: a parent in the snapshot comes before its child. */
			for (size_t j = i + 1; j < ev->n_mounts; j++)
				if (ev->mounts[j].id == m->parent_id && m->parent_id != m->id)
					FAILF("%s: snapshot lists %s (%llu) before its parent %llu",
					      v->prefix, m->path, (unsigned long long)m->id,
					      (unsigned long long)m->parent_id);
			if (view_set(v, m->id, m->parent_id, m->path))
				return 1;
		}
		return 0;
	case MR_EVENT_OVERRUN:
		v->overruns++;
		return 0;
	case MR_EVENT_RESYNC_BEGIN:
	case MR_EVENT_RESYNC_END:
		return 0;
	default:
		break;
	}
	bool here = in_subtree(ev->path, v->prefix);
	if (!here && !(ev->kind == MR_EVENT_MOVE && in_subtree(ev->old_path, v->prefix)))
		FAILF("%s: %s of %s is outside the subtree", v->prefix, mr_event_kind_name(ev->kind),
		      ev->path);
	switch (ev->kind) {
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		for (size_t i = 0; i < v->n; i++)
			if (v->e[i].parent == ev->mnt_id && v->e[i].id != ev->mnt_id)
				FAILF("%s: %s (%llu) gone before its child %s (%llu)", v->prefix,
				      ev->path, (unsigned long long)ev->mnt_id, v->e[i].path,
				      (unsigned long long)v->e[i].id);
		view_del(v, ev->mnt_id);
		return 0;
	case MR_EVENT_MOUNT:
		/*
		 * Not checked: that a mount is told before a mount it holds.  A
		 * refresh started by an earlier record of a batch can meet a
		 * mount already moved below one whose attach record comes
		 * later in the batch, and report the move first.
		 */
	default:
		if (here)
			return view_set(v, ev->mnt_id, ev->parent_id, ev->path);
		view_del(v, ev->mnt_id);
		return 0;
	}
}

int model_check_mirror(struct model *k)
{
	struct mr__mirror *mi = &k->ns->mirror;
	char path[1024], size[32];

	if (mi->n != model_count(k))
		FAILF("mirror holds %zu mounts, the model %zu", mi->n, model_count(k));
	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++) {
		const struct model_mount *mm = &k->m[i];
		const struct model_sb *sb = &k->sb[mm->sb];

		if (!mm->live)
			continue;
		struct mr__mount *m = mr__mirror_get(mi, mm->id);
		model_path(k, mm, path, sizeof(path));
		if (!m)
			FAILF("mount %llu (%s) missing from the mirror", (unsigned long long)mm->id, path);
		if (strcmp(m->pub.path, path))
			FAILF("mount %llu at %s in the mirror, %s in the model",
			      (unsigned long long)mm->id, m->pub.path, path);
		if (mm->parent != mm->id && m->pub.parent_id != mm->parent)
			FAILF("mount %llu: parent %llu in the mirror, %llu in the model",
			      (unsigned long long)mm->id, (unsigned long long)m->pub.parent_id,
			      (unsigned long long)mm->parent);
		if (mr__mount_readonly(m) != (mm->ro || sb->ro))
			FAILF("mount %llu (%s): read-only %d in the mirror, %d in the model",
			      (unsigned long long)mm->id, path, mr__mount_readonly(m), mm->ro || sb->ro);
		snprintf(size, sizeof(size), "size=%uk", sb->size);
		const char *p = strstr(m->pub.options, size);
		if (!p || (p[strlen(size)] && p[strlen(size)] != ','))
			FAILF("mount %llu (%s): options %s in the mirror, %s in the model",
			      (unsigned long long)mm->id, path, m->pub.options, size);
		/* A tree: every mount but the root has its parent mirrored. */
		if (mm->parent != mm->id && !mr__mirror_get(mi, mm->parent))
			FAILF("mount %llu (%s): parent %llu not mirrored", (unsigned long long)mm->id,
			      path, (unsigned long long)mm->parent);
	}
	return 0;
}

void model_batch_unjudged(struct model *k, mr_router *r, struct view *views, size_t nviews)
{
	lenient = true;
	(void)model_batch(k, r, views, nviews);
	lenient = false;
}

int model_batch(struct model *k, mr_router *r, struct view *views, size_t nviews)
{
	model_deliver(k);
	/* A step runs commands, resyncs and catch-ups; twice lets a kicked recovery run. */
	for (int i = 0; i < 2; i++) {
		int n = mr_router_dispatch(r);
		if (n < 0)
			FAILF("dispatch: %s", strerror(-n));
		for (size_t j = 0; j < nviews; j++) {
			const struct mr_event *ev;
			while (mr_sub_next(views[j].s, &ev) == 0) {
				int bad = view_event(&views[j], ev);
				mr_event_unref(ev);
				if (bad)
					return 1;
			}
		}
	}
	if (lenient)
		return 0;
	if (model_check_mirror(k))
		return 1;
	for (size_t j = 0; j < nviews; j++) {
		struct view *v = &views[j];
		size_t in = 0;

		/* A subscriber that overran and waits for its snapshot is judged later. */
		if (v->s->overrun)
			continue;
		for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++) {
			char path[1024];
			const struct model_mount *mm = &k->m[i];
			if (!mm->live || !in_subtree(model_path(k, mm, path, sizeof(path)), v->prefix))
				continue;
			in++;
			const struct view_ent *e = view_find(v, mm->id);
			if (!e || strcmp(e->path, path))
				FAILF("%s: the subscriber has %llu at %s, the model at %s", v->prefix,
				      (unsigned long long)mm->id, e ? e->path : "(nothing)", path);
		}
		if (in != v->n)
			FAILF("%s: the subscriber holds %zu mounts, the model %zu", v->prefix, v->n, in);
	}
	return 0;
}
