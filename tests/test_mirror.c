/* SPDX-License-Identifier: MIT */
/*
 * mount.c and mirror.c: records and their references, the hash table, and
 * the resync diff with its exact callbacks and order.  Label: unit.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "testutil.h"


static struct mr__mount *mk(uint64_t id, uint64_t parent, const char *path, const char *opts)
{
	return mr__mount_new(&(struct mr_mount){ .id = id,
						 .parent_id = parent,
						 .propagation = 1u << 18,
						 .path = path,
						 .root = "/",
						 .source = "src",
						 .fstype = "tmpfs",
						 .options = opts },
			     (uint32_t)id, 0, 0);
}

static uint32_t refs(const struct mr__mount *m)
{
	return atomic_load(&((struct mr__mount *)m)->refs);
}

static int test_mount_new(void)
{
	struct mr__mount *m = mr__mount_new(&(struct mr_mount){ .id = 7, .path = "/a b" }, 3, 0, 0);

	CHECK(m);
	CHECK(m->pub.id == 7 && m->old_id == 3 && refs(m) == 1 && m->path_len == 4);
	/* NULL strings become "", and all five live inside the one allocation. */
	CHECK(strcmp(m->pub.root, "") == 0 && strcmp(m->pub.source, "") == 0);
	CHECK(strcmp(m->pub.fstype, "") == 0 && strcmp(m->pub.options, "") == 0);
	const char *s[] = { m->pub.path, m->pub.root, m->pub.source, m->pub.fstype, m->pub.options };
	for (size_t i = 0; i < 5; i++)
		CHECK(s[i] >= m->str && s[i] < m->str + 16);
	CHECK(mr__mount_ref(m) == m && refs(m) == 2);
	mr__mount_unref(m);
	mr__mount_unref(m);
	mr__mount_unref(NULL);
	CHECK(mr__mount_ref(NULL) == NULL);
	return 0;
}

static int test_mount_same(void)
{
	struct mr_mount base = { .id = 1, .parent_id = 2, .attr = 0, .propagation = 4,
				 .dev_major = 8, .dev_minor = 1, .path = "/x", .root = "/",
				 .source = "s", .fstype = "ext4", .options = "rw" };
	struct mr__mount *a = mr__mount_new(&base, 1, 0, 0), *b;

	CHECK(a);
	b = mr__mount_new(&base, 99, 0, 0); /* old_id is not user-visible */
	CHECK(b && mr__mount_same(a, b));
	mr__mount_unref(b);

	/* Each field on its own makes a difference. */
	for (int f = 0; f < 12; f++) {
		struct mr_mount x = base;
		uint32_t sb = 0;

		switch (f) {
		case 0: x.id = 9; break;
		case 1: x.parent_id = 9; break;
		case 2: x.attr = 1; break;
		case 3: x.propagation = 8; break;
		case 4: x.dev_major = 9; break;
		case 5: x.dev_minor = 9; break;
		case 6: x.path = "/y"; break;
		case 7: x.root = "/r"; break;
		case 8: x.source = "t"; break;
		case 9: x.fstype = "xfs"; break;
		case 10: x.options = "ro"; break;
		case 11: sb = MR__SB_RDONLY; break;
		}
		b = mr__mount_new(&x, 1, sb, 0);
		CHECK(b);
		if (mr__mount_same(a, b)) {
			fprintf(stderr, "field %d not compared\n", f);
			return 1;
		}
		mr__mount_unref(b);
	}
	mr__mount_unref(a);
	return 0;
}

static int test_mount_readonly(void)
{
	static const struct {
		uint64_t attr;
		uint32_t sb;
		const char *opts;
		bool ro;
	} cases[] = {
		{ 0, 0, "rw,relatime", false },
		{ 1 /* MOUNT_ATTR_RDONLY */, 0, "ro,relatime", true },
		{ 0, MR__SB_RDONLY, "rw,relatime,ro", true },
		/* a filesystem's own "ro" option: neither the mount nor the superblock is */
		{ 0, 0, "rw,relatime,ro", false },
		{ 0, 0, "rw,relatime,fsopt=1,ro", false },
		{ 0, 0, "ro,rw", false },
		{ 0, 0, "rwx,roo,errors=ro", false },
		{ 0, 0, "", false },
	};

	for (size_t i = 0; i < MR__ARRAY_SIZE(cases); i++) {
		struct mr__mount *m = mr__mount_new(
			&(struct mr_mount){ .attr = cases[i].attr, .options = cases[i].opts }, 0,
			cases[i].sb, 0);

		CHECK(m);
		CHECK(mr__mount_readonly(m) == cases[i].ro);
		mr__mount_unref(m);
	}
	return 0;
}

static void *ref_storm(void *arg)
{
	struct mr__mount *m = arg;

	for (int i = 0; i < 200000; i++)
		mr__mount_unref(mr__mount_ref(m));
	mr__mount_unref(m); /* each thread owns one reference; the last frees */
	return NULL;
}

/* Four threads race ref/unref; the record dies exactly once (ASan checks). */
static int test_mount_refs_threads(void)
{
	struct mr__mount *m = mk(1, 0, "/", "rw");
	pthread_t th[4];

	CHECK(m);
	for (int i = 1; i < 4; i++)
		mr__mount_ref(m);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&th[i], NULL, ref_storm, m) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int test_table(void)
{
	struct mr__table t = { 0 };
	struct mr__mount *keep = mk(1, 0, "/", "rw");

	CHECK(keep);
	for (uint64_t i = 0; i < 1000; i++)
		CHECK(mr__table_push(&t, i == 500 ? mr__mount_ref(keep) : mk(i, 0, "/x", "rw")) == 0);
	CHECK(t.n == 1000 && t.cap >= 1000 && refs(keep) == 2);
	mr__table_clear(&t);
	CHECK(t.n == 0 && t.cap == 0 && t.v == NULL && refs(keep) == 1);
	mr__mount_unref(keep);
	return 0;
}

static int test_put_get_take_replace(void)
{
	struct mr__mirror m;
	struct mr__mount *a = mk(10, 1, "/a", "rw"), *a2 = mk(10, 1, "/a", "ro"), *t;

	CHECK(mr__mirror_init(&m) == 0);
	CHECK(mr__mirror_get(&m, 10) == NULL);
	CHECK(mr__mirror_take(&m, 10) == NULL);
	CHECK(mr__mirror_put(&m, mr__mount_ref(a)) == 0);
	CHECK(m.n == 1 && mr__mirror_get(&m, 10) == a && refs(a) == 2);

	/* Replacing drops the mirror's reference to the old record. */
	CHECK(mr__mirror_put(&m, a2) == 0);
	CHECK(m.n == 1 && mr__mirror_get(&m, 10) == a2 && refs(a) == 1);

	t = mr__mirror_take(&m, 10);
	CHECK(t == a2 && m.n == 0 && mr__mirror_get(&m, 10) == NULL && refs(a2) == 1);
	mr__mount_unref(t);
	mr__mount_unref(a);

	/* ID 0 and the largest ID are ordinary keys. */
	CHECK(mr__mirror_put(&m, mk(0, 0, "/z", "rw")) == 0);
	CHECK(mr__mirror_put(&m, mk(UINT64_MAX, 0, "/m", "rw")) == 0);
	CHECK(mr__mirror_get(&m, 0)->pub.id == 0);
	CHECK(mr__mirror_get(&m, UINT64_MAX)->pub.id == UINT64_MAX);
	mr__mirror_free(&m);
	mr__mirror_free(&m); /* twice is harmless */
	return 0;
}

static int count_each(struct mr__mount *mnt, void *arg)
{
	(void)mnt;
	++*(size_t *)arg;
	return 0;
}

static int stop_at_3(struct mr__mount *mnt, void *arg)
{
	(void)mnt;
	return ++*(size_t *)arg == 3 ? 42 : 0;
}

static int test_growth(void)
{
	struct mr__mirror m;
	size_t seen = 0;

	CHECK(mr__mirror_init(&m) == 0);
	/* listmount-like IDs: sequential from 2^31, plus scattered ones */
	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t id = i % 2 ? (1ull << 31) + i : i * 0x9e3779b97f4a7c15ull;

		CHECK(mr__mirror_put(&m, mk(id, 0, "/", "rw")) == 0);
		CHECK(m.used * 10 <= m.cap * 7);
	}
	CHECK(m.n == 100000 && (m.cap & (m.cap - 1)) == 0);
	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t id = i % 2 ? (1ull << 31) + i : i * 0x9e3779b97f4a7c15ull;
		struct mr__mount *g = mr__mirror_get(&m, id);

		CHECK(g && g->pub.id == id);
	}
	CHECK(mr__mirror_get(&m, (1ull << 31) + 100000 + 1) == NULL);
	CHECK(mr__mirror_each(&m, count_each, &seen) == 0 && seen == 100000);
	seen = 0;
	CHECK(mr__mirror_each(&m, stop_at_3, &seen) == 42 && seen == 3);

	/* Remove every odd one; the rest must still be found through tombstones. */
	for (uint64_t i = 1; i < 100000; i += 2)
		mr__mount_unref(mr__mirror_take(&m, (1ull << 31) + i));
	CHECK(m.n == 50000);
	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t id = i % 2 ? (1ull << 31) + i : i * 0x9e3779b97f4a7c15ull;

		CHECK((mr__mirror_get(&m, id) != NULL) == !(i % 2));
	}
	mr__mirror_free(&m);
	return 0;
}

/*
 * Churn: 40 live mounts, each round removes them and adds 40 new IDs.
 * Tombstones must be reused or swept: the array may not grow without
 * bound, and nothing may go missing.
 */
static int test_tombstones(void)
{
	struct mr__mirror m;
	uint64_t next = 1;

	CHECK(mr__mirror_init(&m) == 0);
	for (int i = 0; i < 40; i++)
		CHECK(mr__mirror_put(&m, mk(next++, 0, "/", "rw")) == 0);
	for (int round = 0; round < 2000; round++) {
		for (uint64_t id = next - 40; id < next; id++) {
			struct mr__mount *t = mr__mirror_take(&m, id);

			CHECK(t && t->pub.id == id);
			mr__mount_unref(t);
		}
		CHECK(m.n == 0);
		for (int i = 0; i < 40; i++)
			CHECK(mr__mirror_put(&m, mk(next++, 0, "/", "rw")) == 0);
		CHECK(m.n == 40 && m.used * 10 <= m.cap * 7);
		CHECK(m.cap <= 256);
	}
	for (uint64_t id = next - 40; id < next; id++)
		CHECK(mr__mirror_get(&m, id) != NULL);
	CHECK(mr__mirror_get(&m, next - 41) == NULL);
	mr__mirror_free(&m);
	return 0;
}

/* ---- sync ---- */

struct call {
	uint64_t old_id, new_id; /* 0: NULL */
	char old_opts[16], new_opts[16];
};

struct log {
	struct call c[64];
	int n;
	int fail; /* value each callback returns */
};

static int record(struct mr__mount *old, struct mr__mount *now, void *arg)
{
	struct log *l = arg;
	struct call *c = &l->c[l->n++];

	memset(c, 0, sizeof(*c));
	if (old) {
		c->old_id = old->pub.id;
		snprintf(c->old_opts, sizeof(c->old_opts), "%s", old->pub.options);
	}
	if (now) {
		c->new_id = now->pub.id;
		snprintf(c->new_opts, sizeof(c->new_opts), "%s", now->pub.options);
	}
	return l->fail;
}

struct spec {
	uint64_t id, parent;
	const char *path, *opts;
};

static int fill(struct mr__table *t, const struct spec *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mr__table_push(t, mk(s[i].id, s[i].parent, s[i].path, s[i].opts)) < 0)
			return -1;
	return 0;
}

static const struct spec table_a[] = {
	{ 1, 0, "/", "rw" },
	{ 2, 1, "/a", "rw" },
	{ 3, 2, "/a/b", "rw" },
	{ 4, 3, "/a/b/c", "rw" },
	{ 5, 1, "/x", "rw" },
	{ 6, 5, "/x", "rw" }, /* overmount of /x */
	{ 7, 1, "/keep", "rw" },
};

static int test_sync_diff(void)
{
	/* 5 turns ro, 8 and 9 appear (5 first: parents first, then table order), the /a subtree goes. */
	static const struct spec table_b[] = {
		{ 1, 0, "/", "rw" },
		{ 9, 7, "/keep/n2", "rw" },
		{ 5, 1, "/x", "ro" },
		{ 7, 1, "/keep", "rw" },
		{ 8, 7, "/keep/n1", "rw" },
	};
	static const struct call want[] = {
		{ 5, 5, "rw", "ro" },
		{ 0, 9, "", "rw" },
		{ 0, 8, "", "rw" },
		/* removals: deepest in the tree first, then longest path, then highest ID */
		{ 4, 0, "rw", "" },
		{ 3, 0, "rw", "" },
		{ 6, 0, "rw", "" },
		{ 2, 0, "rw", "" },
	};
	struct mr__mirror m;
	struct mr__table t = { 0 };
	struct log l = { .n = 0 };
	struct mr__mount *keep;

	CHECK(mr__mirror_init(&m) == 0);
	CHECK(fill(&t, table_a, MR__ARRAY_SIZE(table_a)) == 0);
	CHECK(mr__mirror_sync(&m, &t, record, &l) == 7);
	CHECK(l.n == 7 && t.n == 0);
	/* Parents first (tree depth), table order among equals. */
	static const uint64_t first[] = { 1, 2, 5, 7, 3, 6, 4 };
	for (int i = 0; i < 7; i++)
		CHECK(l.c[i].old_id == 0 && l.c[i].new_id == first[i]);

	keep = mr__mirror_get(&m, 7);
	l.n = 0;
	CHECK(fill(&t, table_b, MR__ARRAY_SIZE(table_b)) == 0);
	CHECK(mr__mirror_sync(&m, &t, record, &l) == (int)MR__ARRAY_SIZE(want));
	CHECK(l.n == (int)MR__ARRAY_SIZE(want));
	for (size_t i = 0; i < MR__ARRAY_SIZE(want); i++) {
		const struct call *c = &l.c[i];

		if (c->old_id != want[i].old_id || c->new_id != want[i].new_id ||
		    strcmp(c->old_opts, want[i].old_opts) || strcmp(c->new_opts, want[i].new_opts)) {
			fprintf(stderr, "call %zu: (%llu %s -> %llu %s)\n", i,
				(unsigned long long)c->old_id, c->old_opts,
				(unsigned long long)c->new_id, c->new_opts);
			return 1;
		}
	}
	/* The mirror now equals table_b; an unchanged mount kept its record. */
	CHECK(m.n == MR__ARRAY_SIZE(table_b));
	for (size_t i = 0; i < MR__ARRAY_SIZE(table_b); i++) {
		struct mr__mount *g = mr__mirror_get(&m, table_b[i].id);

		CHECK(g && strcmp(g->pub.options, table_b[i].opts) == 0);
		CHECK(strcmp(g->pub.path, table_b[i].path) == 0);
	}
	CHECK(mr__mirror_get(&m, 7) == keep && refs(keep) == 1);
	for (uint64_t id = 2; id <= 6; id++)
		CHECK((mr__mirror_get(&m, id) != NULL) == (id == 5));
	mr__table_clear(&t);
	mr__mirror_free(&m);
	return 0;
}

static int test_sync_idempotent(void)
{
	struct mr__mirror m;
	struct mr__table t = { 0 };
	struct log l = { .n = 0 };

	CHECK(mr__mirror_init(&m) == 0);
	CHECK(fill(&t, table_a, MR__ARRAY_SIZE(table_a)) == 0);
	CHECK(mr__mirror_sync(&m, &t, record, &l) == 7);
	for (int round = 0; round < 3; round++) {
		l.n = 0;
		CHECK(fill(&t, table_a, MR__ARRAY_SIZE(table_a)) == 0);
		CHECK(mr__mirror_sync(&m, &t, record, &l) == 0);
		CHECK(l.n == 0 && m.n == 7 && t.n == 0);
	}
	/* An empty table removes everything, children before parents. */
	l.n = 0;
	CHECK(mr__mirror_sync(&m, &t, record, &l) == 7);
	CHECK(m.n == 0);
	static const uint64_t order[] = { 4, 3, 6, 7, 5, 2, 1 };
	for (int i = 0; i < 7; i++)
		CHECK(l.c[i].old_id == order[i] && l.c[i].new_id == 0);
	mr__table_clear(&t);
	mr__mirror_free(&m);
	return 0;
}

/* A failing callback does not leave the mirror half-synced. */
static int test_sync_callback_error(void)
{
	struct mr__mirror m;
	struct mr__table t = { 0 };
	struct log l = { .n = 0, .fail = -ENOMEM };

	CHECK(mr__mirror_init(&m) == 0);
	CHECK(fill(&t, table_a, MR__ARRAY_SIZE(table_a)) == 0);
	CHECK(mr__mirror_sync(&m, &t, record, &l) == -ENOMEM);
	CHECK(l.n == 7 && m.n == 7);
	l.fail = 0;
	l.n = 0;
	CHECK(fill(&t, table_a, MR__ARRAY_SIZE(table_a)) == 0);
	CHECK(mr__mirror_sync(&m, &t, record, &l) == 0);
	mr__table_clear(&t);
	mr__mirror_free(&m);
	return 0;
}

static int count_cb(struct mr__mount *old, struct mr__mount *now, void *arg)
{
	(void)old;
	(void)now;
	++*(size_t *)arg;
	return 0;
}

/* 100,000 mounts, then a resync where 1% changed, 1% left and 1% arrived. */
static int test_sync_large(void)
{
	struct mr__mirror m;
	struct mr__table t = { 0 };
	size_t calls = 0, cap;

	CHECK(mr__mirror_init(&m) == 0);
	for (uint64_t i = 0; i < 100000; i++)
		CHECK(mr__table_push(&t, mk(1000 + i, 1000, "/m/x", "rw")) == 0);
	CHECK(mr__mirror_sync(&m, &t, count_cb, &calls) == 100000 && calls == 100000);
	cap = m.cap;
	calls = 0;
	for (uint64_t i = 0; i < 100000; i++) {
		if (i % 100 == 1)
			continue;
		CHECK(mr__table_push(&t, mk(1000 + i, 1000, "/m/x", i % 100 == 2 ? "ro" : "rw")) == 0);
	}
	for (uint64_t i = 0; i < 1000; i++)
		CHECK(mr__table_push(&t, mk(500000 + i, 1000, "/m/y", "rw")) == 0);
	CHECK(mr__mirror_sync(&m, &t, count_cb, &calls) == 3000 && calls == 3000);
	CHECK(m.n == 100000);
	/* a resync of a same-sized table must not double the array */
	CHECK(m.cap == cap);
	mr__table_clear(&t);
	mr__mirror_free(&m);
	return 0;
}

/*
 * A table read while mounts come and go can list one ID twice (mountinfo
 * reuses IDs): the last record wins, and each one reported stays alive
 * while it is (AddressSanitizer saw a use after free here).
 */
static int test_sync_duplicate_ids(void)
{
	static const struct spec dup[] = {
		{ 1, 1, "/", "rw" },
		{ 2, 1, "/a", "rw" },
		{ 3, 2, "/a/b", "rw" },
		{ 2, 1, "/c", "ro" },
		{ 3, 2, "/c/b", "rw" },
	};
	struct mr__mirror m;
	struct mr__table t = { 0 };
	struct log l = { .n = 0 };

	CHECK(mr__mirror_init(&m) == 0);
	CHECK(fill(&t, dup, MR__ARRAY_SIZE(dup)) == 0);
	CHECK(mr__mirror_sync(&m, &t, record, &l) == 5);
	CHECK(m.n == 3);
	CHECK(strcmp(mr__mirror_get(&m, 2)->pub.path, "/c") == 0);
	CHECK(strcmp(mr__mirror_get(&m, 3)->pub.path, "/c/b") == 0);
	mr__table_clear(&t);
	mr__mirror_free(&m);
	return 0;
}

/*
 * A stack of mounts on one mount point is a chain as deep as the stack: a
 * storm of mounts on one path makes thousands.  Ordering it parents first
 * must cost O(n), not O(n x depth) (a 6,000-deep stack once held the
 * router thread for seconds), and a depth found before the tree changed
 * must not be reused after.
 */
enum { STACK = 20000 };

/*
 * Depth of @id in the stack 1 <- 2 <- ... <- STACK + 1 after @moved was
 * re-parented onto 1 (STACK + 2: none was).
 */
static uint64_t stack_depth(uint64_t id, uint64_t moved)
{
	if (id == 1)
		return 0;
	return id < moved ? id - 1 : id - moved + 1;
}

static bool stack_ordered(struct mr__mount **v, size_t n, uint64_t moved)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t a = v[i - 1]->pub.id, b = v[i]->pub.id;
		uint64_t da = stack_depth(a, moved), db = stack_depth(b, moved);
		if (da > db || (da == db && a >= b))
			return false;
	}
	return true;
}

static int gone_top_down(struct mr__mount *old, struct mr__mount *now, void *arg)
{
	uint64_t *last = arg;

	/* Children first: each gone mount is the parent of the one before. */
	if (!now && *last && old->pub.id != *last - 1)
		return -EPROTO;
	if (!now)
		*last = old->pub.id;
	return 0;
}

static int test_deep_stack(void)
{
	struct mr__mirror m;
	struct mr__table t = { 0 };
	struct mr__mount **v = calloc(STACK + 1, sizeof(*v)), *w[3];
	size_t calls = 0;
	uint64_t moved = STACK / 2, last = 0;

	CHECK(v && mr__mirror_init(&m) == 0);
	for (uint64_t id = 1; id <= STACK + 1; id++)
		CHECK(mr__table_push(&t, mk(id, id == 1 ? 1 : id - 1, id == 1 ? "/" : "/s", "rw")) == 0);
	CHECK(mr__mirror_sync(&m, &t, count_cb, &calls) == STACK + 1);

	/* Shuffled, then parents first: exactly the stack, bottom up. */
	for (size_t i = 0; i <= STACK; i++)
		v[i] = mr__mirror_get(&m, 1 + (i * 7919) % (STACK + 1));
	CHECK(mr__mirror_sort_parents_first(&m, v, STACK + 1) == 0);
	CHECK(stack_ordered(v, STACK + 1, STACK + 2)); /* none moved */

	/* The same set, on its own: forward, then reversed. */
	CHECK(mr__order_parents_first(v, STACK + 1, true) == 0);
	for (size_t i = 0; i <= STACK; i++)
		CHECK(v[i]->pub.id == STACK + 1 - i);
	CHECK(mr__order_parents_first(v, STACK + 1, false) == 0);
	CHECK(stack_ordered(v, STACK + 1, STACK + 2));

	/* The middle of the stack moved onto the root: everything above it is shallower now. */
	CHECK(mr__mirror_put(&m, mk(moved, 1, "/s", "rw")) == 0);
	for (size_t i = 0; i <= STACK; i++)
		v[i] = mr__mirror_get(&m, 1 + (i * 7919) % (STACK + 1));
	CHECK(mr__mirror_sort_parents_first(&m, v, STACK + 1) == 0);
	CHECK(stack_ordered(v, STACK + 1, moved));

	/* A cycle, which only bad input makes, ends, and loses nothing. */
	w[0] = mk(5, 6, "/c", "rw");
	w[1] = mk(6, 5, "/c", "rw");
	w[2] = mk(7, 7, "/", "rw");
	CHECK(mr__order_parents_first(w, 3, false) == 0);
	CHECK(w[0]->pub.id + w[1]->pub.id + w[2]->pub.id == 18 && w[0] != w[1] && w[1] != w[2]);
	for (int i = 0; i < 3; i++)
		mr__mount_unref(w[i]);

	/* The whole stack gone (the root stays): reported top down. */
	CHECK(mr__table_push(&t, mk(1, 1, "/", "rw")) == 0);
	for (uint64_t id = 2; id < moved; id++)
		CHECK(mr__table_push(&t, mk(id, id - 1, "/s", "rw")) == 0);
	CHECK(mr__mirror_sync(&m, &t, gone_top_down, &last) == (int)(STACK - moved + 2));
	free(v);
	mr__table_clear(&t);
	mr__mirror_free(&m);
	return 0;
}

int main(void)
{
	int fails = 0;

	fails += RUN(test_mount_new) != T_EXIT_PASS;
	fails += RUN(test_mount_same) != T_EXIT_PASS;
	fails += RUN(test_mount_readonly) != T_EXIT_PASS;
	fails += RUN(test_mount_refs_threads) != T_EXIT_PASS;
	fails += RUN(test_table) != T_EXIT_PASS;
	fails += RUN(test_put_get_take_replace) != T_EXIT_PASS;
	fails += RUN(test_growth) != T_EXIT_PASS;
	fails += RUN(test_tombstones) != T_EXIT_PASS;
	fails += RUN(test_sync_diff) != T_EXIT_PASS;
	fails += RUN(test_sync_duplicate_ids) != T_EXIT_PASS;
	fails += RUN(test_sync_idempotent) != T_EXIT_PASS;
	fails += RUN(test_sync_callback_error) != T_EXIT_PASS;
	fails += RUN(test_sync_large) != T_EXIT_PASS;
	fails += RUN(test_deep_stack) != T_EXIT_PASS;
	return fails ? 1 : 0;
}
