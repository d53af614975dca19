/* SPDX-License-Identifier: MIT */
/*
 * The pieces of one mountinfo line (format in mountinfo.c): the kernel's
 * octal escapes, decimal numbers, the mount options and the optional tags.
 * No allocation; the record is built from them in mountinfo.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>

#include "mirror/mountinfo_fields.h"
#include "internal.h"
#include "mirror/mountinfo.h"

/* Value of exactly three octal digits (first 0-3: a byte), or -1. */
static int octal3(const char *p)
{
	/* Short-circuit order matters: never read past a NUL. */
	if (p[0] < '0' || p[0] > '3' || p[1] < '0' || p[1] > '7' || p[2] < '0' || p[2] > '7')
		return -1;
	return (p[0] - '0') << 6 | (p[1] - '0') << 3 | (p[2] - '0');
}

int mr__mountinfo_unescape(char *s)
{
	size_t r, w;

	/*
	 * Validate before writing, so that a malformed string comes back as
	 * it went in.  \000 is refused too: it would cut the string short.
	 */
	for (r = 0; s[r]; r++) {
		if (s[r] != '\\')
			continue;
		if (octal3(s + r + 1) <= 0)
			return -EINVAL;
		r += 3;
	}
	if (r > INT_MAX)
		return -EOVERFLOW;

	for (r = w = 0; s[r]; w++) {
		if (s[r] == '\\') {
			s[w] = (char)octal3(s + r + 1);
			r += 4;
		} else {
			s[w] = s[r++];
		}
	}
	s[w] = '\0';
	return (int)w;
}

/* Decimal without sign or spaces, fitting 32 bits (the kernel prints %i/%u). */
int mr__mi_parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

/* Mount options (show_mnt_opts()) to MOUNT_ATTR_*; unknown names are kept in the string only. */
int mr__mi_mount_opts_attr(const char *s, uint64_t *ret_attr)
{
	static const struct {
		const char *name;
		uint64_t attr;
	} names[] = {
		{ "nosuid", MOUNT_ATTR_NOSUID },
		{ "nodev", MOUNT_ATTR_NODEV },
		{ "noexec", MOUNT_ATTR_NOEXEC },
		{ "nodiratime", MOUNT_ATTR_NODIRATIME },
		{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW },
		{ "idmapped", MOUNT_ATTR_IDMAP },
	};
	uint64_t attr = 0, atime = MOUNT_ATTR_STRICTATIME;
	bool first = true;

	/*
	 * The kernel prints "noatime" or "relatime" and nothing for
	 * strictatime, which is what statmount's mnt_attr then says
	 * (MOUNT_ATTR_STRICTATIME); MOUNT_ATTR_RELATIME is 0.
	 */
	while (true) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (first) {
			if (mr__mi_tok_eq(s, n, "ro"))
				attr |= MOUNT_ATTR_RDONLY;
			else if (!mr__mi_tok_eq(s, n, "rw"))
				return -EINVAL;
			first = false;
		} else if (mr__mi_tok_eq(s, n, "noatime")) {
			atime = MOUNT_ATTR_NOATIME;
		} else if (mr__mi_tok_eq(s, n, "relatime")) {
			if (atime != MOUNT_ATTR_NOATIME)
				atime = MOUNT_ATTR_RELATIME;
		} else if (mr__mi_tok_eq(s, n, "strictatime")) {
			/* never printed by the kernel; accepted for hand-made tables */
		} else {
			for (size_t i = 0; i < MR__ARRAY_SIZE(names); i++)
				if (mr__mi_tok_eq(s, n, names[i].name))
					attr |= names[i].attr;
		}
		if (!e)
			break;
		s = e + 1;
	}
	*ret_attr = attr | atime;
	return 0;
}

/* Optional fields up to "-": propagation.  Unknown tags are skipped (proc(5)). */
int mr__mi_parse_tags(struct mr__mi_cursor *c, uint32_t *ret_prop)
{
	uint32_t prop = 0, n;
	char *t;

	while ((t = mr__mi_next_field(c))) {
		if (strcmp(t, "-") == 0) {
			*ret_prop = prop ? prop : MS_PRIVATE;
			return 0;
		}
		if (strncmp(t, "shared:", 7) == 0) {
			if (mr__mi_parse_u32(t + 7, &n) < 0)
				return -EINVAL;
			prop |= MS_SHARED;
		} else if (strncmp(t, "master:", 7) == 0) {
			if (mr__mi_parse_u32(t + 7, &n) < 0)
				return -EINVAL;
			prop |= MS_SLAVE;
		} else if (strncmp(t, "propagate_from:", 15) == 0) {
			if (mr__mi_parse_u32(t + 15, &n) < 0)
				return -EINVAL;
		} else if (strcmp(t, "unbindable") == 0) {
			prop |= MS_UNBINDABLE;
		} else if (!*t) {
			return -EINVAL; /* a double space: not the kernel's output */
		}
	}
	return -EINVAL; /* no " - " separator */
}
