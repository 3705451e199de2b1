#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Usage: test/common/fake_sysfs.sh DIR
# Build a fake sysfs tree under DIR for tests of real-PCI code without devices (point
# NVP_SYSFS_ROOT at it). NVMe functions (class 0x010802, QEMU's 1b36:0010):
#   0000:01:00.0  bound to nvme (kernel), IOMMU group 1, node 0, namespace nvme0n1 in use
#                 (a holder: dm-0)
#   0000:02:00.0  vfio-pci, group 2 (alone: viable), node 0
#   0000:03:00.0  uio_pci_generic, group 3, node 1; resource0 16 KiB (CAP.DSTRD 0), config
#   0000:04:00.0  uio_pci_generic, group 4; resource0 only 4 KiB (too small)
#   0000:05:00.0  vfio-pci, group 5 shared with 0000:05:00.1 (a NIC bound to e1000e)
#   0000:06:00.0  no driver, group 6, node -1
# plus 0000:00:02.0 (VGA, class 0x030000), which enumeration must ignore, and 2 MiB
# hugepages: 512 total, 100 free on node 0, 0 on node 1.
set -eu

root=${1:?usage: fake_sysfs.sh DIR}
mkdir -p "$root"
devs=$root/bus/pci/devices

fn() { # bdf class vendor device driver group numa
	local d=$devs/$1
	mkdir -p "$d"
	echo "$2" >"$d/class"
	echo "$3" >"$d/vendor"
	echo "$4" >"$d/device"
	echo 0x1af4 >"$d/subsystem_vendor"
	echo 0x1100 >"$d/subsystem_device"
	echo "$7" >"$d/numa_node"
	if [ -n "$5" ]; then
		mkdir -p "$root/bus/pci/drivers/$5"
		ln -sfn "../../drivers/$5" "$d/driver"
	fi
	if [ -n "$6" ]; then
		mkdir -p "$root/kernel/iommu_groups/$6/devices"
		ln -sfn "../../../kernel/iommu_groups/$6" "$d/iommu_group"
		ln -sfn "../../../../bus/pci/devices/$1" "$root/kernel/iommu_groups/$6/devices/$1"
	fi
	# Configuration space: vendor and device id, command register 0, class code.
	head -c 256 /dev/zero >"$d/config"
}

# A BAR0 file of $2 bytes whose CAP (offset 0) has MQES 2047 and DSTRD 0.
bar() {
	printf '\377\007\001\017\040\000\000\000' >"$devs/$1/resource0"
	truncate -s "$2" "$devs/$1/resource0"
}

fn 0000:01:00.0 0x010802 0x1b36 0x0010 nvme 1 0
fn 0000:02:00.0 0x010802 0x1b36 0x0010 vfio-pci 2 0
fn 0000:03:00.0 0x010802 0x1b36 0x0010 uio_pci_generic 3 1
fn 0000:04:00.0 0x010802 0x1b36 0x0010 uio_pci_generic 4 0
fn 0000:05:00.0 0x010802 0x1b36 0x0010 vfio-pci 5 0
fn 0000:05:00.1 0x020000 0x8086 0x10d3 e1000e 5 0
fn 0000:06:00.0 0x010802 0x1b36 0x0010 "" 6 -1
fn 0000:00:02.0 0x030000 0x1234 0x1111 "" "" -1
bar 0000:03:00.0 16384
bar 0000:04:00.0 4096
bar 0000:02:00.0 16384

# The kernel's namespace of 0000:01:00.0, held by a device-mapper device.
mkdir -p "$root/block/nvme0n1/holders/dm-0" "$devs/0000:01:00.0/nvme/nvme0"
ln -sfn "../../bus/pci/devices/0000:01:00.0/nvme/nvme0" "$root/block/nvme0n1/device"

hp=$root/kernel/mm/hugepages/hugepages-2048kB
mkdir -p "$hp"
echo 512 >"$hp/nr_hugepages"
echo 100 >"$hp/free_hugepages"
for n in 0 1; do
	h=$root/devices/system/node/node$n/hugepages/hugepages-2048kB
	mkdir -p "$h"
	if [ $n = 0 ]; then echo 512 >"$h/nr_hugepages"; else echo 0 >"$h/nr_hugepages"; fi
	if [ $n = 0 ]; then echo 100 >"$h/free_hugepages"; else echo 0 >"$h/free_hugepages"; fi
done
