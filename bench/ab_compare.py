#!/usr/bin/env python3
"""Before/after: two builds of stoker side by side on the same data, rounds alternating.

A refactoring must not slow the hot paths. This runs the same measurement with an old and a
new binary in alternating order (A B, B A, A B, ...), R rounds, and prints each side's median,
the new/old ratio of the medians, and how many cores other processes kept busy during each
measurement (from /proc/stat minus our own child's CPU time), so that a noisy machine shows.

  bench/ab_compare.py stoker OLD/stoker NEW/stoker [--rounds R] -- DATA [stoker bench flags]
      `stoker bench ... --json` with each binary; the measure is images_per_second.
  bench/ab_compare.py kernel OLD/kernel_bench NEW/kernel_bench [--rounds R] [-- FLAGS]
      Google Benchmark binaries (bench/kernel_bench); the measure is real_time per benchmark
      (lower is better; the ratio is still new/old speed, i.e. old time / new time).

Build the old side from a worktree of the old commit, e.g.
  git worktree add /tmp/before OLD && cmake -S /tmp/before -B /tmp/before/build -G Ninja \\
      -DCMAKE_BUILD_TYPE=Release -DSTOKER_TESTS=OFF -DSTOKER_PYTHON=OFF && \\
      cmake --build /tmp/before/build --target stoker_cli kernel_bench
Only the Python standard library is needed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def machine_busy_seconds():
    """CPU seconds the whole machine has been busy (all fields of /proc/stat's cpu line but
    idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields) - idle) / ticks


def run_measured(cmd):
    """Runs cmd; returns (stdout, seconds, cores used by other processes meanwhile)."""
    busy0 = machine_busy_seconds()
    start = time.monotonic()
    before = os.times()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = os.times()
    took = time.monotonic() - start
    busy1 = machine_busy_seconds()
    if proc.returncode != 0:
        sys.exit(f"ab_compare: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    ours = (after.children_user - before.children_user) + (after.children_system -
                                                           before.children_system)
    others = max(0.0, (busy1 - busy0) - ours) / took if took > 0 else 0.0
    return proc.stdout, took, others


def measure_stoker(binary, args):
    out, _, others = run_measured([binary, "bench", *args, "--json"])
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return {"images_per_second": json.loads(line)["images_per_second"]}, others


def measure_kernel(binary, args):
    out, _, others = run_measured([binary, "--benchmark_format=json", *args])
    results = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("error_occurred"):
            continue
        results[b["name"]] = b["real_time"]
    return results, others


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=["stoker", "kernel"])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="one JSON document at the end")
    ap.add_argument("--rename-old", action="append", default=[], metavar="OLD=NEW",
                    help="kernel: compare the old binary's benchmark OLD with the new one's NEW "
                         "(when a benchmark's argument changed meaning between the builds)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]  # the measured command's, after --
    measure = measure_stoker if a.kind == "stoker" else measure_kernel
    renames = dict(r.split("=", 1) for r in a.rename_old)
    sides = {"old": a.old, "new": a.new}
    values = {"old": {}, "new": {}}
    others = {"old": [], "new": []}
    for r in range(a.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for side in order:
            result, busy = measure(sides[side], args)
            others[side].append(round(busy, 2))
            for k, v in result.items():
                if side == "old":
                    if renames and k not in renames:
                        continue
                    k = renames.get(k, k)
                values[side].setdefault(k, []).append(v)
            print(f"round {r + 1} {side}: " +
                  ", ".join(f"{k} {v:.4g}" for k, v in result.items()) +
                  f" (other processes: {busy:.2f} cores)", file=sys.stderr, flush=True)
    higher_better = a.kind == "stoker"
    report = []
    for key in values["new"]:
        if key not in values["old"]:
            continue
        old, new = statistics.median(values["old"][key]), statistics.median(values["new"][key])
        ratio = new / old if higher_better else old / new
        report.append({"measure": key, "old_median": old, "new_median": new,
                       "new_over_old_speed": ratio, "old": values["old"][key],
                       "new": values["new"][key]})
    if a.json:
        print(json.dumps({"kind": a.kind, "rounds": a.rounds, "args": args, "results": report,
                          "other_cores": others}, indent=1))
        return
    unit = "images/s" if higher_better else "ns"
    print(f"{'measure':40} {'old':>12} {'new':>12} {'new/old speed':>14}   ({unit}, medians "
          f"of {a.rounds})")
    for row in report:
        print(f"{row['measure']:40} {row['old_median']:12.5g} {row['new_median']:12.5g} "
              f"{row['new_over_old_speed']:14.3f}")
    for side in ("old", "new"):
        print(f"cores used by other processes, {side}: {others[side]}")


if __name__ == "__main__":
    main()
