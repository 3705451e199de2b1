#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# /init of the QEMU judge's initramfs (busybox sh). Mounts the pseudo file systems, loads
# the modules, shows the PCI functions, runs /nvp/qemu/tests.list and reports on the serial
# console, one line per test, for test/qemu/run.sh on the host:
#   NVPTEST <machine>/<name> PASS|PART|FAIL|SKIP <seconds> [reason]
#   NVPDONE <machine> pass=N part=N fail=N skip=N
# PART: the test passed what it ran but skipped parts of itself (it printed SKIP lines,
# e.g. "SKIP (needs the software controller): ..."); counted apart from PASS so that a
# pass means every part of the test ran against the real controller.
# then powers off. A test's own output is shown indented by "    | ".

export PATH=/nvp/build/examples:/nvp/build/bin:/nvp/build/test/functional:/nvp/scripts:/bin:/sbin
export HOME=/root

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/hugepages /tmp /run /var /root
mount -t tmpfs tmpfs /tmp
mount -t hugetlbfs hugetlbfs /dev/hugepages
ln -sf /run /var/run
ln -sf /proc/self/fd /dev/fd 2>/dev/null
# Loopback: the NVMe/TCP tests (func.nvme_tcp's in-process target, nvmet-tcp on q35)
# talk over 127.0.0.1, which is unreachable until lo is up.
ifconfig lo 127.0.0.1 up 2>/dev/null || ip link set lo up 2>/dev/null

NVP_MACHINE=pc
for arg in $(cat /proc/cmdline); do
	case $arg in nvp.machine=*) NVP_MACHINE=${arg#nvp.machine=} ;; esac
done
export NVP_MACHINE
. /nvp/qemu/lib.sh

# Per-test time limit in seconds (kernel command line nvp.timeout=).
NVP_TEST_TIMEOUT=240
for arg in $(cat /proc/cmdline); do
	case $arg in nvp.timeout=*) NVP_TEST_TIMEOUT=${arg#nvp.timeout=} ;; esac
done
NVP_ONLY=
for arg in $(cat /proc/cmdline); do
	case $arg in nvp.only=*) NVP_ONLY=${arg#nvp.only=} ;; esac
done

echo "NVPBOOT $NVP_MACHINE kernel $(uname -r) at $(nvp_now)s, $(grep -c ^processor /proc/cpuinfo) CPUs," \
	"$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB"

pass=0 part=0 fail=0 skip=0
# report NAME STATUS SECONDS [REASON]
report() {
	echo "NVPTEST $NVP_MACHINE/$1 $2 $3${4:+ $4}"
	case $2 in
	PASS) pass=$((pass + 1)) ;;
	PART) part=$((part + 1)) ;;
	FAIL) fail=$((fail + 1)) ;;
	*) skip=$((skip + 1)) ;;
	esac
}

# Modules: uio/vfio/nvme and their dependencies are in the initramfs; vfio-pci needs an
# IOMMU, so it is loaded on q35 only (the test that binds loads what it needs, too).
t0=$(nvp_now)
mods="uio uio_pci_generic vfio vfio_iommu_type1 nvme"
[ "$NVP_MACHINE" = q35 ] && mods="$mods vfio-pci"
modfail=
for m in $mods; do modprobe "$m" || modfail="$modfail $m"; done
if [ -n "$modfail" ]; then
	report modules FAIL "$(awk -v a="$t0" -v b="$(nvp_now)" 'BEGIN {printf "%.2f", b - a}')" "modprobe failed:$modfail"
else
	report modules PASS "$(awk -v a="$t0" -v b="$(nvp_now)" 'BEGIN {printf "%.2f", b - a}')"
fi

# lspci-like listing from sysfs.
for d in /sys/bus/pci/devices/*; do
	grp=-
	[ -L "$d/iommu_group" ] && grp=$(basename "$(readlink "$d/iommu_group")")
	echo "NVPPCI $(basename "$d") class $(cat "$d/class") $(cat "$d/vendor"):$(cat "$d/device")" \
		"driver $(nvp_driver_of "$(basename "$d")") iommu_group $grp"
done

# has_feature NAME: see NEEDS in tests.list.
has_feature() {
	case $1 in
	pcie) [ -e /nvp/qemu/feature.pcie ] ;;
	bin:*) command -v "${1#bin:}" >/dev/null 2>&1 ;;
	uio) [ "$NVP_UDRV" = uio_pci_generic ] ;;
	vfio) [ "$NVP_UDRV" = vfio-pci ] ;;
	canary) grep -qw nvp.canary /proc/cmdline ;;
	host) grep -qw nvp.host=1 /proc/cmdline ;;
	*) return 1 ;;
	esac
}

run_test() {
	local name=$1 needs=$2 cmd=$3 f start rc secs nskip wd
	for f in $(echo "$needs" | tr ',' ' '); do
		[ "$f" = - ] && continue
		has_feature "$f" || { report "$name" SKIP 0.00 "needs $f"; return; }
	done
	echo "NVPRUN $NVP_MACHINE/$name: $cmd"
	start=$(nvp_now)
	# A test stuck in the kernel (uninterruptible sleep: a driver unbind waiting on a
	# reset, say) outlives timeout's SIGKILL, and the boot's limit ends it without a
	# word. The watchdog then puts the blocked tasks' stacks on the console for the judge.
	(
		sleep $((NVP_TEST_TIMEOUT + 20))
		echo "NVPHUNG $NVP_MACHINE/$name: still running $((NVP_TEST_TIMEOUT + 20))s after its start; blocked tasks:"
		echo w >/proc/sysrq-trigger
		dmesg | tail -n 60 | sed 's/^/    ! /'
	) &
	wd=$!
	(
		cd /nvp && timeout -s KILL "$NVP_TEST_TIMEOUT" sh -c ". /nvp/qemu/lib.sh; $cmd" </dev/null 2>&1
		echo $? >/tmp/nvp_rc
	) | tee /tmp/nvp_out | sed 's/^/    | /'
	kill "$wd" 2>/dev/null
	rc=$(cat /tmp/nvp_rc)
	# Parts a test skipped itself: "SKIP (reason)" / "SKIP: reason" at a line's start or
	# after CUnit's "Test: name ..." prefix.
	nskip=$(grep -cE '(^|[ .])SKIP[ :(]' /tmp/nvp_out || true)
	secs=$(awk -v a="$start" -v b="$(nvp_now)" 'BEGIN {printf "%.2f", b - a}')
	case $rc in
	0)
		if [ "${nskip:-0}" -gt 0 ]; then
			report "$name" PART "$secs" "$nskip part(s) skipped: $(grep -oE 'SKIP[ :(].*' /tmp/nvp_out |
				head -3 | tr '\n' ';' | cut -c1-160)"
		else
			report "$name" PASS "$secs"
		fi
		;;
	77) report "$name" SKIP "$secs" "the test skipped itself (exit 77)" ;;
	137) report "$name" FAIL "$secs" "killed after ${NVP_TEST_TIMEOUT}s (timeout)" ;;
	*) report "$name" FAIL "$secs" "exit status $rc" ;;
	esac
}

while read -r name machines needs cmd; do
	case $name in '' | '#'*) continue ;; esac
	case ",$machines," in *",all,"* | *",$NVP_MACHINE,"*) ;; *) continue ;; esac
	# nvp.only=NAME (run.sh's canary boot) runs one test; canary tests run only there.
	[ -n "$NVP_ONLY" ] && [ "$name" != "$NVP_ONLY" ] && continue
	case ",$needs," in *,canary,*) has_feature canary || continue ;; esac
	run_test "$name" "$needs" "$cmd"
done </nvp/qemu/tests.run

# DMA faults the console may not have shown (loglevel): the host judges these lines too.
dmesg | grep -E 'DMAR: \[DMA|DMAR: DRHD: handling fault|IO_PAGE_FAULT|AMD-Vi: Event|fault addr' |
	sed 's/^/NVPDMESG /'

echo "NVPDONE $NVP_MACHINE pass=$pass part=$part fail=$fail skip=$skip at $(nvp_now)s"
sync
poweroff -f
