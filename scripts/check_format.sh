#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Usage: scripts/check_format.sh [--fix] [FILE|DIR...]
# Check the C sources (lib/ app/ examples/ test/ include/ bench/ and top-level *.c *.h; never
# build/) against .clang-format: print each file clang-format would change and exit 1 if
# there is one. --fix reformats the files in place instead (make format). With FILEs or
# DIRs, only those.

set -euo pipefail

rootdir=$(cd "$(dirname "$0")/.." && pwd)
cd "$rootdir"

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
fix=n
if [ "${1:-}" = --fix ]; then
	fix=y
	shift
fi

if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
	echo "check_format.sh: $CLANG_FORMAT not found: install the Debian package clang-format" \
		"(sudo scripts/pkgdep.sh)" >&2
	exit 2
fi

files=()
dirs=()
if [ $# -gt 0 ]; then
	for a in "$@"; do
		if [ -d "$a" ]; then
			dirs+=("$a")
		else
			files+=("$a")
		fi
	done
	if [ ${#dirs[@]} -gt 0 ]; then
		while IFS= read -r f; do
			files+=("$f")
		done < <(find "${dirs[@]}" -path '*/build' -prune -o -type f \( -name '*.c' -o -name '*.h' \) \
			-print | LC_ALL=C sort)
	fi
else
	for d in lib app examples test include bench; do
		[ -d "$d" ] && dirs+=("$d")
	done
	while IFS= read -r f; do
		files+=("$f")
	done < <({
		if [ ${#dirs[@]} -gt 0 ]; then
			find "${dirs[@]}" -path '*/build' -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print
		fi
		find . -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) -printf '%P\n'
	} | LC_ALL=C sort)
fi

if [ ${#files[@]} -eq 0 ]; then
	echo "check_format.sh: no C sources found"
	exit 0
fi

if [ "$fix" = y ]; then
	"$CLANG_FORMAT" -i "${files[@]}"
	echo "check_format.sh: formatted ${#files[@]} files"
	exit 0
fi

bad=()
for f in "${files[@]}"; do
	if ! "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then
		bad+=("$f")
	fi
done

if [ ${#bad[@]} -gt 0 ]; then
	echo "check_format.sh: ${#bad[@]} of ${#files[@]} files need formatting:"
	printf '  %s\n' "${bad[@]}"
	echo "See the changes with: $CLANG_FORMAT --dry-run FILE; fix with: make format"
	exit 1
fi
echo "check_format.sh: ${#files[@]} files OK"
