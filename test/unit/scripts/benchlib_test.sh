#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# bench/benchlib.py's rules, on made-up repetitions (nothing is timed, nothing runs): a
# ratio is taken within a round and only over rounds in which its variants counted;
# interleave() goes on past n rounds until n counted, within max_rounds; a spinning thread
# under 90 % of a CPU, or a sleeping one under 90 % of the CPU it asked for, was
# preempted; a p99.9 needs 10,000 samples; a RESULT needs n=; a preset's lognormal read
# latency scales to a given mean with its shape kept. Exit 0 pass, 1 fail, 77 skip.

set -u

rootdir=$(cd "$(dirname "$0")/../../.." && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }

exec python3 - "$rootdir/bench" <<'EOF'
import io
import math
import sys
from contextlib import redirect_stdout

sys.path.insert(0, sys.argv[1])
import benchlib as bl

fails = 0


def check(cond, what):
    global fails
    if not cond:
        print("FAIL " + what)
        fails += 1


def spin(share):
    return bl.ThreadUse("t", share, 1.0, True)


# Preemption: a spinning thread by its share of a CPU, a sleeping one by its run-queue wait.
check(spin(0.95).preempted() is None, "a spinner at 95 % counts")
check(spin(0.85).preempted() is not None, "a spinner at 85 % was preempted")
check(bl.ThreadUse("t", 0.95, 1.0, True, runq_s=0.2).preempted() is not None,
      "a spinner that waited 0.2 s for 0.95 s of CPU was preempted")
check(bl.ThreadUse("t", 0.3, 1.0, False, runq_s=0.01).preempted() is None,
      "a sleeper that got 97 % of what it asked for counts, whatever its share")
check(bl.ThreadUse("t", 0.3, 1.0, False, runq_s=0.1).preempted() is not None,
      "a sleeper that waited a quarter of its CPU time was preempted")
check(bl.ThreadUse("t", 0.3, 1.0, False).preempted() is None,
      "a sleeper with no run-queue figure is not judged")

# interleave(): A B A B rounds; a preempted repetition is kept, marked, not counted.
plan = {("a", 0): 1.0, ("b", 0): 2.0, ("a", 1): 1.0, ("b", 1): 4.0,  # round 1: b preempted
        ("a", 2): 2.0, ("b", 2): 3.0, ("a", 3): 1.0, ("b", 3): 1.5}
order = []


def run(v, i):
    order.append(v)
    return bl.Rep(v, {"x": plan[(v, i)]}, [spin(0.5 if (v, i) == ("b", 1) else 1.0)])


reps = bl.interleave(["a", "b"], run, n=3, max_rounds=10)
check(order == ["a", "b"] * 4, "A B A B, one more round for the preempted one: %s" % order)
check(len(reps.rounds) == 4 and len(reps.full_rounds()) == 3, "3 counted rounds of 4")
check(reps.rounds[1]["b"].mark() == "P" and reps.rounds[1]["a"].mark() == "",
      "the preempted repetition is marked")
r = reps.ratio("b", "a", "x")
check((r.n, r.median, r.min, r.max) == (3, 1.5, 1.5, 2.0),
      "b/a within rounds 0, 2, 3: %s" % r.text())
m = reps.median("b", "x")
check((m.n, m.total, m.median) == (3, 4, 2.0), "b's median over its counted runs")
check("n=3" in r.text() and r.kv("q") == "q=1.500 q_min=1.500 q_max=2.000", r.kv("q"))

reps = bl.interleave(["a", "b"], lambda v, i: bl.Rep(v, {"x": 1.0}, [spin(0.1)]), n=2,
                     max_rounds=3)
check(len(reps.rounds) == 3 and reps.ratio("a", "b", "x").n == 0,
      "nothing counted: stop at max_rounds, n=0")
check(math.isnan(reps.ratio("a", "b", "x").median), "no counted round: nan, not a figure")
order.clear()
bl.interleave(["a", "b"], lambda v, i: (order.append(v), bl.Rep(v, {}, []))[1], n=2,
              order="abba")
check(order == ["a", "b", "b", "a"], "abba reverses every other round: %s" % order)

# Tails and the RESULT line.
check(bl.tail_key(10000)[0] == "p99_9" and bl.tail_key(9999)[0] == "p99"
      and "9999 samples" in bl.tail_key(9999)[2], "p99.9 needs 10,000 samples")
try:
    bl.result("x=1")
    check(False, "a RESULT without n= is refused")
except ValueError:
    pass
out = io.StringIO()
with redirect_stdout(out):
    bl.result("a=1", b=0.5, n=5)
check(out.getvalue() == "RESULT a=1 b=0.500 n=5\n", out.getvalue())

# Device presets: the lognormal mean, and a read latency scaled to a mean, shape kept.
check(abs(bl.lognormal_mean_us(80, 160) - 83.6) < 0.1, "lognormal 80/160 has mean 83.6")
check(bl.dist_mean_us("bimodal:100us:1ms:10%") == 190.0 and bl.dist_mean_us("80") == 80.0,
      "bimodal and fixed means")
bl.emu_presets = lambda: {"tlc": {"read_lat": "lognormal:80us:160us", "channels": "32"}}
opts, note = bl.preset_with_read_mean("tlc", 100)
p50, p99 = (float(x[:-2]) for x in opts.split("lognormal:")[1].split(":"))
check(opts.startswith("preset=tlc read_lat=lognormal:") and abs(p99 / p50 - 2) < 0.01
      and abs(bl.lognormal_mean_us(p50, p99) - 100) < 0.2, opts)

print("benchlib: %s" % ("%d failed" % fails if fails else "all passed"))
sys.exit(1 if fails else 0)
EOF
