/* SPDX-License-Identifier: MIT */
/*
 * clock.c: the two clocks the library reads.
 */
#ifndef MR_CLOCK_H
#define MR_CLOCK_H

#include <stdint.h>

uint64_t mr__now_ns(void); /* CLOCK_MONOTONIC */
uint64_t mr__thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID */

#endif /* MR_CLOCK_H */
