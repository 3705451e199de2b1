#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# scripts/setup.sh (status, config, reset, refusals) and build/bin/nvp_doctor against the
# fake sysfs tree of test/common/fake_sysfs.sh. Exit 0 pass, 1 fail, 77 skip.
set -u

rootdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
doctor=$rootdir/build/bin/nvp_doctor
tmp=$(mktemp -d /tmp/nvp_setup_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

check() { # check NAME COMMAND-OUTPUT PATTERN...
	local name=$1 out=$2 pat
	shift 2
	for pat in "$@"; do
		if ! grep -qE -- "$pat" <<<"$out"; then
			echo "FAIL $name: no line matching '$pat' in:"
			printf '    %s\n' "$out"
			fails=$((fails + 1))
			return
		fi
	done
	echo "ok   $name"
}

fresh() {
	rm -rf "$tmp/sys"
	bash "$rootdir/test/common/fake_sysfs.sh" "$tmp/sys"
}

export NVP_SYSFS_ROOT=$tmp/sys NVP_PROC_MOUNTS=$tmp/mounts
: >"$tmp/mounts"
setup=$rootdir/scripts/setup.sh

fresh
out=$("$setup" status 2>&1)
check "status table" "$out" \
	'^BDF +vendor:dev +driver +iommu +numa' \
	'^0000:01:00.0 +1b36:0010 +nvme +1 +0$' \
	'^0000:03:00.0 +1b36:0010 +uio_pci_generic +3 +1$' \
	'^0000:06:00.0 +1b36:0010 +- +6 +-1$' \
	'^IOMMU: on' '^0 +512 +100 +2048kB' '^1 +0 +0 +2048kB'
if grep -q 0000:00:02.0 <<<"$out"; then
	echo "FAIL status lists the VGA function"
	fails=$((fails + 1))
fi

out=$(HUGEMEM=1024 PCI_BLOCKED=0000:02:00.0 "$setup" config 2>&1)
check "config binds free functions to vfio-pci, leaves the held one" "$out" \
	'0000:01:00.0: left to the kernel nvme driver: nvme0n1 is held by dm-0' \
	'0000:02:00.0: skipped, in PCI_BLOCKED' '0000:03:00.0: uio_pci_generic -> vfio-pci' \
	'0000:06:00.0: no driver -> vfio-pci'
check "config reserved HUGEMEM" "$(cat "$tmp/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")" '^512$'

fresh
rm -r "$tmp/sys/block/nvme0n1/holders/dm-0"
echo "/dev/nvme0n1p1 /mnt ext4 rw 0 0" >"$tmp/mounts"
mkdir -p "$tmp/sys/block/nvme0n1/nvme0n1p1/holders"
out=$("$setup" config 2>&1)
check "config leaves a mounted namespace alone" "$out" '/dev/nvme0n1p1 is mounted: unmount it first'
: >"$tmp/mounts"
out=$(DRIVER_OVERRIDE=uio_pci_generic PCI_ALLOWED="01:00.0" "$setup" config 2>&1)
check "DRIVER_OVERRIDE and PCI_ALLOWED" "$out" '0000:01:00.0: nvme -> uio_pci_generic' \
	'0000:02:00.0: skipped, not in PCI_ALLOWED'
out=$("$setup" reset 2>&1)
check "reset" "$out" '0000:01:00.0: uio_pci_generic -> nvme' '0000:06:00.0: vfio-pci -> nvme' \
	'hugepages released'

check "uio_pci_generic asked for: warned about DMA" "$(DRIVER_OVERRIDE=uio_pci_generic \
	PCI_ALLOWED="01:00.0" "$setup" config 2>&1)" 'WARNING: uio_pci_generic without an IOMMU'
"$setup" reset >/dev/null 2>&1

rm -rf "$tmp/sys/kernel/iommu_groups"
out=$(PCI_ALLOWED=06:00.0 "$setup" config 2>&1)
rc=$?
check "no IOMMU: refused unless asked, and why" "$out" 'No IOMMU' 'DRIVER_OVERRIDE=uio_pci_generic'
check "no IOMMU: exit 1" "$rc" '^1$'
if echo "$out" | grep -q -- '-> uio_pci_generic'; then
	echo "FAIL no IOMMU: something was bound without being asked: $out"
	fails=$((fails + 1))
fi
out=$(DRIVER_OVERRIDE=uio_pci_generic PCI_ALLOWED=06:00.0 "$setup" config 2>&1)
check "no IOMMU, uio asked for: bound, with the warning" "$out" \
	'0000:06:00.0: nvme -> uio_pci_generic' 'WARNING: uio_pci_generic without an IOMMU'

out=$(HUGEMEM=lots "$setup" config 2>&1)
check "bad HUGEMEM refused" "$out" "HUGEMEM must be a number of MiB, got 'lots'"
"$setup" nonsense >/dev/null 2>&1
check "unknown command exits 2" "$?" '^2$'

# reset waits for the kernel's controller to come up: the driver's reset work runs after
# the bind returns, and whoever unbinds or uses the function next must not race it.
fresh
"$setup" config 02:00.0 >/dev/null 2>&1
mkdir -p "$tmp/sys/bus/pci/devices/0000:02:00.0/nvme/nvme1"
echo resetting >"$tmp/sys/bus/pci/devices/0000:02:00.0/nvme/nvme1/state"
(sleep 0.5 && echo live >"$tmp/sys/bus/pci/devices/0000:02:00.0/nvme/nvme1/state") &
start=$(date +%s%N)
out=$(NVME_WAIT=20 "$setup" reset 02:00.0 2>&1)
rc=$?
waited=$((($(date +%s%N) - start) / 1000000))
wait
check "reset of a resetting controller: done, no warning" "$rc:$out" '^0:  0000:02:00.0: vfio-pci -> nvme$'
if [ "$waited" -lt 400 ] || grep -q 'see dmesg' <<<"$out"; then
	echo "FAIL reset returned after ${waited} ms, before the controller was live: $out"
	fails=$((fails + 1))
else
	echo "ok   reset waited for the controller to be live (${waited} ms)"
fi
"$setup" config 02:00.0 >/dev/null 2>&1
echo connecting >"$tmp/sys/bus/pci/devices/0000:02:00.0/nvme/nvme1/state"
out=$(NVME_WAIT=1 "$setup" reset 02:00.0 2>&1)
check "reset: a controller that stays down is reported, the wait is bounded" "$?:$out" \
	"^0:  0000:02:00.0: the nvme controller is still 'connecting' after 1s - see dmesg"
"$setup" config 02:00.0 >/dev/null 2>&1
echo dead >"$tmp/sys/bus/pci/devices/0000:02:00.0/nvme/nvme1/state"
out=$("$setup" reset 02:00.0 2>&1)
check "reset: a dead controller is reported at once" "$out" "0000:02:00.0: the nvme controller is 'dead', not live"
out=$(NVME_WAIT=soon "$setup" reset 2>&1)
check "bad NVME_WAIT exits 2" "$?:$out" "^2:setup.sh: NVME_WAIT must be a number of seconds, got 'soon'"

# Arguments: nothing is silently ignored.
fresh
out=$("$setup" config --frobnicate 2>&1)
check "unknown option exits 2" "$?:$out" "^2:setup.sh: unknown option '--frobnicate'"
out=$("$setup" config 0000:09:00.0 2>&1)
check "a function that is not NVMe exits 2" "$?:$out" '^2:.*0000:09:00.0 is not an NVMe function'
out=$("$setup" config nvme0 2>&1)
check "a word that is no PCI address exits 2" "$?:$out" "^2:.*'nvme0' is neither an option nor a PCI address"
out=$(PCI_ALLOWED="0000:03:00.0 nvme0" "$setup" config 2>&1)
check "PCI_ALLOWED entries are validated" "$?:$out" "^2:setup.sh: PCI_ALLOWED: 'nvme0' is not a PCI address"
out=$(PCI_BLOCKED="03:00" "$setup" config 2>&1)
check "PCI_BLOCKED entries are validated" "$?:$out" "^2:setup.sh: PCI_BLOCKED: '03:00' is not a PCI address"
for bad in 0 1 99999999999 12abc; do
	out=$(HUGEMEM=$bad "$setup" config 2>&1)
	check "HUGEMEM=$bad refused" "$?:$out" '^1:setup.sh: HUGEMEM'
done
echo "MemTotal:        4096000 kB" >"$tmp/meminfo"
out=$(NVP_PROC_MEMINFO=$tmp/meminfo HUGEMEM=8192 "$setup" config 2>&1)
check "HUGEMEM above the machine's memory refused" "$?:$out" "^1:.*not below this machine's memory \(4000 MiB\)"

# --dry-run: says what it would do, changes nothing.
fresh
before=$(cd "$tmp/sys" && find . -type l -printf '%p %l\n' | sort; cat kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
out=$(HUGEMEM=64 "$setup" config --dry-run 2>&1)
check "config --dry-run prints the plan" "$out" 'would reserve 32 hugepages' 	'0000:03:00.0: uio_pci_generic -> vfio-pci \(dry run: not done\)' 	'0000:01:00.0: left to the kernel nvme driver: nvme0n1 is held by dm-0'
out=$("$setup" reset -n 2>&1)
check "reset -n prints the plan" "$out" '0000:02:00.0: vfio-pci -> nvme \(dry run' 'would release'
after=$(cd "$tmp/sys" && find . -type l -printf '%p %l\n' | sort; cat kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
if [ "$before" = "$after" ]; then echo "ok   --dry-run changed nothing"; else
	echo "FAIL --dry-run changed the tree"
	fails=$((fails + 1))
fi

# Functions named on the command line: only those.
out=$("$setup" config 06:00.0 2>&1)
check "config BDF binds only that function" "$out" '0000:06:00.0: no driver -> vfio-pci'
if grep -q '0000:03:00.0' <<<"$out"; then
	echo "FAIL config 06:00.0 touched 0000:03:00.0"
	fails=$((fails + 1))
fi

# A namespace used as swap is never unbound.
fresh
rm -r "$tmp/sys/block/nvme0n1/holders/dm-0"
printf 'Filename\tType\tSize\tUsed\tPriority\n/dev/nvme0n1 partition 1024 0 -2\n' >"$tmp/swaps"
out=$(NVP_PROC_SWAPS=$tmp/swaps "$setup" config 2>&1)
check "config leaves a swap namespace alone" "$out" \
	'0000:01:00.0: left to the kernel nvme driver: /dev/nvme0n1 is in use as swap'
check "version" "$("$setup" --version)" '^setup.sh \(nvpoll\) [0-9]+\.[0-9]+'
check "help" "$("$setup" help)" '^Usage: setup.sh' 'PCI_BLOCKED'

# ---- nvp_doctor ----
if [ ! -x "$doctor" ]; then
	echo "FAIL $doctor not built"
	exit 1
fi
fresh
out=$("$doctor" --queues 2 --depth 256 2>&1)
rc=$?
check "doctor: per-function verdicts" "$out" \
	'hugepages: 200 MiB free of 1024 MiB reserved' 'need about [0-9]+ MiB for 2 queue\(s\) x depth 256' \
	'IOMMU: on' 'RLIMIT_MEMLOCK' \
	'0000:01:00.0 .*skipped: bound to nvme \(kernel driver\) and in use: nvme0n1 is held by dm-0' \
	'0000:02:00.0 .*driver vfio-pci .*usable' \
	'0000:04:00.0 .*skipped: BAR0 is 4096 bytes' \
	'0000:05:00.0 .*skipped: IOMMU group 5 is not viable: 0000:05:00.1 .* bound to e1000e' \
	'0000:06:00.0 .*skipped: 0000:06:00.0 is not bound to any driver: run scripts/setup.sh' \
	'^Summary: [0-9] usable, [0-9] skipped'
check "doctor exit 0 with a usable function" "$rc" '^0$'
out=$("$doctor" --depth 65536 --queues 64 --io-size 131072 2>&1)
check "doctor: hugepages short" "$out" '\[FAIL\] hugepages' 'HUGEMEM=[0-9]+ scripts/setup.sh config'
# --io-size takes the k/M suffixes nvp_perf -o takes: 128k is 131072
out2=$("$doctor" --depth 65536 --queues 64 --io-size 128k 2>&1)
check "doctor: --io-size 128k = 131072" "$(echo "$out2" | grep -c '\[FAIL\] hugepages')" '^1$'
[ "$(echo "$out" | grep hugepages)" = "$(echo "$out2" | grep hugepages)" ]
check "doctor: --io-size 128k gives the same verdict as 131072" "$?" '^0$'
"$doctor" --io-size 128q >/dev/null 2>&1
check "doctor: bad --io-size exits 2" "$?" '^2$'
"$doctor" --queues 0 >/dev/null 2>&1
check "doctor: bad flag exits 2" "$?" '^2$'
"$doctor" --bogus >/dev/null 2>&1
check "doctor: unknown flag exits 2" "$?" '^2$'
rm -rf "$tmp/sys/bus/pci/devices/"0000:0[2-6]*
out=$("$doctor" 2>&1)
rc=$?
check "doctor: nothing usable" "$out" '^Summary: 0 usable, 1 skipped - nothing for nvpoll'
check "doctor exit 1 with nothing usable" "$rc" '^1$'

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all checks passed"
