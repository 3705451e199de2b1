#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Install the Debian (12, bookworm) packages nvpoll needs to build and test. Idempotent:
# packages already installed are left alone, and `apt-get update` runs only when something
# is missing. Runs as root, or through sudo when started by another user.

set -euo pipefail

PACKAGES=(
	build-essential  # gcc, make, libc headers, ASan/UBSan runtimes
	pkg-config       # ./configure finds dependencies with it
	libdpdk-dev      # lib/env_dpdk (or ./configure --without-dpdk)
	dpdk-dev         # dpdk-hugepages.py, dpdk-devbind.py
	libpciaccess-dev # PCI enumeration
	libcunit1-dev    # unit and functional tests
	libjson-c-dev    # JSON output of tools
	clang-format     # scripts/check_format.sh, make format
	python3          # scripts
	dpkg-dev         # dpkg-source: scripts/get_fio_src.sh unpacks fio's source package
	fio              # the fio ioengine's test runs Debian's fio (app/fio)
	qemu-system-x86  # test/qemu: the QEMU judge boots guests with QEMU's NVMe device
	busybox-static   # test/qemu: the guest's shell and tools
	kmod             # test/qemu: depmod for the guest kernel's modules
	cpio             # test/qemu: the guest's initramfs
	xz-utils         # test/qemu: the kernel image is cut out at the xz magic
	binutils         # test/qemu: strip for the guest's copies of the programs
	libaio-dev       # fio's headers may include libaio.h: the engine is built as users build it
	liburing-dev     # the uring bdev module; fio's headers may include liburing.h too
	libnuma-dev      # fio's headers may include numa.h
	valgrind         # bench/: callgrind instruction counts
	librsvg2-bin     # bench/: rsvg-convert renders the SVG plots to PNG
	nvme-cli         # test/qemu: nvme-cli's JSON, compared key by key with nvp's
	jq               # test/qemu: flattens nvme-cli's and nvp's JSON for that comparison
	pandoc           # man pages from doc/man/*.md
	clang-14         # make fuzz: libFuzzer harnesses
	libclang-rt-14-dev # make fuzz: the libFuzzer and sanitizer runtimes for clang-14
)

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	echo "pkgdep.sh: this script supports Debian and derivatives (dpkg/apt-get) only." >&2
	echo "Install the equivalents of: ${PACKAGES[*]}" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		continue
	fi
	missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "pkgdep.sh: all ${#PACKAGES[@]} packages already installed: ${PACKAGES[*]}"
	exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "pkgdep.sh: must run as root (sudo is not installed): su -c $0" >&2
		exit 1
	fi
	SUDO=(sudo)
fi

echo "pkgdep.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	"${missing[@]}"
echo "pkgdep.sh: installed ${missing[*]}"
