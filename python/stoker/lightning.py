"""stoker in PyTorch Lightning: a LightningDataModule whose dataloaders are stoker Loaders.

    import stoker.lightning
    data = stoker.lightning.DataModule("/data/train", batch_size=256, val="/data/val",
                                       transform=[...stoker.transforms...])
    trainer = L.Trainer(strategy="ddp", devices=8, use_distributed_sampler=False)
    trainer.fit(model, datamodule=data)

Each rank builds its loaders when Lightning asks for them (after the process group is up), so
rank and world size come from torch.distributed: every rank gets its own shard, each sample
exactly once per epoch over all ranks, the same number of batches everywhere. Lightning calls
``loader.sampler.set_epoch(current_epoch)`` before each epoch (a new order and new
augmentations per epoch, the same on every rank). ``use_distributed_sampler=False`` is what a
stoker loader wants (it shards itself; Lightning only injects samplers into torch
DataLoaders anyway). In ``training_step`` a batch is a stoker.Batch: ``images, labels = batch``,
and ``stoker.torch.masked_mean(loss, batch)`` averages over the step's valid samples of all
ranks (DDP's gradient averaging included). Checkpoints carry the train loader's position
(``state_dict``), so a resumed fit continues the epoch's sample order.

The validation, test and predict loaders use the eval transform, whose default mode is
'short': every sample once over the ranks, a short last batch of only its samples, so that
``validation_step``, torchmetrics and ``trainer.predict`` count each sample once unchanged
(every rank takes the same steps; a batch is empty only where no layout avoids it: fewer
samples left than ranks, or batches of one).
"""

from __future__ import annotations

import inspect
from typing import Any, Dict, Optional

try:  # the unified package first, then the standalone one
    import lightning.pytorch as _pl
except ImportError:  # pragma: no cover - depends on which package is installed
    import pytorch_lightning as _pl

import stoker

__all__ = ["DataModule"]


class DataModule(_pl.LightningDataModule):
    """Train, and optionally validation, test and predict, stoker Loaders for a Lightning
    Trainer.

    Args:
      train: the training data (a folder, file list or packed dataset), or None for a module
        that only validates, tests or predicts.
      batch_size: per rank.
      val, test, predict: the validation, test and predict data, or None.
      transform, batch_transform: the training transform (a stoker.transforms list, a
        TransformConfig or 'train') and batch transform (MixUp/CutMix), as stoker.Loader takes.
      val_transform: the validation, test and predict transform ('eval' by default).
      val_batch_size: per rank, of those three loaders (default: batch_size).
      loader_kwargs: any other stoker.Loader argument (threads, num_workers, seed, size,
        output, ...), for every loader. A name stoker.Loader does not take is a TypeError here,
        not later inside fit.
    """

    def __init__(self, train: Optional[str], batch_size: int, val: Optional[str] = None, *,
                 test: Optional[str] = None, predict: Optional[str] = None,
                 transform: Any = "train", batch_transform: Any = None,
                 val_transform: Any = "eval", val_batch_size: Optional[int] = None,
                 **loader_kwargs: Any) -> None:
        super().__init__()
        unknown = sorted(set(loader_kwargs) - _LOADER_KEYWORDS)
        if unknown:
            raise TypeError(f"stoker.lightning.DataModule: stoker.Loader takes no "
                            f"{', '.join(map(repr, unknown))} (it takes "
                            f"{', '.join(sorted(_LOADER_KEYWORDS))})")
        self.train, self.val, self.test, self.predict = train, val, test, predict
        self.batch_size = batch_size
        self.val_batch_size = val_batch_size or batch_size
        self.transform, self.batch_transform = transform, batch_transform
        self.val_transform = val_transform
        self.loader_kwargs = loader_kwargs
        self._train_loader: Optional[stoker.Loader] = None
        self._eval_loaders: Dict[str, stoker.Loader] = {}  # val, test, predict
        self._pending_state: Optional[Dict[str, Any]] = None

    def train_dataloader(self) -> stoker.Loader:
        if self.train is None:
            raise ValueError("stoker.lightning.DataModule: no train data (train=None)")
        if self._train_loader is None or self._train_loader.closed:
            self._train_loader = stoker.Loader(self.train, self.batch_size,
                                               transform=self.transform,
                                               batch_transform=self.batch_transform,
                                               **self.loader_kwargs)
            if self._pending_state is not None:
                self._train_loader.load_state_dict(self._pending_state)
                self._pending_state = None
        return self._train_loader

    def _eval_loader(self, which: str, source: Optional[str]):
        if source is None:
            return []
        loader = self._eval_loaders.get(which)
        if loader is None or loader.closed:
            kwargs = dict(self.loader_kwargs, shuffle=False)
            loader = stoker.Loader(source, self.val_batch_size, transform=self.val_transform,
                                   **kwargs)
            self._eval_loaders[which] = loader
        return loader

    def val_dataloader(self):
        return self._eval_loader("val", self.val)

    def test_dataloader(self):
        return self._eval_loader("test", self.test)

    def predict_dataloader(self):
        return self._eval_loader("predict", self.predict)

    def state_dict(self) -> Dict[str, Any]:
        """The train loader's position (stoker.Loader.state_dict), saved in checkpoints."""
        if self._train_loader is None or self._train_loader.closed:
            return {} if self._pending_state is None else {"train": self._pending_state}
        return {"train": self._train_loader.state_dict()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        if not state.get("train"):
            return
        if self._train_loader is not None and not self._train_loader.closed:
            self._train_loader.load_state_dict(state["train"])
        else:
            self._pending_state = state["train"]

    def teardown(self, stage: str) -> None:
        for loader in (self._train_loader, *self._eval_loaders.values()):
            if loader is not None:
                loader.close()
        self._train_loader = None
        self._eval_loaders = {}


# What **loader_kwargs may hold: stoker.Loader's keywords but the ones DataModule sets itself.
_LOADER_KEYWORDS = frozenset(inspect.signature(stoker.Loader.__init__).parameters) - {
    "self", "source", "batch_size", "transform", "batch_transform"}
