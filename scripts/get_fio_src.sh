#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Usage: scripts/get_fio_src.sh [DEST]
# Fetch Debian's fio source package into DEST (default build/fio/src) and configure it, so
# that app/fio can build an external ioengine against the same headers (and the same
# FIO_IOOPS_VERSION) as the fio binary Debian ships.
#
# apt is used with a PRIVATE configuration under build/fio/apt: a sources.list with deb-src
# lines derived from the machine's configured Debian archives (/etc/apt/sources.list and
# /etc/apt/sources.list.d/*.list, *.sources), its own lists and cache. Nothing under
# /etc/apt changes. Needs network access to the archive and dpkg-source (dpkg-dev), both
# installed by scripts/pkgdep.sh. If DEST already holds a configured tree, nothing is
# fetched again. Exit status: 0 ready, 1 failed (the reason is printed).

set -euo pipefail

rootdir=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$rootdir/build/fio/src}
aptdir=$rootdir/build/fio/apt
pkg=${NVP_FIO_SRC_PACKAGE:-fio}

log() { echo "get_fio_src.sh: $*"; }
die() {
	echo "get_fio_src.sh: error: $*" >&2
	exit 1
}

# stale_config DIR: print the optional libraries whose headers are installed now but which
# DIR's fio configuration lacks (it was configured before they were installed). fio's
# headers include libaio.h and numa.h when configured with them, as Debian's fio is.
stale_config() {
	local lib hdr
	for lib in libaio:CONFIG_LIBAIO numa:CONFIG_LIBNUMA; do
		hdr=${lib%%:*}.h
		if echo "#include <$hdr>" | ${CC:-cc} -E -x c - >/dev/null 2>&1 &&
			! grep -q "define ${lib#*:}\$" "$1/config-host.h"; then
			printf ' %s' "${lib#*:}"
		fi
	done
}

if [ -f "$dest/config-host.h" ] && [ -f "$dest/ioengines.h" ]; then
	stale=$(stale_config "$dest")
	if [ -z "$stale" ]; then
		log "$dest is already configured; not fetching again (remove it to refetch)"
		exit 0
	fi
	log "$dest was configured without$stale although the headers are installed now: reconfiguring it"
	(cd "$dest" && ./configure >configure.log 2>&1) ||
		die "fio's ./configure failed: see $dest/configure.log"
	stale=$(stale_config "$dest")
	[ -z "$stale" ] || die "$dest: fio's ./configure still lacks$stale: see $dest/configure.log"
	log "fio source ready: $dest (reconfigured)"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found: fetch fio's source yourself and run ./configure --with-fio=DIR"
command -v dpkg-source >/dev/null 2>&1 || die "dpkg-source not found: install dpkg-dev (sudo scripts/pkgdep.sh)"

# Print "deb-src [signed-by=K] URI SUITE COMPONENTS" for every "deb" entry of the one-line
# format (*.list) and the deb822 format (*.sources).
derive_list_file() {
	sed -n 's/^[[:space:]]*deb[[:space:]]\+/deb-src /p' "$1"
}

derive_sources_file() {
	awk '
	function flush() {
		if (types ~ /(^|[[:space:]])deb([[:space:]]|$)/ && enabled != "no" && uris != "") {
			n = split(uris, u, /[[:space:]]+/); m = split(suites, s, /[[:space:]]+/)
			for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) if (u[i] != "" && s[j] != "")
				printf "deb-src %s%s %s %s\n", (signed != "" ? "[signed-by=" signed "] " : ""), u[i], s[j], comps
		}
		types = uris = suites = comps = signed = enabled = ""
	}
	/^[[:space:]]*#/ { next }
	/^[[:space:]]*$/ { flush(); next }
	{
		key = tolower($1); sub(/:$/, "", key); val = $0; sub(/^[^:]*:[[:space:]]*/, "", val)
		if (key == "types") types = val; else if (key == "uris") uris = val
		else if (key == "suites") suites = val; else if (key == "components") comps = val
		else if (key == "signed-by") signed = val; else if (key == "enabled") enabled = tolower(val)
	}
	END { flush() }' "$1"
}

mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/download"
srclist=$aptdir/sources.list
: >"$srclist.tmp"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && derive_list_file "$f" >>"$srclist.tmp"
done
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && derive_sources_file "$f" >>"$srclist.tmp"
done
sort -u "$srclist.tmp" >"$srclist"
rm -f "$srclist.tmp"
[ -s "$srclist" ] || die "no 'deb' entries in /etc/apt/sources.list or /etc/apt/sources.list.d/: cannot derive a deb-src line"
log "deb-src lines (in $srclist):"
sed 's/^/  /' "$srclist"

apt_opts=(
	-o "Dir::Etc::sourcelist=$srclist"
	-o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$aptdir/lists"
	-o "Dir::Cache=$aptdir/cache"
	-o "Dir::Cache::pkgcache="
	-o "Dir::Cache::srcpkgcache="
	-o "APT::Sandbox::User=root"
	-o "Debug::NoLocking=1"
	-q
)
if [ "$(id -u)" -ne 0 ]; then
	# Unprivileged: apt cannot drop to its sandbox user, which is fine for our own dirs.
	apt_opts+=(-o "APT::Sandbox::User=$(id -un)")
fi

log "apt-get update (private lists in $aptdir/lists)"
apt-get "${apt_opts[@]}" update || die "apt-get update failed (network? archive?); or use ./configure --with-fio=DIR"

log "apt-get source --download-only $pkg"
rm -rf "$aptdir/download"
mkdir -p "$aptdir/download"
(cd "$aptdir/download" && apt-get "${apt_opts[@]}" source --download-only "$pkg") ||
	die "apt-get source $pkg failed"

dsc=
for f in "$aptdir"/download/*.dsc; do
	[ -f "$f" ] && dsc=$f && break
done
[ -n "$dsc" ] || die "no .dsc downloaded in $aptdir/download"
log "unpacking $(basename "$dsc") into $dest"
rm -rf "$dest" "$dest.tmp"
dpkg-source --no-check -x "$dsc" "$dest.tmp" >/dev/null || die "dpkg-source -x $dsc failed"
# dpkg-source leaves copies of the package's tarballs next to the tree: not needed.
for f in "$aptdir"/download/*.tar.*; do
	[ -f "$f" ] && rm -f "$(dirname "$dest")/$(basename "$f")"
done

log "configuring fio's tree (./configure; writes config-host.h)"
(cd "$dest.tmp" && ./configure >configure.log 2>&1) ||
	die "fio's ./configure failed: see $dest.tmp/configure.log"
mv "$dest.tmp" "$dest"
log "fio source ready: $dest ($(basename "$dsc" .dsc))"
