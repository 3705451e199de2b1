#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
"""test/qemu/tgt_bench_table.py [--json OUT] LOG...: nvp_tgt against nvmet-tcp in the guest.

Reads the console logs of one or more bench boots (test/qemu/run.sh --bench) and their lines
  NVPBENCH tgt-nvp|tgt-nvmet QD {"iops":..,"mean_us":..,"guest_cpu_us_per_io":..,..}
written by nvp_bench_tgt (test/qemu/lib.sh). Within one log, the k-th nvp_tgt run at a depth
and the k-th nvmet-tcp run at that depth are one repetition (the guest runs them back to
back, in alternating order), so each ratio compares two runs under the same host load.

Target CPU per I/O: nvp_tgt's is its own process time. nvmet-tcp works in kernel threads
beside the initiator's, so its share is the whole guest's CPU per I/O less what the
initiator side (fio, nvme-tcp) cost in the paired nvp_tgt run (the whole guest's less
nvp_tgt's own): an estimate that assumes the initiator costs the same per I/O against
either target.

Headlines are medians over the repetitions, with n and the spread (min..max). Ends with
  RESULT tgt_iops_per_cpu_ratio=X n=N spread=A..B guest_iops_per_cpu_ratio=Y
         tgt_qd1_mean_us=M nvmet_qd1_mean_us=K
(X: nvp_tgt's IOPS per target CPU-second over nvmet-tcp's at QD32). Exit 1 when a depth
has no complete repetition at QD32.
"""
import json
import statistics
import sys

from benchpairs import args, pairs as pairs_of, spread

def main(argv):
    out, argv = args(argv, __doc__)
    reps = pairs_of(argv, "tgt-nvp", "tgt-nvmet")
    if not reps:
        print(f"no NVPBENCH tgt lines in {' '.join(argv)}")
        return 1

    print()
    print("NVMe/TCP targets: nvp_tgt (null bdev) against nvmet-tcp (null_blk), the guest kernel's")
    print(f"initiator (fio io_uring), 4 KiB random reads; {len(argv)} log(s); median [min..max] over n")
    print(f"  {'QD':>3} {'n':>2}  {'target':<9} {'IOPS':>22} {'mean us':>24} {'target CPU us/IO':>22}"
          f" {'tgt ctx sw':>10}")
    summary = {}
    for qd in sorted(reps):
        pairs = [(a, b) for a, b in reps[qd] if a.get("errors", 1) == 0 and b.get("errors", 1) == 0]
        bad = len(reps[qd]) - len(pairs)
        rows = {"nvp": [], "nvmet": []}
        ratio, gratio, iops_ratio, mean_ratio = [], [], [], []
        for a, b in pairs:
            init = a["guest_cpu_us_per_io"] - a["tgt_cpu_us_per_io"]
            tk = b["guest_cpu_us_per_io"] - init
            rows["nvp"].append((a["iops"], a["mean_us"], a["tgt_cpu_us_per_io"], a.get("tgt_nvcsw")))
            # the estimate fails where nvp_tgt's spinning made the initiator look dearer
            # than nvmet-tcp's whole run (QD1, a loaded guest): shown as missing
            rows["nvmet"].append((b["iops"], b["mean_us"], tk if tk > 0 else None, 0))
            if a["tgt_cpu_us_per_io"] > 0 and tk > 0:
                ratio.append(tk / a["tgt_cpu_us_per_io"])
            if a["guest_cpu_us_per_io"] > 0:
                gratio.append(b["guest_cpu_us_per_io"] / a["guest_cpu_us_per_io"])
            iops_ratio.append(a["iops"] / b["iops"] if b["iops"] else 0)
            mean_ratio.append(a["mean_us"] / b["mean_us"] if b["mean_us"] else 0)
        for who, label in (("nvp", "nvp_tgt"), ("nvmet", "nvmet-tcp")):
            r = rows[who]
            print(f"  {qd:>3} {len(r):>2}  {label:<9} {spread([x[0] for x in r], '{:.0f}'):>22}"
                  f" {spread([x[1] for x in r], '{:.1f}'):>24}"
                  f" {spread([x[2] for x in r if x[2] is not None], '{:.1f}'):>22}"
                  f" {spread([x[3] for x in r if x[3] is not None], '{:.0f}') if who == 'nvp' else '':>10}")
        print(f"  {qd:>3} {len(pairs):>2}  ratios: IOPS {spread(iops_ratio, '{:.2f}')}, mean latency"
              f" {spread(mean_ratio, '{:.2f}')}, IOPS per target CPU-s {spread(ratio, '{:.2f}')},"
              f" per guest CPU-s {spread(gratio, '{:.2f}')}")
        if bad:
            print(f"  {qd:>3}     ({bad} repetition(s) with fio errors left out)")
        summary[qd] = {
            "n": len(pairs),
            "nvp_tgt": {"iops": [x[0] for x in rows["nvp"]], "mean_us": [x[1] for x in rows["nvp"]],
                        "tgt_cpu_us_per_io": [x[2] for x in rows["nvp"]],
                        "tgt_nvcsw": [x[3] for x in rows["nvp"] if x[3] is not None]},
            "nvmet": {"iops": [x[0] for x in rows["nvmet"]], "mean_us": [x[1] for x in rows["nvmet"]],
                      "tgt_cpu_us_per_io_estimated": [x[2] for x in rows["nvmet"] if x[2] is not None]},
            "tgt_iops_per_cpu_ratio": ratio, "guest_iops_per_cpu_ratio": gratio,
            "iops_ratio": iops_ratio, "mean_ratio": mean_ratio,
        }
    print("  (tgt ctx sw: nvp_tgt's involuntary context switches in a run. Its poll thread shares")
    print("  the guest's two vCPUs with fio and the kernel's initiator by construction, so a")
    print("  repetition is counted even when its thread was preempted.)")
    if out:
        with open(out, "w") as f:
            json.dump({"logs": argv, "by_qd": summary}, f, indent=1)
    q32 = summary.get(32, {})
    if not q32.get("tgt_iops_per_cpu_ratio"):
        print("RESULT tgt_iops_per_cpu_ratio=missing")
        return 1
    r = q32["tgt_iops_per_cpu_ratio"]
    g = q32["guest_iops_per_cpu_ratio"]
    q1 = summary.get(1, {})
    m1n = f"{statistics.median(q1['nvp_tgt']['mean_us']):.1f}" if q1.get("n") else "na"
    m1k = f"{statistics.median(q1['nvmet']['mean_us']):.1f}" if q1.get("n") else "na"
    print(f"RESULT tgt_iops_per_cpu_ratio={statistics.median(r):.2f} n={len(r)}"
          f" spread={min(r):.2f}..{max(r):.2f}"
          f" guest_iops_per_cpu_ratio={statistics.median(g) if g else 0:.2f}"
          f" tgt_qd1_mean_us={m1n} nvmet_qd1_mean_us={m1k}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
