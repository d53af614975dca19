/* SPDX-License-Identifier: MIT */
/* The storm loop shared by every contender (driver.c). */
#ifndef MOUNTSTORM_DRIVER_H
#define MOUNTSTORM_DRIVER_H

#include "storm.h"

struct ms_driver {
	struct ms_storm *st;
	struct ms_result *res;
	void *ctx;
	unsigned n;                      /* watchers ("views") */
	const char *prefix[MS_MAX_SUBS]; /* subtree each one covers */
	bool stalled[MS_MAX_SUBS];       /* checked only at the very end */
	bool mountinfo_ids;              /* judge against mountinfo, not listmount */
	bool verbose;
	unsigned settle_ms;
	uint64_t expected[MS_MAX_WAVES * MS_MAX_SUBS]; /* [wave][view] */
	/* 1 consistent, 0 not (why filled), -1 nothing to compare (judge by counts). */
	int (*check)(void *ctx, unsigned i, const struct ms_table *truth, char *why, size_t len);
	/* Live changes watcher i reported for wave w. */
	uint64_t (*seen)(void *ctx, unsigned i, unsigned w);
	void (*wave_begin)(void *ctx, unsigned w);
	void (*wave_end)(void *ctx, unsigned w, struct ms_wave_result *wr);
	void (*release_stalled)(void *ctx);
	/*
	 * Stops (true) or resumes (false) the watcher's reading of the kernel,
	 * for --hold-waves; NULL for watchers that cannot be held.
	 */
	void (*hold)(void *ctx, bool on);
};

/*
 * Runs every wave of d->st, going on after a wave that never became
 * consistent.  Returns 0, -ETIMEDOUT if any wave did not, or -errno.
 */
int ms_drive(struct ms_driver *d);
uint64_t ms_maxrss_kb(void);

#endif
