#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# The slice of bench/fault_matrix that `make test` runs: a few faults (none, a dropped
# completion, media errors, CFS with a reset, surprise removal through the bdev layer, a
# power cut, a completion with a command id nobody sent, a duplicated completion, an SQ
# head past the queue's end, a completion with a stale phase tag) in the middle of
# verified I/O. Fails unless every cell ends
# with 0 lost, 0 corrupted, 0 duplicated, no hang and no crash. The full matrix:
# bench/fault_matrix (see its --help).
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
exec python3 "$root/bench/fault_matrix" --slice --seconds 1 \
	--json "$root/build/test/logs/fault_matrix_slice.json"
