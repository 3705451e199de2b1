#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Give NVMe functions to a userspace driver and reserve hugepages (the SPDK convention).
# Run `scripts/setup.sh help` for the commands and variables.
#
# NVP_SYSFS_ROOT=DIR works on a fake sysfs tree (test/common/fake_sysfs.sh) instead of
# /sys: no modules are loaded, nothing is mounted, and "binding" re-points the fake
# driver link, so config/status/reset can be tested on a machine without devices.
# NVP_PROC_MOUNTS (default /proc/mounts), NVP_PROC_SWAPS (/proc/swaps) and
# NVP_PROC_MEMINFO (/proc/meminfo) are the tables consulted.

# POSIX sh (not bash): it must run in minimal systems too, such as a busybox initramfs.
# shellcheck disable=SC3043 # local: dash and busybox ash have it
set -eu

SYSFS=${NVP_SYSFS_ROOT:-/sys}
MOUNTS=${NVP_PROC_MOUNTS:-/proc/mounts}
SWAPS=${NVP_PROC_SWAPS:-/proc/swaps}
MEMINFO=${NVP_PROC_MEMINFO:-/proc/meminfo}
DRY_RUN=0
FUNCS=""
HUGEMEM=${HUGEMEM:-2048}
DRIVER_OVERRIDE=${DRIVER_OVERRIDE:-}
PCI_ALLOWED=${PCI_ALLOWED:-}
PCI_BLOCKED=${PCI_BLOCKED:-}
NVME_WAIT=${NVME_WAIT:-30}
NVME_CLASS=0x010802
HP_DIR=$SYSFS/kernel/mm/hugepages/hugepages-2048kB

fake() { [ "$SYSFS" != /sys ]; }

usage() {
	cat <<EOF
Usage: $(basename "$0") [config|status|reset|help] [--dry-run] [BDF ...]

  config  reserve HUGEMEM MiB of 2 MiB hugepages (mounting hugetlbfs at /dev/hugepages if
          nothing is mounted) and bind every NVMe function that is not in use to vfio-pci
          with the IOMMU (/sys/kernel/iommu_groups is not empty). Without an IOMMU it
          stops, unless you ask for DRIVER_OVERRIDE=uio_pci_generic: then the device
          can DMA to any memory of the machine (a warning says so). A function whose
          namespaces are mounted or held (LVM, md, dm) is left to the kernel, with the
          reason printed.
  status  print NVMe functions (BDF, vendor:device, driver, IOMMU group, NUMA node) and
          hugepages per NUMA node.
  reset   give the functions back to the kernel nvme driver, wait (NVME_WAIT) until
          each controller is live, and release the hugepages.
  help    this text.

  --dry-run, -n  print what config/reset would bind, unbind and reserve; change nothing
  BDF ...        only these functions (0000:01:00.0 or 01:00.0), as PCI_ALLOWED
  --version      print the version

Variables:
  HUGEMEM=MiB           hugepage memory to reserve (default 2048)
  DRIVER_OVERRIDE=name  bind to this driver instead (vfio-pci, uio_pci_generic, ...)
  PCI_ALLOWED="BDF ..." only these functions (default: all NVMe functions)
  PCI_BLOCKED="BDF ..." never these functions
  NVME_WAIT=seconds     reset: how long to wait for a controller to become live
                        (default 30; the nvme driver resets it after the bind returns)
config and reset need root.
EOF
}

die() {
	echo "setup.sh: $*" >&2
	exit 1
}

usage_error() {
	echo "setup.sh: $*" >&2
	echo "try '$(basename "$0") help'" >&2
	exit 2
}

# A PCI address: DDDD:BB:DD.F or BB:DD.F, hex digits.
is_bdf() {
	echo "$1" | grep -qiE '^([0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$'
}

check_bdf_list() { # check_bdf_list NAME "list"
	local x
	for x in $2; do
		is_bdf "$x" ||
			usage_error "$1: '$x' is not a PCI address (expected DDDD:BB:DD.F or BB:DD.F, e.g. 0000:01:00.0)"
	done
}

# Print, or with --dry-run print what would be done and skip it.
run() {
	if [ "$DRY_RUN" = 1 ]; then
		return 0
	fi
	"$@"
}

need_root() {
	if ! fake && [ "$(id -u)" -ne 0 ]; then
		die "'$1' changes driver bindings and hugepages and needs root: run sudo $0 $1"
	fi
}

# Read a sysfs file, or print $2 (default "-") if it is missing.
rd() { if [ -r "$1" ]; then cat "$1"; else echo "${2:--}"; fi; }

link_base() { # the last component of a symlink, or $2
	local t
	if t=$(readlink "$1" 2>/dev/null); then basename "$t"; else echo "${2:-}"; fi
}

nvme_functions() {
	local d
	for d in "$SYSFS"/bus/pci/devices/*; do
		[ -e "$d/class" ] || continue
		if [ "$(rd "$d/class")" = "$NVME_CLASS" ]; then basename "$d"; fi
	done
}

in_list() { # in_list BDF "list"
	local x
	for x in $2; do
		if [ "$x" = "$1" ] || [ "0000:$x" = "$1" ]; then return 0; fi
	done
	return 1
}

# Why BDF must be left alone (prints the reason, returns 0), or returns 1 if it is free.
in_use() {
	local bdf="$1" blk name dev part
	for blk in "$SYSFS"/block/nvme*n*; do
		[ -e "$blk" ] || continue
		dev=$(readlink -f "$blk/device" 2>/dev/null || true)
		case "$dev/" in */"$bdf"/*) ;; *) continue ;; esac
		name=$(basename "$blk")
		for part in "$blk" "$blk/$name"p*; do
			[ -d "$part" ] || continue
			if [ -n "$(ls -A "$part/holders" 2>/dev/null)" ]; then
				echo "$(basename "$part") is held by $(cd "$part/holders" && echo *) (LVM, md or dm): release it first"
				return 0
			fi
			if grep -q "^/dev/$(basename "$part") " "$MOUNTS" 2>/dev/null; then
				echo "/dev/$(basename "$part") is mounted: unmount it first"
				return 0
			fi
			if grep -q "^/dev/$(basename "$part")[[:space:]]" "$SWAPS" 2>/dev/null; then
				echo "/dev/$(basename "$part") is in use as swap: swapoff it first"
				return 0
			fi
		done
	done
	return 1
}

iommu_on() { [ -n "$(ls -A "$SYSFS/kernel/iommu_groups" 2>/dev/null)" ]; }

pick_driver() {
	if [ -n "$DRIVER_OVERRIDE" ]; then
		echo "$DRIVER_OVERRIDE"
	elif iommu_on; then
		echo vfio-pci
	else
		echo uio_pci_generic
	fi
}

load_module() {
	fake && return 0
	modprobe "$1" 2>/dev/null ||
		die "cannot load module $1: is it built for this kernel ($(uname -r))? (apt-get install linux-modules-extra or pick another DRIVER_OVERRIDE)"
}

# Bind BDF to driver DRV ("" = let the kernel choose, i.e. back to nvme).
bind() {
	local bdf="$1" drv="$2" d="$SYSFS/bus/pci/devices/$1"
	if fake; then
		mkdir -p "$SYSFS/bus/pci/drivers/${drv:-nvme}"
		ln -sfn "../../drivers/${drv:-nvme}" "$d/driver"
	else
		if [ -e "$d/driver" ]; then echo "$bdf" >"$d/driver/unbind"; fi
		if [ -n "$drv" ]; then echo "$drv" >"$d/driver_override"; else echo >"$d/driver_override"; fi
		echo "$bdf" >"$SYSFS/bus/pci/drivers_probe" || true
	fi
	if [ "$(link_base "$d/driver")" != "${drv:-nvme}" ]; then
		echo "  $bdf: bound to '$(link_base "$d/driver" none)' instead of ${drv:-nvme} - see dmesg" >&2
	elif [ -z "$drv" ]; then
		wait_nvme_live "$bdf"
	fi
}

# The nvme driver's probe returns before the controller is up: its reset (enable,
# identify, I/O queues) and namespace scan run in a work queue. Whoever comes next - a
# mount, nvme-cli, or a `setup.sh config` that unbinds it again, which then waits on that
# reset in the kernel - should find it live. Waits while the controller's state is new,
# resetting or connecting, at most NVME_WAIT seconds; any other state (live, dead, ...)
# ends the wait, and a controller that is not live is reported.
wait_nvme_live() {
	local bdf="$1" c st="" n=0
	while :; do
		st=""
		for c in "$SYSFS/bus/pci/devices/$bdf"/nvme/nvme*; do
			[ -e "$c/state" ] && st=$(rd "$c/state" "")
		done
		case $st in new | resetting | connecting) ;; *) break ;; esac
		if [ $n -ge $((NVME_WAIT * 10)) ]; then
			echo "  $bdf: the nvme controller is still '$st' after ${NVME_WAIT}s - see dmesg" >&2
			return 0
		fi
		sleep 0.1
		n=$((n + 1))
	done
	if [ -n "$st" ] && [ "$st" != live ]; then
		echo "  $bdf: the nvme controller is '$st', not live - see dmesg" >&2
	fi
}

selected() {
	local bdf="$1"
	if [ -n "$FUNCS" ] && ! in_list "$bdf" "$FUNCS"; then
		return 1
	fi
	if [ -n "$PCI_ALLOWED" ] && ! in_list "$bdf" "$PCI_ALLOWED"; then
		echo "  $bdf: skipped, not in PCI_ALLOWED"
		return 1
	fi
	if in_list "$bdf" "$PCI_BLOCKED"; then
		echo "  $bdf: skipped, in PCI_BLOCKED"
		return 1
	fi
	return 0
}

hugepages_set() { # number of 2 MiB pages
	local want="$1" got
	[ -d "$HP_DIR" ] || die "no 2 MiB hugepage support in this kernel ($HP_DIR missing)"
	echo "$want" >"$HP_DIR/nr_hugepages"
	got=$(rd "$HP_DIR/nr_hugepages" 0)
	if [ "$got" -lt "$want" ]; then
		echo "hugepages: asked for $want 2 MiB pages, got $got: memory is fragmented or short; free some memory, lower HUGEMEM, or reserve at boot (hugepages=$want on the kernel command line)" >&2
	fi
}

hugetlbfs_mount() {
	fake && return 0
	if ! grep -q " hugetlbfs " "$MOUNTS"; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs nodev /dev/hugepages ||
			die "cannot mount hugetlbfs at /dev/hugepages"
	fi
}

# HUGEMEM: a number of MiB, at least one 2 MiB page, below the machine's memory.
check_hugemem() {
	local total
	case $HUGEMEM in
	'' | *[!0-9]*) die "HUGEMEM must be a number of MiB, got '$HUGEMEM'" ;;
	esac
	if [ "${#HUGEMEM}" -gt 9 ]; then
		die "HUGEMEM=$HUGEMEM MiB is absurd: give the MiB of hugepage memory to reserve, e.g. HUGEMEM=2048"
	fi
	HUGEMEM=$(echo "$HUGEMEM" | sed 's/^0*//;s/^$/0/')
	if [ "$HUGEMEM" -lt 2 ]; then
		die "HUGEMEM=$HUGEMEM MiB is less than one 2 MiB hugepage"
	fi
	total=$(awk '/^MemTotal:/ { print int($2 / 1024) }' "$MEMINFO" 2>/dev/null || true)
	if [ -n "$total" ] && [ "$HUGEMEM" -ge "$total" ]; then
		die "HUGEMEM=$HUGEMEM MiB is not below this machine's memory ($total MiB): reserve less"
	fi
}

cmd_config() {
	local drv bdf cur why
	[ "$DRY_RUN" = 1 ] || need_root config
	check_hugemem
	if [ "$DRY_RUN" = 1 ]; then
		echo "would reserve $((HUGEMEM / 2)) hugepages of 2 MiB (HUGEMEM=$HUGEMEM)"
	else
		hugepages_set $((HUGEMEM / 2))
		hugetlbfs_mount
	fi
	drv=$(pick_driver)
	if [ -z "$DRIVER_OVERRIDE" ] && [ "$drv" = uio_pci_generic ]; then
		die "No IOMMU ($SYSFS/kernel/iommu_groups is empty): vfio-pci cannot isolate the device. Boot with intel_iommu=on (or amd_iommu=on) for vfio-pci, or accept a device that can DMA to all memory with DRIVER_OVERRIDE=uio_pci_generic (needs root and hugepages for physical addresses)."
	fi
	if [ "$drv" = uio_pci_generic ] || { [ "$drv" = vfio-pci ] && ! iommu_on; }; then
		echo "WARNING: $drv without an IOMMU: the NVMe device can read and write any memory of this machine; use it only on a machine you trust with that (a test VM, a dedicated box)." >&2
	fi
	run load_module "$drv"
	for bdf in $(nvme_functions); do
		selected "$bdf" || continue
		cur=$(link_base "$SYSFS/bus/pci/devices/$bdf/driver")
		if [ "$cur" = "$drv" ]; then
			echo "  $bdf: already bound to $drv"
			continue
		fi
		if [ "$cur" = nvme ] && why=$(in_use "$bdf"); then
			echo "  $bdf: left to the kernel nvme driver: $why"
			continue
		fi
		run bind "$bdf" "$drv"
		echo "  $bdf: ${cur:-no driver} -> $drv$(dry_note)"
	done
}

dry_note() { if [ "$DRY_RUN" = 1 ]; then echo " (dry run: not done)"; fi; }

cmd_reset() {
	local bdf cur
	[ "$DRY_RUN" = 1 ] || need_root reset
	case $NVME_WAIT in
	'' | *[!0-9]*) usage_error "NVME_WAIT must be a number of seconds, got '$NVME_WAIT'" ;;
	esac
	[ "${#NVME_WAIT}" -le 6 ] || usage_error "NVME_WAIT=$NVME_WAIT seconds is absurd: give the seconds to wait, e.g. 30"
	for bdf in $(nvme_functions); do
		selected "$bdf" || continue
		cur=$(link_base "$SYSFS/bus/pci/devices/$bdf/driver")
		if [ "$cur" = nvme ]; then
			echo "  $bdf: already bound to nvme"
			continue
		fi
		if ! fake && [ "$DRY_RUN" = 0 ]; then modprobe nvme 2>/dev/null || true; fi
		run bind "$bdf" ""
		echo "  $bdf: ${cur:-no driver} -> nvme$(dry_note)"
	done
	if [ "$DRY_RUN" = 1 ]; then
		echo "would release the hugepages"
	elif [ -d "$HP_DIR" ]; then
		echo 0 >"$HP_DIR/nr_hugepages"
		echo "hugepages released"
	fi
}

cmd_status() {
	local bdf d n h
	printf '%-14s %-11s %-17s %-6s %s\n' BDF vendor:dev driver iommu numa
	for bdf in $(nvme_functions); do
		d=$SYSFS/bus/pci/devices/$bdf
		printf '%-14s %-11s %-17s %-6s %s\n' "$bdf" \
			"$(rd "$d/vendor" | sed 's/^0x//'):$(rd "$d/device" | sed 's/^0x//')" \
			"$(link_base "$d/driver" -)" "$(link_base "$d/iommu_group" -)" "$(rd "$d/numa_node")"
	done
	echo
	echo "IOMMU: $(if iommu_on; then echo on; else echo "off (vfio-pci unusable; uio_pci_generic needs root + hugepages)"; fi)"
	printf '%-6s %-10s %-10s %s\n' node hugepages free size
	for n in "$SYSFS"/devices/system/node/node*; do
		[ -d "$n" ] || continue
		for h in "$n"/hugepages/hugepages-*; do
			[ -d "$h" ] || continue
			printf '%-6s %-10s %-10s %s\n' "${n##*node}" "$(rd "$h/nr_hugepages" 0)" \
				"$(rd "$h/free_hugepages" 0)" "${h##*hugepages-}"
		done
	done
}

# The version of the tree this script came with: NVP_VERSION of ./configure, the one
# place it is written (make install substitutes it into the installed copy).
version() {
	local v="@NVP_VERSION@"
	case $v in
	@*) v=$(sed -n 's/^NVP_VERSION=//p' "$(dirname "$0")/../configure" 2>/dev/null) ;;
	esac
	echo "$(basename "$0") (nvpoll) ${v:-unknown}"
}

CMD=status
case "${1:-}" in
config | status | reset)
	CMD=$1
	shift
	;;
help | -h | --help)
	usage
	exit 0
	;;
--version)
	version
	exit 0
	;;
-*) ;;
"") ;;
*) usage_error "unknown command '$1'" ;;
esac
for arg in "$@"; do
	case $arg in
	--dry-run | -n) DRY_RUN=1 ;;
	-*) usage_error "unknown option '$arg'" ;;
	*)
		is_bdf "$arg" || usage_error "'$arg' is neither an option nor a PCI address (e.g. 0000:01:00.0)"
		case $arg in ????:*) ;; *) arg=0000:$arg ;; esac
		[ "$(rd "$SYSFS/bus/pci/devices/$arg/class")" = "$NVME_CLASS" ] ||
			usage_error "$arg is not an NVMe function on this machine (see '$(basename "$0") status')"
		FUNCS="$FUNCS $arg"
		;;
	esac
done
check_bdf_list PCI_ALLOWED "$PCI_ALLOWED"
check_bdf_list PCI_BLOCKED "$PCI_BLOCKED"
case $CMD in
config) cmd_config ;;
status) cmd_status ;;
reset) cmd_reset ;;
esac
