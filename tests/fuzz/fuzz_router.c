/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the router behind the model kernel (tests/model.h).  The input
 * is a program: which source's records the model emits, the subscribers'
 * ring size, then operations (mount, bind, move, remount, setattr, umount,
 * umount -l, a kernel loss) cut into batches.  After every batch the
 * invariants are checked (mirror == model, a tree, parents first in
 * snapshots, children gone first, nothing outside a
 * subscriber's subtree, seq increasing, every view == the model); a broken
 * one aborts, which libFuzzer reports with the input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static struct model k;
static struct view views[3];
static const char *const prefixes[] = { "/", "/a", "/a b/x" };
static const char *const names[] = { "a", "x", "a b", "", "n\nl", "bs\\x", "b", "" };

struct cursor {
	const uint8_t *p, *end;
};

static unsigned take(struct cursor *c)
{
	return c->p < c->end ? *c->p++ : 0;
}

/* A live mount picked by a byte. */
static uint64_t pick(struct cursor *c)
{
	size_t n = model_count(&k), want = n ? take(c) % n : 0;

	for (size_t i = 0; i < MODEL_MAX_MOUNTS; i++)
		if (k.m[i].live && !want--)
			return k.m[i].id;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, data + size };
	mr_router *r = NULL;
	unsigned hdr = take(&c);
	static int trace = -1;

	if (trace < 0)
		trace = getenv("FUZZ_TRACE") != NULL;
	if (trace)
		fprintf(stderr, "source %s\n", model_source_name((enum model_source)(hdr % 3)));

	model_init(&k, (enum model_source)(hdr % 3));
	if (model_router(&k, &r, views, 3, prefixes, hdr & 4 ? 16 : 4096) < 0)
		abort();
	if (model_batch(&k, r, views, 3))
		abort();
	for (unsigned ops = 0; c.p < c.end && ops < 400; ops++) {
		unsigned op = take(&c);
		uint64_t id = pick(&c), to;
		const char *mp = names[take(&c) % 8];

		if (trace)
			fprintf(stderr, "op %u id %llu mp '%s'\n", op % 10, (unsigned long long)id, mp);
		switch (op % 10) {
		case 0:
		case 1:
			model_mount_new(&k, id, mp, NULL);
			break;
		case 2:
			to = pick(&c);
			model_bind(&k, id, to, mp, NULL);
			break;
		case 3:
			to = pick(&c);
			model_move(&k, id, to, mp);
			break;
		case 4:
			model_remount(&k, id, take(&c) % 4 + 1, op & 0x10);
			break;
		case 5:
			model_setattr(&k, id, op & 0x10);
			break;
		case 6:
			model_umount(&k, id, op & 0x10);
			break;
		case 7:
			if (op & 0x80) {
				/* Records lost: the kernel says so, the router resyncs. */
				k.rec_len = 0;
				model_loss(&k);
			}
			break;
		default:
			if (model_batch(&k, r, views, 3))
				abort();
			break;
		}
	}
	if (model_batch(&k, r, views, 3))
		abort();
	mr_router_free(r);
	return 0;
}
