/* SPDX-License-Identifier: MIT */
/*
 * attr_pass.c: mountinfo read once, the mounts whose line changed looked up.
 */
#ifndef MR_ATTR_PASS_H
#define MR_ATTR_PASS_H

#include <stdbool.h>

#include "mirror/mountinfo.h"
#include "mirror/mountinfo_diff.h"

struct mr__ns;

struct mr__attr_pass {
	int fd; /* /proc/PID/mountinfo: the source polls it for POLLPRI too */
	struct mr__mi_diff diff;
	struct mr__mountinfo_scratch scratch;
	bool ok; /* diff holds a whole read */
};

/* Opens @ns's mountinfo and learns its lines, before the mirror is read. */
int mr__attr_pass_open(struct mr__attr_pass *p, struct mr__ns *ns);
/*
 * Router thread: reads mountinfo and looks up each mount whose line, or
 * mirror record, changed since the last pass, routing what differs.  On an
 * error the namespace is marked for a resync.  Returns 0 or -errno.
 */
int mr__attr_pass_run(struct mr__attr_pass *p, struct mr__ns *ns);
void mr__attr_pass_free(struct mr__attr_pass *p);
/*
 * The POLLPRI doorbell: @ns's mountinfo opened as a file of its own, apart
 * from the one passes read (a pass reading mountinfo between a change and
 * its POLLPRI was seen to lose that POLLPRI when both shared one open
 * file: test_router_listmount).  An fd, or -errno.
 */
int mr__attr_pass_doorbell_open(const struct mr__ns *ns);

#endif /* MR_ATTR_PASS_H */
