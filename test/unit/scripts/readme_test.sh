#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# README.md says true things: its Layout table names every script under scripts/ and every
# tool under app/; every `test/run_tests.sh WORD` example says WORD is a filter (the script
# takes no other argument); and the nvp subcommands it says take -o and -H are exactly the
# ones whose `nvp help CMD` lists them. Exit 0 pass, 1 fail, 77 skip (nvp not built).

set -u

rootdir=$(cd "$(dirname "$0")/../../.." && pwd)
readme=$rootdir/README.md
nvp=$rootdir/build/bin/nvp
fails=0

fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

# 1. The Layout table's rows name what is there.
row() { grep -E "^\| \`$1/\` \|" "$readme"; }
for f in "$rootdir"/scripts/*.sh; do
	name=$(basename "$f")
	row scripts | grep -qF "\`$name\`" || fail "Layout: scripts/$name is not in the scripts/ row"
done
for d in "$rootdir"/app/*/; do
	name=$(basename "$d")
	row app | grep -qF "\`$name\`" || fail "Layout: app/$name is not in the app/ row"
done

# 2. run_tests.sh takes one optional argument, a filter: an example with an argument must
# say that it selects by that word.
while read -r line; do
	arg=$(sed -n 's/^test\/run_tests\.sh \([^ #]\+\).*/\1/p' <<<"$line")
	[ -n "$arg" ] || continue
	grep -qF "\"$arg\"" <<<"$line" ||
		fail "Tests: '$line' does not say that '$arg' is a filter"
done < <(grep -E '^test/run_tests\.sh' "$readme")

# 3. -o / -H: the README's lists against each subcommand's own help.
if [ ! -x "$nvp" ]; then
	echo "SKIP (in part): $nvp not built"
	[ "$fails" -eq 0 ] && exit 77
	exit 1
fi
para=$(tr '\n' ' ' <"$readme" | sed -n 's/.*`-o normal|json|binary` is taken by \([^;]*\);.*/\1/p')
para_h=$(tr '\n' ' ' <"$readme" | sed -n 's/.*`-H` (decode bitfields) by \([^.]*\)\..*/\1/p')
[ -n "$para" ] || fail "README: no sentence saying which nvp subcommands take -o"
[ -n "$para_h" ] || fail "README: no sentence saying which nvp subcommands take -H"
cmds=$("$nvp" help | sed -n 's/^  \([a-z-]\+\)  .*/\1/p')
for cmd in $cmds; do
	[ "$cmd" = help ] || [ "$cmd" = version ] && continue
	help=$("$nvp" help "$cmd" 2>&1)
	takes_o=no takes_h=no in_o=no in_h=no
	grep -q -- '--output-format' <<<"$help" && takes_o=yes
	grep -q -- '--human-readable' <<<"$help" && takes_h=yes
	grep -qF "\`$cmd\`" <<<"$para" && in_o=yes
	grep -qF "\`$cmd\`" <<<"$para_h" && in_h=yes
	[ "$takes_o" = "$in_o" ] || fail "nvp $cmd: takes -o: $takes_o, README says $in_o"
	[ "$takes_h" = "$in_h" ] || fail "nvp $cmd: takes -H: $takes_h, README says $in_h"
done

if [ "$fails" -ne 0 ]; then
	echo "$fails README check(s) failed"
	exit 1
fi
echo "PASS"
