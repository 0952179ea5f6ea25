"""Side-by-side measurements: each pipeline in a fresh process, rounds in rotating order, and
the medians (bench/recipe.py, bench/clip_loaders.py)."""

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys


def run_rounds(script, pipelines, rounds, worker_args, measure, unit):
    """{pipeline: [rate per round]}: `script --worker P WORKER_ARGS` prints a JSON line whose
    `measure` is the rate; round r starts at pipeline r % len(pipelines)."""
    results = {p: [] for p in pipelines}
    for r in range(rounds):
        k = r % len(pipelines)
        for p in pipelines[k:] + pipelines[:k]:
            out = subprocess.run([sys.executable, script, "--worker", p, *worker_args],
                                 capture_output=True, text=True, check=True)
            rate = json.loads(out.stdout.strip().splitlines()[-1])[measure]
            results[p].append(rate)
            print(f"round {r + 1} {p:20s} {rate:8.1f} {unit}", flush=True)
    return results


def print_medians(results, setup, unit):
    """Prints the date, machine, `setup` and each pipeline's median; returns the medians."""
    med = {p: statistics.median(v) for p, v in results.items()}
    print(f"\n{datetime.date.today()} {platform.node()} {os.cpu_count()} cores, {setup} "
          f"(medians, {unit}):")
    for p, values in results.items():
        print(f"  {p:20s} {med[p]:8.1f}   rounds {[round(v) for v in values]}")
    return med
