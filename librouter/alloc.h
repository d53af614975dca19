/* SPDX-License-Identifier: MIT */
/*
 * alloc.c: every allocation goes through jemalloc's non-standard API.
 */
#ifndef MR_ALLOC_H
#define MR_ALLOC_H

#include <stddef.h>

void *mr__malloc(size_t n);
void *mr__calloc(size_t n, size_t size);
void *mr__realloc(void *p, size_t n);
void mr__free(void *p);
char *mr__strdup(const char *s);

#endif /* MR_ALLOC_H */
