/* SPDX-License-Identifier: MIT */
/* libFuzzer: /proc/PID/mountinfo text into records (mountinfo.c). */
#include <stdlib.h>
#include <string.h>

#include "mirror/mount.h"
#include "mirror/mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mr__table t = { 0 };
	int n = mr__mountinfo_parse((const char *)data, size, &t);

	/* What parsed must be whole records with NUL-terminated strings. */
	if (n >= 0 && (size_t)n != t.n)
		abort();
	for (size_t i = 0; i < t.n; i++) {
		const struct mr__mount *m = t.v[i];
		if (strlen(m->pub.path) != m->path_len || m->pub.path[0] != '/')
			abort();
		(void)mr__mount_readonly(m);
	}
	mr__table_clear(&t);

	/* The unescaper alone, on a private NUL-terminated copy. */
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
		int len = mr__mountinfo_unescape(s);
		if (len >= 0 && (size_t)len > size)
			abort();
		free(s);
	}
	return 0;
}
