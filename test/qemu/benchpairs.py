# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
"""What the QEMU bench's pair tables share (pair_table.py, tgt_bench_table.py): the pairs
of NVPBENCH lines in one or more console logs, a median with its spread, the command line.

Within one log, the k-th run of side A at a depth and the k-th run of side B at that depth
are one pair: the guest runs them back to back (test/qemu/lib.sh), so both sides of a pair
saw the same host.
"""
import json
import re
import statistics
import sys


def pairs(paths, side_a, side_b):
    """{qd: [(a_json, b_json), ...]} over @paths, in run order within each log."""
    line = re.compile(r"NVPBENCH (%s|%s) (\d+) (\{.*\})\s*$" % (re.escape(side_a), re.escape(side_b)))
    out = {}
    for path in paths:
        runs = {}
        with open(path, "rb") as f:
            for raw in f:
                m = line.search(raw.decode("utf-8", "replace").replace("\r", ""))
                if not m:
                    continue
                try:
                    js = json.loads(m.group(3))
                except json.JSONDecodeError:
                    print(f"  (a line that is not JSON in {path}: {m.group(3)[:60]}...)")
                    continue
                runs.setdefault(int(m.group(2)), {side_a: [], side_b: []})[m.group(1)].append(js)
        for qd, s in runs.items():
            out.setdefault(qd, []).extend(zip(s[side_a], s[side_b]))
    return out


def spread(xs, fmt="{:.2f}"):
    """'median [min..max]' of @xs, or '-'."""
    if not xs:
        return "-"
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}..{fmt.format(max(xs))}]"


def args(argv, doc):
    """[--json OUT] LOG...: (OUT or None, [LOG...]); exits 2 with the usage line if no LOG."""
    out = None
    if len(argv) >= 2 and argv[0] == "--json":
        out, argv = argv[1], argv[2:]
    if not argv:
        print(doc.strip().splitlines()[0], file=sys.stderr)
        sys.exit(2)
    return out, argv
