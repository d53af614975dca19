/* SPDX-License-Identifier: MIT */
/* The model kernel (model.h): a mount tree, its records, and a source over it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>

#include "model.h"
#include "mountrouter-uapi.h"

struct model *model_current;

const char *model_source_name(enum model_source src)
{
	return src == MODEL_WATCH_MOUNT ? "watch_mount" : src == MODEL_FANOTIFY ? "fanotify" : "mountinfo";
}

void model_init(struct model *k, enum model_source src)
{
	memset(k, 0, sizeof(*k));
	k->source = src;
	k->sb[0] = (struct model_sb){ .minor = 100, .size = 1 };
	k->n_sb = 1;
	/* The namespace's root is its own parent, as statmount says. */
	k->m[0] = (struct model_mount){ .live = true, .id = 1, .parent = 1, .sb = 0 };
	k->next_id = 2;
}

struct model_mount *model_get(struct model *k, uint64_t id)
{
	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++)
		if (k->m[i].live && k->m[i].id == id)
			return &k->m[i];
	return NULL;
}

size_t model_count(const struct model *k)
{
	size_t n = 0;

	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++)
		n += k->m[i].live;
	return n;
}

const char *model_path(const struct model *k, const struct model_mount *mm, char *out, size_t len)
{
	const struct model_mount *chain[MODEL_MAX_MOUNTS];
	size_t n = 0, o = 0;

	/* Root first: collect the ancestors, then join their mount points. */
	while (mm && mm->id != mm->parent && n < MODEL_MAX_MOUNTS) {
		chain[n++] = mm;
		mm = model_get((struct model *)k, mm->parent);
	}
	out[0] = '\0';
	while (n--) {
		if (!chain[n]->mp[0])
			continue;
		o += (size_t)snprintf(out + o, o < len ? len - o : 0, "/%s", chain[n]->mp);
	}
	if (!o)
		snprintf(out, len, "/");
	return out;
}

bool model_below(const struct model *k, uint64_t id, uint64_t anc)
{
	for (size_t steps = 0; steps < MODEL_MAX_MOUNTS; steps++) {
		const struct model_mount *mm = model_get((struct model *)k, id);

		if (id == anc)
			return true;
		if (!mm || mm->parent == mm->id)
			return false;
		id = mm->parent;
	}
	return false;
}

/* ---- records ---- */

static void put_rec(struct model *k, const void *p, size_t n)
{
	if (k->rec_len + n > sizeof(k->rec))
		model_deliver(k); /* a full read buffer: the router reads it, more follow */
	memcpy(k->rec + k->rec_len, p, n);
	k->rec_len += n;
}

static void fan_rec(struct model *k, uint64_t mask, uint64_t id)
{
	struct {
		struct fanotify_event_metadata md;
		struct mr_fanotify_info_mnt mnt;
	} r;

	memset(&r, 0, sizeof(r));
	r.md.event_len = sizeof(r);
	r.md.vers = FANOTIFY_METADATA_VERSION;
	r.md.metadata_len = sizeof(r.md);
	r.md.mask = mask;
	r.md.fd = FAN_NOFD;
	r.mnt.info_type = FAN_EVENT_INFO_TYPE_MNT;
	r.mnt.len = sizeof(r.mnt);
	r.mnt.mnt_id = id;
	put_rec(k, &r, sizeof(r));
}

static void wq_rec(struct model *k, unsigned subtype, uint64_t on, uint64_t aux, uint32_t flags)
{
	struct mount_notification n;

	memset(&n, 0, sizeof(n));
	n.watch.type = WATCH_TYPE_MOUNT_NOTIFY;
	n.watch.subtype = subtype;
	n.watch.info = (uint32_t)sizeof(n) | flags;
	n.triggered_on = on;
	n.auxiliary_mount = aux;
	put_rec(k, &n, sizeof(n));
}

/* A change the kernel reports on @id (watch_mount only; fanotify is silent). */
static void attr_rec(struct model *k, uint64_t id, unsigned subtype)
{
	if (k->source == MODEL_WATCH_MOUNT)
		wq_rec(k, subtype, id, 0, 0);
	k->dirty = true;
}

void model_loss(struct model *k)
{
	if (k->source == MODEL_WATCH_MOUNT) {
		struct watch_notification w = { .type = WATCH_TYPE_META,
						.subtype = WATCH_META_LOSS_NOTIFICATION,
						.info = 8 };
		put_rec(k, &w, sizeof(w));
	} else if (k->source == MODEL_FANOTIFY) {
		struct fanotify_event_metadata md = { .event_len = sizeof(md),
						      .vers = FANOTIFY_METADATA_VERSION,
						      .metadata_len = sizeof(md),
						      .mask = FAN_Q_OVERFLOW, .fd = FAN_NOFD };
		put_rec(k, &md, sizeof(md));
	}
	k->dirty = true;
}

/* ---- operations ---- */

static struct model_mount *new_slot(struct model *k)
{
	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++)
		if (!k->m[i].live)
			return &k->m[i];
	return NULL;
}

static int attach(struct model *k, int sb, uint64_t parent, const char *mp, uint64_t *ret_id)
{
	struct model_mount *mm;

	if (!model_get(k, parent) || strlen(mp) >= sizeof(mm->mp) || !(mm = new_slot(k)))
		return -EINVAL;
	*mm = (struct model_mount){ .live = true, .id = k->next_id++, .parent = parent, .sb = sb };
	strcpy(mm->mp, mp);
	if (k->source == MODEL_WATCH_MOUNT)
		wq_rec(k, NOTIFY_MOUNT_NEW_MOUNT, parent, mm->id, 0);
	else if (k->source == MODEL_FANOTIFY)
		fan_rec(k, FAN_MNT_ATTACH, mm->id);
	k->dirty = true;
	if (ret_id)
		*ret_id = mm->id;
	return 0;
}

int model_mount_new(struct model *k, uint64_t parent, const char *mp, uint64_t *ret_id)
{
	if (k->n_sb == MODEL_MAX_SB)
		return -EINVAL;
	k->sb[k->n_sb] = (struct model_sb){ .minor = 100 + (uint32_t)k->n_sb, .size = 1 };
	int err = attach(k, k->n_sb, parent, mp, ret_id);
	if (!err)
		k->n_sb++;
	return err;
}

int model_bind(struct model *k, uint64_t src, uint64_t parent, const char *mp, uint64_t *ret_id)
{
	struct model_mount *s = model_get(k, src);

	return s ? attach(k, s->sb, parent, mp, ret_id) : -EINVAL;
}

int model_move(struct model *k, uint64_t id, uint64_t parent, const char *mp)
{
	struct model_mount *mm = model_get(k, id);

	/* Not the root, not into itself, and somewhere that exists. */
	if (!mm || mm->parent == mm->id || !model_get(k, parent) || model_below(k, parent, id) ||
	    strlen(mp) >= sizeof(mm->mp))
		return -EINVAL;
	uint64_t from = mm->parent;
	mm->parent = parent;
	strcpy(mm->mp, mp);
	/* Both sources report the moved mount only, not what it carries along. */
	if (k->source == MODEL_WATCH_MOUNT) {
		wq_rec(k, NOTIFY_MOUNT_MOVE_FROM, from, id, 0);
		wq_rec(k, NOTIFY_MOUNT_MOVE_TO, parent, id, 0);
	} else if (k->source == MODEL_FANOTIFY) {
		fan_rec(k, FAN_MNT_ATTACH | FAN_MNT_DETACH, id);
	}
	k->dirty = true;
	return 0;
}

int model_remount(struct model *k, uint64_t id, unsigned size, bool ro)
{
	struct model_mount *mm = model_get(k, id);

	if (!mm)
		return -EINVAL;
	struct model_sb *sb = &k->sb[mm->sb];
	bool ro_changed = sb->ro != ro;
	sb->size = size;
	sb->ro = ro;
	/* The record names the mount the remount was made through, not the others. */
	attr_rec(k, id, ro_changed ? NOTIFY_MOUNT_READONLY : NOTIFY_MOUNT_SETATTR);
	return 0;
}

int model_setattr(struct model *k, uint64_t id, bool ro)
{
	struct model_mount *mm = model_get(k, id);

	if (!mm)
		return -EINVAL;
	if (mm->ro == ro)
		return 0;
	mm->ro = ro;
	attr_rec(k, id, NOTIFY_MOUNT_READONLY);
	return 0;
}

static bool has_children(struct model *k, uint64_t id)
{
	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++)
		if (k->m[i].live && k->m[i].parent == id && k->m[i].id != id)
			return true;
	return false;
}

/* Detaches @id's subtree, children before parents, each with its record. */
static void detach_tree(struct model *k, struct model_mount *mm)
{
	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++)
		if (k->m[i].live && k->m[i].parent == mm->id && k->m[i].id != mm->id)
			detach_tree(k, &k->m[i]);
	mm->live = false;
	if (k->source == MODEL_WATCH_MOUNT)
		wq_rec(k, NOTIFY_MOUNT_UNMOUNT, mm->parent, mm->id, 0);
	else if (k->source == MODEL_FANOTIFY)
		fan_rec(k, FAN_MNT_DETACH, mm->id);
}

int model_umount(struct model *k, uint64_t id, bool lazy)
{
	struct model_mount *mm = model_get(k, id);

	if (!mm || mm->parent == mm->id || (!lazy && has_children(k, id)))
		return -EINVAL;
	detach_tree(k, mm);
	k->dirty = true;
	return 0;
}

/* ---- what the source reads ---- */

static void sb_opts(const struct model_sb *sb, char *out, size_t len)
{
	snprintf(out, len, "size=%uk", sb->size);
}

struct mr__mount *model_record(const struct model *k, const struct model_mount *mm)
{
	const struct model_sb *sb = &k->sb[mm->sb];
	char path[1024], so[32], opts[64];

	sb_opts(sb, so, sizeof(so));
	snprintf(opts, sizeof(opts), "%s%s,%s", mm->ro ? "ro" : "rw", sb->ro && !mm->ro ? ",ro" : "",
		 so);
	return mr__mount_new(&(struct mr_mount){ .id = mm->id,
						 .parent_id = mm->parent,
						 .attr = mm->ro ? MOUNT_ATTR_RDONLY : 0,
						 .dev_major = 0,
						 .dev_minor = sb->minor,
						 .path = model_path(k, mm, path, sizeof(path)),
						 .root = "/",
						 .source = "model",
						 .fstype = "tmpfs",
						 .options = opts },
			     0, sb->ro ? MR__SB_RDONLY : 0, mr__sb_opts_hash(so));
}

/* mangle() of fs/proc_namespace.c: space, tab, newline and backslash in octal. */
static size_t escape(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	for (; *s && o + 5 < cap; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			o += (size_t)snprintf(out + o, cap - o, "\\%03o", (unsigned char)*s);
		else
			out[o++] = *s;
	}
	out[o] = '\0';
	return o;
}

size_t model_mountinfo(const struct model *k, char *buf, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < MODEL_MAX_MOUNTS && o < cap; i++) {
		const struct model_mount *mm = &k->m[i];
		const struct model_sb *sb = &k->sb[mm->sb];
		char path[1024], esc[4096], so[32];

		if (!mm->live)
			continue;
		escape(model_path(k, mm, path, sizeof(path)), esc, sizeof(esc));
		sb_opts(sb, so, sizeof(so));
		o += (size_t)snprintf(buf + o, cap - o, "%llu %llu 0:%u / %s %s - tmpfs model %s,%s\n",
				      (unsigned long long)mm->id,
				      (unsigned long long)(mm->parent == mm->id ? 0 : mm->parent),
				      sb->minor, esc, mm->ro ? "ro" : "rw", sb->ro ? "ro" : "rw", so);
	}
	return o < cap ? o : cap;
}

static int read_table(struct mr__ns *ns, struct mr__table *ret)
{
	struct model *k = model_current;

	(void)ns;
	if (k->source == MODEL_MOUNTINFO) {
		static char buf[MODEL_MAX_MOUNTS * 4200];
		size_t n = model_mountinfo(k, buf, sizeof(buf));
		int r = mr__mountinfo_parse(buf, n, ret);
		return r < 0 ? r : 0;
	}
	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++) {
		if (!k->m[i].live)
			continue;
		struct mr__mount *m = model_record(k, &k->m[i]);
		if (!m)
			return -ENOMEM;
		if (mr__table_push(ret, m) < 0) /* it dropped @m */
			return -ENOMEM;
	}
	return 0;
}

static int lookup(struct mr__ns *ns, uint64_t id, struct mr__mount **ret)
{
	struct model_mount *mm = model_get(model_current, id);

	(void)ns;
	if (!mm)
		return -ENOENT;
	*ret = model_record(model_current, mm);
	return *ret ? 0 : -ENOMEM;
}

static void below_dfs(struct model *k, uint64_t id, uint64_t **ids, size_t *n, size_t *cap,
		      int *err)
{
	for (size_t i = 0; i < MODEL_MAX_MOUNTS && !*err; i++) {
		struct model_mount *mm = &k->m[i];

		if (!mm->live || mm->parent != id || mm->id == id)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			uint64_t *v = mr__realloc(*ids, c * sizeof(*v));
			if (!v) {
				*err = -ENOMEM;
				return;
			}
			*ids = v;
			*cap = c;
		}
		(*ids)[(*n)++] = mm->id;
		below_dfs(k, mm->id, ids, n, cap, err);
	}
}

static int list_below(struct mr__ns *ns, uint64_t id, uint64_t **ids, size_t *cap)
{
	size_t n = 0;
	int err = 0;

	(void)ns;
	below_dfs(model_current, id, ids, &n, cap, &err);
	return err ? err : (int)n;
}

static int probe(void)
{
	return model_current ? 0 : -ENOSYS;
}

static int open_ns(struct mr__ns *ns)
{
	model_current->ns = ns;
	return 0;
}

static int start(struct mr__ns *ns, struct mr__reactor *re)
{
	(void)ns;
	(void)re;
	return 0;
}

static void close_ns(struct mr__ns *ns, struct mr__reactor *re)
{
	(void)re;
	if (model_current && model_current->ns == ns)
		model_current->ns = NULL;
}

const struct mr__source_ops model_source_ops = {
	.name = "model",
	.probe = probe,
	.open = open_ns,
	.start = start,
	.read_table = read_table,
	.lookup = lookup,
	.close = close_ns,
	.list_below = list_below,
};

struct id_list {
	uint64_t v[MODEL_MAX_MOUNTS * 2];
	size_t n;
};

static int collect_id(struct mr__mount *m, void *arg)
{
	struct id_list *l = arg;

	if (l->n < MR__ARRAY_SIZE(l->v))
		l->v[l->n++] = m->pub.id;
	return 0;
}

/* The fanotify source's sweep: every mirrored mount looked at again. */
static void sweep(struct mr__ns *ns)
{
	static struct id_list l;

	l.n = 0;
	mr__mirror_each(&ns->mirror, collect_id, &l);
	for (size_t i = 0; i < l.n; i++)
		mr__router_recheck(ns, l.v[i]);
}

void model_deliver(struct model *k)
{
	struct mr__ns *ns = k->ns;

	if (!ns)
		return;
	if (k->source == MODEL_MOUNTINFO) {
		struct mr__table t = { 0 };
		if (k->dirty) {
			mr__router_stamp(ns->r);
			if (read_table(ns, &t) < 0)
				mr__router_loss(ns);
			else
				mr__router_sync(ns, &t, 0);
			mr__table_clear(&t);
			mr__free(t.v);
		}
	} else if (k->rec_len) {
		if (getenv("FUZZ_TRACE")) {
			uint64_t bad = 0;
			struct mr__change ch[512];
			size_t n = (k->source == MODEL_WATCH_MOUNT ? mr__decode_watch_queue
								    : mr__decode_fanotify)(
				k->rec, k->rec_len, ch, 512, &bad);
			for (size_t i = 0; i < n; i++)
				fprintf(stderr, "  record %d %llu\n", ch[i].kind,
					(unsigned long long)ch[i].mnt_id);
		}
		/* As the sources hand over a read: decoded on their side, change by change. */
		static struct mr__change changes[MR__SOURCE_CHANGES_MAX];
		mr__source_records(ns, (int)k->rec_len, k->rec, k->rec_len,
				   k->source == MODEL_WATCH_MOUNT ? mr__decode_watch_queue
								  : mr__decode_fanotify,
				   changes, MR__ARRAY_SIZE(changes));
		if (k->source == MODEL_FANOTIFY && k->dirty)
			sweep(ns);
	} else if (k->source == MODEL_FANOTIFY && k->dirty) {
		sweep(ns);
	}
	k->rec_len = 0;
	k->dirty = false;
}
