/* SPDX-License-Identifier: MIT */
/*
 * mountwatch: shared declarations of the command-line watcher.  One file
 * per concept: options.c (command line), output.c (table, raw, JSON),
 * namespaces.c (which namespaces and subtrees are watched), stats.c
 * (counters and latency), mountwatch.c (the loop).
 */
#ifndef MOUNTWATCH_H
#define MOUNTWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <mountrouter.h>

/*
 * Exit codes (mountwatch(1), EXIT STATUS).  Distinct, so that a script
 * can tell a usage error from a missing privilege or kernel feature; the
 * message on stderr says the rest.
 */
#define MW_EXIT_EVENT 0       /* a change was seen, or stopped by a signal, -c, -f */
#define MW_EXIT_TIMEOUT 1     /* --timeout passed without a change (findmnt -w) */
#define MW_EXIT_USAGE 2       /* bad option or value */
#define MW_EXIT_NOTFOUND 3    /* a --ns process or file, or a --subtree path, is missing */
#define MW_EXIT_PERM 4        /* privilege missing (CAP_SYS_ADMIN) */
#define MW_EXIT_NOTSUP 5      /* the kernel lacks the source or feature asked for */
#define MW_EXIT_NSGONE 6      /* the namespace of --ns PID ended */
#define MW_EXIT_OUTPUT 7      /* standard output closed or not writable */
#define MW_EXIT_FAILURE 8     /* any other failure */

/* Returned inside mountwatch for "the namespace of --ns PID ended". */
#define MW_ENSGONE 1000

enum mw_col {
	MW_COL_ACTION,
	MW_COL_KIND,
	MW_COL_TARGET,
	MW_COL_SOURCE,
	MW_COL_FSTYPE,
	MW_COL_OPTIONS,
	MW_COL_OLD_TARGET,
	MW_COL_OLD_OPTIONS,
	MW_COL_ID,
	MW_COL_PARENT,
	MW_COL_UNIQ_ID,
	MW_COL_UNIQ_PARENT,
	MW_COL_MAJMIN,
	MW_COL_FSROOT,
	MW_COL_PROPAGATION,
	MW_COL_OLD_PROPAGATION,
	MW_COL_NS,
	MW_COL_NS_ID,
	MW_COL_TIME,
	MW_COL_SEQ,
	MW_COL_FLAGS,
	MW_COL__MAX
};

enum mw_format { MW_FMT_TABLE, MW_FMT_RAW, MW_FMT_PAIRS, MW_FMT_JSON };

struct mw_opts {
	char **subtrees;
	size_t n_subtrees;
	char *mountpoint;     /* --mountpoint: exactly this mount point */
	char **ns_args;       /* --ns PID|PATH */
	size_t n_ns_args;
	bool all_namespaces;
	uint32_t kinds;       /* MR_KIND() mask, 0: all */
	const char *source;   /* NULL: auto */
	enum mw_format format;
	enum mw_col cols[MW_COL__MAX];
	size_t n_cols;
	bool cols_given;      /* -o was used */
	bool cols_append;     /* -o +LIST: after the default columns */
	bool monotonic;
	bool snapshot;
	bool first_only;
	uint64_t count;       /* 0: unlimited */
	int64_t timeout_ms;   /* -w, --timeout: -1 none */
	bool stats;
	bool noheadings;
	bool notruncate;      /* -u, --notruncate, --nowrap: table cells never cut */
	unsigned rescan_ms;   /* --all-namespaces /proc rescan period */
	uint32_t queue;       /* --queue: ring slots per subscription, 0: library's */
};

/* options.c: returns 0, or an exit code to leave with (help: 0, usage: 2). */
#define MW_JSON_SCHEMA_VERSION 1
#define MW_TIMEOUT_MAX_MS (366ull * 24 * 3600 * 1000)
int mw_parse_options(int argc, char **argv, struct mw_opts *o, int *ret_exit);
void mw_opts_free(struct mw_opts *o);
const char *mw_col_name(enum mw_col c);
int mw_col_parse(const char *name, size_t len, enum mw_col *ret);

/* output.c */
struct mw_out;
struct mw_watch;
int mw_out_new(const struct mw_opts *o, FILE *f, struct mw_out **ret);
void mw_out_free(struct mw_out *out);
/* Re-reads the terminal width (TIOCGWINSZ) and re-prints the header. */
void mw_out_resize(struct mw_out *out);
/* Prints one change or marker event.  Returns 0 or -errno (EPIPE...). */
int mw_out_event(struct mw_out *out, const struct mr_event *ev);
/* Prints one mount of a SNAPSHOT as an action "snapshot" line. */
int mw_out_snapshot_mount(struct mw_out *out, const struct mr_event *ev,
			  const struct mr_mount *m);
/* Flushes; returns 0 or -errno. */
int mw_out_flush(struct mw_out *out);

/* Where NS finds the nsfs inode (what lsns shows) of a namespace ID. */
void mw_out_set_watch(struct mw_out *out, const struct mw_watch *w);

/* namespaces.c */
struct mw_watch;
int mw_watch_new(mr_router *r, const struct mw_opts *o, struct mw_watch **ret);
void mw_watch_free(struct mw_watch *w);
/* --all-namespaces: picks up new namespaces, drops dead ones. */
int mw_watch_rescan(struct mw_watch *w);
/*
 * Calls @fn for every event waiting in every subscription, in router order
 * (by seq), each event once even when several subtrees matched it.
 */
int mw_watch_drain(struct mw_watch *w,
		   int (*fn)(const struct mr_event *ev, void *arg), void *arg);
size_t mw_watch_namespaces(const struct mw_watch *w);
/* The nsfs inode number of @ns_id (lsns's NS), 0 if unknown. */
uint64_t mw_watch_ns_inode(const struct mw_watch *w, uint64_t ns_id);
/*
 * An fd readable when a process named by --ns PID exits (-1: none), and
 * what to do then: follow another process of its namespace, or return
 * -MW_ENSGONE after saying that the namespace ended.
 */
int mw_watch_pid_fd(const struct mw_watch *w);
int mw_watch_pid_exited(struct mw_watch *w);

/* stats.c */
struct mw_stats;
int mw_stats_new(struct mw_stats **ret);
void mw_stats_free(struct mw_stats *s);
void mw_stats_event(struct mw_stats *s, const struct mr_event *ev, uint64_t printed_ns);
void mw_stats_print(struct mw_stats *s, const mr_router *r, FILE *f);

/* Now on CLOCK_MONOTONIC, in nanoseconds: the clock of mr_event::time_ns. */
uint64_t mw_now_ns(void);

#endif /* MOUNTWATCH_H */
