/* SPDX-License-Identifier: MIT */
/*
 * mountwatch: the three output formats.
 *
 * A mount point may hold any byte but '\0' and '/' within a name: spaces,
 * newlines, terminal escape sequences, bytes that are not UTF-8.  Each
 * format says how it escapes them, and none of them lets a name end a
 * line, split a field or reach the terminal raw:
 *  - table: control bytes and invalid UTF-8 as \xXX, for people;
 *  - raw:   findmnt -r's rule, also space and backslash as \xXX, so that
 *           splitting on ' ' and undoing \xXX gives back the exact bytes;
 *  - pairs: findmnt -P's KEY="value", with '"', '\\', '$' and '`' as \xXX
 *           too, so that a shell's eval reads the exact bytes back;
 *  - JSON:  control characters as \u00XX, and each byte that is not part
 *           of valid UTF-8 as \uDCXX (XX = the byte): PEP 383's
 *           "surrogateescape", which no valid text can produce, so it is
 *           lossless (Python: json.loads(l)["target"].encode("utf-8",
 *           "surrogateescape") returns the original bytes).
 * The C1 controls (U+0080..U+009F, UTF-8 c2 80..c2 9f) are escaped like
 * the C0 ones: a terminal acts on U+009B as on ESC [.
 */
#include <errno.h>
#include <langinfo.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "mountwatch.h"

struct buf {
	char *p;
	size_t n, cap;
};

static void buf_add(struct buf *b, const void *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			abort(); /* a line of output cannot be half-printed */
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_fmt(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_fmt(struct buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	buf_add(b, tmp, n < 0 ? 0 : (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/*
 * Length of the valid UTF-8 sequence at @s (at most @n bytes), or 0 if the
 * byte there does not start one.  Strict: no overlong forms, no UTF-16
 * surrogates, nothing above U+10FFFF, so that every byte the JSON escaper
 * passes through raw is text any decoder accepts.
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* A C1 control character: two bytes, c2 80 to c2 9f. */
static bool is_c1(const unsigned char *s, size_t len)
{
	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

static void json_escape(struct buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	buf_add(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(s + i, n - i);
		if (!len) {
			buf_fmt(b, "\\udc%02x", s[i]);
			i++;
		} else if (is_c1(s + i, len)) {
			buf_fmt(b, "\\u%04x", s[i + 1]);
			i += len;
		} else if (len > 1) {
			buf_add(b, s + i, len);
			i += len;
		} else if (s[i] == '"' || s[i] == '\\') {
			buf_add(b, "\\", 1);
			buf_add(b, s + i, 1);
			i++;
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			buf_fmt(b, "\\u%04x", s[i]);
			i++;
		} else {
			buf_add(b, s + i, 1);
			i++;
		}
	}
	buf_add(b, "\"", 1);
}

/* Raw and pairs: @extra names the printable bytes escaped besides blanks. */
static void hex_escape(struct buf *b, const char *str, const char *extra)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(s + i, n - i);
		if (is_c1(s + i, len)) {
			buf_fmt(b, "\\x%02x\\x%02x", s[i], s[i + 1]);
			i += len;
		} else if (len > 1) {
			buf_add(b, s + i, len);
			i += len;
		} else if (!len || s[i] < 0x20 || s[i] == 0x7f || s[i] == '\\' ||
			   strchr(extra, s[i])) {
			buf_fmt(b, "\\x%02x", s[i]);
			i++;
		} else {
			buf_add(b, s + i, 1);
			i++;
		}
	}
}

static void raw_escape(struct buf *b, const char *str)
{
	hex_escape(b, str, " ");
}

static void pairs_escape(struct buf *b, const char *str)
{
	buf_add(b, "\"", 1);
	hex_escape(b, str, "\"$`");
	buf_add(b, "\"", 1);
}

/*
 * For the table: like raw, but spaces and backslashes stay as they are
 * (people read it).  Returns the width on screen; appends at most
 * @max_cols columns, ending with an ellipsis when it had to cut.
 */
static size_t table_escape(struct buf *b, const char *str, size_t max_cols, bool utf8)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), cols = 0;
	size_t cut_at = b->n, cut_cols = 0; /* last place with room for the ellipsis */

	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(s + i, n - i), plen = 0, w = 0;
		char piece[8];

		if (len > 1 && utf8) {
			wchar_t wc;
			mbstate_t st = {0};
			if (mbrtowc(&wc, (const char *)s + i, len, &st) == len && wcwidth(wc) >= 0) {
				w = (size_t)wcwidth(wc);
				memcpy(piece, s + i, len);
				plen = len;
			}
		} else if (len == 1 && s[i] >= 0x20 && s[i] != 0x7f) {
			piece[0] = (char)s[i];
			plen = w = 1;
		}
		if (!plen) {
			/* Control, invalid or (off a UTF-8 terminal) non-ASCII byte. */
			len = 1;
			plen = w = 4;
			snprintf(piece, sizeof(piece), "\\x%02x", s[i]);
		}
		if (cols + w > max_cols) {
			b->n = cut_at;
			if (b->p)
				b->p[b->n] = '\0';
			buf_str(b, utf8 ? "\u2026" : "~");
			return cut_cols + 1;
		}
		buf_add(b, piece, plen);
		cols += w;
		i += len;
		if (cols + 1 <= max_cols) {
			cut_at = b->n;
			cut_cols = cols;
		}
	}
	return cols;
}

/* ---- the columns of an event ---- */

struct row {
	const char *s[MW_COL__MAX];   /* string columns; NULL: empty / null */
	uint64_t num[MW_COL__MAX];    /* the numeric columns */
	bool has_num[MW_COL__MAX];
	char time[64];
	char flags[128];
	char majmin[24];
	char prop[40], old_prop[40];
	struct buf source;            /* SOURCE[FSROOT] of a bind mount */
	struct buf opts, old_opts;    /* OPTIONS, OLD-OPTIONS as findmnt merges them */
	uint32_t evflags;
	const struct mr_event *ev;
};

static void format_time(const struct mw_out *out, uint64_t mono_ns, char *dst, size_t len);

struct mw_out {
	const struct mw_opts *o;
	const struct mw_watch *watch;
	FILE *f;
	bool tty, utf8;
	bool cut;                  /* table on a terminal without -u: cells are cut to fit */
	unsigned term_cols;
	size_t width[MW_COL__MAX]; /* table: current width of each shown column */
	size_t cap[MW_COL__MAX];   /* widest a cell may be (SIZE_MAX: never cut) */
	size_t need[MW_COL__MAX];  /* flexible columns: widest value seen so far */
	bool header_due;
	uint64_t synthetic_in_resync;
	struct buf line;
};

static void flags_string(uint32_t fl, char *dst, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{MR_EVF_SYNTHETIC, "synthetic"},     {MR_EVF_READONLY, "ro"},
		{MR_EVF_SUBMOUNT, "submount"},       {MR_EVF_KERNEL_LOSS, "kernel-loss"},
		{MR_EVF_RING_LOSS, "ring-loss"},     {MR_EVF_LATE_JOIN, "late-join"},
	};
	size_t n = 0;

	dst[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (fl & names[i].bit)
			n += (size_t)snprintf(dst + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
					      names[i].name);
}

/* findmnt's words: the finer kinds are in the KIND column. */
static const char *action_name(uint32_t kind)
{
	switch (kind) {
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		return "umount";
	case MR_EVENT_READONLY:
	case MR_EVENT_ATTR:
		return "remount";
	default:
		return mr_event_kind_name(kind);
	}
}

/* findmnt -o PROPAGATION's spelling: shared or private, then ,slave ,unbindable. */
static void propagation_string(uint32_t p, char *dst, size_t len)
{
	snprintf(dst, len, "%s%s%s", p & MS_SHARED ? "shared" : "private",
		 p & MS_SLAVE ? ",slave" : "", p & MS_UNBINDABLE ? ",unbindable" : "");
}

static void set_num(struct row *r, enum mw_col c, uint64_t v)
{
	r->num[c] = v;
	r->has_num[c] = true;
}

static void row_common(struct mw_out *out, struct row *r, const struct mr_event *ev,
		       const char *kind)
{
	memset(r, 0, sizeof(*r));
	r->ev = ev;
	format_time(out, ev->time_ns, r->time, sizeof(r->time));
	r->s[MW_COL_TIME] = r->time;
	set_num(r, MW_COL_SEQ, ev->seq);
	set_num(r, MW_COL_NS_ID, ev->ns_id);
	uint64_t ino = out->watch ? mw_watch_ns_inode(out->watch, ev->ns_id) : 0;
	if (ino)
		set_num(r, MW_COL_NS, ino);
	r->s[MW_COL_KIND] = kind;
	r->evflags = ev->flags;
	flags_string(ev->flags, r->flags, sizeof(r->flags));
	r->s[MW_COL_FLAGS] = r->flags;
}

/*
 * The library writes a read-only superblock under a read-write mount as
 * "rw,...,ro" (the mount's flag first, the superblock's last); findmnt's
 * OPTIONS merges the two into "ro,...".  Returns @opts or the merged copy
 * in @b.
 */
static const char *findmnt_options(struct buf *b, const char *opts)
{
	if (strncmp(opts, "rw,", 3))
		return opts;
	const char *p = opts + 2;
	while (*p == ',') {
		size_t n = strcspn(p + 1, ",");
		if (n == 2 && !strncmp(p + 1, "ro", 2)) {
			buf_str(b, "ro");
			buf_add(b, opts + 2, (size_t)(p - (opts + 2)));
			buf_str(b, p + 3);
			return b->p;
		}
		p += n + 1;
	}
	return opts;
}

/* The columns a mount gives: IDs as mountinfo and statmount show them, and the rest. */
static void row_from_mount(struct row *r, const struct mr_mount *m)
{
	if (m->mountinfo_id)
		set_num(r, MW_COL_ID, m->mountinfo_id);
	if (m->mountinfo_parent_id)
		set_num(r, MW_COL_PARENT, m->mountinfo_parent_id);
	set_num(r, MW_COL_UNIQ_ID, m->id);
	set_num(r, MW_COL_UNIQ_PARENT, m->parent_id);
	r->s[MW_COL_TARGET] = m->path;
	r->s[MW_COL_FSTYPE] = m->fstype;
	r->s[MW_COL_OPTIONS] = findmnt_options(&r->opts, m->options);
	r->s[MW_COL_FSROOT] = m->root;
	snprintf(r->majmin, sizeof(r->majmin), "%u:%u", m->dev_major, m->dev_minor);
	r->s[MW_COL_MAJMIN] = r->majmin;
	propagation_string(m->propagation, r->prop, sizeof(r->prop));
	r->s[MW_COL_PROPAGATION] = r->prop;
	/* findmnt: a mount of a filesystem's subdirectory is SOURCE[/subdir]. */
	if (m->root[0] && strcmp(m->root, "/")) {
		buf_str(&r->source, m->source);
		buf_add(&r->source, "[", 1);
		buf_str(&r->source, m->root);
		buf_add(&r->source, "]", 1);
		r->s[MW_COL_SOURCE] = r->source.p;
	} else {
		r->s[MW_COL_SOURCE] = m->source;
	}
}

static void row_event(struct mw_out *out, struct row *r, const struct mr_event *ev, char *msg,
		      size_t msg_len)
{
	row_common(out, r, ev, mr_event_kind_name(ev->kind));
	r->s[MW_COL_ACTION] = action_name(ev->kind);

	switch (ev->kind) {
	case MR_EVENT_OVERRUN:
		/* Say it where a reader looks first: the TARGET column. */
		snprintf(msg, msg_len, "lost %llu change%s (%s); a snapshot follows",
			 (unsigned long long)ev->lost, ev->lost == 1 ? "" : "s",
			 ev->flags & MR_EVF_KERNEL_LOSS ? "the kernel's queue overflowed"
							: "output too slow, ring full");
		r->s[MW_COL_TARGET] = msg;
		return;
	case MR_EVENT_RESYNC_BEGIN:
		out->synthetic_in_resync = 0;
		r->s[MW_COL_TARGET] = "kernel lost changes; re-reading the table";
		return;
	case MR_EVENT_RESYNC_END:
		snprintf(msg, msg_len, "resync delivered %llu change%s",
			 (unsigned long long)out->synthetic_in_resync,
			 out->synthetic_in_resync == 1 ? "" : "s");
		r->s[MW_COL_TARGET] = msg;
		return;
	default:
		break;
	}
	if (ev->flags & MR_EVF_SYNTHETIC)
		out->synthetic_in_resync++;
	if (ev->mount) {
		row_from_mount(r, ev->mount);
	} else {
		set_num(r, MW_COL_UNIQ_ID, ev->mnt_id);
		set_num(r, MW_COL_UNIQ_PARENT, ev->parent_id);
		r->s[MW_COL_TARGET] = ev->path;
		r->s[MW_COL_SOURCE] = ev->source;
		r->s[MW_COL_FSTYPE] = ev->fstype;
		r->s[MW_COL_OPTIONS] = findmnt_options(&r->opts, ev->options);
	}
	/* findmnt shows the old values only where they changed: so do we. */
	if (ev->kind == MR_EVENT_MOVE && ev->old_path[0])
		r->s[MW_COL_OLD_TARGET] = ev->old_path;
	if (ev->old_options[0] && strcmp(ev->old_options, ev->options))
		r->s[MW_COL_OLD_OPTIONS] = findmnt_options(&r->old_opts, ev->old_options);
	if (ev->old_mount && ev->old_propagation != ev->propagation) {
		propagation_string(ev->old_propagation, r->old_prop, sizeof(r->old_prop));
		r->s[MW_COL_OLD_PROPAGATION] = r->old_prop;
	}
}

static void row_mount(struct mw_out *out, struct row *r, const struct mr_event *ev,
		      const struct mr_mount *m)
{
	row_common(out, r, ev, "snapshot");
	r->s[MW_COL_ACTION] = "snapshot";
	row_from_mount(r, m);
}

static void format_time(const struct mw_out *out, uint64_t mono_ns, char *dst, size_t len)
{
	struct timespec rt, mt;
	struct tm tm;

	if (out->o->monotonic) {
		snprintf(dst, len, "%llu.%09llu", (unsigned long long)(mono_ns / 1000000000u),
			 (unsigned long long)(mono_ns % 1000000000u));
		return;
	}
	/*
	 * The router stamps CLOCK_MONOTONIC (immune to clock steps while it
	 * runs); the wall-clock time is that plus the current offset between
	 * the two clocks, read now so that a stepped clock is followed.
	 */
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	int64_t off = ((int64_t)rt.tv_sec - mt.tv_sec) * 1000000000 + (rt.tv_nsec - mt.tv_nsec);
	int64_t wall = (int64_t)mono_ns + off;
	time_t sec = (time_t)(wall / 1000000000);
	long usec = (long)(wall % 1000000000) / 1000;
	char zone[8];

	localtime_r(&sec, &tm);
	strftime(zone, sizeof(zone), "%z", &tm); /* +hhmm; ISO 8601 wants +hh:mm */
	size_t n = strftime(dst, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(dst + n, len - n, ".%06ld%.3s:%.2s", usec, zone, zone + 3);
}

/* ---- table ---- */

/*
 * Columns whose values have no bound: they share what the others leave,
 * and are the ones cut.  FSTYPE and FLAGS are short words, whole or useless.
 */
static bool col_flexible(enum mw_col c)
{
	return c == MW_COL_TARGET || c == MW_COL_SOURCE || c == MW_COL_OPTIONS ||
	       c == MW_COL_OLD_TARGET || c == MW_COL_OLD_OPTIONS || c == MW_COL_FSROOT;
}

/* Widths of the columns whose values have a known size. */
static size_t col_fixed_width(const struct mw_out *out, enum mw_col c)
{
	switch (c) {
	case MW_COL_TIME:
		return out->o->monotonic ? 16 : 32;
	case MW_COL_ACTION:
	case MW_COL_KIND:
		return 8; /* "snapshot"; "resync-begin" widens it when it comes */
	case MW_COL_NS:
	case MW_COL_NS_ID:
	case MW_COL_ID:
	case MW_COL_PARENT:
	case MW_COL_UNIQ_ID:
	case MW_COL_UNIQ_PARENT:
		return 4;
	case MW_COL_MAJMIN:
		return 5;
	case MW_COL_PROPAGATION:
	case MW_COL_OLD_PROPAGATION:
		return 7;
	case MW_COL_SEQ:
		return 4;
	case MW_COL_FSTYPE:
		return 5;
	default:
		return 0;
	}
}

static unsigned col_weight(enum mw_col c)
{
	switch (c) {
	case MW_COL_TARGET:
	case MW_COL_OPTIONS:
		return 4;
	case MW_COL_SOURCE:
	case MW_COL_OLD_TARGET:
	case MW_COL_OLD_OPTIONS:
		return 2;
	default:
		return 1;
	}
}

/*
 * Lays the table out.  Every column is as wide as the widest value seen in
 * it so far.  On a terminal (without -u) the line must fit: the flexible
 * columns share the room the others leave, by weight, each taking no more
 * than it needs and leaving the rest to the others (water-filling); a
 * value wider than its share is cut with a marker.  Off a terminal, or
 * with -u, nothing is cut and a wider value widens its column.
 */
static void layout(struct mw_out *out)
{
	const struct mw_opts *o = out->o;
	size_t fixed = 0;
	bool todo[MW_COL__MAX] = {0};

	for (size_t i = 0; i < o->n_cols; i++) {
		enum mw_col c = o->cols[i];
		size_t h = strlen(mw_col_name(c));
		size_t w = col_flexible(c) ? 4 * col_weight(c) + 2 : col_fixed_width(out, c);
		if (out->need[c] < h)
			out->need[c] = h;
		if (out->need[c] < w)
			out->need[c] = w;
		out->cap[c] = SIZE_MAX;
		if (col_flexible(c) && out->cut) {
			todo[c] = true;
			fixed += 1;
		} else {
			out->width[c] = out->need[c];
			fixed += out->width[c] + 1;
		}
	}
	if (!out->cut)
		return;
	size_t room = out->term_cols > fixed ? out->term_cols - fixed : 0;
	for (bool again = true; again;) {
		unsigned weights = 0;
		again = false;
		for (size_t i = 0; i < o->n_cols; i++)
			if (todo[o->cols[i]])
				weights += col_weight(o->cols[i]);
		for (size_t i = 0; i < o->n_cols && weights; i++) {
			enum mw_col c = o->cols[i];
			if (todo[c] && out->need[c] <= room * col_weight(c) / weights) {
				out->width[c] = out->need[c];
				room -= out->need[c];
				todo[c] = false;
				again = true;
			}
		}
	}
	unsigned weights = 0;
	for (size_t i = 0; i < o->n_cols; i++)
		if (todo[o->cols[i]])
			weights += col_weight(o->cols[i]);
	for (size_t i = 0; i < o->n_cols; i++) {
		enum mw_col c = o->cols[i];
		if (!todo[c])
			continue;
		size_t w = room * col_weight(c) / weights;
		out->width[c] = w < 2 ? 2 : w; /* one character and the marker */
		out->cap[c] = out->width[c];
	}
}

static void term_size(struct mw_out *out)
{
	struct winsize ws;

	out->term_cols = 0;
	if (out->tty && ioctl(fileno(out->f), TIOCGWINSZ, &ws) == 0)
		out->term_cols = ws.ws_col;
	if (!out->term_cols)
		out->term_cols = 80;
}

static void table_cell(struct mw_out *out, size_t i, enum mw_col c, const char *s)
{
	bool last = i + 1 == out->o->n_cols;
	size_t w = table_escape(&out->line, s ? s : "", out->cap[c], out->utf8);

	if (w > out->width[c] && !last) {
		/* Uncut: widen for the lines to come, and after a SIGWINCH too. */
		out->width[c] = w;
		if (w > out->need[c])
			out->need[c] = w;
	}
	if (!last) {
		for (size_t k = w; k < out->width[c]; k++)
			buf_add(&out->line, " ", 1);
		buf_add(&out->line, " ", 1);
	}
}

static void print_header(struct mw_out *out)
{
	const struct mw_opts *o = out->o;

	out->line.n = 0;
	for (size_t i = 0; i < o->n_cols; i++) {
		const char *h = mw_col_name(o->cols[i]);
		if (o->format == MW_FMT_RAW) {
			if (i)
				buf_add(&out->line, " ", 1);
			buf_str(&out->line, h);
		} else {
			table_cell(out, i, o->cols[i], h);
		}
	}
	while (out->line.n && out->line.p[out->line.n - 1] == ' ')
		out->line.p[--out->line.n] = '\0';
	buf_add(&out->line, "\n", 1);
	fwrite(out->line.p, 1, out->line.n, out->f);
}

static void cell_text(const struct row *r, enum mw_col c, char *num, size_t len, const char **s)
{
	if (r->has_num[c]) {
		snprintf(num, len, "%llu", (unsigned long long)r->num[c]);
		*s = num;
	} else {
		*s = r->s[c];
	}
}

/*
 * On a terminal, a value wider than its column lays the table out again
 * (the column takes more of the room, if there is any to take) and, when
 * a width changed, brings a new header so that the rows from here on line
 * up under it.
 */
static void fit_row(struct mw_out *out, const struct row *r)
{
	const struct mw_opts *o = out->o;
	size_t before[MW_COL__MAX];
	bool grew = false;

	for (size_t i = 0; i < o->n_cols; i++) {
		enum mw_col c = o->cols[i];
		char num[32];
		const char *s;

		cell_text(r, c, num, sizeof(num), &s);
		if (!s)
			continue;
		struct buf tmp = {0};
		size_t w = table_escape(&tmp, s, SIZE_MAX, out->utf8);
		free(tmp.p);
		if (w > out->need[c]) {
			out->need[c] = w;
			grew = true;
		}
	}
	if (!grew)
		return;
	memcpy(before, out->width, sizeof(before));
	layout(out);
	for (size_t i = 0; i + 1 < o->n_cols; i++)
		if (before[o->cols[i]] != out->width[o->cols[i]])
			out->header_due = true;
}

static void print_json(struct mw_out *out, const struct row *r)
{
	const struct mw_opts *o = out->o;

	buf_fmt(&out->line, "{\"v\":%d", MW_JSON_SCHEMA_VERSION);
	for (size_t i = 0; i < o->n_cols; i++) {
		enum mw_col c = o->cols[i];
		char key[32];
		size_t k;

		/* findmnt -J: lower case; ':' and '-' become '_' for every language's taste. */
		for (k = 0; mw_col_name(c)[k] && k < sizeof(key) - 1; k++) {
			char ch = mw_col_name(c)[k];
			key[k] = ch == '-' || ch == ':' ? '_' : (char)(ch | 0x20);
		}
		key[k] = '\0';
		buf_fmt(&out->line, ",\"%s\":", key);
		if (c == MW_COL_FLAGS) {
			/* An array of names; "synthetic" also on its own, as a bool. */
			buf_add(&out->line, "[", 1);
			for (const char *p = r->flags; *p;) {
				size_t n = strcspn(p, ",");
				buf_fmt(&out->line, "%s\"%.*s\"", p == r->flags ? "" : ",", (int)n, p);
				p += n + (p[n] == ',');
			}
			buf_fmt(&out->line, "],\"synthetic\":%s",
				r->evflags & MR_EVF_SYNTHETIC ? "true" : "false");
		} else if (r->has_num[c]) {
			buf_fmt(&out->line, "%llu", (unsigned long long)r->num[c]);
		} else if (r->s[c]) {
			json_escape(&out->line, r->s[c]);
		} else {
			buf_str(&out->line, "null");
		}
	}
	const struct mr_event *ev = r->ev;
	if (ev->kind == MR_EVENT_OVERRUN)
		buf_fmt(&out->line, ",\"lost\":%llu,\"loss\":\"%s\"", (unsigned long long)ev->lost,
			ev->flags & MR_EVF_KERNEL_LOSS ? "kernel" : "ring");
	else if (ev->kind == MR_EVENT_RESYNC_END)
		buf_fmt(&out->line, ",\"delivered\":%llu",
			(unsigned long long)out->synthetic_in_resync);
	buf_add(&out->line, "}\n", 2);
}

static int print_row(struct mw_out *out, const struct row *r)
{
	const struct mw_opts *o = out->o;

	if (o->format == MW_FMT_TABLE && out->cut)
		fit_row(out, r);
	if (out->header_due) {
		out->header_due = false;
		if (!o->noheadings && (o->format == MW_FMT_TABLE || o->format == MW_FMT_RAW))
			print_header(out);
	}
	out->line.n = 0;
	if (o->format == MW_FMT_JSON) {
		print_json(out, r);
	} else {
		for (size_t i = 0; i < o->n_cols; i++) {
			enum mw_col c = o->cols[i];
			char num[32];
			const char *s;

			cell_text(r, c, num, sizeof(num), &s);
			if (o->format == MW_FMT_RAW) {
				if (i)
					buf_add(&out->line, " ", 1);
				raw_escape(&out->line, s ? s : "");
			} else if (o->format == MW_FMT_PAIRS) {
				buf_fmt(&out->line, "%s%s=", i ? " " : "", mw_col_name(c));
				pairs_escape(&out->line, s ? s : "");
			} else {
				table_cell(out, i, c, s);
			}
		}
		/* Empty trailing cells leave padding behind: no trailing blanks. */
		if (o->format == MW_FMT_TABLE)
			while (out->line.n && out->line.p[out->line.n - 1] == ' ')
				out->line.p[--out->line.n] = '\0';
		buf_add(&out->line, "\n", 1);
	}
	if (fwrite(out->line.p, 1, out->line.n, out->f) != out->line.n)
		return -(errno ? errno : EIO);
	return 0;
}

int mw_out_event(struct mw_out *out, const struct mr_event *ev)
{
	char msg[160];
	struct row r;

	row_event(out, &r, ev, msg, sizeof(msg));
	int err = print_row(out, &r);
	free(r.source.p);
	free(r.opts.p);
	free(r.old_opts.p);
	return err;
}

int mw_out_snapshot_mount(struct mw_out *out, const struct mr_event *ev, const struct mr_mount *m)
{
	struct row r;

	row_mount(out, &r, ev, m);
	int err = print_row(out, &r);
	free(r.source.p);
	free(r.opts.p);
	return err;
}

int mw_out_flush(struct mw_out *out)
{
	if (fflush(out->f) == EOF || ferror(out->f))
		return -(errno ? errno : EIO);
	return 0;
}

void mw_out_resize(struct mw_out *out)
{
	term_size(out);
	layout(out);
	out->header_due = true;
}

void mw_out_set_watch(struct mw_out *out, const struct mw_watch *w)
{
	out->watch = w;
}

int mw_out_new(const struct mw_opts *o, FILE *f, struct mw_out **ret)
{
	struct mw_out *out = calloc(1, sizeof(*out));
	const char *cs = nl_langinfo(CODESET);

	if (!out)
		return -ENOMEM;
	out->o = o;
	out->f = f;
	out->tty = isatty(fileno(f));
	out->cut = out->tty && !o->notruncate && o->format == MW_FMT_TABLE;
	out->utf8 = cs && !strcmp(cs, "UTF-8");
	term_size(out);
	layout(out);
	out->header_due = true;
	*ret = out;
	return 0;
}

void mw_out_free(struct mw_out *out)
{
	if (!out)
		return;
	free(out->line.p);
	free(out);
}
