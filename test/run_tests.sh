#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Usage: test/run_tests.sh [FILTER]
# Run every test program under build/test/unit (recursively), then build/test/functional,
# each under `timeout` ($NVP_TEST_TIMEOUT seconds, default 300). A program passes with exit
# status 0, is skipped with 77, fails otherwise. Output of each goes to
# build/test/logs/<name>.log; the log of a failure is shown. FILTER (a substring of the
# path below build/test) runs a subset. Programs run from the top directory, stdin closed.
# Exits non-zero if any test failed; with no test program found, too.

set -u

rootdir=$(cd "$(dirname "$0")/.." && pwd)
testdir=$rootdir/build/test
logdir=$testdir/logs
filter=${1:-}
timeout_s=${NVP_TEST_TIMEOUT:-300}

if ! [[ $timeout_s =~ ^[0-9]+$ ]] || [ "$timeout_s" -eq 0 ]; then
	echo "run_tests.sh: NVP_TEST_TIMEOUT must be a positive number of seconds, got '$timeout_s'" >&2
	exit 2
fi
if [ ! -d "$testdir" ]; then
	echo "run_tests.sh: $testdir does not exist: build the tests first (make, or make test)" >&2
	exit 2
fi

mkdir -p "$logdir"

passed=0
failed=0
skipped=0
failed_names=()

run_one() {
	local prog=$1
	local rel=${prog#"$testdir"/}
	local name=${rel//\//_}
	local log=$logdir/$name.log
	local start end rc secs status

	start=$(date +%s.%N)
	(cd "$rootdir" && timeout -k 10 "$timeout_s" "$prog") >"$log" 2>&1 </dev/null
	rc=$?
	end=$(date +%s.%N)
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')

	case $rc in
	0)
		status=PASS
		passed=$((passed + 1))
		;;
	77)
		status=SKIP
		skipped=$((skipped + 1))
		;;
	*)
		status=FAIL
		failed=$((failed + 1))
		failed_names+=("$rel")
		;;
	esac
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "run_tests.sh: $rel timed out after ${timeout_s}s (NVP_TEST_TIMEOUT)" >>"$log"
		printf '%-4s %-50s %8ss  (timeout)\n' "$status" "$rel" "$secs"
	elif [ "$status" = FAIL ]; then
		printf '%-4s %-50s %8ss  (exit %d)\n' "$status" "$rel" "$secs" "$rc"
	else
		printf '%-4s %-50s %8ss\n' "$status" "$rel" "$secs"
	fi
	if [ "$status" = FAIL ]; then
		echo "----- $log -----"
		cat "$log"
		echo "----- end of $rel -----"
	fi
}

for kind in unit functional; do
	[ -d "$testdir/$kind" ] || continue
	while IFS= read -r prog; do
		rel=${prog#"$testdir"/}
		if [ -n "$filter" ] && [[ $rel != *"$filter"* ]]; then
			continue
		fi
		run_one "$prog"
	done < <(find "$testdir/$kind" -type f -perm -u+x | LC_ALL=C sort)
done

if [ $((passed + failed + skipped)) -eq 0 ]; then
	# shellcheck disable=SC2016 # (the quotes are literal, $filter expands)
	echo "run_tests.sh: no test programs found under $testdir${filter:+ matching '$filter'}" >&2
	echo "0 passed, 0 failed, 0 skipped"
	exit 1
fi
if [ "$failed" -gt 0 ]; then
	echo "Failed:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
