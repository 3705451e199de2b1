#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# nvp serve as README.md shows it: NVMe/TCP on one machine. A software controller served
# on 127.0.0.1 (a free port, -p 0, so that runs side by side do not collide); nvp_perf and
# nvp id-ctrl as its hosts, with and without digests; stopped by SIGINT and SIGTERM, each
# time with exit status 0 and no sanitizer report (under --enable-asan a leak is a
# non-zero exit). Then: digests required, a time limit, a port in use, usage errors,
# IPv6 (served on ::1: discover, id-ctrl, nvp_perf; transport IDs of the wrong family;
# a refused connection named as such, with address and port), multipath (--ana).
# Every wait has a deadline. Exit 0 pass, 1 fail, 77 skip (the tools are not built).

set -u

rootdir=$(cd "$(dirname "$0")/../../.." && pwd)
nvp=$rootdir/build/bin/nvp
perf=$rootdir/build/bin/nvp_perf
fails=0
serve_pid=
trid=

for p in "$nvp" "$perf"; do
	if [ ! -x "$p" ]; then
		echo "SKIP: $p is not built"
		exit 77
	fi
done
work=$(mktemp -d)
cleanup() {
	if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
		kill -KILL "$serve_pid"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

# start_serve NAME ARGS...: nvp serve -p 0 ARGS in the background, its output in
# $work/NAME.out; waits up to 30 s for the transport ID it prints (into $trid).
start_serve() {
	local name=$1 _
	shift
	trid=
	"$nvp" serve -p 0 "$@" >"$work/$name.out" 2>&1 &
	serve_pid=$!
	for _ in $(seq 300); do
		trid=$(sed -n 's/^transport ID: //p' "$work/$name.out")
		[ -n "$trid" ] && return 0
		kill -0 "$serve_pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "$name: nvp serve printed no transport ID within 30 s"
	cat "$work/$name.out"
	return 1
}

# wait_exit NAME SECONDS: the exit status of nvp serve, killed if it outlives SECONDS.
wait_exit() {
	local _
	for _ in $(seq $(($2 * 10))); do
		kill -0 "$serve_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$serve_pid" 2>/dev/null; then
		fail "$1: nvp serve still runs after $2 s"
		kill -KILL "$serve_pid"
	fi
	wait "$serve_pid"
}

# stop_serve NAME SIGNAL: stop it, check that it exits 0 with its summary and nothing
# from a sanitizer.
stop_serve() {
	local rc
	kill "-$2" "$serve_pid"
	wait_exit "$1" 60
	rc=$?
	serve_pid=
	[ "$rc" -eq 0 ] || fail "$1: nvp serve exited $rc after SIG$2"
	grep -q "^nvp serve: SIG$2: stopping" "$work/$1.out" ||
		fail "$1: no 'SIG$2: stopping' line"
	grep -q "^nvp serve: .* connections" "$work/$1.out" || fail "$1: no summary line"
	if grep -qE "AddressSanitizer|LeakSanitizer|runtime error" "$work/$1.out"; then
		fail "$1: a sanitizer reported something"
	fi
	[ "$rc" -eq 0 ] || cat "$work/$1.out"
}

# json_get FILE EXPR: a value from a JSON file (python3).
json_get() {
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null
}

# 1. The default target: nvp_perf, nvp id-ctrl, nvp_perf with digests; SIGINT.
if start_serve default -t 600; then
	echo "default: $trid"
	grep -q "subnqn:nqn.2026-01.io.nvpoll:serve" <<<"$trid" ||
		fail "default: the transport ID names no default NQN: $trid"
	timeout 120 "$perf" -r "$trid" -t 2 -q 8 -w randrw -o 8k --json "$work/perf.json" \
		>"$work/perf.out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "default: nvp_perf exited $rc"
	[ "$(json_get "$work/perf.json" 'd["status"]')" = ok ] ||
		fail "default: nvp_perf's JSON status is not ok"
	ios=$(json_get "$work/perf.json" 'd["total"]["ios"]')
	[ "${ios:-0}" -gt 0 ] 2>/dev/null || fail "default: nvp_perf did no I/O (${ios:-none})"
	[ "$rc" -eq 0 ] || cat "$work/perf.out"

	timeout 60 "$nvp" id-ctrl "$trid" -o json >"$work/id.json" 2>"$work/id.err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "default: nvp id-ctrl exited $rc: $(cat "$work/id.err")"
	[ "$(json_get "$work/id.json" 'd["subnqn"]')" = nqn.2026-01.io.nvpoll:serve ] ||
		fail "default: id-ctrl's subnqn is not the served NQN"
	json_get "$work/id.json" 'd["mn"]' | grep -q "nvpoll software" ||
		fail "default: id-ctrl's model is not the software controller's"

	timeout 120 "$perf" -r "$trid hdgst:1 ddgst:1" -t 1 -q 4 -w randwrite \
		>"$work/perf_dgst.out" 2>&1 || fail "default: nvp_perf with digests failed"
	stop_serve default INT
	grep -qE " [1-9][0-9]* header and [1-9][0-9]* data digests checked, 0 bad PDUs" \
		"$work/default.out" || fail "default: no digests checked, or bad PDUs: $(tail -1 \
		"$work/default.out")"
fi

# 2. Digests required, another NQN, a software controller of two namespaces; SIGTERM.
if start_serve required --hdgst --ddgst --nqn nqn.2026-01.io.nvpoll:other \
	-r "emu:nn=2,size=8M" -t 600; then
	timeout 60 "$nvp" id-ctrl "$trid" >/dev/null 2>&1 &&
		fail "required: a host without digests was served"
	timeout 60 "$nvp" id-ns "$trid hdgst:1 ddgst:1" -n 2 -o json >"$work/ns.json" 2>&1 ||
		fail "required: nvp id-ns with digests failed: $(cat "$work/ns.json")"
	[ "$(json_get "$work/ns.json" 'd["nsze"]')" = 16384 ] ||
		fail "required: namespace 2 is not the 8 MiB one asked for"
	stop_serve required TERM
	grep -q "(1 refused)" "$work/required.out" || fail "required: the refusal was not counted"
	grep -q "did not ask for header digests" "$work/required.out" ||
		fail "required: the refusal was not explained"
fi

# 3. A time limit ends it by itself, exit 0.
if start_serve timed -t 1; then
	wait_exit timed 30
	rc=$?
	serve_pid=
	[ "$rc" -eq 0 ] || fail "timed: exit $rc at the end of its time"
	grep -q "1 s passed: stopping" "$work/timed.out" || fail "timed: no 'stopping' line"
fi

# 4. A port in use: exit 1 and the reason.
if start_serve holder -t 600; then
	port=$(sed -n 's/.*trsvcid:\([0-9]*\).*/\1/p' <<<"$trid")
	timeout 60 "$nvp" serve -p "$port" -t 1 >"$work/busy.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "busy: a second target on port $port exited $rc, not 1"
	grep -q "in use" "$work/busy.out" || fail "busy: no 'in use': $(cat "$work/busy.out")"
	stop_serve holder INT
fi

# 5. Help, as the general usage says: 'nvp help CMD' or 'nvp CMD --help'.
for args in "help serve" "serve --help" "serve -h"; do
	# shellcheck disable=SC2086 # (word splitting wanted)
	out=$(timeout 30 "$nvp" $args 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || ! grep -q "^usage: nvp serve" <<<"$out"; then
		fail "help: 'nvp $args' exited $rc or printed no usage"
	fi
done

# 6. Usage errors exit 2 before anything starts.
for args in "--port 65536" "extra" "--addr ::1::2" "--addr localhost" "-t 0" "--nqn" \
	"--bogus" "-r emu:nn=99" "--nqn nqn.2014-08.org.nvmexpress.discovery" "--ana fast" \
	"--ana optimized,,inaccessible" "--ana" "-p 65535 --ana optimized,optimized"; do
	# shellcheck disable=SC2086 # (word splitting wanted)
	timeout 30 "$nvp" serve $args >"$work/usage.out" 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || fail "usage: 'nvp serve $args' exited $rc, not 2"
done

# 7. IPv6 on ::1 (skipped, said so, only where the machine has no IPv6 loopback).
if ! python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	echo "SKIP ipv6: no IPv6 loopback (::1) on this machine"
elif start_serve v6 --addr ::1 -t 600; then
	echo "v6: $trid"
	grep -q "adrfam:IPv6 traddr:::1 " <<<"$trid" || fail "v6: not an IPv6 transport ID: $trid"
	port=$(sed -n 's/.*trsvcid:\([0-9]*\).*/\1/p' <<<"$trid")
	timeout 60 "$nvp" discover "trtype:TCP adrfam:IPv6 traddr:::1 trsvcid:$port" \
		>"$work/disc6.out" 2>&1 || fail "v6: nvp discover failed: $(cat "$work/disc6.out")"
	grep -q "^adrfam:  ipv6" "$work/disc6.out" || fail "v6: the record's adrfam is not ipv6"
	grep -q "^traddr:  ::1" "$work/disc6.out" || fail "v6: the record's traddr is not ::1"
	rec=$(sed -n 's/^nvpoll:  //p' "$work/disc6.out")
	timeout 60 "$nvp" id-ctrl "$rec" -o json >"$work/id6.json" 2>"$work/id6.err" ||
		fail "v6: nvp id-ctrl of the discovered record failed: $(cat "$work/id6.err")"
	[ "$(json_get "$work/id6.json" 'd["subnqn"]')" = nqn.2026-01.io.nvpoll:serve ] ||
		fail "v6: id-ctrl's subnqn is not the served NQN"
	timeout 120 "$perf" -r "$trid" -t 1 -q 8 -w randrw -o 4k --json "$work/perf6.json" \
		>"$work/perf6.out" 2>&1 || fail "v6: nvp_perf failed: $(tail -3 "$work/perf6.out")"
	[ "$(json_get "$work/perf6.json" 'd["status"]')" = ok ] ||
		fail "v6: nvp_perf's JSON status is not ok"
	stop_serve v6 INT
	# Nothing listens there now: refused, with address and port, exit 1.
	timeout 60 "$nvp" id-ctrl "$trid" >"$work/refused.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "refused: nvp id-ctrl exited $rc, not 1"
	grep -q "cannot connect to ::1 port $port: Connection refused" "$work/refused.out" ||
		fail "refused: the message does not say so: $(cat "$work/refused.out")"
	grep -q "No such device" "$work/refused.out" && fail "refused: reads 'No such device'"
fi
# Transport IDs of the wrong family, or none: usage errors, exit 2, before connecting.
for t in "adrfam:IPv5 traddr:::1" "adrfam:IPv4 traddr:::1" "adrfam:IPv6 traddr:127.0.0.1" \
	"traddr:::1 trsvcid:70000"; do
	timeout 30 "$nvp" id-ctrl "trtype:TCP $t subnqn:nqn.x" >"$work/fam.out" 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || fail "family: nvp id-ctrl '$t' exited $rc, not 2"
	grep -qE "adrfam 'IPv5' is not IPv4 or IPv6|takes adrfam:IPv[46]|not a TCP port" \
		"$work/fam.out" || fail "family: '$t': no clear message: $(cat "$work/fam.out")"
	timeout 30 "$nvp" discover "trtype:TCP $t" >"$work/fam.out" 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || fail "family: nvp discover '$t' exited $rc, not 2"
	timeout 30 "$perf" -r "trtype:TCP $t subnqn:nqn.x" -t 1 >"$work/fam.out" 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || fail "family: nvp_perf -r '$t' exited $rc, not 2"
done

# 8. Multipath: two listeners of one subsystem (--ana), nvp list showing a path's ANA
# state, and one bdev over both (SPDK's multipath parameter): bdev-list shows its paths,
# nvp_perf's report the I/O each carried (round-robin: both), with no error.
if start_serve mpath -t 600 --ana optimized,optimized; then
	mapfile -t ports < <(grep -o 'trsvcid:[0-9]*' <<<"$trid" | cut -d: -f2)
	[ "${#ports[@]}" -eq 2 ] || fail "mpath: not two transport IDs: $trid"
	t2=$(sed -n 2p <<<"$trid")
	timeout 60 "$nvp" list -v -o json "$t2" >"$work/list.json" 2>&1 ||
		fail "mpath: nvp list exited $?"
	[ "$(json_get "$work/list.json" \
		'd["Devices"][0]["Subsystems"][0]["Controllers"][0]["Paths"][0]["ANAState"]')" = \
		optimized ] || fail "mpath: nvp list shows no ANA state: $(cat "$work/list.json")"
	attach() {
		printf '{"method": "bdev_nvme_attach_controller", "params": {"name": "Nvme0", '
		printf '"trtype": "TCP", "adrfam": "IPv4", "traddr": "127.0.0.1", "trsvcid": "%s", ' "$1"
		printf '"subnqn": "nqn.2026-01.io.nvpoll:serve", "multipath": "multipath"}}'
	}
	printf '{"subsystems": [{"subsystem": "bdev", "config": [%s, %s]}]}\n' \
		"$(attach "${ports[0]}")" "$(attach "${ports[1]:-0}")" >"$work/mp.json"
	timeout 60 "$nvp" bdev-list --json-config "$work/mp.json" -o json >"$work/bl.json" 2>&1 ||
		fail "mpath: nvp bdev-list exited $?: $(cat "$work/bl.json")"
	[ "$(json_get "$work/bl.json" 'len(d["bdevs"][0]["paths"])')" = 2 ] ||
		fail "mpath: bdev-list shows not two paths: $(cat "$work/bl.json")"
	timeout 120 "$perf" --json-config "$work/mp.json" -t 2 -q 8 -w randrw -o 4k \
		--json "$work/mperf.json" >"$work/mperf.out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "mpath: nvp_perf exited $rc: $(tail -5 "$work/mperf.out")"
	for i in 0 1; do
		ios=$(json_get "$work/mperf.json" "d['bdevs'][0]['multipath']['paths'][$i]['ios']")
		[ "${ios:-0}" -gt 0 ] 2>/dev/null || fail "mpath: path $i carried no I/O (${ios:-none})"
	done
	grep -q "path 1: .*: ANA optimized, [1-9][0-9]* I/Os" "$work/mperf.out" ||
		fail "mpath: the report shows no I/O on path 1: $(tail -4 "$work/mperf.out")"
	errs=$(json_get "$work/mperf.json" 'd["total"]["errors"]')
	[ "${errs:-1}" = 0 ] || fail "mpath: nvp_perf counted ${errs:-no} errors"
	stop_serve mpath INT
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "PASS"
