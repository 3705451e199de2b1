#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# nvme_cli_io.sh BDF SERIAL MDBDF MDSERIAL: the same I/O, log and passthru operations done
# with Debian's nvme-cli (2.3, through the kernel's nvme driver) and with nvp (through
# nvpoll, the functions bound to uio_pci_generic / vfio-pci) on QEMU's controllers must
# give the same bytes and the same output. Runs in the guest (busybox sh, nvme from the
# host). BDF/SERIAL: a controller with namespace 1 of 512-byte and namespace 2 of 4 KiB
# blocks (NVPQEMU0); MDBDF/MDSERIAL: one whose namespace 2 has 8 bytes of separate
# metadata a block (NVPQEMU3).
#   1. kernel: nvme writes a pattern, zeroes and deallocates blocks, reads them back;
#      get-log, admin-passthru and io-passthru dumps, a dry run, compare, errors;
#   2. nvpoll: nvp reads what nvme wrote and does the same operations on blocks of its
#      own, in chains (one attach per chain: each costs ~1 s under TCG); every file, every
#      message and every dump must equal nvme's (the device names and buffer addresses
#      aside), every refusal carry the same status code;
#   3. kernel again: nvme reads the blocks nvp wrote: they hold what nvp read back.
# Regions of namespace 1 (512-byte blocks): 1000.. nvme's writes, 2000.. nvp's.
# Exit 0 pass, 1 fail.
# shellcheck disable=SC3043 # local: busybox ash has it
set -u

bdf=${1:?usage: nvme_cli_io.sh BDF SERIAL MDBDF MDSERIAL}
serial=${2:?}
mdbdf=${3:?}
mdserial=${4:?}
out=/tmp/nvme_cli_io
rm -rf "$out"
mkdir -p "$out"
fails=0

now() {
	cut -d' ' -f1 /proc/uptime
}
t0=$(now)

fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

# same NAME FILE_NVME FILE_NVP: byte for byte
same() {
	if [ -s "$2" ] && cmp "$2" "$3" >/dev/null 2>&1; then
		echo "ok   $1: $(wc -c <"$2") bytes equal"
	else
		fail "$1: nvme-cli $(wc -c <"$2" 2>/dev/null) bytes, nvp $(wc -c <"$3" 2>/dev/null) bytes: $(cmp "$2" "$3" 2>&1 | head -1)"
		diff "$2" "$3" 2>/dev/null | head -10 | sed 's/^/       /'
	fi
}

# status FILE: the NVMe status code in a message, without DNR and More (nvme-cli prints
# "...(0x4080)", nvp "... (0x80)")
status() {
	local v
	v=$(sed -n 's/.*NVMe status: .*(\(0x[0-9a-f]*\)).*/\1/p' "$1" | tail -1)
	[ -n "$v" ] && printf '%#x' $((v & 0x7ff))
}

# same_status NAME RC_NVME RC_NVP ERRFILE_NVME ERRFILE_NVP
same_status() {
	local a b
	a=$(status "$4") b=$(status "$5")
	if [ "$2" -ne 0 ] && [ "$3" -ne 0 ] && [ -n "$a" ] && [ "$a" = "$b" ]; then
		echo "ok   $1: both refused, NVMe status $a"
	else
		fail "$1: nvme-cli exit $2 status '$a' ($(cat "$4")), nvp exit $3 status '$b' ($(cat "$5"))"
	fi
}

# blk SERIAL NSID: the kernel's block device, waiting for it after a rebind
blk() {
	local c n i=0
	while [ $i -lt 100 ]; do
		for c in /sys/class/nvme/nvme*; do
			[ "$(tr -d ' ' <"$c/serial" 2>/dev/null)" = "$1" ] || continue
			for n in "$c"/nvme*n"$2"; do
				[ -e "$n" ] && { basename "$n"; return 0; }
			done
		done
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# 8 KiB of pattern, every line numbered (a block read from the wrong place shows), the
# same file for both drivers
awk 'BEGIN { for (i = 0; i < 256; i++) printf "nvme-cli and nvp, line %d of the pattern\n", i }' |
	head -c 8192 >"$out/p"

if ! b1=$(blk "$serial" 1) || ! b2=$(blk "$serial" 2) || ! m2=$(blk "$mdserial" 2); then
	echo "FAIL the kernel's nvme driver has no namespaces of $serial / $mdserial"
	exit 1
fi
c=${b1%n1}
echo "$bdf is /dev/$c ($b1, $b2), $mdbdf namespace 2 is /dev/$m2"

# The same operations, in the same order, on both sides. The nvp side runs them as chains
# (one attach each); each side's standard output and error of a group go to one file:
# the messages must come out the same, in the same order.
# group B: reads of nvme-cli's blocks (1000..), a dry run, then write, write-zeroes, dsm,
#          flush, read on blocks of its own ($1: 1100 nvme-cli, 2100 nvp), namespace 2
#          ($2: 10, 20), io-passthru write ($3: 1200, 2200), separate metadata (07.0 ns 2)
# group C: get-log, admin-passthru and io-passthru dumps
# each ending with a command the controller refuses, and list -v (chained with a third).

# ---- 1. nvme-cli, through the kernel driver ----
k=$out/k
nvme write "/dev/$b1" -s 1000 -c 15 -z 8192 -d "$out/p" 2>/dev/null
nvme write "/dev/$m2" -s 0 -c 0 -z 4096 -y 8 -d "$out/p" -M "$out/p" 2>/dev/null
{
	nvme read "/dev/$b1" -s 1000 -c 15 -z 8192 -d "$k.A"
	nvme read "/dev/$b1" -s 1000 -c 1 -z 100 -d "$k.R"
	nvme compare "/dev/$b1" -s 1000 -c 15 -z 8192 -d "$out/p"
	nvme read "/dev/$b1" -s 1000 -c 7 -z 4096 -d "$k.dry.d" -w -p 1 -a 0x12 -m 0xff -r 7 -D 3
	nvme write "/dev/$b1" -s 1100 -c 15 -z 8192 -d "$out/p"
	nvme write-zeroes "/dev/$b1" -s 1102 -c 1
	nvme dsm "/dev/$b1" -s 1108,1114 -b 4,1 -d
	nvme flush "/dev/$b1" -n 1
	nvme read "/dev/$b1" -s 1100 -c 15 -z 8192 -d "$k.B"
	nvme write "/dev/$b2" -s 10 -c 1 -z 8192 -d "$out/p"
	nvme read "/dev/$b2" -s 10 -c 1 -z 8192 -d "$k.ns2"
	nvme io-passthru "/dev/$b1" -o 1 -n 1 -l 4096 -w --cdw10 1200 --cdw12 7 -i "$out/p"
	nvme read "/dev/$b1" -s 1200 -c 7 -z 4096 -d "$k.C"
	nvme read "/dev/$m2" -s 0 -c 0 -z 4096 -y 8 -d "$k.md0.d" -M "$k.md0.m"
	nvme write "/dev/$m2" -s 1 -c 0 -z 4096 -y 8 -d "$out/p" -M "$out/p"
	nvme read "/dev/$m2" -s 1 -c 0 -z 4096 -y 8 -d "$k.md.d" -M "$k.md.m"
} >"$k.B.out" 2>"$k.B.err"
{
	nvme get-log "/dev/$c" -i 3 -l 40
	nvme get-log "/dev/$c" -i 3 -l 512 -b
	nvme admin-passthru "/dev/$c" -o 6 -l 4096 -r --cdw10 1
	nvme io-passthru "/dev/$b1" -o 2 -n 1 -l 4096 -r --cdw10 1000 --cdw12 7
} >"$k.C.out" 2>"$k.C.err"
nvme compare "/dev/$b1" -s 1001 -c 15 -z 8192 -d "$out/p" 2>"$k.miscmp.err"
krc_miscmp=$?
nvme get-log "/dev/$c" -i 0x42 -l 64 >/dev/null 2>"$k.gl.err"
krc_gl=$?
nvme list -v >"$k.listv"
nvme io-passthru "/dev/$b1" -o 2 -n 1 -l 1024 -r --cdw10 131071 --cdw12 1 >/dev/null 2>"$k.oor.err"
krc_oor=$?
t1=$(now)

# ---- 2. nvp, through nvpoll ----
[ "${NVP_UDRV:-}" = uio_pci_generic ] && export DRIVER_OVERRIDE=uio_pci_generic
HUGEMEM=${HUGEMEM:-128} setup.sh config "$bdf" "$mdbdf" >/dev/null ||
	{ echo "FAIL setup.sh config $bdf $mdbdf"; exit 1; }
t2=$(now)
u=$out/u
nvp read "$bdf" -n 1 -s 1000 -c 15 -z 8192 -d "$u.A" \
	+ read "$bdf" -n 1 -s 1000 -c 1 -z 100 -d "$u.R" \
	+ compare "$bdf" -n 1 -s 1000 -c 15 -z 8192 -d "$out/p" \
	+ read "$bdf" -n 1 -s 1000 -c 7 -z 4096 -d "$u.dry.d" -w -p 1 -a 0x12 -m 0xff -r 7 -D 3 \
	+ write "$bdf" -n 1 -s 2100 -c 15 -z 8192 -d "$out/p" \
	+ write-zeroes "$bdf" -n 1 -s 2102 -c 1 \
	+ dsm "$bdf" -n 1 -s 2108,2114 -b 4,1 -d \
	+ flush "$bdf" -n 1 \
	+ read "$bdf" -n 1 -s 2100 -c 15 -z 8192 -d "$u.B" \
	+ write "$bdf" -n 2 -s 20 -c 1 -z 8192 -d "$out/p" \
	+ read "$bdf" -n 2 -s 20 -c 1 -z 8192 -d "$u.ns2" \
	+ io-passthru "$bdf" -o 1 -n 1 -l 4096 -w --cdw10 2200 --cdw12 7 -i "$out/p" \
	+ read "$bdf" -n 1 -s 2200 -c 7 -z 4096 -d "$u.C" \
	+ read "$mdbdf" -n 2 -s 0 -c 0 -z 4096 -y 8 -d "$u.md0.d" -M "$u.md0.m" \
	+ write "$mdbdf" -n 2 -s 1 -c 0 -z 4096 -y 8 -d "$out/p" -M "$out/p" \
	+ read "$mdbdf" -n 2 -s 1 -c 0 -z 4096 -y 8 -d "$u.md.d" -M "$u.md.m" \
	+ compare "$bdf" -n 1 -s 1001 -c 15 -z 8192 -d "$out/p" \
	>"$u.B.out" 2>"$u.B.err2"
urc_miscmp=$?
nvp get-log "$bdf" -i 3 -l 40 \
	+ get-log "$bdf" -i 3 -l 512 -b \
	+ admin-passthru "$bdf" -o 6 -l 4096 -r --cdw10 1 \
	+ io-passthru "$bdf" -o 2 -n 1 -l 4096 -r --cdw10 1000 --cdw12 7 \
	+ get-log "$bdf" -i 0x42 -l 64 \
	>"$u.C.out" 2>"$u.C.err2"
urc_gl=$?
nvp list -v "$bdf" \
	+ io-passthru "$bdf" -o 2 -n 1 -l 1024 -r --cdw10 131071 --cdw12 1 \
	>"$u.listv" 2>"$u.L.err2"
urc_oor=$?
# a chain stops at its first failure: the refusal is the last line of its standard error
for g in B C L; do
	sed '$d' "$u.$g.err2" >"$u.$g.err"
	tail -n 1 "$u.$g.err2" >"$u.$g.last"
done

# ---- 3. the kernel reads what nvp wrote ----
t3=$(now)
setup.sh reset "$bdf" "$mdbdf" >/dev/null || echo "warning: setup.sh reset $bdf $mdbdf failed"
if ! b1=$(blk "$serial" 1) || ! b2=$(blk "$serial" 2); then
	echo "FAIL $serial did not come back to the kernel"
	exit 1
fi
nvme read "/dev/$b1" -s 2100 -c 15 -z 8192 -d "$k.uB" 2>/dev/null
nvme read "/dev/$b1" -s 2200 -c 7 -z 4096 -d "$k.uC" 2>/dev/null
nvme read "/dev/$b2" -s 20 -c 1 -z 8192 -d "$k.uns2" 2>/dev/null
t4=$(now)
echo "seconds: nvme-cli $(echo "$t1 $t0" | awk '{print $1 - $2}'), setup.sh config" \
	"$(echo "$t2 $t1" | awk '{print $1 - $2}'), nvp $(echo "$t3 $t2" | awk '{print $1 - $2}')," \
	"setup.sh reset and nvme-cli $(echo "$t4 $t3" | awk '{print $1 - $2}')"

# ---- compare ----
head -c 4096 "$out/p" >"$out/p4k"
same "read of nvme-cli's write (nvme, nvp)" "$k.A" "$u.A"
same "read of nvme-cli's write = the pattern" "$out/p" "$u.A"
same "write, write-zeroes, dsm deallocate, read" "$k.B" "$u.B"
same "nvp's write + zeroes + dsm as the kernel reads it" "$u.B" "$k.uB"
same "read -z 100 of 1024 bytes (rounded)" "$k.R" "$u.R"
same "namespace 2 (4 KiB blocks) write, read" "$k.ns2" "$u.ns2"
same "nvp's namespace 2 write as the kernel reads it" "$u.ns2" "$k.uns2"
same "io-passthru write, read" "$k.C" "$u.C"
same "nvp's io-passthru write as the kernel reads it" "$u.C" "$k.uC"
same "io-passthru write = the pattern" "$out/p4k" "$u.C"
same "separate metadata: nvme-cli's write read by nvp (data)" "$k.md0.d" "$u.md0.d"
same "separate metadata: nvme-cli's write read by nvp (metadata)" "$k.md0.m" "$u.md0.m"
same "separate metadata: write, read (data)" "$k.md.d" "$u.md.d"
same "separate metadata: write, read (metadata)" "$k.md.m" "$u.md.m"
grep -v '^addr ' "$k.B.out" >"$k.B.cmp"
grep -v '^addr ' "$u.B.out" >"$u.B.cmp"
same "I/O: standard output (dry run, the buffer address aside; write-zeroes, dsm, flush)" \
	"$k.B.cmp" "$u.B.cmp"
same "I/O: standard error (Success, Rounding)" "$k.B.err" "$u.B.err"
sed -n '1s/^Device:[^ ]*/Device:X/p' "$k.C.out" >"$k.C.head"
sed -n '1s/^Device:[^ ]*/Device:X/p' "$u.C.out" >"$u.C.head"
same "get-log header (the device name aside)" "$k.C.head" "$u.C.head"
tail -n +2 "$k.C.out" >"$k.C.dumps"
tail -n +2 "$u.C.out" >"$u.C.dumps"
same "get-log hex dump, get-log -b, admin-passthru and io-passthru hex dumps" \
	"$k.C.dumps" "$u.C.dumps"
same "get-log, passthru: standard error" "$k.C.err" "$u.C.err"
same_status "compare, one block off" $krc_miscmp $urc_miscmp "$k.miscmp.err" "$u.B.last"
same_status "get-log of a page the controller lacks" $krc_gl $urc_gl "$k.gl.err" "$u.C.last"
same_status "io-passthru read past the namespace's end" $krc_oor $urc_oor "$k.oor.err" "$u.L.last"

# list -v text: the tables' headers, and this controller's row and namespace rows (the
# names of devices, controllers and subsystems aside)
for s in k u; do
	eval f=\$$s.listv
	grep -E '^(Subsystem |Device |----)' "$f" >"$out/$s.listv.head"
	ctrl=$(awk -v sn="$serial" '$2 == sn { print $1; exit }' "$f")
	awk -v sn="$serial" '$2 == sn' "$f" | cut -c10-101 >"$out/$s.listv.ctrl"
	awk -v c="$ctrl" '$NF == c && $1 != c && $1 !~ /subsys/' "$f" |
		sed -E 's/^[^ ]+ +[^ ]+ +//; s/ +[^ ]+$//' | sort >"$out/$s.listv.ns"
done
same "list -v table headers" "$out/k.listv.head" "$out/u.listv.head"
same "list -v controller row (SN, MN, FR, TxPort, Address)" "$out/k.listv.ctrl" "$out/u.listv.ctrl"
same "list -v namespace rows (NSID, Usage, Format)" "$out/k.listv.ns" "$out/u.listv.ns"

if [ $fails -ne 0 ]; then
	echo "$fails comparison(s) failed; the outputs are in $out"
	for f in "$out"/*.err "$out"/*.listv "$out"/*.B.out; do echo "--- $f"; head -c 2000 "$f"; done
	exit 1
fi
echo "nvme-cli and nvp do the same I/O on $bdf and $mdbdf"
