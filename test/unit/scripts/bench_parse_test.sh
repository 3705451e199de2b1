#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# What bench/benchlib.py reads from the programs the benches run, on made-up outputs
# (nothing runs, nothing is timed): nvp_perf's JSON (totals, per job, per tenant, threads),
# its --poll text, nvp_bench_mix's key=value lines, the presets nvp_perf --help prints
# (folded lines included), and a command printed as a person types it. Then a smoke test of
# every bench script: --help exits 0, an unknown argument exits 2 (without running a
# benchmark), and README.md's table of benchmarks has its row. Exit 0 pass, 1 fail, 77 skip.

set -u

rootdir=$(cd "$(dirname "$0")/../../.." && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }

python3 - "$rootdir/bench" <<'EOF' || exit 1
import sys

sys.path.insert(0, sys.argv[1])
import benchlib as bl

fails = 0


def check(cond, what):
    global fails
    if not cond:
        print("FAIL " + what)
        fails += 1


def lat(p99):
    return {"mean": 100.0, "min": 50.0, "max": 900.0, "p50": 90.0, "p90": 120.0, "p99": p99,
            "p99_9": p99 * 2, "p99_99": p99 * 3}


thread = {"core": 0, "cpu_s": 0.5, "elapsed_s": 2.0, "involuntary_ctx_switches": 7,
          "voluntary_ctx_switches": 0, "preempted": True, "jobs_on_thread": 2}
report = {
    "status": "ok",
    "jobs": [{"name": "reader", "ios": 1000, "reads": 1000, "writes": 0, "errors": 0,
              "iops": 500.0, "mib_s": 1.95, "latency_us": lat(300.0), "latency_samples": 1000,
              "threads": [thread]},
             {"name": "t4", "ios": 4000, "reads": 2000, "writes": 2000, "errors": 0,
              "iops": 2000.0, "mib_s": 7.8, "latency_us": lat(200.0), "latency_samples": 4000,
              "threads": [dict(thread, preempted=False)]}],
    "total": {"ios": 5000, "errors": 0, "iops": 2500.0, "mib_s": 9.75, "latency_us": lat(250.0),
              "cpu": {"total_s": 0.5, "per_io_us": 100.0,
                      "threads": [dict(thread, jobs=["reader", "t4"])]}},
    "bdevs": [{"name": "emu0n1", "scheduler": {"name": "fair", "tenants": [
        {"tenant": 1, "weight": 1, "ios": 10, "bytes": 40960},
        {"tenant": 2, "weight": 4, "ios": 40, "bytes": 163840}]}}]}

f = bl.perf_figures(report)
check(f["iops"] == 2500.0 and f["p99_us"] == 250.0 and f["p999_us"] == 500.0 and
      f["cpu_us_per_io"] == 100.0 and f["cpu_s"] == 0.5, "perf_figures: %r" % f)
j = bl.perf_jobs(report)
check(sorted(j) == ["reader", "t4"], "perf_jobs names: %r" % sorted(j))
check(j["reader"]["p99_us"] == 300.0 and j["reader"]["samples"] == 1000 and
      j["reader"]["preempted"] and not j["t4"]["preempted"] and j["t4"]["writes"] == 2000,
      "perf_jobs figures: %r" % j)
t = bl.perf_tenants(report)
check(t == {1: {"weight": 1, "ios": 10, "bytes": 40960},
            2: {"weight": 4, "ios": 40, "bytes": 163840}}, "perf_tenants: %r" % t)
check(bl.perf_tenants({"bdevs": [{"scheduler": {"name": "none"}}]}) == {} and
      bl.perf_tenants({}) == {}, "perf_tenants without tenants: {}")
th = bl.perf_threads(report, None, True)
check(len(th) == 1 and th[0].cpu_s == 0.5 and th[0].preempted() is not None,
      "perf_threads: a spinner with 25 % of a CPU was preempted")
th = bl.perf_threads(dict(report, total=dict(report["total"], cpu=dict(
    report["total"]["cpu"], threads=[dict(thread, cpu_s=1.9, runq_wait_s=0.5)]))), None, True)
check(th[0].runq_s == 0.5 and th[0].preempted() is not None,
      "perf_threads takes nvp_perf's own run-queue wait when given")

poll = ("Poll core 0 (--poll hybrid): 12 sleeps (26.0 us asked, 21.5 us late on average), "
        "3 oversleeps, 0 irq waits (0 timed out), 99 empty polls, wake-up cost 28.7 us, "
        "sleep CPU 37.7 us, 33949 samples (7 after a sleep or irq), 7 relearns, 5 wake probes\n"
        "Poll core 0: 0.288 s (wall) waiting for completions: 0.100 s asleep or blocked\n"
        "Device model emu0: completions posted 225.85 us late on average, 28109.3 us at "
        "worst, 4379 of 33989 more than 10 us late; 0 interrupts\n")
p = bl.perf_poll_stats(poll)
check(p.get("sleeps") == 12 and p.get("oversleeps") == 3 and p.get("wake_probes") == 5 and
      p.get("sleep_cpu_us") == 37.7 and p.get("wait_s") == 0.288 and
      p.get("slept_s") == 0.1 and abs(p.get("dev_late_over_10us_pct", 0) - 12.88) < 0.01,
      "perf_poll_stats: %r" % p)
check(bl.perf_poll_stats("") == {} and bl.perf_poll_stats(None) == {}, "no poll text: {}")

mix = ("interval t_ms=100 j0_ios=10 j0_p99_us=150.5 j0_max_us=300.0 j0_mib=0.039 step=-2 "
       "depth=4\n"
       "job id=0 rw=randread bs=4096 qd=1 tenant=0 ios=5709 iops=568 mib_s=2.22 "
       "mean_us=1752.7 p50_us=294.9 p99_us=12582.9 p999_us=18350.1 max_us=22247.1 "
       "cpu_s=0.039 cpu_ns_per_io=6770\n"
       "job id=1 rw=write bs=131072 qd=64 tenant=0 ios=61025 iops=6073 mib_s=759.18 "
       "mean_us=10499.8 p50_us=9568.3 p99_us=23068.7 p999_us=27525.1 max_us=35486.9 "
       "cpu_s=0.226 cpu_ns_per_io=3704\n"
       "summary seconds=12.048 wbt=on throttled=73550 deferred_ms=578393 steps_up=0 "
       "steps_down=3 sched=none dispatched=0 inline=1 kyber_depth=0/0/0/0 kyber_windows=0 "
       "kyber_congested=0\n"
       "summary_emu emu_cpu_s=1.263\n")
m = bl.mix_parse(mix)
check(len(m["jobs"]) == 2 and m["jobs"][0]["p999_us"] == 18350.1 and
      m["jobs"][1]["rw"] == "write" and m["jobs"][1]["ios"] == 61025 and
      isinstance(m["jobs"][1]["ios"], int), "mix_parse jobs: %r" % m["jobs"])
check(m["summary"]["wbt"] == "on" and m["summary"]["kyber_depth"] == "0/0/0/0" and
      m["summary"]["steps_down"] == 3 and m["emu"]["emu_cpu_s"] == 1.263,
      "mix_parse summary: %r %r" % (m["summary"], m["emu"]))
check(len(m["intervals"]) == 1 and m["intervals"][0]["step"] == -2 and
      m["intervals"][0]["j0_p99_us"] == 150.5, "mix_parse intervals: %r" % m["intervals"])
try:
    bl.mix_parse("interval t_ms=100\n")
    check(False, "mix_parse refuses output without job or summary lines")
except ValueError:
    pass

cmd = bl.mix_cmd("emu:size:1G preset:tlc", ["rw=randread,bs=4k,qd=1"], 3, 1, sched="kyber",
                 wbt="off")
check(cmd[0] == bl.MIX and cmd[cmd.index("--seconds") + 1] == "3" and
      cmd[cmd.index("--ramp") + 1] == "1" and "--inline" in cmd and "--idle-sleep" in cmd and
      cmd[-1] == "rw=randread,bs=4k,qd=1", "mix_cmd: %r" % cmd)
check("--inline" not in bl.mix_cmd("null:64", ["rw=read"], 1), "no --inline on a null bdev")
txt = bl.shell_text(cmd)
check(txt.startswith("build/bench/nvp_bench_mix --bdev 'emu:size:1G preset:tlc' "),
      "shell_text: %s" % txt)

helptext = """Usage: nvp_perf [options]
Presets (preset=NAME sets every model key; later keys override; figures and sources: x):
  scm  Optane SSD class
       read_lat=lognormal:9us:10us:17us channels=7
       read_prio=0
  tlc  PCIe 4 datacenter TLC
       read_lat=lognormal:80us:100us:150us
       channels=80 read_prio=1
Other:
  foo  bar
"""
pr = bl.parse_presets(helptext)
check(sorted(pr) == ["scm", "tlc"], "parse_presets names: %r" % sorted(pr))
check(pr.get("tlc", {}).get("channels") == "80" and pr["tlc"].get("read_prio") == "1" and
      pr.get("scm", {}).get("read_prio") == "0", "parse_presets folded keys: %r" % pr)

bl.emu_presets = lambda: pr
opts, _ = bl.preset_with_read_mean("tlc", 160)
check(opts.startswith("preset=tlc read_lat=lognormal:") and len(opts.split(":")) == 4,
      "a preset's p99.9 is kept when its read latency is scaled: %s" % opts)

cg = """fn=(1) io_loop
0 10
cfn=(2) pcie_get_reg_4
calls=3 0
0 40
cfn=(3) nvp_nvme_qpair_process_completions
calls=7 0
0 900
fn=(4) poll_one
cfn=(2)
calls=2 0
0 20
cfn=(5) pcie_set_reg_8.isra.0
calls=1 0
0 9
fn=(2)
0 5
"""
calls = bl.callgrind_calls(cg, {"pcie_get_reg_4", "pcie_set_reg_8", "pcie_get_reg_8"})
check(calls == {"pcie_get_reg_4": 5, "pcie_set_reg_8": 1, "pcie_get_reg_8": 0},
      "callgrind_calls: compressed names, suffixes, absent names: %r" % calls)

print("benchlib parsing: %s" % ("ok" if fails == 0 else "%d failed" % fails))
sys.exit(1 if fails else 0)
EOF

# Smoke: every bench script answers --help (exit 0) and refuses an unknown argument (2).
rc=0
for b in "$rootdir"/bench/*; do
	[ -f "$b" ] && [ -x "$b" ] || continue
	name=${b#"$rootdir"/}
	if ! out=$(timeout 60 "$b" --help 2>&1); then
		echo "FAIL $name --help: exit $?"
		rc=1
	elif [ -z "$out" ]; then
		echo "FAIL $name --help printed nothing"
		rc=1
	fi
	timeout 60 "$b" --no-such-option >/dev/null 2>&1
	st=$?
	if [ "$st" -ne 2 ]; then
		echo "FAIL $name --no-such-option: exit $st, want 2"
		rc=1
	fi
	if ! grep -qF "| \`$name\` |" "$rootdir/README.md"; then
		echo "FAIL $name has no row in README.md's table of benchmarks"
		rc=1
	fi
done
# The RESULT keys issues 28 and 30 ask for: each in its bench's documented RESULT line and in the
# code that prints it (two mentions at least).
for pair in driver_cost:instr_per_io driver_cost:mmio_per_io_qd1 driver_cost:mmio_per_io_qd32 \
	driver_cost:fence_cycles_asym driver_cost:fence_cycles_locked \
	bdev_overhead:instr_added_qd1 bdev_overhead:instr_added_qd32 \
	bdev_overhead:accounting_instr_pct bdev_overhead:cpu_ratio_qd32 \
	tcp_failover:lost tcp_failover:corrupted tcp_failover:reconnect_ms_p50 \
	tcp_failover:reconnect_ms_max tcp_failover:failover_ms_p50 tcp_failover:failover_ms_max; do
	b=${pair%%:*}
	key=${pair#*:}
	if [ "$(grep -cE "$key(=|\")" "$rootdir/bench/$b")" -lt 2 ]; then
		echo "FAIL bench/$b: RESULT key $key not both documented and printed"
		rc=1
	fi
done
[ "$rc" -eq 0 ] && echo "bench scripts: --help, bad arguments, README rows and RESULT keys ok"
exit "$rc"
