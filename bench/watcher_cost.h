/* SPDX-License-Identifier: MIT */
/*
 * watcher_cost.c: how the one-change-at-a-time benchmarks (single_change,
 * ns_scale) measure a watcher process: its CPU clock, a pinned CPU, a wait
 * until it is quiet, and the order statistics they report.
 */
#ifndef BENCH_WATCHER_COST_H
#define BENCH_WATCHER_COST_H

#include <stdint.h>
#include <sys/types.h>

/*
 * CPU time of every thread of @pid, in ns: the process CPU clock, which the
 * scheduler keeps exactly (no SCHEDSTATS needed, as in the test kernel).
 * 0 if @pid is gone.
 */
uint64_t process_cpu_ns(pid_t pid);
/*
 * Pins the calling process (and the threads and children it makes later) to
 * @cpu, if this machine has it (-1: no pinning); @who names the program in
 * the line saying it could not.
 */
void pin_to(int cpu, const char *who);
/*
 * Waits until the watcher in @pid is quiet: past its start-up work (the
 * table read, a first pass), less than 1% of a CPU over 50 ms by @cpu_ns,
 * at most 10 s.  Else the first change's cost is partly the start-up's.
 */
void wait_quiet(pid_t pid, uint64_t (*cpu_ns)(pid_t));
/* The median and the @pct percentile of @v (sorted in place); 0 when empty. */
double median(double *v, unsigned n);
double percentile(double *v, unsigned n, unsigned pct);

#endif
