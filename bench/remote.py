#!/usr/bin/env python3
"""Remote WebDataset shards against the same shards on disk: what a slow link costs.

Run by ``./run.sh bench --remote [ARGS]`` (the project venv: stoker, webdataset). The photos
of bench/data/photos-0.3mp (bench/make_photo_set.py; ~0.3 MP JPEGs like ImageNet's) are
written once as WebDataset shards (webdataset.ShardWriter, 200 samples a shard) and read by
`stoker bench` (train transform, 224) from:

  disk            the shards on local disk, shuffled in shard windows (--shard-window 4)
  http            nginx on loopback, no added latency
  http+0ms        through tests/python/slowlink.py without delay (the proxy's own cost)
  http+20ms       through it with a 20 ms round trip (10 ms each way, new connections too)
  http+50ms       50 ms round trip
  http+20ms-global  20 ms, one global shuffle (--shard-window 0): a round trip per sample,
                  hidden only by the read-ahead's 32 connections
  http+20ms-cached  20 ms, with a node-local object cache (STOKER_REMOTE_CACHE) that an
                  earlier process of the node filled: what a node's second rank, and every
                  epoch after the first, reads

The servers (nginx, the proxy) run on the same cores as stoker: on a small machine part of
the gap to `disk` is their CPU time, which is why the table also gives stoker's own CPU time
per image (user + sys of the bench process). Each measurement is a fresh process; rounds
alternate the sources; medians of --rounds.
"""

import argparse
import datetime
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from servers import Nginx  # noqa: E402
from slowlink import SlowLink  # noqa: E402


def make_shards(folder: Path, out: Path, per_shard: int) -> str:
    import webdataset
    sys.path.insert(0, str(ROOT / "build" / "python"))
    import stoker
    stamp = out / ".stamp"
    data = stoker.open_dataset(folder)
    want = f"{data.fingerprint} {per_shard}"
    shards = (len(data) + per_shard - 1) // per_shard
    pattern = f"train-{{000000..{shards - 1:06d}}}.tar"
    if stamp.exists() and stamp.read_text() == want:
        return pattern
    out.mkdir(parents=True, exist_ok=True)
    with webdataset.ShardWriter(str(out / "train-%06d.tar"), maxcount=per_shard,
                                verbose=0) as sink:
        for i in range(len(data)):
            sink.write({"__key__": f"{i:08d}", "jpg": Path(data.name(i)).read_bytes(),
                        "cls": data.label(i)})
    stamp.write_text(want)
    return pattern


def bench(stoker_bin: str, data: str, threads: int, images: int, env: dict, extra=()):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([stoker_bin, "bench", data, "--threads", str(threads), "--batch", "64",
                        "--images", str(images), *extra], capture_output=True, text=True,
                       env=dict(os.environ, **env), timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"stoker bench {data} failed:\n{r.stdout}{r.stderr}")
    found = re.search(r"([0-9.]+) images/s", r.stdout)
    rate = float(found.group(1)) if found else float("nan")  # fewer than 2 batches
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rate, cpu / images * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(HERE / "data" / "photos-0.3mp"))
    p.add_argument("--images", type=int, default=3000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--stoker", default=str(Path(sys.executable).parent / "stoker"))
    args = p.parse_args()
    work = HERE / "data" / "remote-bench"
    shard_dir = work / "shards"
    pattern = make_shards(Path(args.data), shard_dir, 200)
    env = {"STOKER_CACHE_DIR": str(work / "cache")}
    results = {}
    with Nginx(shard_dir, work / "nginx") as server, \
            SlowLink(f"127.0.0.1:{server.port}", 0.0, work / "link0") as l0, \
            SlowLink(f"127.0.0.1:{server.port}", 0.010, work / "link20") as l20, \
            SlowLink(f"127.0.0.1:{server.port}", 0.025, work / "link50") as l50:
        cached = dict(env, STOKER_REMOTE_CACHE=str(work / "objects"))
        sources = {
            "disk": (str(shard_dir / pattern), ("--shard-window", "4"), env),
            "http": (f"{server.url}/{pattern}", (), env),
            "http+0ms": (f"{l0.url}/{pattern}", (), env),
            "http+20ms": (f"{l20.url}/{pattern}", (), env),
            "http+50ms": (f"{l50.url}/{pattern}", (), env),
            "http+20ms-global": (f"{l20.url}/{pattern}", ("--shard-window", "0"), env),
            "http+20ms-cached": (f"{l20.url}/{pattern}", (), cached),
        }
        for data, _, source_env in sources.values():  # index every shard once (cached)
            bench(args.stoker, data, 1, 64, source_env)
        # The node cache filled by an earlier process that read the set.
        bench(args.stoker, sources["http+20ms-cached"][0], 2, args.images, cached)
        for threads in [int(t) for t in args.threads.split(",")]:
            for _ in range(args.rounds):
                for name, (data, extra, source_env) in sources.items():
                    results.setdefault((threads, name), []).append(
                        bench(args.stoker, data, threads, args.images, source_env, extra))
    print(f"# {datetime.date.today()} {platform.node()} {os.cpu_count()} CPUs, "
          f"{args.images} images of {args.data}, medians of {args.rounds}")
    print("| threads | source | images/s | / disk | stoker CPU ms/image |")
    print("|---|---|---|---|---|")
    for threads in [int(t) for t in args.threads.split(",")]:
        disk = statistics.median(r for r, _ in results[(threads, "disk")])
        for name in sources:
            rates = [r for r, _ in results[(threads, name)]]
            cpus = [c for _, c in results[(threads, name)]]
            rate = statistics.median(rates)
            print(f"| {threads} | {name} | {rate:.0f} | {rate / disk:.2f} | "
                  f"{statistics.median(cpus):.2f} |")


if __name__ == "__main__":
    main()
