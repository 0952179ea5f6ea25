"""What a loader costs before its first batch: open time, RSS added by the open, time to the
first batch (docs/perf.md, "Memory before the first batch" and "A billion samples").

    .venv/bin/python bench/open_memory.py DATA [DATA ...] [--repeat 3]

Each DATA is measured in a fresh process, --repeat times (the median is printed): VmRSS after
`import stoker`, after `stoker.Loader(DATA, batch_size=256, threads=2, transform="eval",
size=64)` and after its first batch. A packed dataset with a synthetic index of 10^9 samples
comes from `build/bench/synth_index OUT --samples 1000000000`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

PROBE = r"""
import json, sys, time
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
import stoker
base = rss()
t0 = time.perf_counter()
loader = stoker.Loader(sys.argv[1], 256, threads=2, transform="eval", size=64)
t1 = time.perf_counter()
opened = rss()
batch = next(iter(loader))
t2 = time.perf_counter()
first = rss()
print(json.dumps({"samples": len(loader.dataset) if hasattr(loader, "dataset") else None,
                  "open_s": t1 - t0, "first_batch_s": t2 - t1,
                  "rss_base": base, "rss_open": opened, "rss_first": first}))
loader.close()
"""


def measure(data: str) -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE, data], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{data}: {r.stderr.strip()}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    mib = 1024 * 1024
    print(f"{'dataset':60} {'open s':>8} {'+RSS open':>10} {'first batch s':>14} "
          f"{'+RSS first':>11}")
    for data in args.data:
        runs = [measure(data) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs)
               for k in ("open_s", "first_batch_s", "rss_base", "rss_open", "rss_first")}
        print(f"{data:60} {med['open_s']:8.3f} "
              f"{(med['rss_open'] - med['rss_base']) / mib:8.1f} MiB "
              f"{med['first_batch_s']:14.3f} {(med['rss_first'] - med['rss_base']) / mib:9.1f} MiB",
              flush=True)
        print(json.dumps({"data": data, "runs": runs}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
