/* SPDX-License-Identifier: MIT */
/*
 * mountinfo.c: parse /proc/PID/mountinfo text.
 */
#ifndef MR_MOUNTINFO_H
#define MR_MOUNTINFO_H

#include <stddef.h>

#include "mirror/mount.h"

/*
 * Undoes the kernel's octal escaping of ' ', '\t', '\n' and '\\' (mangle()
 * in fs/proc_namespace.c: \040 \011 \012 \134) in place.  Returns the new
 * length, or -EINVAL for a malformed escape.
 */
int mr__mountinfo_unescape(char *s);

/*
 * Parses a whole mountinfo buffer into @ret (appended).  IDs are the
 * 32-bit mountinfo IDs (stored in old_id and, lacking better, in pub.id).
 * Returns the number of mounts parsed, or -EINVAL at the first malformed
 * line (the table then holds the lines before it).
 */
int mr__mountinfo_parse(const char *buf, size_t len, struct mr__table *ret);

/* Scratch space for parsing lines one at a time, reused between them. */
struct mr__mountinfo_scratch {
	char *p;
	size_t cap;
};

/*
 * Parses one line (@n bytes, no '\n') into a new record.  0, -EINVAL for a
 * malformed line, -ENOMEM.
 */
int mr__mountinfo_parse_line(const char *l, size_t n, struct mr__mountinfo_scratch *s,
			     struct mr__mount **ret);
void mr__mountinfo_scratch_free(struct mr__mountinfo_scratch *s);

/*
 * Reads a whole mountinfo file through @fd (-1: /proc/self/mountinfo) into
 * *@buf, adding the syscalls made to *@calls (may be NULL): the kernel
 * hands out one page of it per read(2), so 10,000 mounts take ~300.
 */
int mr__mountinfo_read_fd(int fd, char **buf, size_t *cap, size_t *ret_len, uint64_t *calls);

#endif /* MR_MOUNTINFO_H */
