#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# make install into a DESTDIR staging tree, then use it as a user would: build a small
# program against the installed headers and library with nothing but pkg-config's flags,
# shared and static (PKG_CONFIG_SYSROOT_DIR and --define-prefix), run both; check that
# nvpoll.pc pushes no DPDK compile flags, that every program a user runs is installed
# (nvp-setup, the fio engine, man pages, bash completion) and answers --version with the
# one version of ./configure, and that the installed nvp_doctor points at nvp-setup.
# Exit 0 pass, 1 fail, 77 skip.
set -u

rootdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
tmp=$(mktemp -d /tmp/nvp_install_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}
ok() { echo "ok   $*"; }

command -v pkg-config >/dev/null || {
	echo "SKIP: pkg-config not installed"
	exit 77
}
cfg=$rootdir/mk/config.mk
version=$(sed -n 's/^NVP_VERSION=//p' "$rootdir/configure")
prefix=/opt/nvp
stage=$tmp/stage

# The outer make's jobserver and flags are not ours.
if ! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$rootdir" install DESTDIR="$stage" \
	PREFIX=$prefix >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	fail "make install DESTDIR=... PREFIX=$prefix"
	exit 1
fi
ok "make install"

man_pages="share/man/man1/nvp.1 share/man/man1/nvp_perf.1 share/man/man1/nvp_doctor.1
	share/man/man8/nvp-setup.8"
if ! command -v pandoc >/dev/null; then
	echo "note: pandoc not installed (scripts/pkgdep.sh installs it): man pages not checked"
	man_pages=""
fi
for f in bin/nvp bin/nvp_perf bin/nvp_doctor bin/nvp-setup lib/libnvpoll.a lib/libnvpoll.so \
	lib/pkgconfig/nvpoll.pc include/nvpoll/nvme.h share/bash-completion/completions/nvp \
	$man_pages; do
	[ -e "$stage$prefix/$f" ] || fail "not installed: $f"
done
if grep -q '^FIO_SRC_DIR := .' "$cfg"; then
	[ -x "$stage$prefix/lib/nvpoll/nvpoll_fio.so" ] || fail "fio engine not installed in lib/nvpoll"
fi
ok "installed files"

for p in nvp nvp_perf nvp_doctor nvp-setup; do
	out=$("$stage$prefix/bin/$p" --version 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q -- " $version\( \|$\)" <<<"$out"; then
		fail "$p --version: exit $rc, '$out' (want $version)"
	fi
done
ok "--version: $version everywhere"

if [ -n "$man_pages" ] && command -v man >/dev/null; then
	man -l "$stage$prefix/share/man/man1/nvp.1" 2>/dev/null | grep -q 'nvme-cli' ||
		fail "man -l nvp.1 does not render"
fi

# The installed doctor's hints name the installed setup script.
bash "$rootdir/test/common/fake_sysfs.sh" "$tmp/sys"
out=$(NVP_SYSFS_ROOT=$tmp/sys "$stage$prefix/bin/nvp_doctor" --queues 64 --depth 4096 2>&1)
grep -q 'nvp-setup config' <<<"$out" || fail "installed nvp_doctor does not point at nvp-setup: $out"
ok "nvp_doctor hints name nvp-setup"

export PKG_CONFIG_LIBDIR=$stage$prefix/lib/pkgconfig PKG_CONFIG_PATH=
cflags=$(PKG_CONFIG_SYSROOT_DIR=$stage pkg-config --cflags nvpoll | xargs)
if grep -qE 'rte_config|-march|dpdk' <<<"$cflags"; then
	fail "pkg-config --cflags nvpoll carries DPDK's flags: $cflags"
fi
[ "$cflags" = "-I$stage$prefix/include" ] || fail "sysroot cflags: '$cflags'"
dp=$(pkg-config --define-prefix --cflags --libs nvpoll | xargs)
[ "$dp" = "-I$stage$prefix/include -L$stage$prefix/lib -lnvpoll" ] ||
	fail "--define-prefix: '$dp'"
ok "pkg-config: $cflags"

cat >"$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <string.h>
#include <nvpoll/env.h>
#include <nvpoll/nvme.h>

/* Attach a software controller: needs the library whole (its providers register from
 * constructors), DMA memory and the driver. */
int
main(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_env_opts opts;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	const struct nvme_ctrlr_data *cd;

	nvp_env_opts_init(&opts, sizeof(opts));
	opts.name = "install_test";
	opts.no_huge = true;
	opts.no_pci = true;
	if (nvp_nvme_transport_id_parse(&trid, "trtype:emu name:inst0") != 0 ||
	    nvp_env_init(&opts) != 0) {
		return 1;
	}
	if (nvp_nvme_connect(&trid, NULL, &ctrlr) != 0) {
		nvp_env_fini();
		return 1;
	}
	cd = nvp_nvme_ctrlr_get_data(ctrlr);
	printf("attached %.6s nn=%u\n", cd->mn, cd->nn);
	nvp_nvme_detach(ctrlr);
	nvp_env_fini();
	return 0;
}
PROG
san=""
grep -q '^CONFIG_ASAN := y' "$cfg" && san="$san -fsanitize=address"
grep -q '^CONFIG_UBSAN := y' "$cfg" && san="$san -fsanitize=undefined"
cc=$(sed -n 's/^CC := //p' "$cfg")
export PKG_CONFIG_SYSROOT_DIR=$stage

# shellcheck disable=SC2046,SC2086 # word splitting of the flags is the point
if ${cc:-cc} $san -o "$tmp/prog_shared" "$tmp/prog.c" $(pkg-config --cflags --libs nvpoll) &&
	LD_LIBRARY_PATH=$stage$prefix/lib "$tmp/prog_shared" | grep -q '^attached nvpoll nn=1'; then
	ok "shared: built and ran with pkg-config --cflags --libs"
else
	fail "shared link against the installed tree"
fi

# Static, as the README says: the archive whole (its components register from
# constructors), then what --static --libs lists beside it.
libs=$(pkg-config --static --libs nvpoll |
	sed 's/-lnvpoll\>/-Wl,--whole-archive -l:libnvpoll.a -Wl,--no-whole-archive/')
# shellcheck disable=SC2046,SC2086
if ${cc:-cc} $san -o "$tmp/prog_static" "$tmp/prog.c" $(pkg-config --cflags nvpoll) $libs &&
	"$tmp/prog_static" | grep -q '^attached nvpoll nn=1'; then
	if ldd "$tmp/prog_static" | grep -q libnvpoll; then
		fail "static: the program still needs libnvpoll.so"
	else
		ok "static: built and ran with pkg-config --static --libs ($(wc -w <<<"$libs") flags)"
	fi
else
	fail "static link against the installed tree: $libs"
fi

if [ $fails -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all checks passed"
