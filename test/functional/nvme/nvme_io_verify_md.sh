#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The functional I/O test (nvme_io_verify) run as the QEMU judge runs it against a namespace
# named by transport ID (NVP_TEST_TRID), on software controllers whose namespace keeps its
# metadata in a separate buffer: 512 + 8 and 4096 + 64 bytes per block. Every read and write
# must go through the _with_md calls, its metadata come back as written, and the run must say
# it used them (it cannot pass by leaving them out). Without this, the plain calls were
# refused: "write lba 0 count 1: -22".

set -u

rootdir=$(cd "$(dirname "$0")/../../.." && pwd)
prog=$rootdir/build/test/functional/nvme_io_verify
[ -x "$prog" ] || {
	echo "FAIL: $prog was not built"
	exit 1
}

rc=0
for trid in "trtype:emu name:iomd0 lba:512 ms:8 mset:0" \
	"trtype:emu name:iomd1 lba:4096 ms:64 mset:0"; do
	echo "== NVP_TEST_TRID=\"$trid\" nvme_io_verify"
	out=$(NVP_TEST_TRID="$trid" timeout -k 5 240 "$prog" 2>&1)
	status=$?
	echo "$out"
	if [ "$status" -ne 0 ]; then
		echo "FAIL: nvme_io_verify on \"$trid\" exited $status"
		rc=1
	elif ! grep -q "separate metadata: [0-9]* bytes per block, through the _with_md calls" \
		<<<"$out"; then
		echo "FAIL: nvme_io_verify on \"$trid\" moved no metadata buffer"
		rc=1
	fi
done
[ "$rc" -eq 0 ] && echo "PASS"
exit "$rc"
