#!/usr/bin/env python3
"""A real job: a small CNN on Fashion-MNIST with DistributedDataParallel, fed by stoker.

    source .venv/bin/activate                                   # made by ./run.sh build
    python examples/fashion_mnist_to_folder.py /tmp/fmnist      # IDX -> PNG ImageFolder
    torchrun --standalone --nproc-per-node 2 examples/train_ddp.py --data /tmp/fmnist

torchrun starts the ranks: every rank reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from
the environment, and stoker its threads' share of the node from LOCAL_WORLD_SIZE. gloo on CPU,
nccl when CUDA is there (one GPU per local rank). Run alone (no RANK in the environment) it is
a one-rank job.

What stoker does here:
  * each rank gets a disjoint share of the training set, every image exactly once per epoch
    over all ranks, and the same number of batches on every rank (mode='exact'); the last
    step's padding slots are masked by `valid`;
  * the loss is stoker.torch.masked_mean: with DDP's gradient averaging it is the exact mean
    over the step's valid samples of all ranks (`global_valid`), padding counting zero;
  * the test accuracy counts the valid slots only and sums them over the ranks, so every test
    image counts exactly once whatever the world size: the sample count printed is 10,000;
  * set_epoch reshuffles every epoch; --checkpoint/--resume save and restore the loader's
    state_dict() with the model's, so a resumed job continues with the right epoch's order;
    with --checkpoint-every N also mid-epoch, after every N steps, so that a job restarted by
    `torchrun --max-restarts K` (same command line, with --resume) goes on from the last saved
    step and takes every remaining sample of the epoch exactly once.
"""

import argparse
import gc
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import stoker
import stoker.torch

MEAN, STD = (0.2860,), (0.3530,)  # Fashion-MNIST's pixel mean and std (0..1 scale)


def parse_args():
    ap = argparse.ArgumentParser(description="DDP training on Fashion-MNIST fed by stoker")
    ap.add_argument("--data", type=Path, required=True,
                    help="folder made by fashion_mnist_to_folder.py (DATA/train, DATA/test)")
    ap.add_argument("--packed", action="store_true",
                    help="read DATA/train-packed and DATA/test-packed (made by its --pack)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=128, help="per rank")
    ap.add_argument("--lr", type=float, default=4e-3, help="peak learning rate (Adam, one-cycle)")
    ap.add_argument("--augment", choices=("crop", "none"), default="none",
                    help="crop: mild RandomResizedCrop(28, scale=(0.6, 1)) + horizontal flip; "
                         "none: the images as they are (fastest to 85 %%; the default)")
    ap.add_argument("--threads", type=int, default=None,
                    help="stoker worker threads per rank (default: CPUs / local ranks)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checkpoint", type=Path, default=None,
                    help="save model, optimizer and loader state here after every epoch")
    ap.add_argument("--checkpoint-every", type=int, default=None, metavar="STEPS",
                    help="also save --checkpoint every STEPS training steps (mid-epoch)")
    ap.add_argument("--resume", action="store_true",
                    help="continue from --checkpoint when it exists (the saved epoch and step)")
    ap.add_argument("--max-steps", type=int, default=None,
                    help="stop each training epoch after this many steps (for quick tests)")
    return ap.parse_args()


class Net(nn.Module):
    """Two strided convolutions and two linear layers: ~0.2 M parameters, ~0.4 M multiply-adds
    per image, fast enough on one CPU core per rank."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 5, stride=2, padding=2)   # 28 -> 14
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)  # 14 -> 7
        self.fc1 = nn.Linear(32 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def setup():
    """Process group from the torchrun variables; (rank, world, device)."""
    if "RANK" not in os.environ:  # run alone: a group of one, so the code path is the same
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    stoker.torch.init_process_group(backend)  # init_process_group, robust to torchrun restarts
    return dist.get_rank(), dist.get_world_size(), device


def evaluate(model, loader, device):
    """(accuracy, samples) over the whole test set: valid slots only, summed over ranks."""
    model.eval()
    counts = torch.zeros(2, dtype=torch.float64, device=device)  # correct, samples
    with torch.no_grad():
        for batch in loader:
            images = batch.images.to(device, non_blocking=True)
            labels = batch.labels.to(device, non_blocking=True)
            valid = batch.valid.to(device, non_blocking=True)
            correct = (model(images).argmax(1) == labels) & valid
            counts[0] += correct.sum()
            counts[1] += valid.sum()
    dist.all_reduce(counts, op=dist.ReduceOp.SUM)
    model.train()
    correct, samples = counts.tolist()
    return correct / max(samples, 1), int(samples)


def save_checkpoint(path, rank, **state):
    """Rank 0 writes `state` atomically (temp file + rename); every rank waits for it, so the
    file never names a step that some rank has not finished."""
    dist.barrier()
    if rank == 0:  # the loader's state_dict() is the same on every rank
        tmp = path.with_name(path.name + ".tmp")
        torch.save(state, tmp)
        tmp.replace(path)
    dist.barrier()


def main():
    args = parse_args()
    t_start = time.perf_counter()
    rank, world, device = setup()
    log = print if rank == 0 else (lambda *a, **k: None)

    train_src = args.data / ("train-packed" if args.packed else "train")
    test_src = args.data / ("test-packed" if args.packed else "test")
    common = dict(size=28, channels=1, mean=MEAN, std=STD, threads=args.threads, seed=args.seed)
    if args.augment == "crop":
        train_tf = dict(transform="train", scale=(0.6, 1.0), flip_p=0.5)
    else:
        train_tf = dict(transform="eval", crop_fraction=1.0)  # 28x28 as stored
    # rank and world size come from the initialised process group.
    train = stoker.Loader(train_src, args.batch_size, shuffle=True, mode="exact",
                          **train_tf, **common)
    test = stoker.Loader(test_src, 256, transform="eval", crop_fraction=1.0, shuffle=False,
                         mode="exact", **common)
    steps_per_epoch = len(train) if args.max_steps is None else min(len(train), args.max_steps)
    log(f"world {world} ({dist.get_backend()}, {device}), train {train_src}: "
        f"{train.dataset.size} images, {len(train)} batches of {args.batch_size} per rank; "
        f"test {test_src}: {test.dataset.size} images; classes {train.classes}")

    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP broadcasts anyway)
    model = Net().to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=args.epochs * steps_per_epoch, pct_start=0.2)

    start_epoch, start_step = 0, 0
    if args.resume and args.checkpoint and args.checkpoint.exists():
        ckpt = torch.load(args.checkpoint, map_location=device)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        sched.load_state_dict(ckpt["scheduler"])
        train.load_state_dict(ckpt["train_loader"])
        # Mid-epoch (step > 0): the saved epoch goes on from that step; else the next epoch.
        start_epoch, start_step = ckpt["epoch"], ckpt.get("step", 0)
        if start_step == 0:
            start_epoch += 1
        restarts = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
        log(f"resumed from {args.checkpoint} at epoch {start_epoch + 1} step {start_step} "
            f"(torchrun restart {restarts}); loader state {ckpt['train_loader']}")

    def checkpoint(epoch, step):
        save_checkpoint(args.checkpoint, rank, epoch=epoch, step=step,
                        model=model.state_dict(), optimizer=opt.state_dict(),
                        scheduler=sched.state_dict(), train_loader=train.state_dict())

    accuracy, samples = 0.0, 0
    for epoch in range(start_epoch, args.epochs):
        train.set_epoch(epoch)
        t0 = time.perf_counter()
        loss_sum = torch.zeros(2, dtype=torch.float64, device=device)  # loss sum, samples
        images_seen = 0
        first_step = start_step if epoch == start_epoch else 0
        for step, batch in enumerate(train, start=first_step):
            images = batch.images.to(device, non_blocking=True)
            labels = batch.labels.to(device, non_blocking=True)
            per_sample = F.cross_entropy(ddp(images), labels, reduction="none")
            loss = stoker.torch.masked_mean(per_sample, batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            with torch.no_grad():
                valid = batch.valid.to(device)
                loss_sum[0] += per_sample.detach().masked_fill(~valid, 0).sum()
                loss_sum[1] += valid.sum()
            images_seen += batch.global_valid  # valid images of this step, all ranks
            if step + 1 == steps_per_epoch:  # --max-steps: the same step on every rank
                break
            if args.checkpoint and args.checkpoint_every and (step + 1) % args.checkpoint_every == 0:
                checkpoint(epoch, step + 1)
        train_seconds = time.perf_counter() - t0
        dist.all_reduce(loss_sum, op=dist.ReduceOp.SUM)
        train_loss = (loss_sum[0] / loss_sum[1].clamp(min=1)).item()

        t1 = time.perf_counter()
        accuracy, samples = evaluate(ddp, test, device)
        eval_seconds = time.perf_counter() - t1
        if args.checkpoint is not None:
            checkpoint(epoch, 0)  # step 0: the epoch is done
        log(f"epoch {epoch + 1}/{args.epochs}: train loss {train_loss:.4f} over "
            f"{int(loss_sum[1])} images, {images_seen / train_seconds:.0f} images/s "
            f"({train_seconds:.1f} s), test accuracy {100 * accuracy:.2f}% on {samples} samples "
            f"({eval_seconds:.1f} s)"
            + (f", saved {args.checkpoint}" if args.checkpoint is not None else ""))

    if start_epoch >= args.epochs:  # nothing left to train: report the checkpoint's accuracy
        accuracy, samples = evaluate(ddp, test, device)
    s = train.stats()
    log(f"rank 0 loader: {s['threads']} threads, waited {s['wait_seconds']:.1f} s of "
        f"{s['wall_seconds']:.1f} s; CPU s read {s['cpu_seconds']['read']:.1f} decode "
        f"{s['cpu_seconds']['decode']:.1f} augment {s['cpu_seconds']['augment']:.1f} collate "
        f"{s['cpu_seconds']['collate']:.1f}")
    log(f"wall time {time.perf_counter() - t_start:.1f} s")
    log(f"test accuracy: {100 * accuracy:.2f}% on {samples} samples")
    train.close()
    test.close()
    # Torch 1.13 can deadlock at interpreter exit when the last reference to the gloo group
    # goes with DDP's reducer while a gloo thread still frees a tensor (it waits for the GIL,
    # the main thread waits for the group's mutex; seen once in ~20 runs). Finish every
    # collective, drop DDP while the group is still registered, then destroy the group.
    dist.barrier()
    del ddp
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
