/* SPDX-License-Identifier: MIT */
/*
 * Parsers and tables side by side (bench_tables.cc): the project's
 * mountinfo parser against libmount's, and the mirror's ID table against
 * Concurrency Kit's ck_hs with the same hash, at 10,000 mounts.
 */
#ifndef BENCH_TABLES_H
#define BENCH_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Writes @n mountinfo lines as a busy container host shows them (overlay
 * roots, tmpfs volumes, bind mounts, some mount points with \040) to a new
 * file under /tmp; its path in @path (room for 64 bytes).  0 or -errno.
 */
int bench_mountinfo_write(size_t n, char *path);

/* Mounts parsed from the file @path by the project's parser, or -errno. */
long bench_parse_project(const char *path);
/* The same with libmount (mnt_new_table_from_file); -EOPNOTSUPP without it. */
long bench_parse_libmount(const char *path);

/*
 * An ID table of @n mounts with sequential IDs (the kernel hands out new,
 * higher ones), spread over a few hundred superblocks and parents as a
 * host's are.
 */
enum bench_ids_kind {
	BENCH_IDS_MIRROR,     /* mirror.c: ID table, superblock and parent counts */
	BENCH_IDS_CK_HS,      /* ck_hs holding the same three indexes */
	BENCH_IDS_CK_HS_ONLY, /* ck_hs, the ID table alone (what the counts cost) */
};
struct bench_ids;
struct bench_ids *bench_ids_new(size_t n, enum bench_ids_kind kind);
void bench_ids_free(struct bench_ids *b);
/* One lookup of a live ID (a pseudo-random one); whether it was found. */
bool bench_ids_lookup(struct bench_ids *b);
/*
 * What the router does for one mount and one unmount: the oldest ID
 * removed, a live one looked up, a new ID inserted.  The table's size
 * stays @n.  Whether every step found what it should.
 */
bool bench_ids_churn(struct bench_ids *b);
/* Whether the table holds exactly the live window of IDs. */
bool bench_ids_check(struct bench_ids *b);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_TABLES_H */
