# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
"""benchlib: what every bench/ script shares so that its figures say how sure they are.

The rules (issue 26, item 4) and the piece of this module that keeps each:

  * A headline is the median of at least 5 interleaved repetitions (A B A B ...), and the
    RESULT line carries n= and the spread (min and max of the ratio):
        reps = interleave(["classic", "hybrid"], run_one, n=5, budget_s=60)
        cpu = reps.ratio("hybrid", "classic", "cpu_us_per_io")    # a Spread
        result(cpu.kv("hybrid_cpu_ratio"), n=cpu.n)
    -> RESULT hybrid_cpu_ratio=0.31 hybrid_cpu_ratio_min=0.28 hybrid_cpu_ratio_max=0.40 n=5
    run_one(variant, round) returns a Rep. Rounds go on past n until n rounds had every
    variant counted, or max_rounds or the time budget runs out (then n says fewer). A
    ratio is taken within a round (the two runs side by side), then the median of those.
  * CPU is each involved thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, or the kernel's
    per-thread schedstat), never wall time minus CPU, never the best of N: ThreadUse.
  * A repetition whose thread was preempted is shown, marked, and not counted: a thread
    that spins must get GOT_MIN (90 %) of a CPU over its run (cpu / elapsed); one that
    sleeps must get 90 % of the CPU time it asked for, cpu / (cpu + run-queue wait), the
    wait read from /proc/PID/task/TID/schedstat (ThreadUse.preempted()). Rep.mark() is
    the table's mark ("P" preempted, "F" failed, "" counted).
  * A p99.9 needs P999_MIN_SAMPLES (10,000) samples per run, else the bench reports p99
    and says why: tail_key(samples).
  * Every RESULT from a realistic device preset (emu_preset(), preset_with_read_mean());
    an idealised row may stay in the table, marked "idealised" (IDEALISED).
  * Timing assertions never go into `make test`: nothing here asserts; it measures.

nvp_perf: perf_run() runs it with --json and returns a Rep whose figures come from one
place, perf_figures() and perf_threads(). nvp_perf's JSON gives each I/O thread's CPU
time over the measured window; until it also gives a preemption signal per thread,
perf_threads() reads the I/O thread's run-queue wait from /proc while nvp_perf runs
(ProcWatch: the whole life of the thread, warm-up and set-up included), and switches to
nvp_perf's own figure, measured over the window, as soon as its JSON has one.

Output: result() prints the RESULT line, write_json() bench/out/NAME.json, render_png()
an SVG's PNG. Run a bench's --quick to see; every helper here is documented below.
"""

import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
BENCH_BIN = os.path.join(ROOT, "build", "bench")
OUT = os.path.join(ROOT, "bench", "out")
PERF = os.path.join(BIN, "nvp_perf")

GOT_MIN = 0.90  # a thread that got less of a CPU than this was preempted
P999_MIN_SAMPLES = 10000  # samples per run a p99.9 needs
MIN_REPS = 5  # repetitions a headline needs
IDEALISED = "idealised"


def die(who, msg, code=1):
    """Print "who: msg" on stderr and exit with @code (1: failed, 2: usage)."""
    print("%s: %s" % (who, msg), file=sys.stderr)
    sys.exit(code)


def need(path, who):
    """Exit with a message naming `make` when the program @path is not built."""
    if not os.access(path, os.X_OK):
        die(who, "%s not found: run `make` first" % os.path.relpath(path, os.getcwd()))


def loadavg():
    """The 1-minute load average, -1 when unknown."""
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return -1.0


# ---- per-thread CPU and preemption ----


class ThreadUse:
    """What one thread used over a run: its own CPU time, the wall time, and when known
    the time it spent runnable but waiting for a CPU (schedstat's run_delay) and its
    involuntary context switches. @spinning: the thread never sleeps on purpose (classic
    polling), so every second it did not run it was kept off the CPU."""

    def __init__(self, name, cpu_s, elapsed_s, spinning, runq_s=None, nivcsw=None,
                 source="json"):
        self.name = name
        self.cpu_s = cpu_s
        self.elapsed_s = elapsed_s
        self.spinning = spinning
        self.runq_s = runq_s
        self.nivcsw = nivcsw
        self.source = source

    def share(self):
        """CPU time over wall time: for a spinning thread, the share of a CPU it got."""
        return self.cpu_s / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    def got(self):
        """The share of the CPU time it asked for that it got: cpu / elapsed for a
        spinning thread; cpu / (cpu + run-queue wait) for one that sleeps (None when
        the wait is unknown)."""
        if self.spinning:
            g = self.share()
            if self.runq_s is not None and self.cpu_s + self.runq_s > 0:
                g = min(g, self.cpu_s / (self.cpu_s + self.runq_s))
            return g
        if self.runq_s is None or self.cpu_s + self.runq_s <= 0:
            return None
        return self.cpu_s / (self.cpu_s + self.runq_s)

    def preempted(self):
        """Why this thread's run does not count ("got 62 % of a CPU"), or None."""
        g = self.got()
        if g is None or g >= GOT_MIN:
            return None
        return "%s got %.0f %% of %s" % (self.name, 100 * g,
                                         "a CPU" if self.spinning else "the CPU it asked for")

    def to_json(self):
        return {"name": self.name, "cpu_s": self.cpu_s, "elapsed_s": self.elapsed_s,
                "spinning": self.spinning, "runq_s": self.runq_s, "nivcsw": self.nivcsw,
                "got": self.got(), "source": self.source}


def read_task(pid, tid):
    """schedstat and context switches of thread @tid of process @pid: {cpu_ns, runq_ns,
    nvcsw, nivcsw, comm}, or None when it is gone."""
    base = "/proc/%d/task/%d/" % (pid, tid)
    try:
        with open(base + "schedstat") as f:
            cpu, runq = (int(x) for x in f.read().split()[:2])
        d = {"cpu_ns": cpu, "runq_ns": runq, "nvcsw": 0, "nivcsw": 0, "comm": ""}
        with open(base + "status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches:"):
                    d["nvcsw"] = int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    d["nivcsw"] = int(line.split()[1])
        with open(base + "comm") as f:
            d["comm"] = f.read().strip()
        return d
    except (OSError, ValueError):
        return None


class ProcWatch:
    """Samples every thread of a running child (pid) every @period seconds: the first and
    the last reading of each thread give its CPU time, run-queue wait and involuntary
    switches over its life. The main thread is read once more after the child exits and
    before it is reaped (run_watched() does that), so its figures cover all of it."""

    def __init__(self, pid, period=0.25):
        self.pid = pid
        self.period = period
        self.first = {}
        self.last = {}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)

    def start(self):
        self.sample()
        self._t.start()
        return self

    def sample(self):
        now = time.monotonic()
        try:
            tids = [int(t) for t in os.listdir("/proc/%d/task" % self.pid)]
        except OSError:
            return
        for tid in tids:
            d = read_task(self.pid, tid)
            if d is None:
                continue
            d["t"] = now
            self.first.setdefault(tid, d)
            self.last[tid] = d

    def _loop(self):
        while not self._stop.wait(self.period):
            self.sample()

    def stop(self):
        self._stop.set()
        if self._t.is_alive():
            self._t.join()
        self.sample()  # the zombie's main thread, when not yet reaped

    def threads(self):
        """{tid: comm} of every thread seen."""
        return {tid: d["comm"] for tid, d in self.last.items()}

    def use(self, tid, name, spinning):
        """ThreadUse of thread @tid between its first and last reading, or None."""
        a, b = self.first.get(tid), self.last.get(tid)
        if a is None or b is None or b["t"] <= a["t"]:
            return None
        return ThreadUse(name, (b["cpu_ns"] - a["cpu_ns"]) / 1e9, b["t"] - a["t"], spinning,
                         runq_s=(b["runq_ns"] - a["runq_ns"]) / 1e9,
                         nivcsw=b["nivcsw"] - a["nivcsw"], source="proc")

    def find(self, prefix):
        """The tid of the first thread whose name starts with @prefix, or None."""
        for tid, comm in sorted(self.threads().items()):
            if comm.startswith(prefix):
                return tid
        return None


def run_watched(cmd, timeout, env=None, watch=True, on_start=None):
    """Run @cmd with its output in temporary files (no pipe to fill) and, if @watch, a
    ProcWatch on it; on_start(pid) is called once it runs. \\return (returncode, stdout,
    stderr, watch or None, the child's resource usage (os.wait4: ru_minflt, ru_utime..))."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True,
                             env=None if env is None else dict(os.environ, **env))
        w = ProcWatch(p.pid).start() if watch else None
        if on_start is not None:
            on_start(p.pid)
        deadline = time.monotonic() + timeout
        while True:  # wait for the exit without reaping: the main thread stays readable
            r = os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if r is not None:
                break
            if time.monotonic() > deadline:
                p.kill()
            time.sleep(0.02)
        if w is not None:
            w.stop()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return p.returncode, out.read(), err.read(), w, ru


# ---- repetitions ----


class Rep:
    """One repetition of one variant: its figures (a dict), the threads that decide
    whether it counts, and why it does not (failed / preempted)."""

    def __init__(self, variant, fig=None, threads=(), failed=None, note=None):
        self.variant = variant
        self.round = None
        self.fig = fig or {}
        self.threads = [t for t in threads if t is not None]
        self.failed = failed
        self.note = note
        self.start = None
        self.load = None

    def preempted(self):
        """Why it was preempted, or None."""
        for t in self.threads:
            why = t.preempted()
            if why:
                return why
        return None

    def counted(self):
        return self.failed is None and self.preempted() is None

    def mark(self):
        """The table's mark: "F" failed, "P" preempted, "" counted."""
        return "F" if self.failed else "P" if self.preempted() else ""

    def why(self):
        return self.failed or self.preempted() or ""

    def __getitem__(self, key):
        return self.fig[key]

    def get(self, key, default=None):
        return self.fig.get(key, default)

    def to_json(self):
        return {"variant": self.variant, "round": self.round, "counted": self.counted(),
                "why_not": self.why() or None, "load": self.load, "figures": self.fig,
                "threads": [t.to_json() for t in self.threads], "note": self.note}


class Spread:
    """The median, min and max of some values, and how many (n)."""

    def __init__(self, values, total=None):
        self.values = [v for v in values if v is not None and not math.isnan(v)]
        self.n = len(self.values)
        self.total = len(values) if total is None else total
        nan = float("nan")
        self.median = statistics.median(self.values) if self.values else nan
        self.min = min(self.values) if self.values else nan
        self.max = max(self.values) if self.values else nan

    def kv(self, name, fmt="%.3f"):
        """"name=MEDIAN name_min=MIN name_max=MAX" for a RESULT line."""
        return "%s=%s %s_min=%s %s_max=%s" % (name, fmt % self.median, name, fmt % self.min,
                                              name, fmt % self.max)

    def text(self, fmt="%.3f"):
        """"MEDIAN [MIN..MAX] n=N" for people."""
        return "%s [%s..%s] n=%d" % (fmt % self.median, fmt % self.min, fmt % self.max, self.n)

    def to_json(self):
        return {"median": self.median, "min": self.min, "max": self.max, "n": self.n,
                "runs": self.total, "values": self.values}


class Reps:
    """Repetitions by variant and round (from interleave())."""

    def __init__(self, variants):
        self.variants = list(variants)
        self.rounds = []  # each a {variant: Rep}

    def all(self, variant=None):
        return [r[v] for r in self.rounds for v in self.variants
                if v in r and (variant is None or v == variant)]

    def counted(self, variant):
        return [r[variant] for r in self.rounds if variant in r and r[variant].counted()]

    def full_rounds(self, variants=None):
        """Rounds in which every one of @variants (default all) counted."""
        vs = variants or self.variants
        return [r for r in self.rounds if all(v in r and r[v].counted() for v in vs)]

    def median(self, variant, key):
        """Spread of figure @key over the counted repetitions of @variant."""
        return Spread([r.fig.get(key) for r in self.counted(variant)],
                      total=len(self.all(variant)))

    def ratio(self, num, den, key, den_key=None, among=None):
        """Spread of fig[key] of @num over fig[den_key or key] of @den, taken within each
        round in which both counted (the two runs side by side); with @among, only the
        rounds in which all of those variants counted (so that several ratios rest on the
        same rounds and one n)."""
        vals = []
        for r in self.full_rounds(among or [num, den]):
            a, b = r[num].fig.get(key), r[den].fig.get(den_key or key)
            if a is not None and b:
                vals.append(a / b)
        return Spread(vals, total=len(self.rounds))

    def ratio_all(self, num, den, key, den_key=None):
        """As ratio(), over every round that ran both, counted or not: what the runs saw on
        a loaded machine, for a note beside the RESULT, never for the RESULT itself."""
        vals = []
        for r in self.rounds:
            if num in r and den in r and not r[num].failed and not r[den].failed:
                a, b = r[num].fig.get(key), r[den].fig.get(den_key or key)
                if a is not None and b:
                    vals.append(a / b)
        return Spread(vals, total=len(self.rounds))

    def to_json(self):
        return [r.to_json() for r in self.all()]


def interleave(variants, run, n=MIN_REPS, max_rounds=None, budget_s=None, log=None,
               order="abab"):
    """Run every variant once per round, A B A B ... (order "abba": every other round
    reversed, so neither variant always runs first), until @n rounds had every variant
    counted; past @n rounds, stop at @max_rounds (default 2n) or once @budget_s seconds
    have gone by. run(variant, round_index) returns a Rep; log(rep) is called after each
    (to print its table row). \\return Reps."""
    reps = Reps(variants)
    max_rounds = max(n, max_rounds if max_rounds is not None else 2 * n)
    t0 = time.monotonic()
    for i in range(max_rounds):
        if i >= n and (len(reps.full_rounds()) >= n or
                       (budget_s is not None and time.monotonic() - t0 > budget_s)):
            break
        rnd = {}
        seq = list(variants)
        if order == "abba" and i % 2 == 1:
            seq.reverse()
        for v in seq:
            load = loadavg()
            start = time.monotonic() - t0
            rep = run(v, i)
            rep.variant, rep.round, rep.start, rep.load = v, i, start, load
            rnd[v] = rep
            if log is not None:
                log(rep)
        reps.rounds.append(rnd)
    return reps


# ---- percentiles ----


def tail_key(samples):
    """Which tail a run of @samples latencies can give: ("p99_9", "p99.9", None) with at
    least P999_MIN_SAMPLES, else ("p99", "p99", why)."""
    if samples >= P999_MIN_SAMPLES:
        return "p99_9", "p99.9", None
    return "p99", "p99", ("p99 rather than p99.9: %d samples per run, a p99.9 needs %d" %
                          (samples, P999_MIN_SAMPLES))


# ---- callgrind ----


def callgrind_calls(text, names):
    """Calls made, while callgrind collected, to the functions named in @names (a set;
    a compiler suffix such as ".isra.0" or callgrind's "'2" is ignored), from the text
    of a callgrind output file (its compressed names: "cfn=(7) name" once, "cfn=(7)"
    after). \\return {name: calls}, every name of @names present (0 if never called)."""
    ids = {}
    counts = {n: 0 for n in names}
    callee = None
    for line in text.splitlines():
        m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3) is not None:
                ids[m.group(2)] = re.split(r"[.']", m.group(3))[0]
            callee = ids.get(m.group(2)) if m.group(1) else None
            continue
        m = re.match(r"calls=(\d+)", line)
        if m and callee in counts:
            counts[callee] += int(m.group(1))
    return counts


# ---- output ----


def result(*parts, n=None, **kv):
    """Print one RESULT line: the pre-formatted @parts ("k=v ..." strings, e.g. from
    Spread.kv()), then @kv, then n=. Every RESULT says how many runs it rests on."""
    if n is None:
        raise ValueError("a RESULT needs n=")
    items = [p for p in parts if p]
    for k, v in kv.items():
        items.append("%s=%s" % (k, ("%.3f" % v) if isinstance(v, float) else v))
    items.append("n=%d" % n)
    line = "RESULT " + " ".join(items)
    print(line)
    sys.stdout.flush()
    return line


def write_json(name, obj):
    """Write bench/out/NAME.json. \\return its path."""
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, default=_json_default)
    return path


def _json_default(o):
    if hasattr(o, "to_json"):
        return o.to_json()
    raise TypeError("not JSON: %r" % (o,))


def render_png(svg_path):
    """Render @svg_path to .png beside it (rsvg-convert, else ImageMagick). \\return the
    PNG's path, or None when neither is installed."""
    png = svg_path[:-4] + ".png"
    for cmd in (["rsvg-convert", "-o", png, svg_path], ["convert", svg_path, png]):
        if shutil.which(cmd[0]):
            subprocess.run(cmd, check=False, stderr=subprocess.DEVNULL)
            return png if os.path.exists(png) else None
    return None


def rule_text():
    """One line for a table's foot: what the marks mean."""
    return ("marks: P = preempted (a spinning thread got < %d %% of a CPU, a sleeping one "
            "< %d %% of the CPU it asked for): shown, not counted; F = failed" %
            (100 * GOT_MIN, 100 * GOT_MIN))


# ---- nvp_perf ----


def perf_figures(report):
    """The figures of an nvp_perf --json report (all I/O threads together): iops, ios,
    mean_us, p50_us, p90_us, p99_us, p999_us, cpu_s, cpu_us_per_io."""
    t = report["total"]
    lat = t["latency_us"]
    return {"iops": t["iops"], "ios": t["ios"],
            "errors": t["errors"] + t.get("drain_errors", 0),
            "mean_us": lat["mean"], "p50_us": lat["p50"], "p90_us": lat["p90"],
            "p99_us": lat["p99"], "p999_us": lat["p99_9"], "cpu_s": t["cpu"]["total_s"],
            "cpu_us_per_io": t["cpu"]["per_io_us"]}


# Keys a per-thread preemption signal may have in nvp_perf's JSON (run-queue wait in
# seconds, involuntary switches): the first found is used instead of /proc.
_PERF_RUNQ_KEYS = ("runq_wait_s", "run_delay_s", "runq_s", "wait_s")
_PERF_NIVCSW_KEYS = ("nivcsw", "involuntary_ctxsw", "involuntary_switches")


def perf_threads(report, watch, spinning):
    """The I/O threads of an nvp_perf run as ThreadUse, the one place that reads them:
    CPU and elapsed time of the measured window from the JSON; the preemption signal from
    the JSON when nvp_perf gives one, else the run-queue wait of the main thread (core 0's
    I/O thread) over its whole life, read by @watch."""
    out = []
    for i, th in enumerate(report["total"]["cpu"]["threads"]):
        name = "I/O thread (core %d)" % th.get("core", i)
        runq = next((th[k] for k in _PERF_RUNQ_KEYS if k in th), None)
        nivcsw = next((th[k] for k in _PERF_NIVCSW_KEYS if k in th), None)
        src = "json"
        if runq is None and watch is not None and i == 0:
            u = watch.use(watch.pid, name, spinning)
            if u is not None:
                # its whole life's wait per CPU second, applied to the window's CPU
                runq = u.runq_s / u.cpu_s * th["cpu_s"] if u.cpu_s > 0 else u.runq_s
                nivcsw, src = u.nivcsw, "json+proc"
        out.append(ThreadUse(name, th["cpu_s"], th["elapsed_s"], spinning, runq_s=runq,
                             nivcsw=nivcsw, source=src))
    return out


def perf_poll_stats(text):
    """What the waiter did, from nvp_perf --poll's text report (first I/O thread): sleeps,
    oversleeps, irq_waits, wake_cost_us, sleep_cpu_us, wake_probes, wait_s, slept_s, and
    the device model's lateness (dev_late_mean_us, dev_late_max_us,
    dev_late_over_10us_pct); keys missing when not printed."""
    r = {}
    m = re.search(r"(\d+) sleeps .*?(\d+) oversleeps, (\d+) irq waits.*?wake-up cost "
                  r"([\d.]+) us, sleep CPU ([\d.]+) us.*?(\d+) wake probes", text or "")
    if m:
        r.update(sleeps=int(m.group(1)), oversleeps=int(m.group(2)),
                 irq_waits=int(m.group(3)), wake_cost_us=float(m.group(4)),
                 sleep_cpu_us=float(m.group(5)), wake_probes=int(m.group(6)))
    m = re.search(r"([\d.]+) s \(wall\) waiting for completions: ([\d.]+) s asleep", text or "")
    if m:
        r.update(wait_s=float(m.group(1)), slept_s=float(m.group(2)))
    m = re.search(r"posted ([\d.]+) us late on average, ([\d.]+) us at worst, (\d+) of (\d+)",
                  text or "")
    if m:
        r.update(dev_late_mean_us=float(m.group(1)), dev_late_max_us=float(m.group(2)),
                 dev_late_over_10us_pct=100.0 * int(m.group(3)) / max(1, int(m.group(4))))
    return r


def perf_run(args, spinning, timeout=None, watch=True, controller=True, on_start=None):
    """Run nvp_perf with @args and --json; \\return a Rep (variant unset) whose fig has
    perf_figures(), perf_poll_stats(), the process's minor_faults and process_cpu_s, the
    I/O thread's own figures (io_cpu_s,
    io_elapsed_s, io_cpu_pct, io_runq_s, io_got) and, when seen, the software
    controller's thread (ctl_cpu_pct, ctl_got); rep.note holds nvp_perf's text report,
    rep.report its JSON. The Rep's threads, which decide whether it counts, are the I/O
    threads (@spinning: they never sleep: --poll classic or none) and, with @controller,
    the software controller's thread (it sleeps when idle: the sleeping rule, over its
    whole life). on_start(pid) is called once nvp_perf runs. A failed run is a Rep with
    .failed set."""
    fd, jpath = tempfile.mkstemp(prefix="perf.", suffix=".json", dir=None)
    os.close(fd)
    cmd = [PERF] + list(args) + ["--json", jpath]
    secs = 60
    for flag in ("-t", "-a"):
        if flag in args:
            secs += int(args[list(args).index(flag) + 1]) * 3
    rc, out, err, w, ru = run_watched(cmd, timeout or secs, watch=watch, on_start=on_start)
    try:
        with open(jpath) as f:
            report = json.load(f)
    except (OSError, ValueError):
        report = {"status": "failed", "error": "no JSON"}
    finally:
        os.unlink(jpath)
    if rc != 0 or report.get("status") != "ok":
        rep = Rep(None, failed="nvp_perf exit %d: %s" % (rc, (err.strip().splitlines() or
                                                             [report.get("error", "")])[-1]))
        rep.note = " ".join(cmd)
        return rep
    fig = perf_figures(report)
    fig.update(minor_faults=ru.ru_minflt, process_cpu_s=ru.ru_utime + ru.ru_stime)
    threads = perf_threads(report, w, spinning)
    io = threads[0]
    fig.update(io_cpu_s=io.cpu_s, io_elapsed_s=io.elapsed_s, io_cpu_pct=100 * io.share(),
               io_runq_s=io.runq_s, io_got=io.got())
    tid = w.find("emu:") if w is not None else None
    ctl = w.use(tid, "controller thread", False) if tid is not None else None
    if ctl is not None:
        fig.update(ctl_cpu_pct=100 * ctl.share(), ctl_got=ctl.got())
        if controller:
            threads.append(ctl)
    fig.update(perf_poll_stats(out))
    rep = Rep(None, fig, threads)
    rep.note = out
    rep.report = report
    return rep


def perf_jobs(report):
    """Per job of an nvp_perf --json report with --job: {name: {ios, reads, writes, iops,
    mib_s, mean_us, p50_us, p99_us, p999_us, max_us, samples, preempted}} from each job's own
    I/Os ("preempted": nvp_perf's own flag for a thread running the job)."""
    out = {}
    for j in report.get("jobs", []):
        lat = j["latency_us"]
        out[j["name"]] = {"ios": j["ios"], "reads": j.get("reads", 0),
                          "writes": j.get("writes", 0), "iops": j["iops"], "mib_s": j["mib_s"],
                          "mean_us": lat["mean"], "p50_us": lat["p50"], "p99_us": lat["p99"],
                          "p999_us": lat["p99_9"], "max_us": lat["max"],
                          "samples": j.get("latency_samples", j["ios"]),
                          "preempted": any(t.get("preempted") for t in j.get("threads", []))}
    return out


def perf_tenants(report):
    """Per tenant of the first bdev of an nvp_perf --json report: {tenant: {weight, ios,
    bytes}} from its scheduler's figures ({} when it gives none)."""
    bdevs = report.get("bdevs") or [{}]
    tenants = (bdevs[0].get("scheduler") or {}).get("tenants") or []
    return {t["tenant"]: {"weight": t["weight"], "ios": t["ios"], "bytes": t["bytes"]}
            for t in tenants}


# ---- nvp_bench_mix ----

MIX = os.path.join(BENCH_BIN, "nvp_bench_mix")


def _kv(line):
    """"k=v k=v ..." -> dict, numbers as int or float."""
    out = {}
    for k, v in re.findall(r"(\w+)=(\S+)", line):
        try:
            out[k] = float(v) if ("." in v or "e" in v) else int(v)
        except ValueError:
            out[k] = v
    return out


def mix_parse(text):
    """nvp_bench_mix's output -> {"jobs": [..], "summary": {..}, "emu": {..},
    "intervals": [..]}, each record its key=value fields; raises ValueError when there is no
    job or summary line."""
    r = {"jobs": [], "summary": None, "emu": {}, "intervals": []}
    for line in text.splitlines():
        tag = line.split(" ", 1)[0]
        if tag == "job":
            r["jobs"].append(_kv(line))
        elif tag == "summary":
            r["summary"] = _kv(line)
        elif tag == "summary_emu":
            r["emu"] = _kv(line)
        elif tag == "interval":
            r["intervals"].append(_kv(line))
    if not r["jobs"] or r["summary"] is None:
        raise ValueError("no job or summary line in nvp_bench_mix's output")
    return r


def mix_cmd(bdev, jobs, seconds, ramp=0.0, sched=None, wbt=None, one_thread=True, extra=()):
    """nvp_bench_mix's command line: @jobs as --job specs; with @one_thread on an emu bdev
    the jobs and the controller are stages of one thread that sleeps when idle."""
    cmd = [MIX, "--bdev", bdev, "--seconds", "%g" % seconds]
    if ramp:
        cmd += ["--ramp", "%g" % ramp]
    if sched:
        cmd += ["--sched", sched]
    if wbt is not None:
        cmd += ["--wbt", str(wbt)]
    if one_thread:
        cmd += ["--one-thread"] + (["--inline", "--idle-sleep"] if bdev.startswith("emu:")
                                   else [])
    for j in jobs:
        cmd += ["--job", j]
    return cmd + list(extra)


def shell_text(cmd):
    """@cmd as a person would type it from the top directory (programs relative to it,
    arguments with spaces or | quoted)."""
    out = []
    for i, a in enumerate(cmd):
        if i == 0 and a.startswith(ROOT + os.sep):
            a = os.path.relpath(a, ROOT)
        out.append("'%s'" % a if (" " in a or "|" in a) else a)
    return " ".join(out)


def mix_run(cmd, timeout=None, spinning=False):
    """Run nvp_bench_mix @cmd (from mix_cmd()); \return a Rep whose fig is mix_parse()'s
    and whose thread is the process's main thread (with --one-thread the one that runs every
    stage; @spinning: it never sleeps), judged over its life. A failed run: .failed set."""
    secs = float(cmd[cmd.index("--seconds") + 1]) if "--seconds" in cmd else 10.0
    rc, out, err, w, _ = run_watched(cmd, timeout or secs * 3 + 60)
    rep = Rep(None)
    rep.note = shell_text(cmd)
    if rc != 0:
        rep.failed = "nvp_bench_mix exit %d: %s" % (rc, (err.strip().splitlines() or [""])[-1])
        return rep
    try:
        rep.fig = mix_parse(out)
    except ValueError as e:
        rep.failed = str(e)
        return rep
    u = w.use(w.pid, "bench thread", spinning) if w is not None else None
    rep.threads = [u] if u is not None else []
    if u is not None:
        rep.fig["thread_got"] = u.got()
    return rep


# ---- the software controller's presets ----


def emu_presets():
    """The software controller's presets as nvp_perf --help prints them:
    {"tlc": {"read_lat": "lognormal:80us:160us", ...}, ...}; {} when none."""
    need(PERF, "benchlib")
    p = subprocess.run([PERF, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, check=False)
    return parse_presets(p.stdout)


def parse_presets(text):
    """The presets of nvp_perf --help's text: a "Presets" line, then per preset an indented
    line "NAME description" and indented lines of key=value (folded). \return {name:
    {key: value}}."""
    presets, inside, last = {}, False, None
    for line in text.splitlines():
        if line.startswith("Presets"):
            inside = True
            continue
        if not inside:
            continue
        parts = line.split()
        if not line.startswith("  ") or not parts:
            if presets:
                break
            continue
        if "=" in parts[0] and last is not None:  # a folded line of the last preset's keys
            last.update(kv.split("=", 1) for kv in parts if "=" in kv)
            continue
        last = presets[parts[0]] = dict(kv.split("=", 1) for kv in parts[1:] if "=" in kv)
    return presets


def emu_preset(name):
    """The keys preset @name sets, or exit naming the presets there are."""
    presets = emu_presets()
    if name not in presets:
        die("benchlib", "no software-controller preset '%s' (there are: %s)" %
            (name, ", ".join(sorted(presets)) or "none"))
    return presets[name]


def _us(text):
    """"80us", "1.5ms", "900ns", "80" (us) -> microseconds."""
    for suffix, mul in (("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)):
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * mul
    return float(text)


Z99 = 2.3263478740408408  # the standard normal's 99th percentile


def lognormal_mean_us(p50_us, p99_us):
    """Mean of the lognormal whose median and 99th percentile are given."""
    sigma = math.log(p99_us / p50_us) / Z99
    return p50_us * math.exp(sigma * sigma / 2)


def dist_mean_us(spec):
    """Mean of a read_lat/write_lat distribution ("lognormal:80us:160us", "80us",
    "uniform:A:B", "exp:M", "bimodal:A:B:P%"), or None when unknown."""
    parts = spec.split(":")
    try:
        if parts[0] == "lognormal":
            return lognormal_mean_us(_us(parts[1]), _us(parts[2]))
        if parts[0] == "uniform":
            return (_us(parts[1]) + _us(parts[2])) / 2
        if parts[0] == "exp":
            return _us(parts[1])
        if parts[0] == "bimodal":
            f = float(parts[3].rstrip("%")) / 100
            return (1 - f) * _us(parts[1]) + f * _us(parts[2])
        if parts[0] == "fixed":
            return _us(parts[1])
        return _us(parts[0])
    except (IndexError, ValueError):
        return None


def preset_with_read_mean(name, mean_us):
    """Device options for preset @name with its read latency distribution scaled to a
    @mean_us mean, its shape kept (a lognormal keeps its p99/p50, and its p99.9 when it has
    one, scaled alike). \\return (options string "preset=NAME read_lat=...", a sentence
    saying what was done)."""
    spec = emu_preset(name).get("read_lat", "")
    mean = dist_mean_us(spec)
    parts = spec.split(":")
    if mean is None or parts[0] != "lognormal":
        return ("preset=%s read_lat=%dus" % (name, mean_us),
                "preset %s (read_lat %s, mean %s) with a fixed %d us read latency" %
                (name, spec or "?", "%.1f us" % mean if mean else "unknown", mean_us))
    k = mean_us / mean
    p50, p99 = _us(parts[1]) * k, _us(parts[2]) * k
    tail = ["%.1fus" % (_us(x) * k) for x in parts[3:]]  # a p99.9 when the preset has one
    return ("preset=%s read_lat=%s" % (name, ":".join(
        ["lognormal", "%.1fus" % p50, "%.1fus" % p99] + tail)),
            "preset %s, its read latency (%s, mean %.1f us from its p50 and p99) scaled by "
            "%.3f to a %d us mean: lognormal p50 %.1f us, p99 %.1f us%s" % (
                name, spec, mean, k, mean_us, p50, p99,
                ", p99.9 %s us" % tail[0][:-2] if tail else ""))
