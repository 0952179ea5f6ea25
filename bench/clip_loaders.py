#!/usr/bin/env python3
"""Image-text pairs: stoker vs webdataset + DataLoader on the same CLIP-style shards and cores.

The shards (made once, by webdataset's own ShardWriter): the photos of bench/data/photos-0.3mp
(bench/make_photo_set.py) as key.jpg, each with a caption (key.txt) and metadata (key.json),
the layout img2dataset writes for LAION / DataComp. Per pair: RandomResizedCrop(SIZE,
scale=(0.5, 1)) + flip + Normalize on the image, the caption as a string.

  stoker      stoker.Loader(shards, fields=["txt"]), THREADS C++ threads
  webdataset  wds.WebDataset(shards).shuffle(1000).decode("pil").to_tuple("jpg", "txt")
              .map_tuple(torchvision transforms).batched(B) in a WebLoader with THREADS
              worker processes (webdataset's README pipeline)

With --packed, the same photos packed once (`stoker pack SHARDS --mode jpeg --max-side 320`),
with and without their captions, read by stoker with the same recipe (docs/format.md,
"Version 2"):

  packed           the pack without fields (format version 1), images only
  packed+captions  the pack with --fields txt,json (version 2), fields=["txt"]

Pairs/s over --images pairs after the first batch, each measurement a fresh process, rounds
alternating, medians. Run: ./run.sh bench --clip [--packed] [--threads 2 --rounds 3]
(reference venv).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

from rounds import print_medians, run_rounds

HERE = os.path.dirname(os.path.abspath(__file__))
PHOTOS = os.path.join(HERE, "data", "photos-0.3mp")
SHARDS = os.path.join(HERE, "data", "clip-shards")
MEAN, STD = (0.481, 0.458, 0.408), (0.269, 0.261, 0.276)
PACKS = os.path.join(HERE, "data", "clip-packs")
PIPELINES = ("stoker", "webdataset")
PACKED_PIPELINES = ("packed", "packed+captions")


def make_shards() -> str:
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
    import clip_shards
    photos = sorted(glob.glob(os.path.join(PHOTOS, "*", "*.jpg")))
    if not photos:
        sys.exit(f"bench/clip_loaders.py: no photos in {PHOTOS}: run ./run.sh bench once")
    stamp = os.path.join(SHARDS, ".stamp")
    if os.path.exists(stamp):
        return open(stamp).read()
    pattern = clip_shards.write(__import__("pathlib").Path(SHARDS), len(photos), 200, photos)
    open(stamp, "w").write(pattern)
    return pattern


def make_packs(shards: str) -> dict:
    """The shards packed once without and with their captions: {pipeline: pack folder}."""
    exe = os.path.join(os.path.dirname(sys.executable), "stoker")
    exe = os.environ.get("STOKER_BIN") or (exe if os.path.exists(exe) else shutil.which("stoker"))
    packs = {"packed": os.path.join(PACKS, "plain"),
             "packed+captions": os.path.join(PACKS, "captions")}
    for name, out in packs.items():
        fields = ["--fields", "txt,json"] if name == "packed+captions" else []
        subprocess.run([exe, "pack", shards, out, "--mode", "jpeg", "--max-side", "320",
                        *fields], check=True, capture_output=True)
    return packs


def worker(args) -> None:
    if args.worker in PACKED_PIPELINES:
        import stoker
        fields = ["txt"] if args.worker == "packed+captions" else []
        loader = stoker.Loader(args.shards, args.batch, transform="train", size=args.size,
                               scale=(0.5, 1.0), mean=MEAN, std=STD, fields=fields,
                               threads=args.threads)
        pairs = ((b.images, b.fields.get("txt", [None] * b.batch_size)) for b in loader)
    elif args.worker == "stoker":
        import stoker
        loader = stoker.Loader(args.shards, args.batch, transform="train", size=args.size,
                               scale=(0.5, 1.0), mean=MEAN, std=STD, fields=["txt"],
                               threads=args.threads)
        pairs = ((b.images, b.fields["txt"]) for b in loader)
    else:
        import webdataset as wds
        from torchvision import transforms as T
        tf = T.Compose([T.RandomResizedCrop(args.size, scale=(0.5, 1.0)), T.RandomHorizontalFlip(),
                        T.ToTensor(), T.Normalize(MEAN, STD)])
        dataset = (wds.WebDataset(args.shards, shardshuffle=100, empty_check=False).shuffle(1000)
                   .decode("pil").to_tuple("jpg", "txt").map_tuple(tf, lambda t: t)
                   .batched(args.batch))
        pairs = wds.WebLoader(dataset, batch_size=None, num_workers=args.threads)
    start, images, first, t0 = None, 0, None, time.perf_counter()
    for images_batch, captions in pairs:
        if start is None:
            start, first = time.perf_counter(), time.perf_counter() - t0
            continue
        assert len(captions) == images_batch.shape[0]
        images += images_batch.shape[0]
        if images >= args.images:
            break
    print(json.dumps({"pipeline": args.worker, "images": images,
                      "pairs_per_second": images / (time.perf_counter() - start),
                      "first_batch_seconds": first}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--images", type=int, default=1536)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--packed", action="store_true",
                    help="packs of the shards, with and without captions (stoker only)")
    ap.add_argument("--shards", help=argparse.SUPPRESS)
    ap.add_argument("--worker", choices=PIPELINES + PACKED_PIPELINES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    shards = make_shards()
    if args.packed:
        return compare_packs(make_packs(shards), args)
    results = run_rounds(__file__, PIPELINES, args.rounds,
                         ["--shards", shards, "--threads", str(args.threads), "--batch",
                          str(args.batch), "--size", str(args.size), "--images",
                          str(args.images)], "pairs_per_second", "pairs/s")
    med = print_medians(results, f"{args.threads} threads/workers, batch {args.batch}, "
                        f"{args.size}px, {args.images} pairs x {args.rounds} rounds", "pairs/s")
    print(f"  stoker / webdataset: {med['stoker'] / med['webdataset']:.2f}x")


def compare_packs(packs: dict, args) -> None:
    results = {p: [] for p in PACKED_PIPELINES}
    for r in range(args.rounds):
        order = PACKED_PIPELINES if r % 2 == 0 else PACKED_PIPELINES[::-1]
        for p in order:
            out = subprocess.run([sys.executable, __file__, "--worker", p, "--shards", packs[p],
                                  "--threads", str(args.threads), "--batch", str(args.batch),
                                  "--size", str(args.size), "--images", str(args.images)],
                                 capture_output=True, text=True, check=True)
            rate = json.loads(out.stdout.strip().splitlines()[-1])["pairs_per_second"]
            results[p].append(rate)
            print(f"round {r + 1} {p:20s} {rate:8.1f} images/s", flush=True)
    med = print_medians(results, f"{args.threads} threads, batch {args.batch}, {args.size}px, "
                        f"{args.images} images x {args.rounds} rounds", "images/s")
    print(f"  with captions / without: {med['packed+captions'] / med['packed']:.3f}")


if __name__ == "__main__":
    main()
