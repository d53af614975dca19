#!/usr/bin/env bash
# Prints BENCHMARKS.md's single-change section from one single_change run.
#   bench/single/section.sh RUN.jsonl TABLE.md "COMMAND THAT MADE IT"
# TABLE.md is what bench/single/report.sh wrote from the same run.
set -euo pipefail
in=$1 table=$2 cmd=$3

cell() { # WATCHER KIND MOUNTS FIELD
	jq -rs --arg w "$1" --arg k "$2" --argjson n "$3" --arg f "$4" \
		'map(select(.watcher == $w and .kind == $k and .mounts == $n)) | first | .[$f] // "?"' \
		"$in" 2>/dev/null || echo "?"
}
us1() { awk '{ if ($1 == "?" || $1 == "") print "?"; else printf "%.1f", $1 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "?" || b == "?" || b == 0) print "?"; else printf "%.1fx", a / b }'; }

floor="floor (bare fanotify loop)" fan="mountrouter, fanotify, one thread"
topo="mountrouter, fanotify, one thread, mount/umount/move only" fan_t="mountrouter, fanotify"
poller="bare mountinfo poller" mi="mountrouter, mountinfo" lm="mountrouter, listmount"
waiting="mountrouter, fanotify, one thread, mr_router_wait" epoll="epoll floor (poll an epoll set, epoll_wait, read)"
big=$(jq -s 'map(.mounts) | max' "$in")
rounds=$(jq -s 'map(.rounds // 1) | max' "$in")
changes=$(sed -n 's/.*--changes \([0-9]*\).*/\1/p' <<<"$cmd")
kinds_vs_floor() { # WATCHER MOUNTS: "mount 1.2x, umount 1.1x, ..." against the floor
	local k out=""
	for k in mount umount move bind; do
		out+="${out:+, }$k $(ratio "$(cell "$1" $k $2 cpu_us)" "$(cell "$floor" $k $2 cpu_us)")"
	done
	echo "$out"
}
sizes_vs_floor() { # WATCHER: "1000 1.2x, 3000 1.1x, ..." a mount against the floor's
	local n out=""
	for n in $(jq -s 'map(.mounts) | unique | .[]' "$in"); do
		out+="${out:+, }$n $(ratio "$(cell "$1" mount $n cpu_us)" "$(cell "$floor" mount $n cpu_us)")"
	done
	echo "$out"
}
mid=10000
[[ $(cell "$floor" mount $mid cpu_us) != "?" ]] || mid=$big

cat <<SEC
## One change at a time on a big, quiet table

The case a real host lives in: N tmpfs mounts in a private mount namespace,
then one change at a time ($changes of each kind, 30 ms apart, each waited for
until the watcher holds it), each watcher in a child process of its own,
started once the watcher is quiet. The watchers take turns, $rounds rounds
in one run. CPU is what one change cost all the watcher's threads (its
process CPU clock, \`clock_getcpuclockid()\`, from before the syscall to the
end of the quiet interval after it), the median over every change of every
round, so that a change during which the host took the CPU away does not
move the figure. The driver runs on the first CPU and every watcher on the
last, so each is woken across CPUs the same way every round. Even so the
whole machine drifts: the floor's mount was seen at 24 us in one run and 67
us in another within the hour, so only ratios within one run mean anything.
Syscalls are the median of the rounds, latencies the percentiles of all
rounds together; syscalls are the ones the
library counted (io_uring_enter included); latency runs from the syscall's
return to the watcher holding the change (0 when the kernel posted it
before the syscall returned). The floor is a bare loop that reads one
fanotify record, statmounts the mount and writes a line; the bare poller
waits for POLLPRI, re-reads mountinfo and diffs its lines by mount ID. The
router's subscriber asks for every kind unless the row says otherwise; "one
thread": the router runs on the subscriber's thread
(\`mr_router_dispatch()\`), as mountwatch runs it.

\`$cmd\`

Read from the run (the machine is shared: compare rows of this run):

- a mount at $mid mounts: the floor $(cell "$floor" mount $mid cpu_us | us1) us of CPU; the
  router on one thread, every kind $(cell "$fan" mount $mid cpu_us | us1) us
  ($(ratio "$(cell "$fan" mount $mid cpu_us)" "$(cell "$floor" mount $mid cpu_us)") the floor), asking for
  mount/umount/move only $(cell "$topo" mount $mid cpu_us | us1) us
  ($(ratio "$(cell "$topo" mount $mid cpu_us)" "$(cell "$floor" mount $mid cpu_us)")), on its own thread
  $(cell "$fan_t" mount $mid cpu_us | us1) us; the listmount source $(cell "$lm" mount $mid cpu_us | us1) us;
  the bare poller $(cell "$poller" mount $mid cpu_us | us1) us and the mountinfo source
  $(cell "$mi" mount $mid cpu_us | us1) us;
- against the floor at $mid mounts, kind by kind: asking for
  mount/umount/move only (the floor's own work) $(kinds_vs_floor "$topo" $mid);
  asking for every kind $(kinds_vs_floor "$fan" $mid) (on a kernel without
  FAN_MNT_ATTR_CHANGE it also polls mountinfo: one more ready fd in the
  same \`epoll_wait\` per attach or detach);
- a thread that does nothing but run the router, waiting in
  \`mr_router_wait()\` (one syscall a change less than a \`poll()\` of
  \`mr_router_fd()\`): against the floor at $mid mounts $(kinds_vs_floor "$waiting" $mid);
  at each size, a mount $(sizes_vs_floor "$waiting"); the floor's loop
  behind an epoll set polled by its caller, as a library that hands out
  one fd must be driven, $(kinds_vs_floor "$epoll" $mid);
- a mount against the floor at each table size (figures this small move
  with the machine: the floor's own row moves from size to size too): on
  one thread, every kind
  $(sizes_vs_floor "$fan"); mount/umount/move only $(sizes_vs_floor "$topo");
- flat: the one-thread router's mount at $big mounts against 1,000:
  $(ratio "$(cell "$fan" mount $big cpu_us)" "$(cell "$fan" mount 1000 cpu_us)") (mount/umount/move only:
  $(ratio "$(cell "$topo" mount $big cpu_us)" "$(cell "$topo" mount 1000 cpu_us)")); the floor's
  $(ratio "$(cell "$floor" mount $big cpu_us)" "$(cell "$floor" mount 1000 cpu_us)"); the poller's
  $(ratio "$(cell "$poller" mount $big cpu_us)" "$(cell "$poller" mount 1000 cpu_us)");
- a read-only remount at $mid mounts (a pass: one read of mountinfo): the
  router $(cell "$fan" "ro remount" $mid cpu_us | us1) us against the poller's
  $(cell "$poller" "ro remount" $mid cpu_us | us1) us; the listmount source
  $(cell "$lm" "ro remount" $mid cpu_us | us1) us;
- latency of a mount at $mid mounts, p50 / p99: the router on one thread
  $(cell "$fan" mount $mid p50_us | us1) / $(cell "$fan" mount $mid p99_us | us1) us
  (mount/umount/move only $(cell "$topo" mount $mid p50_us | us1) / $(cell "$topo" mount $mid p99_us | us1) us),
  the floor $(cell "$floor" mount $mid p50_us | us1) / $(cell "$floor" mount $mid p99_us | us1) us; a move,
  router / floor p99: $(cell "$fan" move $mid p99_us | us1) / $(cell "$floor" move $mid p99_us | us1) us.

![CPU per change against table size](bench/single_change.svg)

$(cat "$table")
SEC
