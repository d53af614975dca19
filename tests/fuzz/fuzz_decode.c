/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: kernel records into changes (decode.c), built twice: with
 * FUZZ_WATCH_QUEUE for watch_queue records, else fanotify records.
 */
#include <stdlib.h>
#include <string.h>

#include "sources/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mr__change out[2048];
	uint64_t bad = 0;
	size_t max = size ? data[0] % 64 + 1 : 1; /* small outputs too: the cut-off path */
	size_t n;

#ifdef FUZZ_WATCH_QUEUE
	n = mr__decode_watch_queue(data, size, out, max, &bad);
	if (n > size / 8)
		abort(); /* every change needs a record of at least 8 bytes */
#else
	n = mr__decode_fanotify(data, size, out, max, &bad);
	if (n > size / 24)
		abort(); /* and a fanotify record at least its 24-byte header */
#endif
	if (n > max)
		abort();
	for (size_t i = 0; i < n; i++)
		if (out[i].kind < MR__CHANGE_ATTACH || out[i].kind > MR__CHANGE_REMOVED)
			abort();
	return 0;
}
