#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# nvme_cli_compare.sh BDF SERIAL: Debian's nvme-cli (2.3) and nvp on the same QEMU
# controller must print the same JSON - the same keys in the same order, the same JSON
# types, the same values. Runs in the guest (busybox sh, jq, nvme from the host):
#   1. BDF is bound to the kernel's nvme driver: run nvme list / list -v / id-ctrl /
#      id-ns (every namespace) / smart-log / error-log / fw-log / get-feature;
#   2. setup.sh config BDF hands it to the userspace driver; nvp runs the same commands;
#   3. each JSON pair is flattened to one line per node (path, type, value) and diffed;
#      the raw (-b) structures of id-ctrl, id-ns, fw-log, error-log compared byte for byte;
#   4. setup.sh reset BDF gives it back to the kernel.
# The differences that are legitimate are named here, each with its reason (EXCEPT_*):
# anything else is a failure. Exit 0 pass, 1 fail.
# shellcheck disable=SC3043 # local: busybox ash has it
set -u

bdf=${1:?usage: nvme_cli_compare.sh BDF SERIAL}
serial=${2:?usage: nvme_cli_compare.sh BDF SERIAL}
out=/tmp/nvme_cli_compare
rm -rf "$out"
mkdir -p "$out"
fails=0

# Paths (dot-joined, array indexes as numbers) whose values may differ, and why:
# - DevicePath, NameSpace, Controller, Subsystem: names of the kernel's device nodes
#   (/dev/nvme0n1, nvme0, nvme-subsys0); nvp has no kernel device and names its own.
# The order of list entries is the order libnvme reads sysfs directories in: both sides
# are sorted by namespace id before the comparison.
EXCEPT_NAMES='^(Devices\.[0-9]+\.DevicePath)	'
# - temperature: QEMU reports its configurable composite temperature; kept as an exception
#   in case a controller model varies it between the two runs.
# - power_on_hours: counted by QEMU from its start; may tick over between the runs.
EXCEPT_SMART='^(temperature|power_on_hours)	'
# - get-feature 0x0b (Async Event Configuration): each driver enables the asynchronous
#   events it handles (Linux 6.1: 0x100, namespace attribute notices; nvpoll: 0x1ff), so
#   the current value is the driver's choice, not the controller's.
EXCEPT_FEATURES='^get-feature:0x0b '

# flatten FILE FILTER: one line per node of the JSON FILTER selects, in document order:
# "path<TAB>type<TAB>value" (value for scalars only). Key order, types and values all show.
flatten() {
	jq -r "$2"' | paths as $p | [($p | map(tostring) | join(".")), (getpath($p) | type),
		(getpath($p) | if type == "object" or type == "array" then "" else tostring end)]
		| @tsv' "$1"
}

# compare NAME NVME_FILE NVP_FILE FILTER_NVME FILTER_NVP [EXCEPT_REGEX]
compare() {
	local name="$1" a="$2" b="$3" fa="$4" fb="$5" ex="${6:-^\$}"
	if ! flatten "$a" "$fa" >"$out/$name.nvme.flat" 2>"$out/$name.err" ||
		! flatten "$b" "$fb" >"$out/$name.nvp.flat" 2>>"$out/$name.err"; then
		echo "FAIL $name: output is not the JSON expected: $(cat "$out/$name.err")"
		fails=$((fails + 1))
		return
	fi
	if [ ! -s "$out/$name.nvme.flat" ]; then
		echo "FAIL $name: nvme-cli printed nothing to compare"
		fails=$((fails + 1))
		return
	fi
	# The exceptions keep their path and type: only the value is dropped.
	for s in nvme nvp; do
		awk -F'\t' -v OFS='\t' -v re="$ex" '($1 "\t") ~ re { $3 = "(value not compared)" } 1' \
			"$out/$name.$s.flat" >"$out/$name.$s.cmp"
	done
	if diff "$out/$name.nvme.cmp" "$out/$name.nvp.cmp" >"$out/$name.diff"; then
		echo "ok   $name: $(wc -l <"$out/$name.nvme.cmp") JSON nodes equal (key, order, type, value)"
	else
		echo "FAIL $name: nvme-cli (<) and nvp (>) differ:"
		sed 's/^/       /' "$out/$name.diff" | head -40
		fails=$((fails + 1))
	fi
}

ctrl=$(cd "/sys/bus/pci/devices/$bdf/nvme" 2>/dev/null && for c in nvme*; do echo "$c"; done | head -1)
[ -e "/sys/bus/pci/devices/$bdf/nvme/$ctrl" ] || { echo "FAIL $bdf is not bound to the kernel's nvme driver"; exit 1; }
nsids=$(for n in "/sys/bus/pci/devices/$bdf/nvme/$ctrl/$ctrl"n*; do cat "$n/nsid"; done | sort -n)
echo "$bdf is /dev/$ctrl, namespaces: $(echo "$nsids" | tr '\n' ' ')"

# 1. nvme-cli, through the kernel driver
nvme version
nvme list -o json >"$out/list.nvme"
nvme list -v -o json >"$out/listv.nvme"
nvme id-ctrl "/dev/$ctrl" -o json >"$out/id-ctrl.nvme"
for n in $nsids; do nvme id-ns "/dev/$ctrl" -n "$n" -o json >"$out/id-ns$n.nvme"; done
nvme smart-log "/dev/$ctrl" -o json >"$out/smart-log.nvme"
nvme error-log "/dev/$ctrl" -o json >"$out/error-log.nvme"
nvme fw-log "/dev/$ctrl" -o json >"$out/fw-log.nvme"
# raw structures (-b): byte for byte; not smart-log (its temperature and hours may move)
nvme id-ctrl "/dev/$ctrl" -b >"$out/id-ctrl.bin.nvme"
for n in $nsids; do nvme id-ns "/dev/$ctrl" -n "$n" -b >"$out/id-ns$n.bin.nvme"; done
nvme fw-log "/dev/$ctrl" -b >"$out/fw-log.bin.nvme"
nvme error-log "/dev/$ctrl" -b >"$out/error-log.bin.nvme"
# get-feature: nvme-cli 2.3 without -f stops at the first feature a controller refuses
# (it compares the status with its DNR bit set to Invalid Field), so ask it feature by
# feature - the ids NVMe 2.0 defines (0x01-0x1f, 0x78-0x84; one nvme run each costs ~0.4 s
# under TCG) - and nvp's walk of 1..255 without -f must print the same lines, no more.
for fid in $(seq 1 31) $(seq 120 132); do
	nvme get-feature "/dev/$ctrl" -f "$fid" 2>/dev/null | grep '^get-feature:'
done >"$out/gf.nvme"

# 2. nvp, through nvpoll
# Without an IOMMU (pc) setup.sh binds uio_pci_generic only when asked to.
[ "${NVP_UDRV:-}" = uio_pci_generic ] && export DRIVER_OVERRIDE=uio_pci_generic
HUGEMEM=${HUGEMEM:-128} setup.sh config "$bdf" || { echo "FAIL setup.sh config $bdf"; exit 1; }
nvp list -o json >"$out/list.nvp" 2>"$out/list.nvp.err"
nvp list -v -o json >"$out/listv.nvp" 2>/dev/null
nvp id-ctrl "$bdf" -o json >"$out/id-ctrl.nvp"
for n in $nsids; do nvp id-ns "$bdf" -n "$n" -o json >"$out/id-ns$n.nvp"; done
nvp smart-log "$bdf" -o json >"$out/smart-log.nvp"
nvp error-log "$bdf" -o json >"$out/error-log.nvp"
nvp fw-log "$bdf" -o json >"$out/fw-log.nvp"
nvp id-ctrl "$bdf" -b >"$out/id-ctrl.bin.nvp"
for n in $nsids; do nvp id-ns "$bdf" -n "$n" -b >"$out/id-ns$n.bin.nvp"; done
nvp fw-log "$bdf" -b >"$out/fw-log.bin.nvp"
nvp error-log "$bdf" -b >"$out/error-log.bin.nvp"
nvp get-feature "$bdf" >"$out/get-feature.nvp" 2>"$out/get-feature.nvp.err"
setup.sh reset "$bdf" >/dev/null || echo "warning: setup.sh reset $bdf failed"

# 3. compare
sel="select(.SerialNumber == \"$serial\")"
f="{Devices: ([.Devices[] | $sel] | sort_by(.NameSpace))}"
compare list "$out/list.nvme" "$out/list.nvp" "$f" "$f" "$EXCEPT_NAMES"
f="[.Devices[].Subsystems[].Controllers[] | $sel | .Namespaces |= sort_by(.NSID)]"
compare list-v.controller "$out/listv.nvme" "$out/listv.nvp" "$f" "$f" \
	'^(0\.Controller|0\.Namespaces\.[0-9]+\.NameSpace)	'
f="[.Devices[].Subsystems[] | select(any(.Controllers[]; .SerialNumber == \"$serial\"))"
f="$f | del(.Controllers) | .Namespaces |= sort_by(.NSID)]"
compare list-v.subsystem "$out/listv.nvme" "$out/listv.nvp" "$f" "$f" \
	'^0\.(Subsystem|Namespaces\.[0-9]+\.NameSpace)	'
compare id-ctrl "$out/id-ctrl.nvme" "$out/id-ctrl.nvp" . .
for n in $nsids; do compare "id-ns$n" "$out/id-ns$n.nvme" "$out/id-ns$n.nvp" . .; done
compare smart-log "$out/smart-log.nvme" "$out/smart-log.nvp" . . "$EXCEPT_SMART"
compare error-log "$out/error-log.nvme" "$out/error-log.nvp" . .
# fw-log: { "<device name>": {...} }; the device name differs (nvme0 / the PCI address)
compare fw-log "$out/fw-log.nvme" "$out/fw-log.nvp" '[.[]][0]' '[.[]][0]'

for f in id-ctrl $(for n in $nsids; do echo "id-ns$n"; done) fw-log error-log; do
	a=$out/$f.bin.nvme
	b=$out/$f.bin.nvp
	if [ -s "$a" ] && cmp "$a" "$b" >/dev/null 2>&1; then
		echo "ok   $f -b: $(wc -c <"$a") bytes equal"
	else
		echo "FAIL $f -b: nvme-cli $(wc -c <"$a") bytes, nvp $(wc -c <"$b") bytes: $(cmp "$a" "$b" 2>&1)"
		fails=$((fails + 1))
	fi
done

# get-feature: nvme-cli's text, one line per supported feature. nvme-cli also hex-dumps
# the data structure of some features (timestamp): nvp does not, so only the
# get-feature: lines are compared.
grep '^get-feature:' "$out/get-feature.nvp" >"$out/gf.nvp"
for s in nvme nvp; do
	sed -E "/$EXCEPT_FEATURES/s/value:.*/value:(not compared)/" "$out/gf.$s" >"$out/gf.$s.cmp"
done
if [ -s "$out/gf.nvme" ] && diff "$out/gf.nvme.cmp" "$out/gf.nvp.cmp" >"$out/gf.diff"; then
	echo "ok   get-feature: $(wc -l <"$out/gf.nvme") features, the same lines"
else
	echo "FAIL get-feature: nvme-cli (<) and nvp (>) differ:"
	sed 's/^/       /' "$out/gf.diff" | head -40
	echo "     nvp printed on stderr:"
	sed 's/^/       /' "$out/get-feature.nvp.err" | head -20
	fails=$((fails + 1))
fi

# nvp list names the functions it did not take: the other controller is on the kernel
# driver, so it is in Skipped and on stderr.
for other in $NVP_BDFS; do
	[ "$other" = "$bdf" ] && continue
	if grep -q "^$other: bound to nvme (kernel driver)" "$out/list.nvp.err" &&
		jq -e ".Skipped[] | select(.Address == \"$other\")" "$out/list.nvp" >/dev/null; then
		echo "ok   nvp list names $other (bound to nvme) on stderr and in Skipped"
	else
		echo "FAIL nvp list does not say why it skipped $other: stderr '$(cat "$out/list.nvp.err")'"
		fails=$((fails + 1))
	fi
done

if [ $fails -ne 0 ]; then
	echo "$fails comparison(s) failed; the outputs are in $out"
	for f in "$out"/*.nvme "$out"/*.nvp; do echo "--- $f"; head -c 3000 "$f"; done
	exit 1
fi
echo "nvme-cli and nvp agree on $bdf"
