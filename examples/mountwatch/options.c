/* SPDX-License-Identifier: MIT */
/* mountwatch: the command line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mountwatch.h"

static const char *const col_names[MW_COL__MAX] = {
	[MW_COL_ACTION] = "ACTION",           [MW_COL_KIND] = "KIND",
	[MW_COL_TARGET] = "TARGET",           [MW_COL_SOURCE] = "SOURCE",
	[MW_COL_FSTYPE] = "FSTYPE",           [MW_COL_OPTIONS] = "OPTIONS",
	[MW_COL_OLD_TARGET] = "OLD-TARGET",   [MW_COL_OLD_OPTIONS] = "OLD-OPTIONS",
	[MW_COL_ID] = "ID",                   [MW_COL_PARENT] = "PARENT",
	[MW_COL_UNIQ_ID] = "UNIQ-ID",         [MW_COL_UNIQ_PARENT] = "UNIQ-PARENT",
	[MW_COL_MAJMIN] = "MAJ:MIN",          [MW_COL_FSROOT] = "FSROOT",
	[MW_COL_PROPAGATION] = "PROPAGATION", [MW_COL_OLD_PROPAGATION] = "OLD-PROPAGATION",
	[MW_COL_NS] = "NS",                   [MW_COL_NS_ID] = "NS-ID",
	[MW_COL_TIME] = "TIME",               [MW_COL_SEQ] = "SEQ",
	[MW_COL_FLAGS] = "FLAGS",
};

/* What a table shows without -o: findmnt --poll's columns. */
static const enum mw_col default_cols[] = {
	MW_COL_ACTION, MW_COL_TARGET, MW_COL_SOURCE, MW_COL_FSTYPE, MW_COL_OPTIONS,
};

/*
 * JSON without -o carries every field, so consumers never need -o; the
 * schema (mountwatch.schema.json) lists them.
 */
static const enum mw_col json_cols[] = {
	MW_COL_TIME,       MW_COL_SEQ,         MW_COL_NS,          MW_COL_NS_ID,
	MW_COL_ACTION,     MW_COL_KIND,        MW_COL_ID,          MW_COL_PARENT,
	MW_COL_UNIQ_ID,    MW_COL_UNIQ_PARENT, MW_COL_TARGET,      MW_COL_SOURCE,
	MW_COL_FSTYPE,     MW_COL_OPTIONS,     MW_COL_FSROOT,      MW_COL_MAJMIN,
	MW_COL_PROPAGATION, MW_COL_OLD_TARGET, MW_COL_OLD_OPTIONS, MW_COL_OLD_PROPAGATION,
	MW_COL_FLAGS,
};

const char *mw_col_name(enum mw_col c)
{
	return c < MW_COL__MAX ? col_names[c] : "?";
}

int mw_col_parse(const char *name, size_t len, enum mw_col *ret)
{
	for (int c = 0; c < MW_COL__MAX; c++)
		if (strlen(col_names[c]) == len && !strncasecmp(col_names[c], name, len)) {
			*ret = (enum mw_col)c;
			return 0;
		}
	return -EINVAL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: mountwatch [options]\n"
		"\n"
		"Print every change to the mount table as it happens (findmnt --poll's\n"
		"interface where the two overlap).\n"
		"\n"
		"What to watch:\n"
		"  -s, --subtree PATH        mounts at or below PATH (repeatable; default /)\n"
		"  -M, --mountpoint PATH     exactly the mount point PATH\n"
		"  -e, --events LIST         mount,umount,move,remount, or the finer\n"
		"                            unmount,expiry,readonly,attr\n"
		"  -N, --ns PID|PATH         the mount namespace of PID, or an nsfs file such\n"
		"                            as /proc/PID/ns/mnt (repeatable)\n"
		"  -A, --all-namespaces      every mount namespace under /proc, as they come\n"
		"                            and go\n"
		"      --rescan-interval MS  how often --all-namespaces rescans /proc (500)\n"
		"      --source NAME         auto, watch_mount, fanotify, listmount or mountinfo (auto)\n"
		"      --queue N             events queued per subtree before an overrun (4096)\n"
		"\n"
		"How to print it:\n"
		"  -J, --json                one JSON object per line (schema version %d)\n"
		"  -r, --raw                 space separated, with \\x escapes\n"
		"  -P, --pairs               KEY=\"value\" pairs, as findmnt -P\n"
		"  -o, --output LIST         columns; +LIST adds to the default ones:\n"
		"                            ACTION,KIND,TARGET,SOURCE,FSTYPE,OPTIONS,\n"
		"                            OLD-TARGET,OLD-OPTIONS,ID,PARENT,UNIQ-ID,\n"
		"                            UNIQ-PARENT,MAJ:MIN,FSROOT,PROPAGATION,\n"
		"                            OLD-PROPAGATION,NS,NS-ID,TIME,SEQ,FLAGS\n"
		"  -n, --noheadings          no header line\n"
		"  -u, --notruncate          never cut a table cell (also --nowrap)\n"
		"      --monotonic           CLOCK_MONOTONIC seconds instead of wall-clock time\n"
		"      --snapshot            print the current table first (action \"snapshot\")\n"
		"\n"
		"When to stop:\n"
		"  -f, --first-only          after the first change\n"
		"  -c, --count N             after N changes\n"
		"  -w, --timeout MS          after MS milliseconds without a change\n"
		"      --stats               print counters and latency to stderr at exit\n"
		"\n"
		"  -h, --help                this text\n"
		"  -V, --version             the version of mountwatch and of the library\n"
		"\n"
		"Exit status: 0 a change was seen (or stopped by a signal), 1 --timeout\n"
		"passed without one, 2 usage error, 3 a named process, file or path is\n"
		"missing, 4 permission denied, 5 not supported by this kernel, 6 the\n"
		"namespace of --ns PID ended, 7 output error, 8 other failure.\n",
		MW_JSON_SCHEMA_VERSION);
}

static int parse_kinds(const char *list, uint32_t *ret)
{
	char *dup = strdup(list), *save = NULL;
	uint32_t mask = 0;

	if (!dup)
		return -ENOMEM;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint32_t k;
		if (mr_event_kind_parse(t, &k) < 0 || !(MR_KIND(k) & MR_KINDS_ALL)) {
			fprintf(stderr, "mountwatch: unknown event kind '%s'\n", t);
			free(dup);
			return -EINVAL;
		}
		mask |= MR_KIND(k);
		/*
		 * findmnt's "remount" is any option change, a read-only flip
		 * included; the library tells those apart, so the umbrella
		 * words ask for both.
		 */
		if (!strcmp(t, "remount") || !strcmp(t, "setattr") || !strcmp(t, "attr"))
			mask |= MR_KIND(MR_EVENT_READONLY);
		/* findmnt's "umount" is any mount going away: an expiry too. */
		if (!strcmp(t, "umount"))
			mask |= MR_KIND(MR_EVENT_EXPIRY);
	}
	free(dup);
	if (!mask) {
		fprintf(stderr, "mountwatch: --events needs at least one kind\n");
		return -EINVAL;
	}
	*ret = mask;
	return 0;
}

/* "+LIST" (findmnt's -o +COL) appends to the default columns, set later. */
static int parse_cols(const char *list, struct mw_opts *o)
{
	const char *p = list;

	o->n_cols = 0;
	o->cols_append = *p == '+';
	if (o->cols_append)
		p++;
	while (*p) {
		size_t len = strcspn(p, ",");
		enum mw_col c;
		if (mw_col_parse(p, len, &c) < 0) {
			fprintf(stderr, "mountwatch: unknown column '%.*s'; see --help for the list\n",
				(int)len, p);
			return -EINVAL;
		}
		if (o->n_cols == MW_COL__MAX) {
			fprintf(stderr, "mountwatch: too many columns\n");
			return -EINVAL;
		}
		o->cols[o->n_cols++] = c;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!o->n_cols) {
		fprintf(stderr, "mountwatch: --output needs at least one column\n");
		return -EINVAL;
	}
	o->cols_given = true;
	return 0;
}

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Subtrees are paths in the watched namespace, not ours: no realpath(). */
static int check_path(const char *opt, const char *p)
{
	if (p[0] != '/') {
		fprintf(stderr, "mountwatch: %s needs an absolute path, not '%s'\n", opt, p);
		return -EINVAL;
	}
	return 0;
}

enum { OPT_SOURCE = 256, OPT_MONOTONIC, OPT_SNAPSHOT, OPT_STATS, OPT_RESCAN, OPT_QUEUE };

int mw_parse_options(int argc, char **argv, struct mw_opts *o, int *ret_exit)
{
	static const struct option longopts[] = {
		{"subtree", required_argument, NULL, 's'},
		{"mountpoint", required_argument, NULL, 'M'},
		{"events", required_argument, NULL, 'e'},
		{"ns", required_argument, NULL, 'N'},
		{"all-namespaces", no_argument, NULL, 'A'},
		{"rescan-interval", required_argument, NULL, OPT_RESCAN},
		{"queue", required_argument, NULL, OPT_QUEUE},
		{"source", required_argument, NULL, OPT_SOURCE},
		{"json", no_argument, NULL, 'J'},
		{"raw", no_argument, NULL, 'r'},
		{"pairs", no_argument, NULL, 'P'},
		{"notruncate", no_argument, NULL, 'u'},
		{"nowrap", no_argument, NULL, 'u'},
		{"output", required_argument, NULL, 'o'},
		{"noheadings", no_argument, NULL, 'n'},
		{"monotonic", no_argument, NULL, OPT_MONOTONIC},
		{"snapshot", no_argument, NULL, OPT_SNAPSHOT},
		{"first-only", no_argument, NULL, 'f'},
		{"count", required_argument, NULL, 'c'},
		{"timeout", required_argument, NULL, 'w'},
		{"stats", no_argument, NULL, OPT_STATS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	int c;

	*o = (struct mw_opts){.timeout_ms = -1, .rescan_ms = 500};
	*ret_exit = MW_EXIT_USAGE;
	opterr = 0; /* getopt's messages name argv[0], which may be a long path */
	while ((c = getopt_long(argc, argv, ":s:M:e:N:AJrPuo:nfc:w:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (check_path("--subtree", optarg) < 0 ||
			    push(&o->subtrees, &o->n_subtrees, optarg) < 0)
				return -EINVAL;
			break;
		case 'M':
			if (check_path("--mountpoint", optarg) < 0)
				return -EINVAL;
			free(o->mountpoint);
			if (!(o->mountpoint = strdup(optarg)))
				return -ENOMEM;
			break;
		case 'e':
			if (parse_kinds(optarg, &o->kinds) < 0)
				return -EINVAL;
			break;
		case 'N':
			if (push(&o->ns_args, &o->n_ns_args, optarg) < 0)
				return -EINVAL;
			break;
		case 'A':
			o->all_namespaces = true;
			break;
		case OPT_RESCAN: {
			uint64_t ms;
			if (parse_u64(optarg, &ms) < 0 || !ms || ms > 3600000) {
				fprintf(stderr, "mountwatch: bad --rescan-interval '%s'\n", optarg);
				return -EINVAL;
			}
			o->rescan_ms = (unsigned)ms;
			break;
		}
		case OPT_QUEUE: {
			uint64_t n;
			if (parse_u64(optarg, &n) < 0 || !n || n > (1u << 24)) {
				fprintf(stderr, "mountwatch: bad --queue '%s'\n", optarg);
				return -EINVAL;
			}
			o->queue = (uint32_t)n;
			break;
		}
		case OPT_SOURCE:
			if (strcmp(optarg, "auto") && strcmp(optarg, "watch_mount") &&
			    strcmp(optarg, "fanotify") && strcmp(optarg, "listmount") &&
			    strcmp(optarg, "mountinfo")) {
				fprintf(stderr, "mountwatch: unknown source '%s' "
						"(auto, watch_mount, fanotify, listmount, mountinfo)\n", optarg);
				return -EINVAL;
			}
			o->source = strcmp(optarg, "auto") ? optarg : NULL;
			break;
		case 'J':
			o->format = MW_FMT_JSON;
			break;
		case 'r':
			o->format = MW_FMT_RAW;
			break;
		case 'P':
			o->format = MW_FMT_PAIRS;
			break;
		case 'u':
			o->notruncate = true;
			break;
		case 'o':
			if (parse_cols(optarg, o) < 0)
				return -EINVAL;
			break;
		case 'n':
			o->noheadings = true;
			break;
		case OPT_MONOTONIC:
			o->monotonic = true;
			break;
		case OPT_SNAPSHOT:
			o->snapshot = true;
			break;
		case 'f':
			o->first_only = true;
			break;
		case 'c':
			if (parse_u64(optarg, &o->count) < 0 || !o->count) {
				fprintf(stderr, "mountwatch: bad --count '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'w': {
			/*
			 * findmnt -w: milliseconds.  Kept in 64 bits and capped at
			 * a year, so the poll loop's int timeout is computed per
			 * wait and never overflows.
			 */
			uint64_t ms;
			if (parse_u64(optarg, &ms) < 0 || ms > MW_TIMEOUT_MAX_MS) {
				fprintf(stderr, "mountwatch: bad --timeout '%s': want milliseconds, "
						"0 to %llu\n", optarg, (unsigned long long)MW_TIMEOUT_MAX_MS);
				return -EINVAL;
			}
			o->timeout_ms = (int64_t)ms;
			break;
		}
		case OPT_STATS:
			o->stats = true;
			break;
		case 'h':
			usage(stdout);
			*ret_exit = 0;
			return -ECANCELED;
		case 'V':
			printf("mountwatch %s (library %s)\n", MR_VERSION_STRING, mr_version());
			*ret_exit = 0;
			return -ECANCELED;
		case ':':
			fprintf(stderr, "mountwatch: option '%s' needs a value; try 'mountwatch --help'\n",
				argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt && optopt != '?')
				fprintf(stderr, "mountwatch: unknown option '-%c'; try 'mountwatch --help'\n",
					optopt);
			else
				fprintf(stderr, "mountwatch: unknown option '%s'; try 'mountwatch --help'\n",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mountwatch: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->all_namespaces && o->n_ns_args) {
		fprintf(stderr, "mountwatch: --ns and --all-namespaces exclude each other\n");
		return -EINVAL;
	}
	if (o->mountpoint && o->n_subtrees) {
		fprintf(stderr, "mountwatch: --mountpoint and --subtree exclude each other\n");
		return -EINVAL;
	}
	if (!o->cols_given || o->cols_append) {
		const enum mw_col *v = o->format == MW_FMT_JSON ? json_cols : default_cols;
		size_t n = o->format == MW_FMT_JSON ? sizeof(json_cols) / sizeof(*v)
						    : sizeof(default_cols) / sizeof(*v);
		enum mw_col extra[MW_COL__MAX];
		size_t n_extra = o->cols_append ? o->n_cols : 0;

		memcpy(extra, o->cols, n_extra * sizeof(*extra));
		memcpy(o->cols, v, n * sizeof(*v));
		o->n_cols = n;
		for (size_t i = 0; i < n_extra; i++) {
			bool dup = false;
			for (size_t k = 0; k < o->n_cols; k++)
				dup |= o->cols[k] == extra[i];
			if (!dup)
				o->cols[o->n_cols++] = extra[i];
		}
	}
	*ret_exit = 0;
	return 0;
}

void mw_opts_free(struct mw_opts *o)
{
	for (size_t i = 0; i < o->n_subtrees; i++)
		free(o->subtrees[i]);
	free(o->subtrees);
	for (size_t i = 0; i < o->n_ns_args; i++)
		free(o->ns_args[i]);
	free(o->ns_args);
	free(o->mountpoint);
}
