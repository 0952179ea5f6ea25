#!/usr/bin/env python3
"""torchvision's ImageNet training recipe, its data loading moved to stoker.

The recipe of torchvision's references/classification/train.py ("How to train
state-of-the-art models"): RandomResizedCrop + RandomHorizontalFlip + TrivialAugmentWide +
PILToTensor + ToDtype + Normalize + RandomErasing per sample, and a RandomChoice of MixUp and
CutMix per batch; label smoothing, SGD, cosine schedule. Run it with either loader:

    python examples/train_classification.py --data-path /data/imagenet --loader torchvision
    python examples/train_classification.py --data-path /data/imagenet --loader stoker
    torchrun --nproc-per-node 8 examples/train_classification.py --data-path ... --loader stoker

The two differ only in make_train_loader (marked below): the transform list is the same list
written with stoker.transforms instead of torchvision.transforms.v2, the DataLoader +
DistributedSampler + collate_fn become one stoker.Loader, and the loss is averaged over the
batch's valid samples (stoker's last batch is full-size with padding masked in `valid`).
The model, the optimiser and the loop are untouched. DATA-PATH/train is an ImageFolder.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-path", required=True)
    ap.add_argument("--loader", choices=("torchvision", "stoker"), default="stoker")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader processes / stoker threads")
    ap.add_argument("--lr", type=float, default=0.5, help="the recipe's, for 1024 images a step")
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--mixup-alpha", type=float, default=0.2)
    ap.add_argument("--cutmix-alpha", type=float, default=1.0)
    ap.add_argument("--random-erase", type=float, default=0.1)
    ap.add_argument("--train-crop-size", type=int, default=176)
    ap.add_argument("--max-steps", type=int, default=0, help="stop each epoch after N steps")
    return ap.parse_args()


# ---- data loading: the only part that differs between the two loaders ----------------------

def make_train_loader(args, num_classes):
    if args.loader == "torchvision":
        from torchvision.transforms import v2 as T
        transform = T.Compose([
            T.RandomResizedCrop(args.train_crop_size, antialias=True),
            T.RandomHorizontalFlip(), T.TrivialAugmentWide(), T.PILToTensor(),
            T.ToDtype(torch.float, scale=True), T.Normalize(MEAN, STD),
            T.RandomErasing(p=args.random_erase)])
        dataset = torchvision.datasets.ImageFolder(os.path.join(args.data_path, "train"),
                                                   transform)
        mix = T.RandomChoice([T.MixUp(alpha=args.mixup_alpha, num_classes=num_classes),
                              T.CutMix(alpha=args.cutmix_alpha, num_classes=num_classes)])
        sampler = (torch.utils.data.DistributedSampler(dataset) if dist.is_initialized()
                   else torch.utils.data.RandomSampler(dataset))
        loader = torch.utils.data.DataLoader(
            dataset, batch_size=args.batch_size, sampler=sampler, num_workers=args.workers,
            pin_memory=True, collate_fn=lambda b: mix(*torch.utils.data.default_collate(b)))
        return loader, lambda loss, batch: loss.mean()

    import stoker
    import stoker.transforms as T
    transform = T.Compose([
        T.RandomResizedCrop(args.train_crop_size, antialias=True),
        T.RandomHorizontalFlip(), T.TrivialAugmentWide(), T.PILToTensor(),
        T.ToDtype(torch.float, scale=True), T.Normalize(MEAN, STD),
        T.RandomErasing(p=args.random_erase)])
    mix = T.RandomChoice([T.MixUp(alpha=args.mixup_alpha, num_classes=num_classes),
                          T.CutMix(alpha=args.cutmix_alpha, num_classes=num_classes)])
    loader = stoker.Loader(os.path.join(args.data_path, "train"), args.batch_size,
                           transform=transform, batch_transform=mix, threads=args.workers)
    return loader, stoker.torch.masked_mean

# ---- end of data loading ---------------------------------------------------------------------


def main():
    args = parse_args()
    if "RANK" in os.environ:
        dist.init_process_group("gloo")
    num_classes = len(next(os.walk(os.path.join(args.data_path, "train")))[1])
    loader, reduce_loss = make_train_loader(args, num_classes)
    model = torchvision.models.get_model(args.model, num_classes=num_classes)
    if dist.is_initialized():
        model = nn.parallel.DistributedDataParallel(model)
    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing, reduction="none")
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=2e-5)
    steps = len(loader) * args.epochs
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, steps))
    rank = dist.get_rank() if dist.is_initialized() else 0
    for epoch in range(args.epochs):
        if hasattr(loader, "sampler") and hasattr(loader.sampler, "set_epoch"):
            loader.sampler.set_epoch(epoch)
        model.train()
        start, seen, total = time.time(), 0, 0.0
        for step, batch in enumerate(loader):
            images, target = batch[0], batch[1]
            loss = reduce_loss(criterion(model(images), target), batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            seen += images.shape[0]
            total += float(loss)
            if args.max_steps and step + 1 >= args.max_steps:
                break
        if rank == 0:
            print(f"epoch {epoch}: {step + 1} steps, {seen} images, mean loss "
                  f"{total / (step + 1):.4f}, soft targets {tuple(target.shape)}, "
                  f"{seen / (time.time() - start):.1f} images/s ({args.loader})", flush=True)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
