#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The fio engine's bdev mode: bdev_config= names a JSON configuration, filenames are bdev
# names. Random writes with verify=crc32c through a malloc bdev, a software controller's
# namespace and a uring bdev over a temporary file, from three threads at once; fio's exit
# status and its JSON report (parsed) must show no error and I/O in both directions. Mixed
# reads and writes verified on bdevs that split each request into several. Then
# an unknown bdev name and a bad configuration must be messages and a failed job (a
# configuration error: EINVAL). The
# engine's bdev_sched=, bdev_wbt=, bdev_tenant=, tenant_weight=, write_class= and fio's
# write_hint= must run and verify; their bad values must be messages naming them. Skips
# (77) without fio or the engine, unless NVP_TEST_FIO_REQUIRED=1.

set -u

rootdir=$(cd "$(dirname "$0")/../../.." && pwd)
engine=$rootdir/build/fio/nvpoll_fio.so
work=$(mktemp -d "${TMPDIR:-/tmp}/nvp-fio-bdev.XXXXXX")
trap 'rm -rf "$work"' EXIT

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

command -v fio >/dev/null 2>&1 || skip "fio is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -f "$engine" ] || skip "$engine was not built (./configure --with-fio)"
if grep -q '^CONFIG_ASAN := y' "$rootdir/mk/config.mk" 2>/dev/null; then
	cc=$(sed -n 's/^CC := //p' "$rootdir/mk/config.mk")
	asan=$(${cc:-cc} -print-file-name=libasan.so)
	[ -f "$asan" ] || skip "ASan build but no libasan.so to preload into fio"
	export LD_PRELOAD=$asan
	export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1
fi

truncate -s 16M "$work/disk" || fail "cannot make $work/disk"
cat >"$work/bdev.json" <<JSON
{"subsystems": [{"subsystem": "bdev", "config": [
  {"method": "bdev_malloc_create", "params": {"name": "m0", "num_blocks": 32768}},
  {"method": "bdev_nvme_attach_controller",
   "params": {"name": "emu0", "trtype": "emu", "size": "16M"}},
  {"method": "bdev_uring_create", "params": {"name": "u0", "filename": "$work/disk"}}
]}]}
JSON

job() { # job NAME FILENAMES-AND-JOBS...
	local name=$1
	shift
	{
		echo "[global]"
		echo "ioengine=external:$engine"
		echo "thread=1"
		echo "no_huge=1"
		echo "bdev_config=$work/bdev.json"
		echo "bs=4k"
		echo "iodepth=8"
		echo "size=4M"
		echo "verify_state_save=0" # no state files left in the working directory
		for j in "$@"; do
			printf '%b\n' "$j"
		done
	} >"$work/$name.fio"
}

job good "[malloc]\nfilename=m0\nrw=randwrite\nverify=crc32c" \
	"[nvme]\nfilename=emu0n1\nrw=randwrite\nverify=crc32c" \
	"[uring]\nfilename=u0\nrw=randwrite\nverify=crc32c"
timeout -k 5 120 fio --output-format=json --output="$work/good.json" "$work/good.fio" \
	>"$work/good.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$work/good.out"
	fail "fio exited $rc"
fi
python3 - "$work/good.json" <<'PY' || fail "the report shows an error or no I/O"
import json, sys
text = open(sys.argv[1]).read()
jobs = json.loads(text[text.index("{"):])["jobs"]
assert sorted(j["jobname"] for j in jobs) == ["malloc", "nvme", "uring"], jobs
for j in jobs:
    # written, then read back by verify
    assert j["error"] == 0, (j["jobname"], j["error"])
    assert j["write"]["io_bytes"] == 4 << 20, (j["jobname"], j["write"]["io_bytes"])
    assert j["read"]["io_bytes"] == 4 << 20, (j["jobname"], j["read"]["io_bytes"])
    print("%-6s wrote and verified %d KiB" % (j["jobname"], j["write"]["io_bytes"] >> 10))
PY

# Bdevs that split large I/O (4 KiB blocks, 32 KiB and 16 KiB max transfers, a boundary):
# mixed 128 KiB reads and writes at iodepth 32 from two threads per bdev, verified. Each
# request takes up to 5 bdev_ios at once; a pool of twice the depth ran dry, and fio's retry
# of the refused writes broke its verify ("bad header rand_seed"). The channel is sized for
# the job now; with a pool of 2 (bdev_io_pool=2) requests wait for bdev_ios inside the
# engine and verify all the same. The configuration is given by SPDK's name of the option,
# spdk_json_conf=.
cat >"$work/split.json" <<JSON
{"subsystems": [{"subsystem": "bdev", "config": [
  {"method": "bdev_malloc_create",
   "params": {"name": "m1", "num_blocks": 8192, "block_size": 4096, "max_xfer_blocks": 8}},
  {"method": "bdev_malloc_create",
   "params": {"name": "m2", "num_blocks": 8192, "block_size": 4096, "max_xfer_blocks": 8,
              "optimal_io_boundary": 12}},
  {"method": "bdev_nvme_attach_controller",
   "params": {"name": "e1", "trtype": "emu", "size": "32M", "lba": 4096, "mdts": 2}}
]}]}
JSON
{
	echo "[global]"
	echo "ioengine=external:$engine"
	echo "thread=1"
	echo "no_huge=1"
	echo "spdk_json_conf=$work/split.json"
	echo "rw=randrw"
	echo "bs=128k"
	echo "iodepth=32"
	echo "numjobs=2"
	echo "size=16M"
	echo "offset_increment=16M"
	echo "verify=crc32c"
	echo "verify_state_save=0"
	printf '[malloc]\nfilename=m1\n[nvme]\nfilename=e1n1\n[waits]\nfilename=m2\nbdev_io_pool=2\n'
} >"$work/split.fio"
timeout -k 5 120 fio --output-format=json --output="$work/split.json.out" "$work/split.fio" \
	>"$work/split.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$work/split.out" "$work/split.json.out"
	fail "fio on splitting bdevs exited $rc"
fi
python3 - "$work/split.json.out" <<'PY' || fail "the splitting run shows an error or no I/O"
import json, sys
text = open(sys.argv[1]).read()
jobs = json.loads(text[text.index("{"):])["jobs"]
assert sorted(j["jobname"] for j in jobs) == ["malloc"] * 2 + ["nvme"] * 2 + ["waits"] * 2, jobs
for j in jobs:
    assert j["error"] == 0, (j["jobname"], j["error"])
    assert j["write"]["io_bytes"] > 0 and j["read"]["io_bytes"] > 0, j["jobname"]
    print("%-6s wrote %d KiB, read and verified %d KiB in 128 KiB requests, split"
          % (j["jobname"], j["write"]["io_bytes"] >> 10, j["read"]["io_bytes"] >> 10))
PY

# The scheduler, the throttle, the write class and fio's write_hint= through the engine:
# every write still completes and verifies; two weighted tenants share one bdev.
job stages "[bg]\nfilename=m0\nrw=randwrite\nverify=crc32c\nverify_state_save=0\nbdev_sched=kyber:read_lat_us=1000\nbdev_wbt=2000\nwrite_class=background\nwrite_hint=short" \
	"[sync]\nfilename=emu0n1\nrw=randwrite\nverify=crc32c\nverify_state_save=0\nbdev_sched=fair\nbdev_tenant=1\ntenant_weight=4\nwrite_class=sync\nwrite_hint=extreme"
timeout -k 5 120 fio --output-format=json --output="$work/stages.json" "$work/stages.fio" \
	>"$work/stages.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$work/stages.out"
	fail "fio with bdev_sched/bdev_wbt/write_class/write_hint exited $rc"
fi
python3 - "$work/stages.json" <<'PY' || fail "the stages run shows an error or no I/O"
import json, sys
text = open(sys.argv[1]).read()
jobs = json.loads(text[text.index("{"):])["jobs"]
for j in jobs:
    assert j["error"] == 0, (j["jobname"], j["error"])
    assert j["write"]["io_bytes"] == 4 << 20, (j["jobname"], j["write"]["io_bytes"])
    assert j["read"]["io_bytes"] == 4 << 20, (j["jobname"], j["read"]["io_bytes"])
PY

bad_opt() { # bad_opt OPTION=VALUE EXPECTED-MESSAGE
	job badopt "[x]\nfilename=m0\nrw=randwrite\n$1"
	timeout -k 5 60 fio "$work/badopt.fio" >"$work/badopt.out" 2>&1
	grep -q -- "$2" "$work/badopt.out" || {
		cat "$work/badopt.out"
		fail "$1: no message \"$2\""
	}
}
bad_opt bdev_sched=bogus "bdev_sched=bogus on m0: unknown scheduler"
bad_opt bdev_sched=kyber:nope=1 "bdev_sched=kyber:nope=1 on m0: bad parameters"
bad_opt bdev_wbt=2ms "bdev_wbt=2ms: expected"
bad_opt write_class=urgent "write_class=urgent: expected"
bad_opt "bdev_tenant=1\ntenant_weight=2" "tenant_weight=2 on m0: needs bdev_sched=fair"

job nobdev "[x]\nfilename=nope\nrw=randread"
# (fio 3.33 exits 0 when an engine's setup() refuses a job: the messages are what counts)
timeout -k 5 60 fio "$work/nobdev.fio" >"$work/nobdev.out" 2>&1
grep -q "filename 'nope': no such bdev" "$work/nobdev.out" || {
	cat "$work/nobdev.out"
	fail "an unknown bdev name: no message naming it"
}
grep -q "bdevs: m0, emu0n1, u0" "$work/nobdev.out" || fail "the message does not list the bdevs"

echo '{"subsystems": [{"subsystem": "bdev", "config": [{"method": "bdev_malloc_create", "params": {"name": "m0"}}]}]}' >"$work/bdev.json"
timeout -k 5 60 fio "$work/nobdev.fio" >"$work/badcfg.out" 2>&1
grep -q "params: missing parameter num_blocks" "$work/badcfg.out" || {
	cat "$work/badcfg.out"
	fail "a bad configuration: no message naming the parameter"
}

# An error in the configuration is the job's EINVAL (nvp_perf and nvp bdev-list exit 2 for
# it), its message naming the file, line and column: a bdev name given twice, and JSON that
# is not RFC 8259's (a trailing comma, which json-c alone would take).
cfg_refused() { # cfg_refused NAME MESSAGE: bdev.json refused, MESSAGE printed, job error 22
	job "$1" "[x]\nfilename=m0\nrw=randread"
	timeout -k 5 60 fio --output-format=json "$work/$1.fio" >"$work/$1.out" 2>&1
	grep -qF -- "$2" "$work/$1.out" || {
		cat "$work/$1.out"
		fail "$1: no message \"$2\""
	}
	python3 - "$work/$1.out" <<'PY' || fail "$1: the job's error is not EINVAL (22)"
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{\n"):])["jobs"][0]
assert job["error"] == 22, job["error"]
PY
	echo "$1: refused, job error 22: $(grep -m1 "$work/bdev.json:" "$work/$1.out")"
}
printf '%s\n' '{"subsystems": [{"subsystem": "bdev", "config": [' \
	'  {"method": "bdev_malloc_create", "params": {"name": "m0", "num_blocks": 64}},' \
	'  {"method": "bdev_null_create", "params": {"name": "m0", "num_blocks": 64}}]}]}' \
	>"$work/bdev.json"
cfg_refused dupname "$work/bdev.json:3:3: subsystems[0].config[1] (bdev_null_create)"
printf '%s\n' '{"subsystems": [{"subsystem": "bdev", "config": [' \
	'  {"method": "bdev_malloc_create", "params": {"name": "m0", "num_blocks": 64,}}]}]}' \
	>"$work/bdev.json"
cfg_refused trailing "$work/bdev.json:2:77: malformed JSON: trailing ','"
echo "PASS"
