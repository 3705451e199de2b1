#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The module API is enough for a third party: `make install` into a staging DESTDIR,
# copy examples/bdev_passthru (a module and a program) out of the tree, build it with
# `pkg-config nvpoll` against the staged headers and libnvpoll.so only (PKG_CONFIG_PATH
# in the environment, and on make's command line), and run it over
# a malloc bdev and over a software controller's namespace. Exit 0 pass, 1 fail, 77 skip.

set -u

here=$(cd "$(dirname "$0")" && pwd)
rootdir=$(cd "$here/../../.." && pwd) # build/test/functional -> top
work=$(mktemp -d "${TMPDIR:-/tmp}/nvp_passthru.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }
[ -f "$rootdir/mk/config.mk" ] || fail "$rootdir/mk/config.mk missing: configure first"

# Install from the tree (already built by `make`); a make above us must not lend its
# jobserver to this one.
stage=$work/stage
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$rootdir" install DESTDIR="$stage" \
	PREFIX=/usr >"$work/install.log" 2>&1; then
	tail -n 20 "$work/install.log" >&2
	fail "make install DESTDIR=... failed"
fi
for h in bdev.h bdev_module.h env.h; do
	[ -f "$stage/usr/include/nvpoll/$h" ] || fail "make install did not install nvpoll/$h"
done

# Sanitizer builds of libnvpoll need the same runtime in the program.
san=
grep -q '^CONFIG_ASAN := y' "$rootdir/mk/config.mk" && san="$san -fsanitize=address"
grep -q '^CONFIG_UBSAN := y' "$rootdir/mk/config.mk" && san="$san -fsanitize=undefined"

# Out of the tree: nothing but the example's own files.
src=$work/src
mkdir -p "$src"
cp "$rootdir"/examples/bdev_passthru/{main.c,passthru.c,passthru.h,Makefile.installed} "$src/"
# nvpoll.pc says prefix=/usr: a copy points at the staged files (--define-variable would
# move every package's prefix, DPDK's too).
mkdir -p "$work/pc"
sed "s|^prefix=.*|prefix=$stage/usr|" "$stage/usr/lib/pkgconfig/nvpoll.pc" >"$work/pc/nvpoll.pc"
export PKG_CONFIG_PATH=$work/pc
pkgconf=pkg-config
$pkgconf --exists nvpoll || fail "pkg-config does not find the staged nvpoll.pc"
if ! make -C "$src" -f Makefile.installed PKG_CONFIG="$pkgconf" \
	CFLAGS="-O2 -Wall -Wextra -Werror $san" LDFLAGS="$san" >"$work/build.log" 2>&1; then
	cat "$work/build.log" >&2
	fail "bdev_passthru does not build against the installed headers and library"
fi
echo "built: $(grep -o 'cc .*' "$work/build.log" | head -n 1)"
# The other spelling the README gives: PKG_CONFIG_PATH on make's command line, not in
# the environment (GNU make 4.3's $(shell) does not see it unless the Makefile passes it).
mkdir -p "$work/o2"
if ! env -u PKG_CONFIG_PATH make -C "$src" -f Makefile.installed PKG_CONFIG="$pkgconf" \
	PKG_CONFIG_PATH="$work/pc" O="$work/o2" CFLAGS="-O2 -Wall -Wextra -Werror $san" \
	LDFLAGS="$san" >"$work/build2.log" 2>&1 || [ ! -x "$work/o2/bdev_passthru" ]; then
	cat "$work/build2.log" >&2
	fail "make -f Makefile.installed PKG_CONFIG_PATH=DIR does not build"
fi

export LD_LIBRARY_PATH=$stage/usr/lib
ldd "$src/bdev_passthru" | grep -q "$stage/usr/lib/libnvpoll.so" ||
	fail "the program does not use the staged libnvpoll.so: $(ldd "$src/bdev_passthru" | grep nvpoll)"

run() {
	local out rc
	out=$("$src/bdev_passthru" "$@" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || fail "bdev_passthru $* exited $rc"
}
out=$(run -n 32) || exit 1
echo "$out"
echo "$out" | grep -Eq 'read +32 I/Os +131072 bytes' || fail "malloc: wrong read count"
echo "$out" | grep -Eq 'write +32 I/Os +131072 bytes' || fail "malloc: wrong write count"
out=$(run -c "nvme:name=emu0,trtype=emu,nn=1,size=4M" -b emu0n1 -n 16) || exit 1
echo "$out"
echo "$out" | grep -q 'pt0 on emu0n1 (nvme)' || fail "nvme: not stacked on emu0n1"
echo "$out" | grep -Eq 'read +16 I/Os' || fail "nvme: wrong read count"
"$src/bdev_passthru" -b nope >"$work/bad.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a missing base bdev: exit $rc, want 1"
grep -q "nope" "$work/bad.log" || fail "a missing base bdev: the message does not name it"
echo "PASS"
