"""What a loader costs before its first batch: open time, RSS added by the open and its peak,
time to the first batch (docs/perf.md, "Memory before the first batch" and "A billion
samples").

    .venv/bin/python bench/open_memory.py DATA [DATA ...] [--repeat 3]
    .venv/bin/python bench/open_memory.py --make-list DIR [--lines 1281167]

Each DATA is measured in a fresh process, --repeat times (the median is printed): VmRSS after
`import stoker`, after `stoker.Loader(DATA, batch_size=256, threads=2, transform="eval",
size=64)` and after its first batch, and the peak during the open (VmHWM, reset after the
import through /proc/self/clear_refs). A list's first open is measured by pointing
STOKER_CACHE_DIR at an empty folder for each run (`--fresh-cache`). A packed dataset with a
synthetic index of 10^9 samples comes from `build/bench/synth_index OUT --samples 1000000000`.

--make-list writes DIR/list.txt, an ImageNet-shaped list (1000 classes, paths of ImageNet's
length, every one distinct and every one a readable JPEG: "n00000042/3/../1/../img.jpg" walks
digit folders back to the class's one image), and prints its path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import os
import subprocess
import sys
import tempfile

PROBE = r"""
import json, sys, time
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
import stoker
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
base = rss()
t0 = time.perf_counter()
loader = stoker.Loader(sys.argv[1], 256, threads=2, transform="eval", size=64)
t1 = time.perf_counter()
opened = rss()
opened_peak = peak()
batch = next(iter(loader))
t2 = time.perf_counter()
first = rss()
print(json.dumps({"samples": len(loader.dataset) if hasattr(loader, "dataset") else None,
                  "open_s": t1 - t0, "first_batch_s": t2 - t1,
                  "rss_base": base, "rss_open": opened, "rss_open_peak": opened_peak,
                  "rss_first": first}))
loader.close()
"""


def measure(data: str, fresh_cache: bool) -> dict:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if fresh_cache:
            env["STOKER_CACHE_DIR"] = cache
        r = subprocess.run([sys.executable, "-c", PROBE, data], capture_output=True, text=True,
                           env=env)
    if r.returncode != 0:
        raise SystemExit(f"{data}: {r.stderr.strip()}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def make_list(folder: str, lines: int) -> str:
    from PIL import Image

    classes = 1000
    for c in range(classes):
        root = os.path.join(folder, f"n{c:08d}")
        for d in range(10):
            os.makedirs(os.path.join(root, str(d)), exist_ok=True)
        Image.new("RGB", (32, 24), (c % 256, c * 7 % 256, c * 13 % 256)).save(
            os.path.join(root, "img.jpg"), quality=90)
    path = os.path.join(folder, "list.txt")
    with open(path, "w") as out:
        for i in range(lines):
            c = i % classes
            walk = "".join(f"{digit}/../" for digit in str(i // classes).zfill(5))
            out.write(f"n{c:08d}/{walk}img.jpg\t{c}\n")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fresh-cache", action="store_true",
                    help="an empty STOKER_CACHE_DIR for each run: a list's first open")
    ap.add_argument("--make-list", metavar="DIR")
    ap.add_argument("--lines", type=int, default=1281167)
    args = ap.parse_args()
    if args.make_list:
        print(make_list(args.make_list, args.lines))
        return 0
    mib = 1024 * 1024
    print(f"{'dataset':60} {'open s':>8} {'+RSS open':>10} {'+peak open':>11} "
          f"{'first batch s':>14} {'+RSS first':>11}")
    for data in args.data:
        runs = [measure(data, args.fresh_cache) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs)
               for k in ("open_s", "first_batch_s", "rss_base", "rss_open", "rss_open_peak",
                         "rss_first")}
        print(f"{data:60} {med['open_s']:8.3f} "
              f"{(med['rss_open'] - med['rss_base']) / mib:6.1f} MiB "
              f"{(med['rss_open_peak'] - med['rss_base']) / mib:7.1f} MiB "
              f"{med['first_batch_s']:14.3f} {(med['rss_first'] - med['rss_base']) / mib:7.1f} MiB",
              flush=True)
        print(json.dumps({"data": data, "runs": runs}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
