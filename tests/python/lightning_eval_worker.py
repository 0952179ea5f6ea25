"""A Lightning module whose validation, test and predict steps count as people write them,
without stoker's masks: torchmetrics (synced over the ranks) and trainer.predict's returned
predictions. Run by test_lightning.py:

    python lightning_eval_worker.py DATA --devices 2 --batch-size 8

Rank 0 prints one JSON line per stage: {"stage", "count", "indices"} where count is the
synced torchmetrics sum of ones per sample seen and indices the sorted dataset indices seen
by all ranks (torchmetrics' CatMetric for validate/test, the gathered predictions for
predict), and "accuracy" beside them for validate and test.
"""

import argparse
import json

import torch
import torch.nn as nn
import torchmetrics

try:
    import lightning.pytorch as L
except ImportError:
    import pytorch_lightning as L

import stoker.lightning
import stoker.transforms as T


class Counting(L.LightningModule):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(8, classes))
        self.seen = torchmetrics.SumMetric()
        self.indices = torchmetrics.CatMetric()
        self.accuracy = torchmetrics.Accuracy(task="multiclass", num_classes=classes)

    def _count(self, batch):
        images, labels = batch
        self.seen.update(torch.ones(len(labels)))
        self.indices.update(batch.indices.float())
        self.accuracy.update(self.net(images).argmax(1), labels)

    def validation_step(self, batch, batch_idx):
        self._count(batch)

    def test_step(self, batch, batch_idx):
        self._count(batch)

    def predict_step(self, batch, batch_idx):
        images, _ = batch
        return batch.indices, self.net(images).argmax(1)

    def _report(self, stage):
        count = int(self.seen.compute())
        indices = sorted(int(i) for i in self.indices.compute().tolist())
        accuracy = float(self.accuracy.compute())
        if self.global_rank == 0:
            print(json.dumps({"stage": stage, "count": count, "indices": indices,
                              "accuracy": accuracy}), flush=True)
        for metric in (self.seen, self.indices, self.accuracy):
            metric.reset()

    def on_validation_epoch_end(self):
        self._report("validate")

    def on_test_epoch_end(self):
        self._report("test")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args()
    eval_transform = [T.Resize(36), T.CenterCrop(32), T.ToDtype(torch.float32, scale=True),
                      T.Normalize(stoker.IMAGENET_MEAN, stoker.IMAGENET_STD)]
    data = stoker.lightning.DataModule(None, args.batch_size, val=args.data, test=args.data,
                                       predict=args.data, val_transform=eval_transform,
                                       num_workers=1)
    model = Counting(classes=3)
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy="ddp",
                        use_distributed_sampler=False, enable_progress_bar=False,
                        enable_model_summary=False, logger=False, enable_checkpointing=False)
    trainer.validate(model, datamodule=data)
    trainer.test(model, datamodule=data)
    predictions = trainer.predict(model, datamodule=data)
    mine = [(int(i), int(p)) for indices, preds in predictions for i, p in zip(indices, preds)]
    everyone = [None] * trainer.world_size
    torch.distributed.all_gather_object(everyone, mine)
    if trainer.global_rank == 0:
        seen = sorted(i for rank in everyone for i, _ in rank)
        print(json.dumps({"stage": "predict", "count": len(seen), "indices": seen}), flush=True)
    torch.distributed.destroy_process_group()  # while the interpreter is whole (see
    # examples/lightning_ddp.py)


if __name__ == "__main__":
    main()
