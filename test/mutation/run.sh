#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Usage: test/mutation/run.sh [-j JOBS] [-k] [FILTER]
# The mutation check (`make mutate`): do the unit tests notice a plausible one-line bug?
# Each test/mutation/mutants/*.patch is one such bug: its first line says what it models,
# the rest is a unified diff of one source file. For each (FILTER: a substring of the
# patch names, to run a few), on a scratch copy of the tree under build/mutation/ (never
# the working tree): apply it, rebuild the unit test programs that test/mutation/map says
# cover that file (they #include it, so nothing else needs rebuilding), run them, and put
# the file back. The mutant is caught when one of them fails or runs past MUTATE_TIMEOUT
# seconds (default 20). A patch that does not apply or does not build is an ERROR (the
# source moved under it: refresh the patch), never "caught". Warnings are not errors here
# (a mutant often leaves a variable unused: that is not what is being tested).
#
# Prints one row per mutant (mutant, file, the program that caught it or SURVIVED or
# ERROR), then `RESULT mutants=N caught=M`. Exit status: 0 when at least 90 % were caught,
# 1 otherwise, 2 when it could not run (no build, a covering test failing unmutated).
# -j: make's jobs (default 2); -k: keep the scratch tree afterwards.

set -u

rootdir=$(cd "$(dirname "$0")/../.." && pwd)
mutdir=$rootdir/test/mutation
scratch=$rootdir/build/mutation/tree
logdir=$rootdir/build/mutation/logs
timeout_s=${MUTATE_TIMEOUT:-20}
jobs=2
keep=0

usage() {
	echo "usage: test/mutation/run.sh [-j JOBS] [-k] [FILTER]" >&2
	exit 2
}

while getopts "j:kh" opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	k) keep=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -le 1 ] || usage
filter=${1:-}
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
	echo "run.sh: -j wants a positive number of jobs, got '$jobs'" >&2
	exit 2
fi
if ! [[ $timeout_s =~ ^[1-9][0-9]*$ ]]; then
	echo "run.sh: MUTATE_TIMEOUT must be a positive number of seconds, got '$timeout_s'" >&2
	exit 2
fi
for f in "$rootdir/mk/config.mk" "$rootdir/build/include/nvp_config.h"; do
	if [ ! -f "$f" ]; then
		echo "run.sh: ${f#"$rootdir"/} is missing: configure and build first (make)" >&2
		exit 2
	fi
done

# ---- the map: source file -> unit test programs (relative to build/test/unit) ----

declare -A covers
while read -r src progs; do
	case $src in '' | '#'*) continue ;; esac
	covers[${src%:}]=$progs
done <"$mutdir/map"

# The program's source directory (test/unit/lib/<subsys>; test/unit/app/<tool> for
# "app/<tool>/<name>"; test/fuzz for "fuzz/<name>": a harness that replays its corpus is a
# unit test of the file it #includes) and its binary.
prog_dir() {
	case $1 in
	fuzz/*) echo "$scratch/test/fuzz" ;;
	app/*) echo "$scratch/test/unit/${1%/*}" ;;
	*) echo "$scratch/test/unit/lib/${1%/*}" ;;
	esac
}
prog_bin() { echo "$scratch/build/test/unit/$1"; }
prog_obj() {
	case $1 in
	fuzz/*) echo "$scratch/build/obj/test/fuzz/${1#*/}.o" ;;
	app/*) echo "$scratch/build/obj/test/unit/${1%/*}/${1##*/}.o" ;;
	*) echo "$scratch/build/obj/test/unit/lib/${1%/*}/${1#*/}.o" ;;
	esac
}

# Rebuild @progs in the scratch tree from their sources (objects removed first: the
# scratch tree's dependency files are not trusted to see a patched file).
build_progs() {
	local log=$1 p d
	shift
	local -A dirs=()

	for p in "$@"; do
		rm -f "$(prog_obj "$p")" "$(prog_bin "$p")"
		dirs[$(prog_dir "$p")]+=" $(prog_bin "$p")"
	done
	for d in "${!dirs[@]}"; do
		# shellcheck disable=SC2086 # the list of targets
		make -C "$d" -j"$jobs" CONFIG_WERROR=n ${dirs[$d]} >>"$log" 2>&1 || return 1
	done
}

# Run @progs until one fails. Prints the one that failed (with "(timeout)"), or nothing.
run_progs() {
	local log=$1 p rc
	shift

	for p in "$@"; do
		(cd "$scratch" && timeout -k 5 "$timeout_s" "$(prog_bin "$p")") >>"$log" 2>&1 </dev/null
		rc=$?
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo "$p (timeout)"
			return
		elif [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
			echo "$p"
			return
		fi
	done
}

patches=()
for p in "$mutdir"/mutants/*.patch; do
	[ -e "$p" ] || continue
	case $(basename "$p") in *"$filter"*) patches+=("$p") ;; esac
done
if [ ${#patches[@]} -eq 0 ]; then
	echo "run.sh: no mutant matches '$filter' in test/mutation/mutants" >&2
	exit 2
fi

# ---- the scratch tree: the sources as they are now, the configuration, the built libs ----

rm -rf "$scratch" "$logdir"
mkdir -p "$scratch" "$logdir"
if git -C "$rootdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$rootdir" && git ls-files -z --cached --others --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$scratch"
else
	(cd "$rootdir" && tar --exclude=./build -cf - .) | tar -xf - -C "$scratch"
fi
mkdir -p "$scratch/build/lib"
cp "$rootdir/mk/config.mk" "$scratch/mk/"
cp -r "$rootdir/build/include" "$scratch/build/"
# The lower libraries the unit tests link (util, env, nvme, emu), as built in the working
# tree: a mutant never needs them rebuilt (the map names programs that compile the file).
if ! cp "$rootdir"/build/lib/libnvp_*.a "$scratch/build/lib/" 2>/dev/null; then
	echo "run.sh: build/lib/libnvp_*.a are missing: build first (make)" >&2
	exit 2
fi
touch "$scratch/mk/config.mk" "$scratch"/build/include/* "$scratch"/build/lib/* 2>/dev/null

# The file each patch changes (its "+++ b/..." line).
patch_file() { sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1" | head -n 1; }

# ---- baseline: every program the selected mutants need builds and passes unmutated ----

start=$(date +%s)
declare -A needed=()
for p in "${patches[@]}"; do
	f=$(patch_file "$p")
	for prog in ${covers[$f]:-}; do needed[$prog]=1; done
done
if [ ${#needed[@]} -gt 0 ]; then
	echo "building and running the covering tests unmutated: ${!needed[*]}"
	if ! build_progs "$logdir/baseline.log" "${!needed[@]}"; then
		echo "run.sh: the unmutated tree does not build: see ${logdir#"$rootdir"/}/baseline.log" >&2
		exit 2
	fi
	bad=$(run_progs "$logdir/baseline.log" "${!needed[@]}")
	if [ -n "$bad" ]; then
		echo "run.sh: $bad fails without a mutant: fix it first (${logdir#"$rootdir"/}/baseline.log)" >&2
		exit 2
	fi
	# The map must name programs that compile the file themselves: a program that only
	# links it from a library would test the unmutated library.
	for f in "${!covers[@]}"; do
		for prog in ${covers[$f]}; do
			d=$(prog_obj "$prog")
			d=${d%.o}.d
			if [ -f "$d" ] && ! grep -q "$scratch/$f" "$d"; then
				echo "run.sh: map: $prog does not compile $f itself; it cannot see a mutant of it" >&2
				exit 2
			fi
		done
	done
fi

# ---- the mutants ----

total=0
caught=0
rows=()
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	f=$(patch_file "$p")
	log=$logdir/$name.log
	total=$((total + 1))
	if [ -z "$f" ] || [ ! -f "$scratch/$f" ]; then
		rows+=("$name|${f:-?}|ERROR: no file to patch")
		continue
	fi
	progs=${covers[$f]:-}
	if [ -z "$progs" ]; then
		rows+=("$name|$f|ERROR: no test mapped to the file (test/mutation/map)")
		continue
	fi
	cp "$scratch/$f" "$logdir/pristine"
	if ! patch -p1 -s --fuzz=0 --no-backup-if-mismatch -r - -d "$scratch" <"$p" >"$log" 2>&1; then
		cp "$logdir/pristine" "$scratch/$f"
		rows+=("$name|$f|ERROR: does not apply")
		continue
	fi
	# One program at a time, the likeliest catcher first: built, run, and the next only
	# if it passed.
	result=SURVIVED
	for prog in $progs; do
		if ! build_progs "$log" "$prog"; then
			result="ERROR: does not build"
			break
		fi
		caught_by=$(run_progs "$log" "$prog")
		if [ -n "$caught_by" ]; then
			result=$caught_by
			caught=$((caught + 1))
			break
		fi
	done
	cp "$logdir/pristine" "$scratch/$f"
	rows+=("$name|$f|$result")
	printf '  %-38s %s\n' "$name" "$result"
done

echo
printf '%-38s %-24s %s\n' MUTANT FILE CAUGHT-BY
for r in "${rows[@]}"; do
	IFS='|' read -r n f res <<<"$r"
	printf '%-38s %-24s %s\n' "$n" "$f" "$res"
done
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	for r in "${rows[@]}"; do
		if [ "${r%%|*}" = "$name" ] && [ "${r##*|}" = SURVIVED ]; then
			echo "SURVIVED $name: $(head -n 1 "$p")"
		fi
	done
done
echo "took $(($(date +%s) - start)) s; logs in ${logdir#"$rootdir"/}"
[ $keep -eq 1 ] || rm -rf "$scratch"
echo "RESULT mutants=$total caught=$caught"
[ $((caught * 10)) -ge $((total * 9)) ]
