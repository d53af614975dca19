/* SPDX-License-Identifier: MIT */
/*
 * A model kernel for the router: an in-memory mount tree whose operations
 * (mount, bind, move, remount, setattr, umount, umount -l) emit the records
 * each real source would read for them, and that answers the source's
 * lookups (statmount), table reads (listmount, mountinfo text) and
 * listings below a mount.  Behind a router through the "model" source, it
 * lets tests and fuzzers drive the apply path with exact knowledge of the
 * truth, and check the router's invariants after every batch.
 */
#ifndef MR_MODEL_H
#define MR_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "alloc.h"
#include "event.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"
#include "namespace.h"
#include "router/upcalls.h"
#include "sources/decode.h"
#include "sources/source.h"
#include "sub.h"

#define MODEL_MAX_MOUNTS 256
#define MODEL_MAX_SB 64

enum model_source { MODEL_WATCH_MOUNT, MODEL_FANOTIFY, MODEL_MOUNTINFO };

struct model_mount {
	bool live;
	uint64_t id, parent;
	char mp[40];   /* mount point, relative to the parent's root ("" : on it) */
	int sb;
	bool ro;       /* MOUNT_ATTR_RDONLY */
};

struct model_sb {
	uint32_t minor;
	unsigned size; /* the option that changes on a remount */
	bool ro;
};

struct model {
	enum model_source source;
	struct model_mount m[MODEL_MAX_MOUNTS];
	struct model_sb sb[MODEL_MAX_SB];
	int n_sb;
	uint64_t next_id;
	/* Records of the current batch, in the source's own encoding. */
	unsigned char rec[16384];
	size_t rec_len;
	bool dirty; /* mountinfo: the table changed since the last read */
	struct mr__ns *ns; /* set when the router opens the model source */
};

/* The model every "model" router reads (one at a time). */
extern struct model *model_current;
extern const struct mr__source_ops model_source_ops;

void model_init(struct model *k, enum model_source src);
const char *model_source_name(enum model_source src);
struct model_mount *model_get(struct model *k, uint64_t id);
/* The mount's absolute path into @out. */
const char *model_path(const struct model *k, const struct model_mount *mm, char *out, size_t len);
/* True if @id is @anc or below it. */
bool model_below(const struct model *k, uint64_t id, uint64_t anc);
size_t model_count(const struct model *k);

/* Operations: 0, or -EINVAL when not possible in this state (nothing done). */
int model_mount_new(struct model *k, uint64_t parent, const char *mp, uint64_t *ret_id);
int model_bind(struct model *k, uint64_t src, uint64_t parent, const char *mp, uint64_t *ret_id);
int model_move(struct model *k, uint64_t id, uint64_t parent, const char *mp);
int model_remount(struct model *k, uint64_t id, unsigned size, bool ro);
int model_setattr(struct model *k, uint64_t id, bool ro);
int model_umount(struct model *k, uint64_t id, bool lazy);
/* The kernel lost records: a loss record in this batch. */
void model_loss(struct model *k);

/* Builds the record of one mount as statmount would describe it. */
struct mr__mount *model_record(const struct model *k, const struct model_mount *mm);

/*
 * Hands the batch's records to the router (as its source's read completion
 * would) and clears them; for mountinfo, re-reads the rendered table.
 */
void model_deliver(struct model *k);

/* Renders the table as /proc/PID/mountinfo text; returns its length. */
size_t model_mountinfo(const struct model *k, char *buf, size_t cap);

#endif

/* ---- a router over the model, and the invariants checked after each batch ---- */

struct view_ent {
	uint64_t id, parent;
	char path[1024];
};

/* A subscriber replaying what it is told, as a careful user would. */
struct view {
	mr_sub *s;
	char prefix[256];
	uint64_t last_seq;
	size_t n;
	struct view_ent e[MODEL_MAX_MOUNTS * 2];
	uint64_t events, snapshots, overruns;
};

/*
 * Makes a router reading @k (source "model") and subscribes @nviews views
 * with @prefixes (NULL: "/") and @capacity ring slots.  Returns 0 or -errno.
 */
int model_router(struct model *k, mr_router **ret, struct view *views, size_t nviews,
		 const char *const *prefixes, uint32_t capacity);

/*
 * Ends a batch: delivers the records, runs the router's step, drains every
 * view checking each event, then checks mirror == model, the mirror is a
 * tree, and the "/" views equal the mirror.  Returns 0, or 1 with a line
 * on stderr saying which invariant broke.
 */
int model_batch(struct model *k, mr_router *r, struct view *views, size_t nviews);

/* The same, with the views following every event but nothing judged (under a fault). */
void model_batch_unjudged(struct model *k, mr_router *r, struct view *views, size_t nviews);

/* mirror == model and the mirror is a tree: 0, or 1 with a line on stderr. */
int model_check_mirror(struct model *k);
