#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Usage: test/fuzz/run.sh SECONDS HARNESS...
# Run each libFuzzer harness of build/fuzz for SECONDS on a working copy of its saved
# corpus (build/fuzz/corpus/<name>: new inputs go there, test/fuzz/corpus stays as it is),
# one job, then print a line per harness: executions, coverage (libFuzzer's cov:),
# findings. A finding's input is left in build/fuzz/<name>-crash-* (replay it with
# build/test/unit/fuzz/<name> FILE). Exits 1 if any harness found something.

set -u

rootdir=$(cd "$(dirname "$0")/../.." && pwd)
fuzzdir=$rootdir/build/fuzz
secs=${1:-}
shift || true

if ! [[ $secs =~ ^[0-9]+$ ]] || [ "$secs" -eq 0 ] || [ $# -eq 0 ]; then
	echo "usage: $0 SECONDS HARNESS... (FUZZ_SECONDS must be a positive number)" >&2
	exit 2
fi

status=0
summary=()
for name in "$@"; do
	bin=$fuzzdir/$name
	work=$fuzzdir/corpus/$name
	log=$fuzzdir/$name.log
	if [ ! -x "$bin" ]; then
		echo "$name: $bin not built (make fuzz builds it)" >&2
		exit 2
	fi
	mkdir -p "$work"
	cp -n "$rootdir/test/fuzz/corpus/$name"/* "$work"/ 2>/dev/null || true
	echo "fuzzing $name for ${secs}s (log: build/fuzz/$name.log)"
	(cd "$fuzzdir" && "$bin" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$fuzzdir/$name-" "$work") >"$log" 2>&1
	rc=$?
	execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{ print $2 }')
	if [ "$rc" -ne 0 ]; then
		status=1
		findings=1
		tail -40 "$log"
	else
		findings=0
	fi
	summary+=("$(printf '%-16s %12s %8s %9s' "$name" "${execs:-?}" "${cov:-?}" "$findings")")
done
printf '%-16s %12s %8s %9s\n' harness executions cov findings
printf '%s\n' "${summary[@]}"
exit $status
