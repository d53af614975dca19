/* SPDX-License-Identifier: MIT */
/*
 * What every file of the library may use.  The rest is declared one concept
 * per header, beside the file that defines it (mirror/mirror.h,
 * sources/source.h, router/upcalls.h, ...), so that a file's includes say
 * what it depends on.  Nothing declared in these headers is public: the
 * mr__ prefix marks internal symbols, and the version script keeps them out
 * of the shared object's dynamic symbol table.
 */
#ifndef MR_INTERNAL_H
#define MR_INTERNAL_H

#define MR__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MR__LIKELY(x) __builtin_expect(!!(x), 1)
#define MR__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MR__CACHELINE 64

#endif /* MR_INTERNAL_H */
