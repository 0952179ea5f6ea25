#!/usr/bin/env python3
"""timm's training recipe (train.py), its data loading moved to stoker.

What timm's train.py does for an ImageNet-style run, cut to its core: a timm model,
timm's create_loader with RandAugment ('--aa rand-m9-mstd0.5-inc1'), random erasing
('--reprob 0.25 --remode pixel'), Mixup/CutMix with label smoothing (timm's Mixup and
SoftTargetCrossEntropy), timm's optimizer factory and cosine schedule, then validate():
top-1 over the validation set. Run it with either loader:

    python examples/train_timm.py --data-dir /data/imagenet --loader timm
    python examples/train_timm.py --data-dir /data/imagenet --loader stoker
    torchrun --nproc-per-node 8 examples/train_timm.py --data-dir ... --loader stoker

The two differ only in make_loaders (marked below): timm's create_dataset + create_loader +
Mixup become stoker.timm.create_transform (the same arguments, the same list timm builds) +
stoker.Loader + stoker.timm.Mixup run in stoker's workers. DATA-DIR/train and DATA-DIR/val are
ImageFolders. Needs timm (pip install timm); stoker itself does not.
"""

import argparse
import os
import time

import timm
import timm.optim
import timm.scheduler
import torch
import torch.distributed as dist
from timm.loss import SoftTargetCrossEntropy


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--loader", choices=("timm", "stoker"), default="stoker")
    ap.add_argument("--model", default="resnet10t")
    ap.add_argument("--img-size", type=int, default=224)
    ap.add_argument("--batch-size", "-b", type=int, default=32)
    ap.add_argument("--workers", "-j", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--opt", default="adamw")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--aa", default="rand-m9-mstd0.5-inc1",
                    help="timm's auto_augment string (with --loader timm on Pillow 13, add "
                    "-mmax9: timm 1.0.31 asks Pillow 13 for 0 posterize bits at magnitude 10)")
    ap.add_argument("--reprob", type=float, default=0.25)
    ap.add_argument("--remode", default="pixel")
    ap.add_argument("--recount", type=int, default=1)
    ap.add_argument("--mixup", type=float, default=0.8)
    ap.add_argument("--cutmix", type=float, default=1.0)
    ap.add_argument("--mixup-prob", type=float, default=1.0)
    ap.add_argument("--mixup-switch-prob", type=float, default=0.5)
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--train-interpolation", default="bicubic")
    ap.add_argument("--hflip", type=float, default=0.5)
    ap.add_argument("--vflip", type=float, default=0.0)
    ap.add_argument("--crop-pct", type=float, default=0.875)
    return ap.parse_args()


# ---- data loading: the only part that differs between the two loaders ----------------------

def make_loaders(args, num_classes, distributed):
    mixup_args = dict(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix,
                      prob=args.mixup_prob, switch_prob=args.mixup_switch_prob,
                      label_smoothing=args.smoothing, num_classes=num_classes)
    if args.loader == "timm":
        from timm.data import Mixup, create_dataset, create_loader
        train = create_dataset("", root=os.path.join(args.data_dir, "train"), is_training=True)
        val = create_dataset("", root=os.path.join(args.data_dir, "val"))
        train_loader = create_loader(
            train, input_size=(3, args.img_size, args.img_size), batch_size=args.batch_size,
            is_training=True, use_prefetcher=False, re_prob=args.reprob, re_mode=args.remode,
            re_count=args.recount, hflip=args.hflip, vflip=args.vflip,
            auto_augment=args.aa, interpolation=args.train_interpolation,
            num_workers=args.workers, distributed=distributed, device=torch.device("cpu"))
        val_loader = create_loader(
            val, input_size=(3, args.img_size, args.img_size), batch_size=args.batch_size,
            is_training=False, use_prefetcher=False, interpolation="bicubic",
            crop_pct=args.crop_pct, num_workers=args.workers, distributed=distributed,
            device=torch.device("cpu"))
        return train_loader, val_loader, Mixup(**mixup_args)

    import stoker
    from stoker.timm import Mixup, create_transform
    train_tf = create_transform(
        args.img_size, is_training=True, re_prob=args.reprob, re_mode=args.remode,
        re_count=args.recount, hflip=args.hflip, vflip=args.vflip, auto_augment=args.aa,
        interpolation=args.train_interpolation)
    val_tf = create_transform(args.img_size, interpolation="bicubic", crop_pct=args.crop_pct)
    train_loader = stoker.Loader(os.path.join(args.data_dir, "train"), args.batch_size,
                                 transform=train_tf, batch_transform=Mixup(**mixup_args),
                                 num_workers=args.workers, mode="drop")
    val_loader = stoker.Loader(os.path.join(args.data_dir, "val"), args.batch_size,
                               transform=val_tf, shuffle=False, num_workers=args.workers)
    return train_loader, val_loader, None  # the mix runs in stoker's workers

# ---- end of data loading ---------------------------------------------------------------------


def validate(model, loader, distributed):
    model.eval()
    correct = torch.zeros(2)
    with torch.no_grad():
        for batch in loader:
            images, target = batch[0], batch[1]
            correct += torch.tensor([float((model(images).argmax(1) == target).sum()),
                                     float(target.shape[0])])
    if distributed:
        dist.all_reduce(correct)
    return int(correct[0]), int(correct[1])


def main():
    args = parse_args()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    num_classes = len(next(os.walk(os.path.join(args.data_dir, "train")))[1])
    train_loader, val_loader, mixup_fn = make_loaders(args, num_classes, distributed)
    model = timm.create_model(args.model, num_classes=num_classes)
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = timm.optim.create_optimizer_v2(model, opt=args.opt, lr=args.lr,
                                               weight_decay=args.weight_decay)
    scheduler, _ = timm.scheduler.create_scheduler_v2(optimizer, sched="cosine",
                                                      num_epochs=args.epochs)
    criterion = SoftTargetCrossEntropy()
    rank = dist.get_rank() if distributed else 0
    for epoch in range(args.epochs):
        if hasattr(train_loader, "sampler") and hasattr(train_loader.sampler, "set_epoch"):
            train_loader.sampler.set_epoch(epoch)
        model.train()
        start, seen, total, steps = time.time(), 0, 0.0, 0
        for batch in train_loader:
            images, target = batch[0], batch[1]
            if mixup_fn is not None:
                images, target = mixup_fn(images, target)
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen, total, steps = seen + images.shape[0], total + loss.item(), steps + 1
        scheduler.step(epoch + 1)
        correct, counted = validate(model, val_loader, distributed)
        if rank == 0:
            print(f"epoch {epoch}: {steps} steps, {seen} images, mean loss {total / steps:.4f}, "
                  f"soft targets {tuple(target.shape)}, {seen / (time.time() - start):.1f} "
                  f"images/s ({args.loader}); validation {correct}/{counted} top-1", flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
