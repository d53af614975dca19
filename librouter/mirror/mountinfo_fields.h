/* SPDX-License-Identifier: MIT */
/*
 * What mountinfo.c builds a record from (mountinfo_fields.c), and the two
 * helpers both files call per field, inline: they run for every field of
 * every line.  Nothing outside mirror/ includes this.
 */
#ifndef MR_MOUNTINFO_FIELDS_H
#define MR_MOUNTINFO_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Splits on single spaces; fields may be empty.  NULL when none is left. */
struct mr__mi_cursor {
	char *p, *end; /* *end is the line's NUL */
};

static inline char *mr__mi_next_field(struct mr__mi_cursor *c)
{
	char *s = c->p, *sp;

	if (s > c->end)
		return NULL;
	sp = memchr(s, ' ', (size_t)(c->end - s));
	if (!sp) {
		c->p = c->end + 1;
		return s;
	}
	*sp = '\0';
	c->p = sp + 1;
	return s;
}

/* The @n bytes at @s are the word @lit. */
static inline bool mr__mi_tok_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Decimal without sign or spaces, fitting 32 bits (the kernel prints %i/%u). */
int mr__mi_parse_u32(const char *s, uint32_t *ret);
/*
 * Mount options (show_mnt_opts()) to MOUNT_ATTR_*; unknown names are kept in
 * the string only.  0 or -EINVAL.
 */
int mr__mi_mount_opts_attr(const char *s, uint64_t *ret_attr);
/*
 * Optional fields up to "-": the propagation (MS_SHARED etc.).  Unknown tags
 * are skipped (proc(5)).  0 or -EINVAL.
 */
int mr__mi_parse_tags(struct mr__mi_cursor *c, uint32_t *ret_prop);

#endif /* MR_MOUNTINFO_FIELDS_H */
