#!/usr/bin/env bash
# Fetch Debian's own prebuilt kernels for the stock-kernel test matrix:
#
#   kernel/vm/stock-kernels.sh [LABEL]
#
# LABEL is 6.1 (Debian 12's kernel: what linux-image-cloud-amd64 depends on,
# linux-image-6.1.0-*-cloud-amd64) or 6.12 (the 6.12 line of Debian 13 and
# RHEL 10: linux-image-6.12.*+deb12-cloud-amd64-unsigned); without one, both.
# Prints "LABEL PATH-TO-VMLINUZ" per kernel.  The packages are downloaded
# with apt-get download and unpacked with dpkg-deb, never installed; only
# the kernel image is kept, under ${MR_STOCK_CACHE:-/var/cache/mountrouter/stock}
# in a directory named after the package, so a second run costs nothing.
# Their cloud flavour boots under qemu with no modules and no initrd of
# their own: tmpfs, serial console, namespaces, io_uring and fanotify are
# built in.
set -euo pipefail

cache=${MR_STOCK_CACHE:-/var/cache/mountrouter/stock}
labels=("$@")
[ ${#labels[@]} -gt 0 ] || labels=(6.1 6.12)

# The newest image package a meta package depends on.
image_of() {
	apt-cache depends "$1" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}

for label in "${labels[@]}"; do
	case $label in
	6.1) pkg=$(image_of linux-image-cloud-amd64) ;;
	6.12) pkg=$(image_of linux-image-6.12-cloud-amd64)
		[ -z "$pkg" ] || pkg=$pkg-unsigned ;;
	*) echo "stock-kernels.sh: unknown kernel $label (6.1 or 6.12)" >&2; exit 2 ;;
	esac
	if [ -z "$pkg" ]; then
		echo "stock-kernels.sh: no package for $label in apt's lists (apt-get update?)" >&2
		exit 1
	fi
	dir=$cache/$pkg
	if [ ! -f "$dir/vmlinuz" ]; then
		mkdir -p "$cache"
		tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
		# apt's download user must be able to write where it downloads.
		chmod 755 "$tmp"
		chown _apt "$tmp" 2>/dev/null || true
		(cd "$tmp" && apt-get download -q "$pkg" >&2)
		mkdir "$tmp/x"
		dpkg-deb -x "$tmp"/*.deb "$tmp/x"
		img=$(ls "$tmp"/x/boot/vmlinuz-* | head -n1)
		mkdir -p "$dir"
		cp "$img" "$dir/vmlinuz.part"
		mv "$dir/vmlinuz.part" "$dir/vmlinuz"
		rm -rf "$tmp"
	fi
	echo "$label $dir/vmlinuz"
done
