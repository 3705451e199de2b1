#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# The fio ioengine (build/fio/nvpoll_fio.so) in Debian's fio against the software
# controller: random writes with verify=crc32c and verify_backlog from two threads (each
# its own qpair and region), random reads, trim on a second namespace of the same
# controller and two files in one job; fio's exit status and its JSON report (parsed, not
# grepped) must show no error and I/O done. Then the failures people meet must be messages:
# thread=0, an engine built against another fio ABI, options of the bdev mode without
# bdev_config=; and verify of a fresh device must fail (the check is not vacuous). Skips (77) without fio or the
# engine, unless NVP_TEST_FIO_REQUIRED=1 (CI), where that is a failure. Last, NVMe/TCP: over
# 127.0.0.1 with digests, and over IPv6 against nvp serve on ::1.

set -u

rootdir=$(cd "$(dirname "$0")/../../.." && pwd)
engine=$rootdir/build/fio/nvpoll_fio.so
skew=$rootdir/build/fio/nvpoll_fio_skew.so
work=$(mktemp -d "${TMPDIR:-/tmp}/nvp-fio-test.XXXXXX")
serve_pid=
trap '[ -z "$serve_pid" ] || kill -KILL "$serve_pid" 2>/dev/null; rm -rf "$work"' EXIT

skip() {
	if [ "${NVP_TEST_FIO_REQUIRED:-0}" = 1 ]; then
		echo "FAIL: $* (NVP_TEST_FIO_REQUIRED=1)"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}

command -v fio >/dev/null 2>&1 || skip "fio is not installed (sudo scripts/pkgdep.sh installs it)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -f "$engine" ] || skip "$engine was not built: ./configure --with-fio (or --with-fio=DIR), then make"

# A sanitizer build's engine needs the sanitizer runtime loaded first into (uninstrumented)
# fio; fio's own allocations are not ours to leak-check.
if grep -q '^CONFIG_ASAN := y' "$rootdir/mk/config.mk" 2>/dev/null; then
	cc=$(sed -n 's/^CC := //p' "$rootdir/mk/config.mk")
	asan=$(${cc:-cc} -print-file-name=libasan.so)
	[ -f "$asan" ] || skip "ASan build but no libasan.so to preload into fio"
	export LD_PRELOAD=$asan
	export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1
fi

echo "fio: $(command -v fio) ($(fio --version)), engine: $engine"

# run_fio NAME JOBFILE: run fio with JSON output, fail on a non-zero exit status.
run_fio() {
	local name=$1 job=$2 rc

	timeout -k 5 120 fio --output-format=json --output="$work/$name.json" "$job" \
		>"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		cat "$work/$name.out" "$work/$name.err" "$work/$name.json" 2>/dev/null
		fail "fio $name exited with $rc"
	fi
}

# check_json NAME JOB=DIR,DIR ...: every job of the report has error 0, and the jobs named
# did I/O (io_bytes > 0) in each direction listed.
check_json() {
	local name=$1
	shift
	python3 - "$work/$name.json" "$@" <<'PY' || fail "fio $name: report check failed"
import json, sys
path, specs = sys.argv[1], sys.argv[2:]
want = {s.split("=")[0]: s.split("=")[1].split(",") for s in specs}
with open(path) as f:
    text = f.read()
# fio may print notes before the JSON object: start at the first '{'.
report = json.loads(text[text.index("{"):])
jobs = report["jobs"]
seen = set()
for job in jobs:
    name = job["jobname"]
    if job["error"] != 0:
        sys.exit("job %s: error %d" % (name, job["error"]))
    for d in want.get(name, []):
        io = job[d]["io_bytes"]
        if io <= 0:
            sys.exit("job %s: no %s I/O" % (name, d))
        print("job %-10s %-5s %8d KiB %8.0f IOPS  errors 0" % (name, d, io // 1024,
              job[d]["iops"]))
    seen.add(name)
missing = set(want) - seen
if missing:
    sys.exit("jobs missing from the report: %s" % sorted(missing))
PY
}

common="ioengine=external:$engine
thread=1
bs=4k
iodepth=16
verify_state_save=0"

# 1. Two threads, each its own 32 MiB region, random writes read back and checked as they go.
cat >"$work/verify.fio" <<EOF
[global]
$common
filename=trtype=emu name=emu0 nn=2 size=64M ns=1
[verify]
rw=randwrite
size=32M
offset_increment=32M
numjobs=2
iodepth_batch_submit=4
iodepth_batch_complete_min=1
verify=crc32c
verify_backlog=64
do_verify=1
EOF
run_fio verify "$work/verify.fio"
check_json verify verify=write,read

# 1b. Blocks above the controller's transfer limit (mdts=2: 16 KiB) are split by the
# driver, not refused: 1 MiB writes verified.
cat >"$work/split.fio" <<EOF
[global]
$common
filename=trtype=emu name=emu1 size=32M mdts=2
[split]
rw=write
bs=1m
iodepth=4
size=16M
verify=crc32c
do_verify=1
EOF
run_fio split "$work/split.fio"
check_json split split=write,read

# 1c. Extended LBAs (512 + 8 bytes of metadata interleaved): blocks of 8 x 520 bytes,
# verified over the whole namespace.
cat >"$work/ext.fio" <<EOF
[global]
$common
filename=trtype=emu name=emu2 size=4M ms=8 mset=1
[ext]
rw=randwrite
bs=4160
verify=crc32c
do_verify=1
EOF
run_fio ext "$work/ext.fio"
check_json ext ext=write,read

# 1d. More requests than the qpair has request objects: at iodepth 1000 the qpair has 1001
# entries and (qpair_requests=1024) 1024 objects, and each 32 KiB block above mdts=2 holds
# two (itself and a child), so the driver refuses some submissions (-ENOMEM). They must wait in the engine,
# not go back to fio as FIO_Q_BUSY: fio's retry of a write draws another verify seed, and
# a mixed job's verify then fails "bad header rand_seed". Two threads. Trims at iodepth
# 128 run out of the qpair's pages for DSM ranges the same way.
cat >"$work/depth.fio" <<EOF
[global]
$common
filename=trtype=emu name=emu3 size=128M mdts=2 lba=4096
[depth]
qpair_requests=1024
rw=randrw
bs=32k
iodepth=1000
size=64M
offset_increment=64M
numjobs=2
verify=crc32c
do_verify=1
[trimdepth]
stonewall
rw=randtrim
iodepth=128
size=16M
EOF
run_fio depth "$work/depth.fio"
check_json depth depth=write,read trimdepth=trim

# 2. Random reads (2 threads), trim on namespace 2, and one job over two files (both
# namespaces of the same controller: ':' separates fio's files).
cat >"$work/mixed.fio" <<EOF
[global]
$common
time_based=1
runtime=2
[randread]
filename=trtype=emu name=emu0 nn=2 size=64M ns=1
rw=randread
numjobs=2
[trim]
filename=trtype=emu name=emu0 ns=2
rw=randtrim
bs=64k
iodepth=4
[twofiles]
filename=trtype=emu name=emu0 ns=1:trtype=emu name=emu0 ns=2
rw=randrw
EOF
run_fio mixed "$work/mixed.fio"
check_json mixed randread=read trim=trim twofiles=read,write

# expect_refusal NAME PATTERN... : fio (args in $args) must exit non-zero, not through a
# signal or a timeout, and print every PATTERN.
expect_refusal() {
	local name=$1 rc p
	shift
	timeout -k 5 60 fio "${args[@]}" >"$work/$name.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ]; then
		cat "$work/$name.out"
		fail "$name: fio exit status $rc, wanted a clean failure"
	fi
	for p in "$@"; do
		if ! grep -qF -- "$p" "$work/$name.out"; then
			cat "$work/$name.out"
			fail "$name: the message lacks '$p'"
		fi
	done
	echo "$name: refused (exit $rc): $(grep -m1 -e nvpoll_fio -e "$1" "$work/$name.out")"
}

# 3. Processes instead of threads: a message, not a hang or crash.
args=(--name=nothread "--ioengine=external:$engine" --thread=0
	"--filename=trtype=emu name=emu0" --rw=read --size=1M)
expect_refusal nothread "thread=1"

# 4. An engine built against another fio ABI: both versions and the fix are named.
if [ -f "$skew" ]; then
	args=(--name=skew "--ioengine=external:$skew" --thread=1
		"--filename=trtype=emu name=emu0" --rw=read --size=1M)
	expect_refusal skew "$(fio --version)" "FIO_IOOPS_VERSION" "--with-fio="
fi

# 4b. Separate metadata needs a buffer the engine does not supply: refused at setup.
args=(--name=sepmd "--ioengine=external:$engine" --thread=1
	"--filename=trtype=emu name=emu0 ms=8" --rw=read --size=1M)
expect_refusal sepmd "separate metadata"

# 4c. Options of the bdev mode without bdev_config=: refused by name (as nvp_perf refuses
# --wbt without -b), not ignored.
for o in bdev_wbt=5 bdev_sched=kyber write_class=sync bdev_tenant=2 tenant_weight=3 \
	bdev_io_pool=8; do
	args=(--name=nobdev "--ioengine=external:$engine" --thread=1
		"--filename=trtype=emu name=emu0" --rw=read --size=1M "--$o")
	expect_refusal "nobdev_${o%%=*}" "$o is an option of the bdev mode" "add bdev_config="
done
# and the NVMe mode's qpair options in bdev mode: refused, not ignored
for o in qpair_requests=64 emu_inline=1 ring_at_commit=4 commit_shadow=1; do
	args=(--name=bdevnvme "--ioengine=external:$engine" --thread=1
		"--bdev_config=malloc:name=m0,num_blocks=2048" --filename=m0 --rw=read
		--size=1M "--$o")
	expect_refusal "bdevnvme_${o%%=*}" "$o is an option of the NVMe mode"
done

# 5. verify is not vacuous: checking a fresh controller (nothing written) must fail, so the
# reads above really returned what the device stored.
args=(--name=fresh "--ioengine=external:$engine" --thread=1
	"--filename=trtype=emu name=emu0" --rw=randwrite --size=1M --verify=crc32c
	--verify_only=1 --verify_state_save=0)
expect_refusal fresh "verify: bad magic header"

# 6. Setup failures are fio failures: no DMA memory for the qpair (mem_size_mb=1) must make
# fio exit non-zero with the job's error set in its JSON, as fio's own engines do.
args=(--name=nomem "--ioengine=external:$engine" --thread=1 "--filename=trtype=emu name=emu0"
	--rw=randread --size=1M --mem_size_mb=1 --output-format=json)
expect_refusal nomem "cannot allocate an I/O qpair"
python3 - "$work/nomem.out" <<'PY' || fail "nomem: the JSON report does not carry the job's error"
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
if job["error"] == 0:
    sys.exit("job error is 0")
print("nomem: job error %d in the JSON report" % job["error"])
PY
args=(--name=negmem "--ioengine=external:$engine" --thread=1 "--filename=trtype=emu name=emu0"
	--rw=randread --size=1M --mem_size_mb=-1)
expect_refusal negmem "mem_size_mb=-1 is out of range"

# 7. A file-backed software controller, spelled without escapes (file=PATH), keeps its image
# where PATH says and leaves no directory named after the filename in fio's working directory.
mkdir -p "$work/cwd"
cat >"$work/file.fio" <<EOF
[global]
$common
[file]
filename=trtype=emu name=emu0 size=8M file=$work/img
rw=randwrite
size=4M
verify=crc32c
EOF
(cd "$work/cwd" && run_fio file "$work/file.fio") || exit 1
check_json file file=write,read
[ -f "$work/img.ns1" ] || fail "file=: no image $work/img.ns1"
stray=$(find "$work/cwd" -mindepth 1 -type d | head -n 3)
[ -z "$stray" ] || fail "fio left directories in its working directory: $stray"
echo "file: image $work/img.ns1, no stray directories"

# 8. The engine was built the way users build it: against a fio tree configured with the
# optional libraries installed here (libaio, libnuma), as Debian's fio is. A tree configured
# before they were installed lacks their CONFIG_ lines and never compiles their headers.
fio_tree=$(sed -n 's/^FIO_SRC_DIR := //p' "$rootdir/mk/config.mk" 2>/dev/null)
if [ -n "$fio_tree" ] && [ -f "$fio_tree/config-host.h" ]; then
	for lib in libaio:CONFIG_LIBAIO numa:CONFIG_LIBNUMA; do
		hdr=${lib%%:*}.h
		if echo "#include <$hdr>" | ${CC:-cc} -E -x c - >/dev/null 2>&1 &&
			! grep -q "define ${lib#*:}\$" "$fio_tree/config-host.h"; then
			msg="$fio_tree was configured without ${lib#*:} although $hdr is installed; run scripts/get_fio_src.sh $fio_tree (it reconfigures a stale tree), then make"
			[ "${NVP_TEST_FIO_REQUIRED:-0}" = 1 ] && fail "$msg"
			echo "WARNING: $msg"
		fi
	done
fi
# 6. Waiting modes (lib/poll): the same verify through a hybrid sleeper and through the
# software controller's interrupts; a bad mode is refused. (No ':' in emu options here:
# fio splits filenames on it.)
for mode in hybrid irq; do
	cat >"$work/poll_$mode.fio" <<EOF
[global]
$common
filename=trtype=emu name=emu0 size=64M read_lat=40us
poll=$mode
[poll_$mode]
rw=randwrite
size=8M
verify=crc32c
do_verify=1
EOF
	run_fio "poll_$mode" "$work/poll_$mode.fio"
	check_json "poll_$mode" "poll_$mode=write,read"
done
args=(--name=badpoll "--ioengine=external:$engine" --thread=1
	"--filename=trtype=emu name=emu0" --rw=read --size=1M --poll=sometimes)
expect_refusal badpoll "poll=sometimes"

# 9. Doorbells per I/O (counted, not timed): with the software controller run inline by the
# job thread (emu_inline=1), fio's default batching (commit after every I/O, reap one at a
# time) must still reach the device with one SQ doorbell per poll, and each poll must take
# every completion there is - writes verified, so the kept completions are the right ones.
# ring_at_commit=1 (a doorbell per commit) shows the counters are not vacuous.
# commit_shadow=1 ("s"): the inline controller reads the SQ only inside getevents(), so at
# every commit it has caught up and the shadow-only ring leaves an MMIO write owed, which
# the poll must write - the data verified, the doorbells per I/O as low as without it.
for rac in 0 1 s; do
	shadow=0
	[ "$rac" = s ] && shadow=1
	cat >"$work/db_$rac.fio" <<EOF
[global]
$common
filename=trtype=emu name=emu0 size=64M
iodepth=32
emu_inline=1
qpair_stats=1
ring_at_commit=${rac/s/0}
commit_shadow=$shadow
[db_$rac]
rw=randwrite
size=8M
verify=crc32c
do_verify=1
EOF
	run_fio "db_$rac" "$work/db_$rac.fio"
	check_json "db_$rac" "db_$rac=write,read"
	grep '^nvpoll_fio:' "$work/db_$rac.err"
	sq=$(sed -n 's/.*SQ doorbell \([0-9.]*\) MMIO + \([0-9.]*\) shadow.*/\1 \2/p' "$work/db_$rac.err")
	polls=$(sed -n 's/.*getevents, \([0-9.]*\) polls.*/\1/p' "$work/db_$rac.err")
	[ -n "$sq" ] && [ -n "$polls" ] || fail "db_$rac: no qpair_stats lines on stderr"
	if [ "$rac" != 1 ]; then
		awk -v s="$sq" -v p="$polls" 'BEGIN { split(s, a, " ");
			exit !(a[1] + a[2] <= 0.1 && p <= 0.1) }' ||
			fail "db_$rac: SQ doorbells ($sq MMIO, shadow) or polls ($polls) per I/O above 0.1"
	else
		awk -v s="$sq" 'BEGIN { split(s, a, " "); exit !(a[1] + a[2] >= 0.9) }' ||
			fail "db_1: ring_at_commit=1 rang less than once per I/O ($sq)"
	fi
done

# 10. NVMe/TCP: the same engine over nvpoll's TCP transport, against the functional tests'
# target in another process (nvme_tcp --serve: a software controller served on 127.0.0.1).
# Two threads, each its own connection, write and verify with header and data digests on;
# then the target's own checks (no bad PDU from the host) must pass when it stops. fio
# splits filenames at ':', so the pairs are written key=value and the colon inside the
# subsystem NQN is escaped as '\:'.
tgt_bin=$rootdir/build/test/functional/nvme_tcp
[ -x "$tgt_bin" ] || fail "$tgt_bin was not built"
coproc TGT { exec "$tgt_bin" --serve 2>&1; }
tgt_pid=$TGT_PID
tgt_in=${TGT[1]}
tgt_out=${TGT[0]}
tcp_trid=
while IFS= read -r -t 60 line <&"$tgt_out"; do
	case $line in NVP_TCP_TRID=*)
		tcp_trid=${line#NVP_TCP_TRID=}
		break
		;;
	esac
done
[ -n "$tcp_trid" ] || fail "tcp: the target (nvme_tcp --serve) printed no transport ID"
tcp_file=$(sed -E 's/(^| )([a-z]+):/\1\2=/g; s/:/\\:/g' <<<"$tcp_trid")
echo "tcp: $tcp_trid -> filename=$tcp_file"
cat >"$work/tcp.fio" <<EOF
[global]
$common
filename=$tcp_file hdgst=1 ddgst=1 ns=1
[tcp]
rw=randwrite
size=16M
offset_increment=16M
numjobs=2
verify=crc32c
do_verify=1
EOF
run_fio tcp "$work/tcp.fio"
check_json tcp tcp=write,read
eval "exec $tgt_in>&-" # stdin closed: the target stops
tgt_log=$(cat <&"$tgt_out")
wait "$tgt_pid"
tgt_rc=$?
grep -E "^served|FAIL|fail" <<<"$tgt_log"
grep -Eq "^served .* [1-9][0-9]* header and [1-9][0-9]* data digests checked" <<<"$tgt_log" ||
	fail "tcp: hdgst=1 ddgst=1 in the filename, but the target checked no digests"
[ "$tgt_rc" -eq 0 ] || {
	echo "$tgt_log"
	fail "tcp: the target's checks failed (exit $tgt_rc)"
}

# 11. NVMe/TCP over IPv6: nvp serve on ::1, the engine attaching with adrfam=IPv6 and
# traddr=\:\:1 (every colon of the address escaped), write and verify. Skipped, said so,
# only without an IPv6 loopback.
if ! python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	echo "SKIP tcp6: no IPv6 loopback (::1) on this machine"
else
	"$rootdir/build/bin/nvp" serve --addr ::1 -p 0 -t 120 >"$work/serve6.out" 2>&1 &
	serve_pid=$!
	tcp6_trid=
	for _ in $(seq 300); do
		tcp6_trid=$(sed -n 's/^transport ID: //p' "$work/serve6.out")
		[ -n "$tcp6_trid" ] && break
		kill -0 "$serve_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$tcp6_trid" ] || fail "tcp6: nvp serve --addr ::1 printed no transport ID"
	tcp6_file=$(sed -E 's/(^| )([a-z]+):/\1\2=/g; s/:/\\:/g' <<<"$tcp6_trid")
	echo "tcp6: $tcp6_trid -> filename=$tcp6_file"
	cat >"$work/tcp6.fio" <<EOF
[global]
$common
filename=$tcp6_file ns=1
[tcp6]
rw=randwrite
size=16M
verify=crc32c
do_verify=1
EOF
	run_fio tcp6 "$work/tcp6.fio"
	check_json tcp6 tcp6=write,read
	kill -INT "$serve_pid"
	wait "$serve_pid" || fail "tcp6: nvp serve exited $? after SIGINT: $(cat "$work/serve6.out")"
	serve_pid=
fi

echo "PASS"
