/* SPDX-License-Identifier: MIT */
/* libFuzzer: statmount(2) replies into records (listmount.c). */
#include <stdlib.h>
#include <string.h>

#include "mirror/listmount.h"
#include "mirror/mount.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mr__mount *m = NULL;
	/* The kernel writes into an aligned buffer; so does the router. */
	uint64_t *buf = malloc(size + 8);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (mr__statmount_parse(buf, size, &m) == 0) {
		if (!m || strlen(m->pub.path) != m->path_len)
			abort();
		(void)mr__mount_readonly(m);
		mr__mount_unref(m);
	}
	free(buf);
	return 0;
}
