#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
"""test/qemu/pair_table.py [--json OUT] LOG...: nvpoll's bdev path against its raw path.

Reads the console logs of one or more bench boots (test/qemu/run.sh --bench) and their
  NVPBENCH nvpoll|nvpoll-bdev QD {"iops":..,"mean_us":..,"cpu_us_per_io":..,"preempted":..}
lines. Within one log, the k-th raw run at a depth and the k-th bdev run at that depth are
one pair: bench.list runs them back to back (test/qemu/lib.sh, nvp_bench_raw_bdev_reps),
so both sides of a pair see the same host. In this TCG guest QD1 latency moves by 2x
between runs with where the host's scheduler puts QEMU's threads; a ratio within a pair
is steadier than one between the sides' means.

The bench rules leave out a repetition whose spinning thread was preempted. In this guest
every run's thread is (the guest kernel's timer ticks and kworkers land on its vCPU: tens
to hundreds of involuntary switches in 10 s), so every pair is counted and the table shows
how many pairs had a preempted side and the median of their switches. Pairs with errors
are left out. Prints the medians, with n and the spread (min..max), and ends with
  RESULT bdev_vs_raw_mean_qd1=X n=N spread=A..B bdev_vs_raw_mean_qd32=Y n32=M spread32=C..D
(the bdev path's mean latency over the raw path's: 1.00 = the block layer costs nothing).
"""
import json
import statistics
import sys

from benchpairs import args, pairs as pairs_of, spread

def main(argv):
    out, argv = args(argv, __doc__)
    pairs = pairs_of(argv, "nvpoll", "nvpoll-bdev")
    if not pairs:
        print(f"no NVPBENCH nvpoll/nvpoll-bdev pairs in {' '.join(argv)}")
        return 1
    print()
    print(f"nvpoll's bdev path against its raw path, pairs of runs back to back; {len(argv)} log(s);")
    print("median [min..max] over n counted pairs")
    print(f"  {'QD':>3} {'n':>2} {'left':>4}  {'raw mean us':>24} {'bdev mean us':>24} {'bdev/raw mean':>20}"
          f" {'bdev/raw CPU/IO':>20}")
    summary = {}
    for qd in sorted(pairs):
        counted = [(a, b) for a, b in pairs[qd]
                   if a.get("errors", 1) == 0 and b.get("errors", 1) == 0
                   and a.get("mean_us", 0) > 0 and a.get("cpu_us_per_io", 0) > 0]
        left = len(pairs[qd]) - len(counted)
        preempted = sum(1 for a, b in counted if a.get("preempted") or b.get("preempted"))
        switches = [x.get("nivcsw") for a, b in counted for x in (a, b) if x.get("nivcsw") is not None]
        lat = [b["mean_us"] / a["mean_us"] for a, b in counted]
        cpu = [b["cpu_us_per_io"] / a["cpu_us_per_io"] for a, b in counted]
        print(f"  {qd:>3} {len(counted):>2} {left:>4}  {spread([a['mean_us'] for a, _ in counted], '{:.1f}'):>24}"
              f" {spread([b['mean_us'] for _, b in counted], '{:.1f}'):>24} {spread(lat):>20} {spread(cpu):>20}"
              f"  preempted {preempted}/{len(counted)}"
              + (f", {statistics.median(switches):.0f} switches" if switches else ""))
        summary[qd] = {"n": len(counted), "left_out": left, "preempted": preempted,
                       "nivcsw": switches, "mean_ratio": lat, "cpu_ratio": cpu,
                       "raw_mean_us": [a["mean_us"] for a, _ in counted],
                       "bdev_mean_us": [b["mean_us"] for _, b in counted]}
    print("  (left: pairs with errors, not counted; preempted: pairs with a side whose thread was")
    print("  preempted, counted: in this guest every run is)")
    if out:
        with open(out, "w") as f:
            json.dump({"logs": argv, "by_qd": summary}, f, indent=1)

    def res(qd, suffix):
        r = summary.get(qd, {}).get("mean_ratio") or []
        if not r:
            return f"bdev_vs_raw_mean_qd{qd}=na n{suffix}=0"
        return (f"bdev_vs_raw_mean_qd{qd}={statistics.median(r):.2f} n{suffix}={len(r)}"
                f" spread{suffix}={min(r):.2f}..{max(r):.2f}")

    print(f"RESULT {res(1, '')} {res(32, '32')}")
    return 0 if summary.get(1, {}).get("n") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
