#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# The slice of bench/fault_matrix that `make test` runs: a few faults (none, a dropped
# completion, media errors, CFS with a reset, surprise removal through the bdev layer, a
# power cut, a completion with a command id nobody sent, a duplicated completion, an SQ
# head past the queue's end, a completion with a stale phase tag; CFS under the block
# layer's stages; a dropped completion over NVMe/TCP) in the middle of verified I/O.
# Fails unless every cell ends with 0 lost, 0 corrupted, 0 duplicated, no hang, no crash
# and its I/O recovered. Then the control: a device whose Flush lies must be caught by
# the read-back after its power cut (corrupted > 0), or that read-back proves nothing.
# The full matrix: bench/fault_matrix (see its --help).
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 is not installed"
	exit 77
fi
if [ ! -x "$root/build/bench/nvp_fault_matrix" ]; then
	echo "SKIP: build/bench/nvp_fault_matrix not built"
	exit 77
fi
python3 "$root/bench/fault_matrix" --slice --seconds 1 \
	--json "$root/build/test/logs/fault_matrix_slice.json"
out=$("$root/build/bench/nvp_fault_matrix" --fault power_cut_lie --workload randwrite \
	--seconds 1 2>&1) || {
	printf '%s\n' "$out"
	echo "FAIL: the lying-flush control cell did not run"
	exit 1
}
corrupted=$(sed -n 's/^cell .* corrupted=\([0-9]*\) .*/\1/p' <<<"$out")
if [ -z "$corrupted" ] || [ "$corrupted" -eq 0 ]; then
	printf '%s\n' "$out"
	echo "FAIL: a Flush that lies went unnoticed by the read-back after the power cut"
	exit 1
fi
echo "control: a lying Flush is caught ($corrupted corrupted blocks after the power cut)"
