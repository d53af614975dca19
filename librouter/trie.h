/* SPDX-License-Identifier: MIT */
/*
 * trie.c: component-wise prefix trie of subscriptions; path.c: the
 * prefixes it holds, made canonical.
 */
#ifndef MR_TRIE_H
#define MR_TRIE_H

#include <stddef.h>

#include "warm.h"

struct mr__trie;
struct mr_sub;

int mr__trie_new(struct mr__trie **ret);
void mr__trie_free(struct mr__trie *t);
int mr__trie_add(struct mr__trie *t, const char *prefix, struct mr_sub *s);
int mr__trie_remove(struct mr__trie *t, const char *prefix, struct mr_sub *s);

/*
 * Calls @fn for every subscription whose prefix contains @path ("/a" holds
 * "/a" and "/a/b", not "/ab").  @fn may not modify the trie.
 */
typedef void (*mr__trie_visit_fn)(struct mr_sub *s, void *arg);
void mr__trie_match(const struct mr__trie *t, const char *path, size_t len,
		    mr__trie_visit_fn fn, void *arg);

/* Normalises a subtree prefix ("//a/./b/" -> "/a/b"); -EINVAL if relative or has "..". */
int mr__path_normalize(const char *in, char **ret);

/*
 * Notes the lines a match of a path under @prefix reads (warm.h): each
 * node from the root down to @prefix's, its subscriptions, and the slot of
 * its kid table where the next one is found.
 */
void mr__trie_warm(const struct mr__trie *t, const char *prefix, struct mr__warm *w);

#endif /* MR_TRIE_H */
