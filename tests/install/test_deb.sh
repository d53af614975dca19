#!/usr/bin/env bash
# The Debian source package (debian/) builds with dpkg-buildpackage, from
# a copy of the tracked source outside the tree, into libmountrouter0,
# libmountrouter-dev and mountwatch; lintian reports no error on them; and
# the .debs hold what each should (soname, headers and .pc, the tool and
# its man page).  Exit 77 (skip) without the Debian build tools.
#   test_deb.sh SOURCE_DIR
set -u
src=$1
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
for t in dpkg-buildpackage dpkg-checkbuilddeps lintian dh fakeroot; do
	command -v $t >/dev/null || skip "$t is not installed (setup.sh installs it)"
done
(cd "$src" && dpkg-checkbuilddeps) >/dev/null 2>&1 || skip "build dependencies missing: $(cd "$src" && dpkg-checkbuilddeps 2>&1)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
tree=$work/mountrouter-$version
mkdir "$tree"
# The tracked files only: no build directory finds its way into the source package.
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
	git -C "$src" ls-files -z | tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf - ||
		fail "cannot copy the source"
else
	tar -C "$src" --exclude='./build*' -cf - . | tar -C "$tree" -xf - || fail "cannot copy the source"
fi

(cd "$tree" && DEB_BUILD_OPTIONS="parallel=2 nocheck" dpkg-buildpackage -us -uc) \
	>"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; fail "dpkg-buildpackage failed"; }

arch=$(dpkg --print-architecture)
changes=$work/mountrouter_${version}_${arch}.changes
[ -f "$changes" ] || fail "no $changes"
for p in libmountrouter0 libmountrouter-dev mountwatch; do
	[ -f "$work/${p}_${version}_${arch}.deb" ] || fail "no .deb for $p"
done
deb() { dpkg-deb -c "$work/${1}_${version}_${arch}.deb" >"$work/$1.list" || fail "dpkg-deb -c $1"; cat "$work/$1.list"; }
deb libmountrouter0 | grep -q '/libmountrouter\.so\.0\.' || fail "libmountrouter0 lacks the library"
deb libmountrouter-dev | grep -q '/usr/include/mountrouter\.h$' || fail "-dev lacks the header"
deb libmountrouter-dev | grep -q '/pkgconfig/mountrouter\.pc$' || fail "-dev lacks the .pc file"
deb libmountrouter-dev | grep -q '/cmake/mountrouter/mountrouterConfig\.cmake$' || fail "-dev lacks the CMake package"
deb libmountrouter-dev | grep -q 'mountrouter-uapi\.h' && fail "-dev ships the private uapi header"
deb mountwatch | grep -q '/usr/bin/mountwatch$' || fail "mountwatch lacks the program"
deb mountwatch | grep -q '/usr/share/man/man1/mountwatch\.1\.gz$' || fail "mountwatch lacks its man page"
deb mountwatch | grep -q 'mountwatch\.schema\.json$' || fail "mountwatch lacks the JSON schema"
dpkg-deb -I "$work/mountwatch_${version}_${arch}.deb" | grep -q 'Depends:.*libmountrouter0' ||
	fail "mountwatch does not depend on libmountrouter0"
dpkg-deb -x "$work/mountwatch_${version}_${arch}.deb" "$work/x"
readelf -d "$work/x/usr/bin/mountwatch" | grep -q 'RUNPATH\|RPATH' && fail "mountwatch in /usr has a RUNPATH"

lintian --fail-on error --display-info --tag-display-limit 0 "$changes" >"$work/lintian.log" 2>&1
rc=$?
cat "$work/lintian.log"
[ $rc = 0 ] || fail "lintian reports errors (exit $rc)"
echo "PASS: dpkg-buildpackage built $(ls "$work"/*.deb | wc -l) .debs and the source package; lintian: $(grep -c '^E:' "$work/lintian.log") errors, $(grep -c '^W:' "$work/lintian.log") warnings"
