#!/usr/bin/env python3
"""An existing ImageFolder + DataLoader DDP job that keeps its Dataset and switches only its
sampler to stoker's.

    torchrun --standalone --nproc-per-node 2 examples/imagefolder_ddp.py --data DATA --sampler stoker
    torchrun --standalone --nproc-per-node 2 examples/imagefolder_ddp.py --data DATA --sampler torch

Everything but the sampler line is plain torch/torchvision: torchvision.datasets.ImageFolder
with its own transform, torch.utils.data.DataLoader with worker processes (persistent, from a
forkserver), DistributedDataParallel on gloo, the same loop and loss. After each epoch the
ranks gather what they trained on and stoker.torch.audit checks the shards; rank 0 prints one
line per epoch:

    epoch E: N samples over R ranks, D distinct, batches per rank [K, K], audit VERDICT (checks)

With stoker's sampler every sample is trained on exactly once per epoch (N == D == the data
set's size) on equal batch counts, the last batches one sample apart; torch's
DistributedSampler repeats samples to even out the last round (N > D), which the audit
reports. (For the exact mean over each step's samples of all ranks, stoker.torch.masked_mean
takes sampler.batch(step); see stoker.torch.DistributedSampler.)
"""

import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torchvision.transforms import v2 as T

import stoker.torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="an ImageFolder")
    ap.add_argument("--sampler", choices=("stoker", "torch"), default="stoker")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    dataset = torchvision.datasets.ImageFolder(args.data, T.Compose([
        T.ToImage(), T.RandomResizedCrop(32, antialias=True), T.RandomHorizontalFlip(),
        T.ToDtype(torch.float32, scale=True)]))
    if args.sampler == "stoker":  # the switch: stoker's sharding for this Dataset
        sampler = stoker.torch.DistributedSampler(dataset, batch_size=args.batch_size, seed=1)
    else:
        sampler = torch.utils.data.DistributedSampler(dataset, seed=1)
    # Workers started by a forkserver, once: a worker fork()ed from a rank whose gloo threads
    # are running can inherit a lock one of them held and hang at its first batch (seen here
    # once in CI at the second epoch's fork; pytorch/pytorch#130610 is the same race).
    workers = {"multiprocessing_context": "forkserver", "persistent_workers": True}
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                                         num_workers=args.workers,
                                         **(workers if args.workers > 0 else {}))

    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, len(dataset.classes))))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        trained = []  # the labels of the samples this rank trained on (one class per image)
        steps = 0
        for images, labels in loader:  # the loop is the same for both samplers
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            trained += labels.tolist()
            steps += 1
        everyone = [None] * world
        dist.all_gather_object(everyone, (trained, steps))
        report = stoker.torch.audit(loader)
        if rank == 0:
            samples = [label for labels, _ in everyone for label in labels]
            checks = ", ".join(f"{k}={report['checks'][k]}"  # a fixed order, whatever the report's
                               for k in ("disjoint", "complete", "balanced"))
            print(f"epoch {epoch}: {len(samples)} samples over {world} ranks, "
                  f"{len(set(samples))} distinct, batches per rank {[s for _, s in everyone]}, "
                  f"audit {report['verdict']} ({checks})", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
