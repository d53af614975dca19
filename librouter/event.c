/* SPDX-License-Identifier: MIT */
/*
 * Events: built once on the router thread, shared read-only by every ring
 * they are routed to, freed by whichever subscriber drops the last
 * reference.  Strings are never copied: they point into the immutable mount
 * records the event holds.
 */
#include <errno.h>
#include <string.h>

#include "event.h"
#include "internal.h"
#include "alloc.h"
#include "mirror/mount.h"

static const char *const kind_names[] = {
	[MR_EVENT_MOUNT] = "mount",
	[MR_EVENT_UNMOUNT] = "unmount",
	[MR_EVENT_MOVE] = "move",
	[MR_EVENT_READONLY] = "readonly",
	[MR_EVENT_ATTR] = "attr",
	[MR_EVENT_EXPIRY] = "expiry",
	[MR_EVENT_OVERRUN] = "overrun",
	[MR_EVENT_RESYNC_BEGIN] = "resync-begin",
	[MR_EVENT_RESYNC_END] = "resync-end",
	[MR_EVENT_SNAPSHOT] = "snapshot",
	[MR_EVENT_NS_GONE] = "ns-gone",
};

const char *mr_event_kind_name(uint32_t kind)
{
	if (kind < MR__ARRAY_SIZE(kind_names) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

int mr_event_kind_parse(const char *name, uint32_t *ret_kind)
{
	/* findmnt --poll's action names, and the words people use. */
	static const struct {
		const char *name;
		uint32_t kind;
	} aliases[] = {
		{"umount", MR_EVENT_UNMOUNT},   {"remount", MR_EVENT_ATTR},
		{"setattr", MR_EVENT_ATTR},     {"ro", MR_EVENT_READONLY},
		{"move", MR_EVENT_MOVE},        {"expire", MR_EVENT_EXPIRY},
	};

	if (!name)
		return -EINVAL;
	for (uint32_t k = 1; k < MR__ARRAY_SIZE(kind_names); k++)
		if (!strcmp(name, kind_names[k])) {
			*ret_kind = k;
			return 0;
		}
	for (size_t i = 0; i < MR__ARRAY_SIZE(aliases); i++)
		if (!strcmp(name, aliases[i].name)) {
			*ret_kind = aliases[i].kind;
			return 0;
		}
	return -EINVAL;
}

static struct mr__event *event_alloc(uint32_t kind)
{
	struct mr__event *ev = mr__calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->pub.kind = kind;
	ev->pub.path = ev->pub.old_path = "";
	ev->pub.source = ev->pub.fstype = "";
	ev->pub.options = ev->pub.old_options = "";
	return ev;
}

struct mr__event *mr__event_new(uint32_t kind, struct mr__mount *old, struct mr__mount *now)
{
	struct mr__event *ev = event_alloc(kind);
	const struct mr__mount *m = now ? now : old;

	if (!ev)
		return NULL;
	if (now)
		ev->now = mr__mount_ref(now);
	if (old)
		ev->old = mr__mount_ref(old);
	if (m) {
		ev->pub.mnt_id = m->pub.id;
		ev->pub.parent_id = m->pub.parent_id;
		ev->pub.path = m->pub.path;
		ev->pub.source = m->pub.source;
		ev->pub.fstype = m->pub.fstype;
		ev->pub.options = m->pub.options;
		ev->pub.attr = m->pub.attr;
		ev->pub.propagation = m->pub.propagation;
		ev->pub.mount = &m->pub;
		if (mr__mount_readonly(m))
			ev->pub.flags |= MR_EVF_READONLY;
	}
	if (old && now) {
		ev->pub.old_attr = old->pub.attr;
		ev->pub.old_propagation = old->pub.propagation;
		ev->pub.old_mount = &old->pub;
		ev->pub.old_options = old->pub.options;
		if (kind == MR_EVENT_MOVE)
			ev->pub.old_path = old->pub.path;
	}
	return ev;
}

/* The event kind that turns @old into @now. */
uint32_t mr__event_kind_of(const struct mr__mount *old, const struct mr__mount *now)
{
	/*
	 * A new parent is a move even where the path stays: an umount that
	 * takes a mount's parent away re-parents it onto the grandparent, at
	 * the same place (fanotify says attach|detach for it).
	 */
	if (strcmp(old->pub.path, now->pub.path) || old->pub.parent_id != now->pub.parent_id)
		return MR_EVENT_MOVE;
	if (mr__mount_readonly(old) != mr__mount_readonly(now))
		return MR_EVENT_READONLY;
	return MR_EVENT_ATTR;
}

struct mr__event *mr__event_marker(uint32_t kind)
{
	return event_alloc(kind);
}

struct mr__event *mr__event_snapshot(struct mr__mount **v, size_t n)
{
	struct mr__event *ev = event_alloc(MR_EVENT_SNAPSHOT);
	struct mr_mount *mounts;

	if (!ev)
		return NULL;
	ev->snap = mr__calloc(n ? n : 1, sizeof(*ev->snap));
	mounts = mr__calloc(n ? n : 1, sizeof(*mounts));
	if (!ev->snap || !mounts) {
		mr__free(ev->snap);
		mr__free(mounts);
		mr__free(ev);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		ev->snap[i] = mr__mount_ref(v[i]);
		mounts[i] = v[i]->pub;
	}
	ev->pub.mounts = mounts;
	ev->pub.n_mounts = n;
	return ev;
}

static void event_free(struct mr__event *ev)
{
	mr__mount_unref(ev->now);
	mr__mount_unref(ev->old);
	for (size_t i = 0; i < ev->pub.n_mounts; i++)
		mr__mount_unref(ev->snap[i]);
	mr__free(ev->snap);
	mr__free((void *)ev->pub.mounts);
	mr__free(ev);
}

void mr__event_discard(struct mr__event *ev)
{
	if (ev)
		event_free(ev);
}

void mr_event_unref(const struct mr_event *pub)
{
	struct mr__event *ev;

	if (!pub)
		return;
	ev = (struct mr__event *)((char *)pub - offsetof(struct mr__event, pub));
	/* acq_rel: the last owner must see every other owner's reads done. */
	if (atomic_fetch_sub_explicit(&ev->refs, 1, memory_order_acq_rel) == 1)
		event_free(ev);
}
