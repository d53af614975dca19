/* SPDX-License-Identifier: MIT */
/* The subtree trie: component-wise prefix matching, removal, scale. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "alloc.h"
#include "trie.h"
#include "testutil.h"

/* Subscriptions here are just distinct addresses; the trie never looks inside. */
static struct mr_sub *fake(size_t i)
{
	return (struct mr_sub *)(uintptr_t)((i + 1) * 16);
}

struct hits {
	struct mr_sub *v[64];
	size_t n;
};

static void record(struct mr_sub *s, void *arg)
{
	struct hits *h = arg;

	if (h->n < MR__ARRAY_SIZE(h->v))
		h->v[h->n++] = s;
}

static bool hit(const struct hits *h, struct mr_sub *s)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i] == s)
			return true;
	return false;
}

static struct hits match(struct mr__trie *t, const char *path)
{
	struct hits h = {0};

	mr__trie_match(t, path, strlen(path), record, &h);
	return h;
}

static int test_components_not_bytes(void)
{
	struct mr__trie *t;
	struct hits h;

	CHECK(mr__trie_new(&t) == 0);
	CHECK(mr__trie_add(t, "/a", fake(0)) == 0);
	CHECK(mr__trie_add(t, "/ab", fake(1)) == 0);
	CHECK(mr__trie_add(t, "/a/b", fake(2)) == 0);
	CHECK(mr__trie_add(t, "/", fake(3)) == 0);

	h = match(t, "/a");
	CHECK(h.n == 2 && hit(&h, fake(0)) && hit(&h, fake(3)));
	h = match(t, "/ab");
	CHECK(h.n == 2 && hit(&h, fake(1)) && hit(&h, fake(3)));
	h = match(t, "/a/b/c");
	CHECK(h.n == 3 && hit(&h, fake(0)) && hit(&h, fake(2)) && hit(&h, fake(3)));
	h = match(t, "/a/bc");
	CHECK(h.n == 2 && !hit(&h, fake(2)));
	h = match(t, "/x");
	CHECK(h.n == 1 && hit(&h, fake(3)));
	h = match(t, "/");
	CHECK(h.n == 1 && hit(&h, fake(3)));
	mr__trie_free(t);
	return 0;
}

static int test_same_prefix_and_removal(void)
{
	struct mr__trie *t;
	struct hits h;

	CHECK(mr__trie_new(&t) == 0);
	CHECK(mr__trie_add(t, "/srv/data", fake(0)) == 0);
	CHECK(mr__trie_add(t, "/srv/data", fake(1)) == 0);
	CHECK(mr__trie_add(t, "/srv/data/deep/er", fake(2)) == 0);
	h = match(t, "/srv/data/deep/er/x");
	CHECK(h.n == 3);

	CHECK(mr__trie_remove(t, "/srv/data", fake(0)) == 0);
	CHECK(mr__trie_remove(t, "/srv/data", fake(0)) == -ENOENT);
	CHECK(mr__trie_remove(t, "/srv/nothing", fake(1)) == -ENOENT);
	h = match(t, "/srv/data/deep/er");
	CHECK(h.n == 2 && hit(&h, fake(1)) && hit(&h, fake(2)));

	/* Removing the deep one prunes its nodes; the shallow one still matches. */
	CHECK(mr__trie_remove(t, "/srv/data/deep/er", fake(2)) == 0);
	h = match(t, "/srv/data/deep/er");
	CHECK(h.n == 1 && hit(&h, fake(1)));
	CHECK(mr__trie_remove(t, "/srv/data", fake(1)) == 0);
	h = match(t, "/srv/data");
	CHECK(h.n == 0);
	mr__trie_free(t);
	return 0;
}

static int test_normalize(void)
{
	static const struct {
		const char *in, *out;
		int err;
	} cases[] = {
		{"/", "/", 0},         {"", "/", 0},          {"//a//b/", "/a/b", 0},
		{"/a/./b", "/a/b", 0}, {"/./", "/", 0},       {"a/b", NULL, -EINVAL},
		{"/a/../b", NULL, -EINVAL}, {"/a b/\n", "/a b/\n", 0}, {"/...", "/...", 0},
	};

	for (size_t i = 0; i < MR__ARRAY_SIZE(cases); i++) {
		char *out = NULL;
		int err = mr__path_normalize(cases[i].in, &out);
		CHECK(err == cases[i].err);
		if (!err) {
			CHECK_STR(out, cases[i].out);
			mr__free(out);
		}
	}
	return 0;
}

static void count_cb(struct mr_sub *s, void *arg)
{
	(void)s;
	(*(size_t *)arg)++;
}

/* 100,000 subscriptions on random subtrees, checked against brute force. */
static int test_scale_against_oracle(void)
{
	enum { N = 100000, QUERIES = 2000 };
	static char paths[N][48];
	struct mr__trie *t;
	unsigned seed = 12345;

	CHECK(mr__trie_new(&t) == 0);
	for (size_t i = 0; i < N; i++) {
		int depth = 1 + rand_r(&seed) % 4;
		size_t o = 0;
		for (int d = 0; d < depth; d++)
			o += (size_t)snprintf(paths[i] + o, sizeof(paths[i]) - o, "/d%d",
					      rand_r(&seed) % (d == 0 ? 50 : 8));
		CHECK(mr__trie_add(t, paths[i], fake(i)) == 0);
	}
	for (int q = 0; q < QUERIES; q++) {
		char path[64];
		size_t o = 0;
		int depth = 1 + rand_r(&seed) % 5;
		for (int d = 0; d < depth; d++)
			o += (size_t)snprintf(path + o, sizeof(path) - o, "/d%d",
					      rand_r(&seed) % (d == 0 ? 50 : 8));

		size_t expect = 0;
		for (size_t i = 0; i < N; i++) {
			size_t n = strlen(paths[i]);
			if (!strncmp(path, paths[i], n) && (path[n] == '\0' || path[n] == '/'))
				expect++;
		}
		size_t got = 0;
		mr__trie_match(t, path, strlen(path), count_cb, &got);
		CHECK_EQ_U64(got, expect);
	}
	for (size_t i = 0; i < N; i++)
		CHECK(mr__trie_remove(t, paths[i], fake(i)) == 0);
	struct hits h = match(t, "/d1/d2/d3");
	CHECK(h.n == 0);
	mr__trie_free(t);
	return 0;
}

int main(void)
{
	int fail = 0;

	fail |= RUN(test_components_not_bytes);
	fail |= RUN(test_same_prefix_and_removal);
	fail |= RUN(test_normalize);
	fail |= RUN(test_scale_against_oracle);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
