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

Pairs/s over --images pairs after the first batch, each measurement a fresh process, rounds
alternating, medians. Run: ./run.sh bench --clip [--threads 2 --rounds 3] (reference venv).
"""

import argparse
import glob
import json
import os
import sys
import time

from rounds import print_medians, run_rounds

HERE = os.path.dirname(os.path.abspath(__file__))
PHOTOS = os.path.join(HERE, "data", "photos-0.3mp")
SHARDS = os.path.join(HERE, "data", "clip-shards")
MEAN, STD = (0.481, 0.458, 0.408), (0.269, 0.261, 0.276)
PIPELINES = ("stoker", "webdataset")


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


def worker(args) -> None:
    if args.worker == "stoker":
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
    ap.add_argument("--shards", help=argparse.SUPPRESS)
    ap.add_argument("--worker", choices=PIPELINES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    shards = make_shards()
    results = run_rounds(__file__, PIPELINES, args.rounds,
                         ["--shards", shards, "--threads", str(args.threads), "--batch",
                          str(args.batch), "--size", str(args.size), "--images",
                          str(args.images)], "pairs_per_second", "pairs/s")
    med = print_medians(results, f"{args.threads} threads/workers, batch {args.batch}, "
                        f"{args.size}px, {args.images} pairs x {args.rounds} rounds", "pairs/s")
    print(f"  stoker / webdataset: {med['stoker'] / med['webdataset']:.2f}x")


if __name__ == "__main__":
    main()
