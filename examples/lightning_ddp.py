#!/usr/bin/env python3
"""A PyTorch Lightning job fed by stoker: Trainer(strategy="ddp") on CPU ranks (gloo).

    python examples/lightning_ddp.py --data DATA --devices 2 [--epochs 2]

DATA/train (and DATA/val when present) are ImageFolders. stoker.lightning.DataModule gives each
rank its shard (every training image exactly once per epoch over the ranks, the same batch
count everywhere); the loss is stoker.torch.masked_mean (the step's valid samples of all
ranks); after each epoch stoker.torch.audit checks the shards and rank 0 prints

    epoch E: train loss L over N images (audit VERDICT), val accuracy A% on M images

where N sums the valid training samples of all ranks and M the validation samples counted
once each, whatever the number of ranks.
"""

import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import lightning.pytorch as L
except ImportError:
    import pytorch_lightning as L

import stoker.lightning
import stoker.torch
import stoker.transforms as T


class SmallNet(L.LightningModule):
    def __init__(self, classes: int, lr: float) -> None:
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))
        self.sums = torch.zeros(4)  # train loss x valid, train valid, val correct, val valid

    def training_step(self, batch, batch_idx):
        images, labels = batch
        loss = F.cross_entropy(self.net(images), labels, reduction="none")
        valid = batch.valid
        self.sums[0] += float(loss.detach()[valid].sum())
        self.sums[1] += int(valid.sum())
        return stoker.torch.masked_mean(loss, batch)

    def validation_step(self, batch, batch_idx):
        images, labels = batch
        hit = self.net(images).argmax(1) == labels
        self.sums[2] += int((hit & batch.valid).sum())
        self.sums[3] += int(batch.valid.sum())

    def on_train_epoch_end(self):
        loader = self.trainer.train_dataloader
        report = stoker.torch.audit(loader)  # a collective: every rank calls it
        totals = self.sums.clone()
        torch.distributed.all_reduce(totals)
        if self.global_rank == 0:
            val = (f", val accuracy {100 * totals[2] / totals[3]:.1f}% on {int(totals[3])} "
                   f"images" if totals[3] > 0 else "")
            print(f"epoch {self.current_epoch}: train loss {totals[0] / totals[1]:.4f} over "
                  f"{int(totals[1])} images (audit {report['verdict']}){val}", flush=True)
        self.sums.zero_()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1, help="stoker threads per rank")
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()
    train = os.path.join(args.data, "train")
    val = os.path.join(args.data, "val")
    classes = len(next(os.walk(train))[1])
    data = stoker.lightning.DataModule(
        train, args.batch_size, val=val if os.path.isdir(val) else None,
        transform=[T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.TrivialAugmentWide(),
                   T.ToDtype(torch.float32, scale=True), T.Normalize(stoker.IMAGENET_MEAN,
                                                                    stoker.IMAGENET_STD)],
        val_transform=[T.Resize(36), T.CenterCrop(32), T.ToDtype(torch.float32, scale=True),
                       T.Normalize(stoker.IMAGENET_MEAN, stoker.IMAGENET_STD)],
        threads=args.threads, seed=1)
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy="ddp",
                        max_epochs=args.epochs, use_distributed_sampler=False,
                        enable_progress_bar=False, enable_model_summary=False, logger=False,
                        enable_checkpointing=False, num_sanity_val_steps=0)
    trainer.fit(SmallNet(classes, args.lr), datamodule=data)
    # The process group goes down here, while the interpreter is whole: left to the exit, gloo's
    # threads can abort the process ("terminate called without an active exception"; seen once
    # in CI here, pytorch/pytorch#179291 describes the cause).
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
