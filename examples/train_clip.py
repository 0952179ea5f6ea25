#!/usr/bin/env python3
"""A tiny CLIP trained on image-text WebDataset shards, with stoker or webdataset loading.

The layout of LAION / DataComp / CC12M: shards of key.jpg + key.txt (caption) + key.json.
Two small towers (a conv net for images, an embedding bag over byte tokens for captions), the
symmetric contrastive loss with a learnable temperature, AdamW. Run it with either loader:

    python examples/train_clip.py --shards "data/pairs-{0000..0009}.tar" --loader stoker
    python examples/train_clip.py --shards "data/pairs-{0000..0009}.tar" --loader webdataset
    torchrun --nproc-per-node 2 examples/train_clip.py --shards ... --loader stoker

The two differ only in make_loader (marked below): webdataset's pipeline (shard shuffle, node
and worker split, a shuffle buffer, PIL decode, torchvision transforms, batching in DataLoader
worker processes) becomes one stoker.Loader with fields=["txt"], decoding and augmenting in
C++ threads, each sample once per epoch over the ranks. With several ranks the contrastive
loss gathers every rank's embeddings (torch.distributed.nn.all_gather), as open_clip does.
"""

import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

MEAN, STD = (0.481, 0.458, 0.408), (0.269, 0.261, 0.276)  # CLIP's normalisation
CONTEXT = 48  # tokens per caption (bytes, truncated / padded)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shards", required=True, help="a brace pattern of .tar shards")
    ap.add_argument("--samples", type=int, required=True, help="samples in the shards")
    ap.add_argument("--loader", choices=("stoker", "webdataset"), default="stoker")
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader processes / stoker threads")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--dim", type=int, default=64)
    return ap.parse_args()


def tokenize(captions):
    """Byte tokens of each caption (UTF-8, 1..256; 0 pads), [B, CONTEXT]."""
    out = torch.zeros(len(captions), CONTEXT, dtype=torch.long)
    for i, text in enumerate(captions):
        ids = list(text.encode("utf-8")[:CONTEXT])
        out[i, :len(ids)] = torch.tensor(ids, dtype=torch.long) + 1
    return out


# ---- data loading: the only part that differs between the two loaders ----------------------

def make_loader(args, rank, world):
    """An iterable of (images [B, 3, S, S] float32, captions list[str]) and the steps per epoch
    on this rank (equal on every rank)."""
    steps = args.samples // (args.batch_size * world)
    if args.loader == "webdataset":
        import webdataset as wds
        from torchvision import transforms as T
        transform = T.Compose([T.RandomResizedCrop(args.image_size, scale=(0.5, 1.0)),
                               T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
        dataset = (wds.WebDataset(args.shards, shardshuffle=100, nodesplitter=wds.split_by_node,
                                  empty_check=False)
                   .shuffle(1000).decode("pil").to_tuple("jpg", "txt")
                   .map_tuple(transform, lambda text: text)
                   .batched(args.batch_size, partial=False))
        loader = wds.WebLoader(dataset, batch_size=None, num_workers=args.workers,
                               persistent_workers=args.workers > 0)
        # Every rank takes the same number of steps (webdataset's shards split unevenly).
        return loader.repeat(2).with_epoch(steps), steps

    import stoker
    loader = stoker.Loader(args.shards, args.batch_size, transform="train",
                           size=args.image_size, scale=(0.5, 1.0), mean=MEAN, std=STD,
                           fields=["txt"], mode="drop", num_workers=args.workers)

    class Pairs:  # each pass one epoch of (images, captions)
        def __iter__(self):
            return ((batch.images, batch.fields["txt"]) for batch in loader)

    return Pairs(), len(loader)

# ---- end of data loading ---------------------------------------------------------------------


class ImageTower(nn.Module):
    def __init__(self, dim):
        super().__init__()
        layers, channels = [], 3
        for width in (32, 64, 96, 128):
            layers += [nn.Conv2d(channels, width, 3, stride=2, padding=1), nn.BatchNorm2d(width),
                       nn.ReLU(inplace=True)]
            channels = width
        self.body = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(channels, dim)

    def forward(self, x):
        return self.head(self.body(x))


class TextTower(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.embed = nn.Embedding(257, 128, padding_idx=0)
        self.mix = nn.Sequential(nn.Linear(128, 128), nn.GELU(), nn.Linear(128, dim))

    def forward(self, tokens):
        mask = (tokens > 0).float().unsqueeze(-1)
        pooled = (self.embed(tokens) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.mix(pooled)


class TinyClip(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.image, self.text = ImageTower(dim), TextTower(dim)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, tokens):
        return (F.normalize(self.image(images), dim=-1), F.normalize(self.text(tokens), dim=-1),
                self.logit_scale.exp())


def clip_loss(image_emb, text_emb, scale, world):
    if world > 1:  # every rank's embeddings as negatives, gradients flowing back (open_clip)
        import torch.distributed.nn as dist_nn
        image_all = torch.cat(dist_nn.all_gather(image_emb))
        text_all = torch.cat(dist_nn.all_gather(text_emb))
        offset = dist.get_rank() * image_emb.shape[0]
    else:
        image_all, text_all, offset = image_emb, text_emb, 0
    labels = torch.arange(image_emb.shape[0]) + offset
    logits_image = scale * image_emb @ text_all.T
    logits_text = scale * text_emb @ image_all.T
    return (F.cross_entropy(logits_image, labels) + F.cross_entropy(logits_text, labels)) / 2


def main():
    args = parse_args()
    if "RANK" in os.environ:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if dist.is_initialized() else 0
    world = dist.get_world_size() if dist.is_initialized() else 1
    torch.manual_seed(0)
    model = TinyClip(args.dim)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    loader, steps = make_loader(args, rank, world)
    for epoch in range(args.epochs):
        model.train()
        start, seen, total, done = time.time(), 0, 0.0, 0
        for images, captions in loader:
            image_emb, text_emb, scale = model(images, tokenize(captions))
            loss = clip_loss(image_emb, text_emb, scale, world)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen, total, done = seen + images.shape[0], total + loss.item(), done + 1
        if rank == 0:
            print(f"epoch {epoch}: {done} steps of {steps}, {seen} pairs on rank 0, mean loss "
                  f"{total / max(done, 1):.4f}, {seen * world / (time.time() - start):.1f} "
                  f"pairs/s ({args.loader}, {world} rank{'s' if world > 1 else ''})", flush=True)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
