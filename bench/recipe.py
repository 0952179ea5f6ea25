#!/usr/bin/env python3
"""The training recipe's cost: stoker vs torchvision's DataLoader, plain and full recipe.

Run by ``./run.sh bench --recipe [ARGS]`` (the reference venv: torch 2.14.1 + torchvision
0.29.1 + timm 1.0.31). On the same photos (bench/data/photos-0.3mp, made by
bench/make_photo_set.py) and the same cores, each measurement a fresh process, rounds alternating:

  stoker-plain        stoker.Loader(transform='train'): RandomResizedCrop(224) + flip + Normalize
  stoker-recipe       + TrivialAugmentWide + RandomErasing(0.1) per sample (C++ workers) and
                      RandomChoice(MixUp(0.2), CutMix(1.0)) per batch (torch, consumer thread)
  torchvision-plain   ImageFolder + DataLoader(num_workers=THREADS) with v2 RandomResizedCrop +
                      flip + ToImage + ToDtype + Normalize
  torchvision-recipe  the same list + TrivialAugmentWide + RandomErasing, MixUp/CutMix in
                      collate_fn (torchvision's references/classification)

With --set timm, timm's recipe instead (timm's train.py for ResNet strikes back / DeiT: RRC
bicubic + flip + 'rand-m9-mstd0.5-inc1' + RandomErasing(0.25, 'pixel') per sample, Mixup(0.8)
/ CutMix(1.0) with label smoothing 0.1 per batch):

  stoker-timm         stoker.timm.create_transform + stoker.Loader + stoker.timm.Mixup (all in
                      the C++ workers)
  timm-timm           timm.data.create_transform + ImageFolder + DataLoader(num_workers=THREADS),
                      timm.data.Mixup on the batch in the training process (train.py's CPU path)

images/s over --images images after the first batch, medians of --rounds, and the ratios: the
recipe's cost on each loader (recipe / plain) and stoker / torchvision for both (for timm:
stoker / timm).
"""

import argparse
import json
import os
import sys
import time

from rounds import print_medians, run_rounds

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "data", "photos-0.3mp")
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
PIPELINES = ("stoker-plain", "stoker-recipe", "torchvision-plain", "torchvision-recipe")
TIMM_PIPELINES = ("stoker-timm", "timm-timm")
TIMM_AA = "rand-m9-mstd0.5-inc1"


def timm_loader(args, classes):
    """The two loaders of timm's recipe (stoker-timm, timm-timm) and the per-batch function
    the training loop applies (timm's Mixup for timm's loader; nothing for stoker's)."""
    import torch

    recipe = dict(is_training=True, auto_augment=TIMM_AA, interpolation="bicubic", re_prob=0.25,
                  re_mode="pixel", re_count=1)
    mix = dict(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=classes)
    if args.worker == "stoker-timm":
        import stoker
        from stoker.timm import Mixup, create_transform
        return stoker.Loader(args.data, args.batch, transform=create_transform(args.size, **recipe),
                             batch_transform=Mixup(**mix), threads=args.threads), None
    import timm.data.auto_augment as aa
    import torchvision
    from PIL import Image
    from timm.data import Mixup, create_transform

    # timm 1.0.31 on Pillow 13: PosterizeIncreasing at level 10 keeps 0 bits, which Pillow 13's
    # ImageOps.posterize refuses (ValueError in a DataLoader worker within ~1000 images of
    # this recipe); give it Pillow 12's answer, the black image (what stoker computes).
    def posterize(img, bits, **_):
        return Image.new(img.mode, img.size) if bits < 1 else aa.posterize(img, bits)

    for name in ("Posterize", "PosterizeIncreasing", "PosterizeOriginal"):
        aa.NAME_TO_OP[name] = posterize
    dataset = torchvision.datasets.ImageFolder(args.data, create_transform(args.size, **recipe))
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=True,
                                         num_workers=args.threads, drop_last=True,
                                         persistent_workers=True)
    return loader, Mixup(**mix)


def worker(args) -> None:
    import torch

    name = args.worker
    recipe = name.endswith("recipe")
    classes = len(next(os.walk(args.data))[1])
    per_batch = None
    if name in TIMM_PIPELINES:
        loader, per_batch = timm_loader(args, classes)
    elif name.startswith("stoker"):
        import stoker
        import stoker.transforms as T
        steps = [T.RandomResizedCrop(args.size), T.RandomHorizontalFlip()]
        steps += [T.TrivialAugmentWide()] if recipe else []
        steps += [T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)]
        steps += [T.RandomErasing(0.1)] if recipe else []
        mix = (T.RandomChoice([T.MixUp(0.2, num_classes=classes),
                               T.CutMix(1.0, num_classes=classes)]) if recipe else None)
        loader = stoker.Loader(args.data, args.batch, transform=steps, batch_transform=mix,
                               threads=args.threads)
    else:
        import torchvision
        from torchvision.transforms import v2 as T
        steps = [T.RandomResizedCrop(args.size, antialias=True), T.RandomHorizontalFlip()]
        steps += [T.TrivialAugmentWide()] if recipe else []
        steps += [T.PILToTensor(), T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)]
        steps += [T.RandomErasing(0.1)] if recipe else []
        dataset = torchvision.datasets.ImageFolder(args.data, T.Compose(steps))
        collate = torch.utils.data.default_collate
        if recipe:
            mix = T.RandomChoice([T.MixUp(alpha=0.2, num_classes=classes),
                                  T.CutMix(alpha=1.0, num_classes=classes)])
            collate = lambda b: mix(*torch.utils.data.default_collate(b))  # noqa: E731
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=True,
                                             num_workers=args.threads, collate_fn=collate,
                                             persistent_workers=True)
    start, images, first = None, 0, None
    t0 = time.perf_counter()
    while images < args.images:
        for batch in loader:
            if start is None:
                start, first = time.perf_counter(), time.perf_counter() - t0
                continue
            if per_batch is not None:
                per_batch(batch[0], batch[1])
            images += batch[0].shape[0]
            if images >= args.images:
                break
    seconds = time.perf_counter() - start
    print(json.dumps({"pipeline": name, "images": images, "images_per_second": images / seconds,
                      "first_batch_seconds": first}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--images", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--set", choices=("torchvision", "timm"), default="torchvision",
                    help="whose recipe: torchvision's references or timm's train.py")
    ap.add_argument("--worker", choices=PIPELINES + TIMM_PIPELINES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if not os.path.isdir(args.data):
        sys.exit(f"bench/recipe.py: no {args.data}: run ./run.sh bench once (it makes the photos)")
    pipelines = TIMM_PIPELINES if args.set == "timm" else PIPELINES
    results = run_rounds(__file__, pipelines, args.rounds,
                         ["--data", args.data, "--threads", str(args.threads), "--batch",
                          str(args.batch), "--size", str(args.size), "--images",
                          str(args.images)], "images_per_second", "images/s")
    med = print_medians(results, f"{args.threads} threads/workers, batch {args.batch}, "
                        f"{args.size}px, {args.images} images x {args.rounds} rounds", "images/s")
    if args.set == "timm":
        print(f"  stoker / timm: {med['stoker-timm'] / med['timm-timm']:.2f}x")
        return
    print(f"  recipe / plain: stoker {med['stoker-recipe'] / med['stoker-plain']:.2f}x, "
          f"torchvision {med['torchvision-recipe'] / med['torchvision-plain']:.2f}x")
    print(f"  stoker / torchvision: plain {med['stoker-plain'] / med['torchvision-plain']:.2f}x, "
          f"recipe {med['stoker-recipe'] / med['torchvision-recipe']:.2f}x")


if __name__ == "__main__":
    main()
