#!/usr/bin/env bash
# Build the test kernel: Debian's linux-source-6.12 + kernel/patches/*.patch,
# configured from tinyconfig + kernel/config/base.config (+ debug.config with
# --debug).
#
#   kernel/build.sh [--debug]
#
# Prints the bzImage path on stdout (last line); progress and the time each
# step took go to stderr.  The tree is extracted and built under
# ${MR_KERNEL_CACHE:-/var/cache/mountrouter/kernel}, outside the repository,
# in a directory named after the source version and a hash of the patches and
# config fragments: with nothing changed, a rebuild costs nothing.  The kernel's
# .config is left next to the bzImage as bzImage.config.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
debug=0
case ${1:-} in
--debug) debug=1 ;;
"") ;;
-h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
esac

log() { echo "build: $*" >&2; }
t0=$(date +%s)
step_start=$t0
step() { # name: report how long the previous step took, start the next
	local now
	now=$(date +%s)
	[ -z "${step_name:-}" ] || log "$step_name: $((now - step_start)) s"
	step_name=$1
	step_start=$now
}

# --- 1. packages (idempotent: only what is missing) ---------------------
step packages
pkgs="linux-source-6.12 build-essential bc flex bison libelf-dev libssl-dev
	cpio xz-utils busybox-static qemu-system-x86"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	log "installing:$missing"
	[ "$(id -u)" = 0 ] || { log "need root to install packages"; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2
fi
tarball=$(ls /usr/src/linux-source-6.12.tar.xz)
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)

# --- 2. cache key ----------------------------------------------------------
patches=()
for p in "$here"/patches/*.patch; do
	# The cover letter (0000-*) carries no code.
	case ${p##*/} in 0000-*) continue ;; esac
	patches+=("$p")
done
frags=("$here/config/base.config")
[ $debug = 0 ] || frags+=("$here/config/debug.config")
variant=$([ $debug = 1 ] && echo debug || echo base)
key=$( (echo "$srcver $variant"; cat "${patches[@]}" "${frags[@]}") |
	sha256sum | cut -c1-16)
cache=${MR_KERNEL_CACHE:-/var/cache/mountrouter/kernel}
dir=$cache/$variant-$srcver-$key
cached() {
	[ -f "$dir/done" ] && [ -f "$dir/bzImage" ] || return 1
	log "cached: $dir (nothing changed)"
	echo "$dir/bzImage"
}
cached && exit 0
mkdir -p "$cache"
exec 9>"$cache/.lock-$variant"
flock 9 # one build of a variant at a time; the loser finds it cached
cached && exit 0

# --- 3. extract ------------------------------------------------------------
step extract
rm -rf "$dir"
mkdir -p "$dir"
tar -xf "$tarball" -C "$dir"
src=$(echo "$dir"/linux-source-6.12)
[ -d "$src" ] || { log "unexpected tarball layout"; exit 1; }

# --- 4. patch ---------------------------------------------------------------
step patch
for p in "${patches[@]}"; do
	log "applying $(basename "$p")"
	(cd "$src" && patch -p1 --batch --forward --quiet <"$p") ||
		{ log "$(basename "$p") does not apply"; exit 1; }
done

# --- 5. configure -----------------------------------------------------------
step configure
out=$dir/build
mkdir -p "$out"
make -s -C "$src" O="$out" tinyconfig >/dev/null
(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "${frags[@]}") >/dev/null
make -s -C "$src" O="$out" olddefconfig >/dev/null
# merge_config only warns when Kconfig drops an option (unmet dependency).
bad=0
for f in "${frags[@]}"; do
	while IFS= read -r line; do
		case $line in CONFIG_*=*) ;; *) continue ;; esac
		grep -qx "$line" "$out/.config" || { log "not set: $line (from $(basename "$f"))"; bad=1; }
	done <"$f"
done
[ $bad = 0 ] || { log "configuration incomplete"; exit 1; }

# --- 6. build ----------------------------------------------------------------
step "bzImage (make -j$(nproc))"
make -s -C "$src" O="$out" -j"$(nproc)" bzImage >&2
cp "$out/arch/x86/boot/bzImage" "$dir/bzImage"
cp "$out/.config" "$dir/bzImage.config"
step done
touch "$dir/done"

# Older builds of this variant are stale; each is ~2 GB.
for old in "$cache/$variant-"*; do
	[ "$old" = "$dir" ] || rm -rf "$old"
done
log "total: $(($(date +%s) - t0)) s"
echo "$dir/bzImage"
