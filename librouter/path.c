/* SPDX-License-Identifier: MIT */
/*
 * Subtree prefixes as subscribers give them, made canonical so that the
 * trie compares components and nothing else.
 */
#include <errno.h>
#include <string.h>

#include "alloc.h"
#include "trie.h"

/*
 * "//a/./b/" becomes "/a/b"; "/" stays "/".  ".." is refused rather than
 * resolved: without the namespace's view of symlinks and mounts we cannot
 * say where it leads, and a silently wrong prefix would route wrongly.
 */
int mr__path_normalize(const char *in, char **ret)
{
	if (!in || !*in)
		in = "/";
	if (in[0] != '/')
		return -EINVAL;

	size_t n = strlen(in);
	char *out = mr__malloc(n + 2);
	if (!out)
		return -ENOMEM;

	size_t o = 0;
	const char *p = in, *end = in + n;
	while (p < end) {
		while (p < end && *p == '/')
			p++;
		const char *e = p;
		while (e < end && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (len == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			mr__free(out);
			return -EINVAL;
		}
		if (len) {
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = e;
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
	*ret = out;
	return 0;
}
