#!/usr/bin/env bash
# Regenerates BENCHMARKS.md: micro-benchmarks of the routing path (Google
# Benchmark), end-to-end storms per watcher side by side (hyperfine over
# mountstorm), and the 10,000-mount storm table (mountstorm).  Root needed
# for the storms (private mount namespaces).  Usage: bench/run.sh [--quick] [--vm]
# --vm: under qemu too, the storm and one change at a time on the project's
# kernel, and one change at a time on Debian's stock 6.12 and 6.1 kernels;
# without it those sections are kept from the last BENCHMARKS.md.  The
# sections written by hand from runs it does not make are always kept.
set -euo pipefail
cd "$(dirname "$0")/.."

total=10000 vm=0
for a in "$@"; do
	case $a in
	--quick) total=1000 ;;
	--vm) vm=1 ;;
	*) echo "usage: bench/run.sh [--quick] [--vm]" >&2; exit 2 ;;
	esac
done
build=build-bench
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMR_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_route bench_tables mountstorm single_change \
	unit-tracker container-manager mount-load >/dev/null

out=$(mktemp -d)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
kernel=$(uname -r)

# One change at a time on a big, quiet table: every watcher, every kind of
# change, 1,000 to 30,000 mounts (findmnt --poll only at 1,000: it costs
# ~50 ms a change there and grows as the square of the table).
# Nine short rounds, the watchers in turn, medians: the load of a shared
# machine drifts over the minutes one round takes, and short rounds give
# each watcher a share of every phase of it.
sizes=1000,3000,10000,30000
((total >= 10000)) || sizes=1000,3000
single_args="--mounts $sizes --changes 10 --rounds 9 --findmnt-max 1000"
# shellcheck disable=SC2086
(cd "$out" && "$OLDPWD/$build/bench/single_change" $single_args --json single.jsonl \
	>single.txt 2>&1) || true
bench/single/report.sh "$out/single.jsonl" "$out/single" || true

# The embedding examples: a service manager's table kept from events beside
# one kept by re-reading mountinfo; 200 containers through one router.
tests/examples/bench-unit-tracker.sh "$build" 150 >"$out/unit-tracker.md" 2>"$out/unit-tracker.err" || true
for src in fanotify mountinfo; do
	unshare -m --propagation private "$build/examples/container-manager" --containers 200 \
		--seconds 30 --source $src 2>&1 | grep -E 'matched|cpu' >"$out/cm-$src.txt" || true
done

"$build/bench/bench_route" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
	--benchmark_format=console >"$out/bench.txt" 2>/dev/null
# The hand-written parser and ID table beside libmount and ck_hs.
"$build/bench/bench_tables" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
	--benchmark_format=json >"$out/tables.json" 2>/dev/null || true

storm="$build/stress/mountstorm"
hyperfine --ignore-failure --warmup 1 --runs 5 --export-markdown "$out/hyperfine.md" \
	-n fanotify "$storm --quick --contenders fanotify --no-plot" \
	-n mountinfo-source "$storm --quick --contenders mountinfo --no-plot" \
	-n mountinfo-poller "$storm --quick --contenders poller --no-plot" >/dev/null

run_storm() { # NAME ARGS...: one mountstorm run in $out, NAME.txt/.json/.svg
	local name=$1
	shift
	(cd "$out" && "$OLDPWD/$storm" --total "$total" "$@" --json "$name.json" --plot "$name" \
		>"$name.txt" 2>&1) || true
}
run_storm storm --contenders fanotify,mountinfo,poller,findmnt
# Paced: latency without the queueing a flat-out storm on two cores builds
# up, and the poller where it cannot coalesce as much.
run_storm paced --rate 2000 --contenders fanotify,poller
run_storm trickle --rate 200 --build-at-max --contenders fanotify,poller
# A real kernel loss at 10,000 mounts: the router reads nothing while the
# table is built and a flap wave churns past fanotify's 16,384-record queue.
run_storm recovery --mounts 1000 --hold-waves 7 --contenders fanotify

vmcmd="kernel/vm/run.sh --kernel \"\$(kernel/build.sh | tail -1)\" --memory 2048 --timeout 900 build-vm/stress/mountstorm"
if ((vm)); then
	# The guest runs the program without arguments: the default storm, 10,000 mounts.
	cmake -S . -B build-vm -DCMAKE_BUILD_TYPE=Release -DMR_STRESS_STATIC=ON -DMR_BUILD_TESTS=OFF >/dev/null
	cmake --build build-vm -j"$(nproc)" --target mountstorm >/dev/null
	kernel/vm/run.sh --kernel "$(kernel/build.sh | tail -1)" --memory 2048 --timeout 900 \
		--log "$out/vm.log" build-vm/stress/mountstorm >/dev/null 2>&1 || true
	grep -vE '^(dmesg|MR-VM|\[)' "$out/vm.log" | sed -n '/^mountstorm:/,/^findmnt /p' >"$out/vm.txt"

	# One change at a time in the guest (bench/single/vm.sh builds the static
	# binary in build-vm).  The project's kernel: every watcher it has,
	# propagation changes too (its fanotify and watch_mount report them).
	# Debian's kernels have neither fanotify mount events nor watch_mount:
	# the listmount and mountinfo sources and the poller, and watch_mount to
	# show the row saying why it is left out.
	vm_single_args="--mounts 1000,3000,10000,30000 --changes 40 --findmnt-max 0"
	((total >= 10000)) || vm_single_args="--mounts 1000 --changes 10 --findmnt-max 0"
	# shellcheck disable=SC2086
	bench/single/vm.sh build-vm $vm_single_args --propagation >"$out/vm-single.md" 2>/dev/null || true
	: >"$out/vm-single-6.12.md"
	: >"$out/vm-single-6.1.md"
	while read -r label image; do
		# shellcheck disable=SC2086
		MR_VM_KERNEL=$image bench/single/vm.sh build-vm $vm_single_args --watchers 4,5,6,8 \
			>"$out/vm-single-$label.md" 2>/dev/null || true
	done < <(kernel/vm/stock-kernels.sh 6.12 6.1 || true)
fi

# One figure from a run's JSON: fig NAME CONTENDER JQ-EXPRESSION
fig() {
	jq -r --arg c "$2" ".contenders[] | select(.name == \$c) | $3" "$out/$1.json" 2>/dev/null || echo "?"
}
# Nanoseconds on stdin to microseconds (ms: to milliseconds).
us() { awk '{ if ($1 == "?" || $1 == "") print "?"; else printf "%.1f", $1 / 1000 }'; }
ms() { awk '{ if ($1 == "?" || $1 == "") print "?"; else printf "%.1f", $1 / 1000000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "?" || b == "?" || b == 0) print "?"; else printf "%.1fx", a / b }'; }
per_event_no_sweeps() { # NAME: router CPU per event, sweeps left out
	fig "$1" fanotify '(.cpu_ns - .sweep_ns) / .events' | us
}

below() { awk -v v="$1" -v lim="$2" 'BEGIN { if (v == "?" || v == "") print "?"; else print (v + 0 < lim + 0) ? "met" : "not met" }'; }
all_ok() { # RUN...: "met" when fanotify ended consistent in every run
	local r
	for r in "$@"; do [[ $(fig "$r" fanotify .status) == ok ]] || { echo "not met"; return; }; done
	echo met
}

targets() {
	local lat='.latency_ns' flat paced flat_ns paced_ns rs rs_cpu rf rp rt rec
	flat=$(fig storm fanotify "$lat.p99" | us) paced=$(fig paced fanotify "$lat.p99" | us)
	flat_ns=$(per_event_no_sweeps storm) paced_ns=$(per_event_no_sweeps paced)
	rf=$(ratio "$(fig storm poller .cpu_ns_per_change)" "$(fig storm fanotify .cpu_ns_per_change)")
	rp=$(ratio "$(fig paced poller .cpu_ns_per_change)" "$(fig paced fanotify .cpu_ns_per_change)")
	rt=$(ratio "$(fig trickle poller .cpu_ns_per_change)" "$(fig trickle fanotify .cpu_ns_per_change)")
	rs=$(fig recovery fanotify .resync_ns | ms) rs_cpu=$(fig recovery fanotify .resync_cpu_ns | ms)
	rec=$(fig recovery fanotify .loss_to_consistent_ns | ms)
	local sweep reread share
	sweep=$(fig trickle fanotify '.sweep_ns / .sweeps' | ms)
	reread=$(fig trickle poller '.cpu_ns / .reads' | ms)
	share=$(fig trickle fanotify '100 * .sweep_ns / .cpu_ns | floor')
	local r_arrive r_depart
	r_arrive=$(fig paced fanotify .router_latency_ns.arrive.p99 | us)
	r_depart=$(fig paced fanotify .router_latency_ns.depart.p99 | us)
	cat <<TGT
## Targets

Figures from the runs below (this machine, one run each): "flat out" is the
storm as fast as one thread makes it, "paced" 2,000 and "trickle" 200
operations a second. The verdicts are computed from the figures.

| target | measured | verdict |
|---|---|---|
| fanotify, 10,000 mounts: every subscriber consistent | flat out $(fig storm fanotify .status), paced $(fig paced fanotify .status), trickle $(fig trickle fanotify .status) | $(all_ok storm paced trickle) |
| p99 latency under 200 us (fanotify) | flat out $flat us, paced $paced us; paced by kind: mounts arriving $(fig paced fanotify "$lat.arrive.p99" | us) us, leaving $(fig paced fanotify "$lat.depart.p99" | us) us, attribute changes $(fig paced fanotify "$lat.attributes.p99" | us) us. The router's part (op return to router read, paced): arriving $(fig paced fanotify ".router_latency_ns.arrive.p99" | us) us, leaving $(fig paced fanotify ".router_latency_ns.depart.p99" | us) us, attribute changes $(fig paced fanotify ".router_latency_ns.attributes.p99" | us) us | flat out $(below "$flat" 200), paced $(below "$paced" 200) |
| router CPU under 5 us per event (fanotify) | flat out $(fig storm fanotify .cpu_ns_per_event | us) us ($flat_ns us without sweeps), paced $(fig paced fanotify .cpu_ns_per_event | us) us ($paced_ns us without sweeps) | flat out $(below "$(fig storm fanotify .cpu_ns_per_event | us)" 5), paced $(below "$(fig paced fanotify .cpu_ns_per_event | us)" 5) |
| 100x less CPU per observed change than mountinfo polling | flat out $rf, paced $rp, trickle $rt | $(awk -v a="${rf%x}" -v b="${rp%x}" -v c="${rt%x}" 'BEGIN { print (a >= 100 && b >= 100 && c >= 100) ? "met" : "not met" }') |
| no coalesced changes (fanotify) | not reported one by one: flat out $(fig storm fanotify '.changes_made - .changes_seen') of $(fig storm fanotify .changes_made), trickle $(fig trickle fanotify '.changes_made - .changes_seen') of $(fig trickle fanotify .changes_made) (the poller: $(fig trickle poller '.changes_made - .changes_seen')) | see below |
| every kernel loss recovered, under 50 ms for 10,000 mounts | fanotify, a real FAN_Q_OVERFLOW with $(fig recovery fanotify '[.waves[] | select(.kernel_losses > 0) | .mounts] | first') mounts: $(fig recovery fanotify .kernel_losses) loss, $(fig recovery fanotify .resyncs) resync of $rs ms ($rs_cpu ms of router CPU), loss to every subscriber consistent $rec ms, $(fig recovery fanotify .status) | wall $(below "$rec" 50), resync CPU $(below "$rs_cpu" 50); watch_mount: the qemu section (emulated CPU) |

Why the misses: the fanotify source cannot be told which mount a remount or
\`mount_setattr(2)\` touched, so it finds them by a pass, one read of
mountinfo that looks up the mounts whose line changed: in the trickle run a
pass took $sweep ms of router CPU, one re-read of mountinfo by the poller
$reread ms, and passes were $share% of the router's CPU.  For a remount, a
source that must read the whole table does no better than a poller: the
targets need one that names the mount. watch_mount does (the qemu section),
and so does the project kernel's fanotify attribute event
(kernel/patches/0021).  Attach and detach cost O(1): see "One change at a
time" above, where no pass runs for them.  Latency: at 2,000 operations a
second the router had arriving mounts in hand within $r_arrive us and
leaving ones within $r_depart us (p99); the rest of the p99 lies between the
router waking the subscriber's thread and that thread running, on two CPUs
the storm keeps busy.  Coalesced changes are flaps (a mount made and lazily
unmounted at once): gone before anyone can look them up, for every watcher.

TGT
}


# Without --vm, the qemu section of the last run that had one is kept as it was.
kept_vm=
if ((!vm)) && [[ -f BENCHMARKS.md ]]; then
	kept_vm=$(awk '/^## The storm on the project.s kernel/ {f=1} f && /^## / && !/project.s kernel/ {f=0} f' BENCHMARKS.md)
	[[ -z $kept_vm ]] || kept_vm="${kept_vm/\(watch_mount, qemu TCG\)/(watch_mount, qemu TCG; from the last \`bench/run.sh --vm\`, not rerun)}"
fi
# The single-change sections under qemu: made now with --vm, else kept as they
# were (both, from their headings to the next section), so that a run on the
# host alone never drops them.
single_vm=
if ((vm)); then
	stock_cmd="MR_VM_KERNEL=\$(kernel/vm/stock-kernels.sh 6.12 | cut -d' ' -f2) bench/single/vm.sh build-vm $vm_single_args --watchers 4,5,6,8"
	single_vm="$(bench/single/vm_section.sh project "$out/vm-single.md" \
		"bench/single/vm.sh build-vm $vm_single_args --propagation")

$(bench/single/vm_section.sh stock "$out/vm-single-6.12.md" "$out/vm-single-6.1.md" "$stock_cmd")"
elif [[ -f BENCHMARKS.md ]]; then
	single_vm=$(awk '/^## One change at a time on (the project.s kernel|Debian.s stock kernels)/ { f = 1; print; next }
		/^## / { f = 0 } f' BENCHMARKS.md)
fi

# Written by hand from runs this script does not make (interleaved lanes,
# A/B builds, profiles, ns_scale): kept as they are, each where it stood.
kept_single= kept_ns=
if [[ -f BENCHMARKS.md ]]; then
	kept_single=$(awk '/^### Later runs on this host/ { f = 1 } /^## / { f = 0 } f' BENCHMARKS.md)
	kept_ns=$(awk '/^## Many namespaces, one change at a time/ { f = 1; print; next }
		/^## / { f = 0 } f' BENCHMARKS.md)
fi

{
	cat <<HDR
# Benchmarks

Regenerated by \`bench/run.sh\` (root). Machine: $cpu, $(nproc) CPUs, kernel $kernel.
The machine is shared and noisy: compare rows of one run, not across runs.

## Routing path (Google Benchmark)

\`$build/bench/bench_route --benchmark_repetitions=3\`

- \`BM_Route/S/M\`: one change from decoded record to enqueued in every
  matching ring (mirror lookup, event build, trie match, reference count,
  SPSC enqueues), with S subscriptions of which M match. Target: under
  500 ns at 1,000 subscriptions.
- \`BM_TrieMatch/S\`: a depth-8 path among S subscriptions (container
  subtrees, four matches per query). Target: under 150 ns at 100,000.

\`\`\`
$(grep -E '^(BM_|Benchmark|---)' "$out/bench.txt")
\`\`\`

$(bench/tables_section.sh "$out/tables.json" "$build/bench/bench_tables --benchmark_repetitions=3")

$(bench/single/section.sh "$out/single.jsonl" "$out/single.md" "$build/bench/single_change $single_args --json single.jsonl")
${kept_single:+
$kept_single
}${single_vm:+
$single_vm
}${kept_ns:+
$kept_ns
}
## One storm, one watcher at a time (hyperfine)

A 1,000-mount storm (\`mountstorm --quick\`) watched by each contender alone;
wall time of the whole run, storm included (the poller-only run exits 77,
"no router source", by design: it is the baseline).

$(cat "$out/hyperfine.md")

$(targets)

## The $total-mount storm (mountstorm)

\`cd /tmp && $storm --total $total --contenders fanotify,mountinfo,poller,findmnt --json storm.json --plot storm\`

\`\`\`
$(cat "$out/storm.txt")
\`\`\`

## The same storm at 2,000 operations a second

\`cd /tmp && $storm --total $total --rate 2000 --contenders fanotify,poller --json paced.json --plot paced\`

\`\`\`
$(cat "$out/paced.txt")
\`\`\`

## Built up flat out, then 200 operations a second

\`cd /tmp && $storm --total $total --rate 200 --build-at-max --contenders fanotify,poller --json trickle.json --plot trickle\`

\`\`\`
$(cat "$out/trickle.txt")
\`\`\`

## Recovery from a kernel loss at 10,000 mounts (fanotify)

The router reads nothing during waves 1-7 (the table built to 10,000
mounts, then moves, remounts and a flap wave); fanotify's queue holds
16,384 records, so it overflows, and the router must resynchronise from
listmount/statmount.

\`cd /tmp && $storm --total $total --mounts 1000 --hold-waves 7 --contenders fanotify --json recovery.json --plot recovery\`

\`\`\`
$(cat "$out/recovery.txt")
\`\`\`

## The embedding examples

### unit-tracker: a service manager's table of every mount

\`tests/examples/bench-unit-tracker.sh $build 150\`, in a private mount
namespace: N tmpfs mounts, then \`unit-tracker --compare\`, then 150
changes (mount, remount read-only, unmount): 30 ms apart ("paced"), the same
without remounts ("attach"), or back to back ("burst"). Both ways run on
unit-tracker's one thread on the same changes: "events" is the CPU inside
\`mr_router_dispatch()\` and the event handling, "re-read" the CPU of
re-reading and diffing \`/proc/self/mountinfo\` on each POLLPRI, after
start-up; "tables": the two tables and listmount, compared at exit.

$(cat "$out/unit-tracker.md")

### container-manager: 200 containers through one router

\`unshare -m --propagation private $build/examples/container-manager --containers 200 --seconds 30 --source SOURCE\`
(each container its own mount namespace, tmpfs root and pivot_root,
mounting, moving and unmounting at random, replaced when it exits; at the
end each container's list is compared with listmount of its namespace):

| source | result |
|---|---|
| fanotify (one group, a mark per namespace) | $(tr '\n' ' ' <"$out/cm-fanotify.txt") |
| mountinfo | $(tr '\n' ' ' <"$out/cm-mountinfo.txt") |
HDR
	if ((!vm)) && [[ -n $kept_vm ]]; then
		printf '\n%s\n' "$kept_vm"
	fi
	if ((vm)); then
		cat <<VM

## The storm on the project's kernel (watch_mount, qemu TCG)

The guest is an emulated CPU (TCG, no KVM here): its times are those of an
emulator, many times slower than the host's; compare rows, not with the
sections above. \`$vmcmd\`

\`\`\`
$(cat "$out/vm.txt")
\`\`\`
VM
	fi
} >BENCHMARKS.md
cp "$out/single.svg" bench/single_change.svg 2>/dev/null || true
# Fuzzing, faults and storms are not measured here: their section is kept.
cat bench/robustness.md >>BENCHMARKS.md
cp "$out/storm.svg" bench/storm.svg 2>/dev/null || true
cp "$out/paced.svg" bench/paced.svg 2>/dev/null || true
cp "$out/trickle.svg" bench/trickle.svg 2>/dev/null || true
echo "BENCHMARKS.md written ($out)"
