"""stoker: a fork-free image input pipeline for (distributed) training.

    import stoker
    loader = stoker.Loader("/data/train", batch_size=256)   # rank/world from torch.distributed
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for batch in loader:
            loss = criterion(model(batch.images.cuda()), batch.labels.cuda())  # per-sample
            stoker.torch.masked_mean(loss, batch).backward()

Batches hold torch tensors (numpy arrays when torch is not installed) that view the C++
batch buffers without a copy; a buffer returns to the loader's pool when the last tensor
viewing it is gone, even after the loader itself was closed.

The work (reading, decoding, augmenting, batching, sharding) is done by the C++ core
(``stoker._stoker``); this package only maps arguments, discovers the rank from
torch.distributed and checks that all ranks see the same dataset.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import warnings
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _stoker
# stoker::Error by its kind (all are stoker.Error, a RuntimeError): BadSampleError (a broken
# sample: what bad_samples='skip' skips), StorageError (also an OSError, with errno and
# filename: the storage failed after stoker's retries), ArgumentError (also a ValueError).
# MissingFileError: a StorageError for ENOENT, also a FileNotFoundError.
from ._stoker import ArgumentError, BadSampleError, Error, MissingFileError, StorageError
from . import transforms  # noqa: E402  (stoker.transforms: the torchvision recipe's ops)

try:  # torch is optional: without it batches hold numpy arrays.
    import torch as _torch
except ImportError:  # pragma: no cover - exercised only where torch is absent
    _torch = None

__all__ = ["ArgumentError", "BadSampleError", "Batch", "Error", "IoConfig", "Loader",
           "MissingFileError", "StorageError", "TransformConfig", "open_dataset"]
__version__: str = _stoker.__version__  # the CMake project's version

IMAGENET_MEAN: Tuple[float, float, float] = tuple(_stoker.IMAGENET_MEAN)  # stoker/transform.h
IMAGENET_STD: Tuple[float, float, float] = tuple(_stoker.IMAGENET_STD)

_TRANSFORMS = {"train": _stoker.TransformKind.train, "eval": _stoker.TransformKind.eval}
_OUTPUTS = {
    "float32": _stoker.OutputKind.float32,
    "uint8": _stoker.OutputKind.uint8,
    "float16": _stoker.OutputKind.float16,
    "bfloat16": _stoker.OutputKind.bfloat16,
}
_MODES = {
    "exact": _stoker.SamplerMode.exact,
    "short": _stoker.SamplerMode.short,
    "pad": _stoker.SamplerMode.pad,
    "even": _stoker.SamplerMode.even,
    "drop": _stoker.SamplerMode.drop,
}
_DROPPING_MODES = ("even", "drop")  # what drop_last=True may go with
_INTERPOLATIONS = {
    "bilinear": _stoker.Interpolation.bilinear,
    "bicubic": _stoker.Interpolation.bicubic,
    "nearest": _stoker.Interpolation.nearest,
}
_BAD_SAMPLES = {"error": _stoker.BadSamplePolicy.error, "skip": _stoker.BadSamplePolicy.skip}


def _mode_for(mode: Optional[str], drop_last: Optional[bool], evaluating: bool) -> str:
    """The sampler mode from Loader's mode= and drop_last= (DistributedSampler's: True is
    'even'); without either, 'short' for an eval transform (an evaluation loop counts what it
    is given) and 'exact' for training."""
    if drop_last is not None and not isinstance(drop_last, bool):
        raise TypeError(f"drop_last must be a bool (got {drop_last!r})")
    if mode is None:
        if drop_last:
            return "even"
        return "short" if evaluating else "exact"
    if drop_last is not None and drop_last != (mode in _DROPPING_MODES):
        raise ValueError(f"drop_last={drop_last} contradicts mode={mode!r} (drop_last=True is "
                         "DistributedSampler's, mode='even'; DataLoader's drop_last, full "
                         "batches only, is mode='drop'; give one of the two)")
    return mode


def open_dataset(path: Union[str, os.PathLike], path_column: Optional[str] = None,
                 label_column: Optional[str] = None,
                 io: Optional["IoConfig"] = None) -> "_stoker.Dataset":
    """Opens a packed dataset, an ImageFolder (a folder), a file list (a file: headerless
    path<TAB>label lines, CSV/TSV with a header, JSON lines; the column names as Loader's) or
    WebDataset tar shards (a .tar path, a brace pattern, http(s):// or s3:// locations);
    ``io``: how it reads its storage (a stoker.IoConfig; None: the defaults)."""
    return _stoker.open_dataset(os.fspath(path), path_column or "", label_column or "",
                                _io_core(io))


class Batch:
    """One batch of this rank.

    Attributes:
      images: float32/float16/bfloat16 [B, C, H, W] (normalised; [B, H, W, C] with
        channels_last=True) or uint8 [B, H, W, C]; on the GPU with device='cuda'. Without
        torch numpy arrays, bfloat16 as ml_dtypes.bfloat16 where ml_dtypes is installed.
        ``np.asarray(batch)`` and ``from_dlpack(batch)`` are the images.
      labels: int64 [B]; padding slots carry their wrapped sample's label; -1 for a label-free
        list. float32 [B, classes] multi-hot rows for a multi-label list, and soft rows after
        MixUp/CutMix ([B, num_classes]).
      indices: int64 [B], the dataset index of every slot, padding included.
      valid: bool [B]; False marks padding (and samples skipped by bad_samples='skip').
      global_valid: valid slots of this step summed over all ranks (>= 1 in 'exact' mode).
      epoch, index: the epoch and the batch's position in this rank's epoch.
      rank, world_size: of the loader that made the batch.
      skipped: slots zero-filled by bad_samples='skip' in this batch.
      fields: with Loader(fields=[...]), one list per field name of its values in slot order.
        WebDataset: str for text members (txt, text, caption, cls), the parsed value for json
        and json.KEY (a float64 array when every json.KEY value is a number), bytes for
        others. A list: str, each column's text (a JSON-lines member that is not a string as
        JSON text). "" / None / b"" for a slot skipped by bad_samples='skip'. {} otherwise.

    The tensors view the loader's buffer; keep them as long as needed (the buffer is
    recycled only once they are all gone). ``to(device)`` copies to a device.

    A batch unpacks as a DataLoader's ``[images, labels]`` does: ``images, labels = batch``,
    ``for images, labels in loader``, ``batch[0]`` / ``batch[1]``. The last batch of a
    training epoch is full-size in the default mode ('exact'), its padding slots False in
    ``valid``: average a loss with ``stoker.torch.masked_mean(loss, batch)`` (exact over all
    ranks). An eval transform's loader ('short' by default) delivers DataLoader's shape
    instead, a short last batch of only its samples, so that an unchanged evaluation loop
    counts each sample once.
    """

    __slots__ = ("images", "labels", "indices", "valid", "global_valid", "epoch", "index",
                 "rank", "world_size", "skipped", "fields")
    __array_priority__ = 1  # numpy asks __array__ first

    def __init__(self, images, labels, indices, valid, global_valid: int, epoch: int,
                 index: int, rank: int, world_size: int, skipped: int = 0,
                 fields: Optional[dict] = None):
        self.images = images
        self.labels = labels
        self.indices = indices
        self.valid = valid
        self.global_valid = int(global_valid)
        self.epoch = int(epoch)
        self.index = int(index)
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.skipped = int(skipped)
        self.fields = fields if fields is not None else {}

    @property
    def transform(self) -> TransformConfig:
        return self._transform

    @property
    def batch_size(self) -> int:
        return len(self.labels)

    @property
    def num_valid(self) -> int:
        """Valid slots of this rank's batch."""
        return int(self.valid.sum())

    def _replace(self, **tensors) -> "Batch":
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(tensors)
        return Batch(**fields)

    def to(self, device, non_blocking: bool = False) -> "Batch":
        """A copy of the batch with its tensors on `device` (torch only)."""
        return self._replace(**{
            name: getattr(self, name).to(device, non_blocking=non_blocking)
            for name in ("images", "labels", "indices", "valid")
        })

    def pin_memory(self) -> "Batch":
        """A copy of the batch in page-locked memory, for asynchronous copies to a GPU."""
        return self._replace(**{
            name: getattr(self, name).pin_memory()
            for name in ("images", "labels", "indices", "valid")
        })

    def __iter__(self) -> Iterator[Any]:
        return iter((self.images, self.labels))

    # A batch as one array is its images (what `model(batch)` and `np.asarray(batch)` mean);
    # labels, indices and valid stay attributes.
    def __array__(self, dtype=None, copy=None):
        import numpy as np
        images = self.images
        if _torch is not None and isinstance(images, _torch.Tensor):
            if images.dtype == _torch.bfloat16:
                images = _bfloat16_numpy(images.view(_torch.int16).cpu().numpy())
            else:
                images = images.cpu().numpy()
        if copy:
            images = np.array(images, copy=True)
        return images if dtype is None else images.astype(dtype, copy=False)

    def __dlpack__(self, *args, **kwargs):
        return self.images.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.images.__dlpack_device__()

    def __getitem__(self, i: int) -> Any:
        return (self.images, self.labels)[i]

    def __repr__(self) -> str:
        return (f"<stoker.Batch epoch={self.epoch} index={self.index} "
                f"images={tuple(self.images.shape)} valid={self.num_valid}/{self.batch_size} "
                f"global_valid={self.global_valid} rank={self.rank}/{self.world_size}>")


def _pair(name: str, value: Sequence[float]) -> Tuple[float, float]:
    try:
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair of numbers (got {value!r})") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0 or a > b:
        raise ValueError(f"{name} must be (low, high) with 0 < low <= high (got {value!r})")
    return a, b


def _choice(name: str, value: str, choices: Dict[str, Any]) -> Any:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))} (got {value!r})")
    return choices[value]


def _torch_distributed():
    """torch.distributed when a process group is initialised, else None."""
    if _torch is None:
        return None
    dist = getattr(_torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist


_TRANSFORM_DEFAULTS = _stoker.TransformConfig()


@dataclasses.dataclass(frozen=True)
class TransformConfig:
    """The per-sample transform, field by field the C++ ``stoker::TransformConfig``.

    Pass one as ``Loader(..., transform=TransformConfig(...))``, or a stoker.transforms list
    (``transform=T.Compose([...])``, which builds one), or give its fields to the Loader as
    keywords (``transform='train', size=160, ...``); not two of these. Checked by the C++
    core when a loader is made (stoker.ArgumentError, a ValueError).

    Fields:
      kind: 'train' (RandomResizedCrop(size, scale, ratio) + horizontal flip with probability
        flip_p) or 'eval' (Resize(resize, or floor(max(size) / crop_fraction)) +
        CenterCrop(size)).
      size: output side S, or (height, width).
      output: 'float32', 'float16' or 'bfloat16' (NCHW, normalised by mean/std; the half
        types are the float32 values rounded to nearest-even) or 'uint8' (NHWC, 0..255).
      scale, ratio, flip_p: train transform parameters (torchvision's defaults).
      crop_fraction: eval transform, the centre crop's share of the resized shorter side.
      resize: eval transform, the resized shorter side (0: from crop_fraction).
      resize_hw: eval transform, (h, w) to resize to exactly (Resize((h, w))), or None.
      ops: stoker.transforms augmentations (TrivialAugmentWide, RandAugment, AutoAugment,
        ColorJitter), applied in order to the uint8 pixels after the crop and flip.
      erasing: a stoker.transforms.RandomErasing applied to the output, or None.
      mean, std: normalisation for float output (ImageNet's by default); one value each
        with channels=1.
      channels: 3 (RGB) or 1 (grayscale).
      channels_last: float outputs as [H, W, C] (JAX's layout) instead of [C, H, W]; the
        same values. CPU path only.
      interpolation: the crop's resize, 'bilinear' (the default), 'bicubic' (both
        antialiased: torchvision's bytes on PIL images and uint8 tensors) or 'nearest'
        (torchvision's on tensors). Only bilinear runs on the GPU.
      exact_decode: None (the default): eval decodes JPEGs at full scale, torchvision's pixels,
        and train with DCT scaling (a decode at 1/2, 1/4 or 1/8 scale where the crop still
        covers the output: faster, pixels within ~1/255 on average of a full decode, see
        docs/transforms.md). True: full scale for both; False: DCT scaling for both.
    """

    # The defaults are the C++ struct's (stoker/transform.h), read from it once.
    kind: str = _TRANSFORM_DEFAULTS.kind.name
    size: Union[int, Tuple[int, int]] = _TRANSFORM_DEFAULTS.size
    output: str = _TRANSFORM_DEFAULTS.output.name
    scale: Tuple[float, float] = tuple(_TRANSFORM_DEFAULTS.scale)
    ratio: Tuple[float, float] = tuple(_TRANSFORM_DEFAULTS.ratio)
    flip_p: float = _TRANSFORM_DEFAULTS.flip_p
    crop_fraction: float = _TRANSFORM_DEFAULTS.crop_fraction
    resize: int = _TRANSFORM_DEFAULTS.resize
    resize_hw: Optional[Tuple[int, int]] = None
    ops: Tuple[Any, ...] = ()
    erasing: Any = None
    mean: Tuple[float, ...] = IMAGENET_MEAN
    std: Tuple[float, ...] = IMAGENET_STD
    channels: int = _TRANSFORM_DEFAULTS.channels
    interpolation: str = _TRANSFORM_DEFAULTS.interpolation.name
    channels_last: bool = _TRANSFORM_DEFAULTS.channels_last
    exact_decode: Optional[bool] = None

    @property
    def height_width(self) -> Tuple[int, int]:
        size = self.size
        return (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))

    def _core(self) -> "_stoker.TransformConfig":
        t = _stoker.TransformConfig()
        t.kind = _choice("transform", self.kind, _TRANSFORMS)
        t.output = _choice("output", self.output, _OUTPUTS)
        if isinstance(self.size, int):
            t.size = self.size
        else:
            t.height, t.width = self.height_width
            t.size = max(t.height, t.width, 1)
        t.channels = self.channels
        t.scale = _pair("scale", self.scale)
        t.ratio = _pair("ratio", self.ratio)
        t.flip_p = float(self.flip_p)
        t.crop_fraction = float(self.crop_fraction)
        t.resize = int(self.resize)
        if self.resize_hw is not None:
            t.resize_height, t.resize_width = (int(v) for v in self.resize_hw)
        t.ops = [op._core(_stoker) for op in self.ops]
        if self.erasing is not None:
            t.erasing = self.erasing._core(_stoker)
        for name, value in (("mean", self.mean), ("std", self.std)):
            if len(value) != 3 and not (self.channels == 1 and len(value) == 1):
                raise ValueError(f"{name} must have 3 values (got {value!r})")
        t.mean = [float(v) for v in (self.mean if len(self.mean) == 3 else tuple(self.mean) * 3)]
        t.std = [float(v) for v in (self.std if len(self.std) == 3 else tuple(self.std) * 3)]
        t.interpolation = _choice("interpolation", self.interpolation, _INTERPOLATIONS)
        t.channels_last = bool(self.channels_last)
        if self.exact_decode is not None:
            if not isinstance(self.exact_decode, bool):
                raise TypeError(f"exact_decode must be None or a bool (got {self.exact_decode!r})")
            t.dct_scaling = not self.exact_decode
            t.eval_dct_scaling = not self.exact_decode
        t.validate()  # the C++ checks: stoker.ArgumentError, a ValueError
        return t


_TRANSFORM_FIELDS = tuple(f.name for f in dataclasses.fields(TransformConfig) if f.name != "kind")


@dataclasses.dataclass(frozen=True)
class IoConfig:
    """How a dataset reads its storage: the C++ ``stoker::IoConfig`` (stoker/io_config.h).

    Pass one as ``Loader(..., io=IoConfig(...))`` or ``open_dataset(..., io=...)``. A field
    left None takes the C++ default, which is its environment variable when that is set
    (docs/environment.md; a malformed one raises stoker.ArgumentError naming it). Checked by
    the C++ core (stoker.ArgumentError, a ValueError).

    Fields:
      attempts: tries in all of a read failing with an I/O error, counted once per sample end
        to end (STOKER_IO_ATTEMPTS, else 3).
      first_backoff: seconds before the second try, x4 before each later one, at most 5 s
        each (0.05).
      connect_timeout: remote data: seconds to connect (10).
      stall_timeout: remote data: a transfer under 1 KiB/s for this many seconds fails, and is
        retried (STOKER_REMOTE_TIMEOUT, else 30).
      open_timeout: the deadline of a whole open, every shard's requests and retries
        (they open in parallel; the first that fails stops the others), 0 for none
        (STOKER_OPEN_TIMEOUT, else 600). Ctrl-C also stops an open.
      read_ahead_connections: remote data: connections fetching samples ahead of the workers,
        0 for none (STOKER_READAHEAD_CONNECTIONS, else 32).
      read_ahead_bytes: remote data: bytes the read-ahead may hold (STOKER_READAHEAD_MIB MiB,
        else 256 MiB).
      remote_cache_dir: remote data: a node-local folder caching whole objects, '' for none
        (STOKER_REMOTE_CACHE).
      remote_cache_bytes: the most that cache holds (STOKER_REMOTE_CACHE_MIB MiB, else 10 GiB).
      packed_io: packed shards: 'mmap' or 'pread' (STOKER_PACKED_IO, else 'mmap').
      s3_addressing: s3:// locations: 'auto', 'path' or 'virtual'
        (STOKER_S3_ADDRESSING_STYLE, else 'auto').
    """

    attempts: Optional[int] = None
    first_backoff: Optional[float] = None
    connect_timeout: Optional[float] = None
    stall_timeout: Optional[float] = None
    open_timeout: Optional[float] = None
    read_ahead_connections: Optional[int] = None
    read_ahead_bytes: Optional[int] = None
    remote_cache_dir: Optional[Union[str, os.PathLike]] = None
    remote_cache_bytes: Optional[int] = None
    packed_io: Optional[str] = None
    s3_addressing: Optional[str] = None

    def _core(self) -> "_stoker.IoConfig":
        c = _stoker.IoConfig()  # the C++ defaults: the environment's, where set
        r = c.retries
        remote_cache_dir = (None if self.remote_cache_dir is None
                            else os.fspath(self.remote_cache_dir))
        for target, field, value in (
                (r, "attempts", self.attempts), (r, "first_backoff_s", self.first_backoff),
                (c, "connect_timeout_s", self.connect_timeout),
                (c, "stall_timeout_s", self.stall_timeout),
                (c, "open_timeout_s", self.open_timeout),
                (c, "read_ahead_connections", self.read_ahead_connections),
                (c, "read_ahead_bytes", self.read_ahead_bytes),
                (c, "remote_cache_dir", remote_cache_dir),
                (c, "remote_cache_bytes", self.remote_cache_bytes),
                (c, "packed_io", self.packed_io), (c, "s3_addressing", self.s3_addressing)):
            if value is not None:
                setattr(target, field, value)
        c.retries = r
        c.validate()  # the C++ checks: stoker.ArgumentError, a ValueError
        return c


def _io_core(io: Optional[IoConfig]) -> "_stoker.IoConfig":
    if io is None:
        io = IoConfig()
    if not isinstance(io, IoConfig):
        raise TypeError(f"io must be a stoker.IoConfig (got {io!r})")
    return io._core()


class LoaderSampler:
    """A Loader's sampler seen as torch's DistributedSampler: num_replicas, rank, shuffle,
    seed, drop_last, epoch, set_epoch(e), and len() = DistributedSampler's num_samples:
    ceil(N / ranks) in the exact, short and pad modes (as DistributedSampler counts its
    padding), floor(N / ranks) with drop_last (mode 'even'), and the samples of this rank's
    full batches in mode 'drop'. The order itself is the C++ sampler's (one permutation per
    (seed, epoch))."""

    def __init__(self, loader: "Loader"):
        self._loader = loader

    num_replicas = property(lambda self: self._loader.world_size)
    rank = property(lambda self: self._loader.rank)
    shuffle = property(lambda self: bool(self._loader._core.config.shuffle))
    seed = property(lambda self: int(self._loader._core.config.seed))
    drop_last = property(lambda self: self._loader.drop_last)
    epoch = property(lambda self: self._loader.epoch)

    def set_epoch(self, epoch: int) -> None:
        self._loader.set_epoch(epoch)

    def __len__(self) -> int:
        loader = self._loader
        n, ranks = len(loader.dataset), loader.world_size
        mode = loader.mode
        if mode == "even":
            return n // ranks
        if mode == "drop":
            return len(loader) * loader.batch_size
        return -(-n // ranks)

    def __repr__(self) -> str:
        return (f"<stoker.LoaderSampler rank={self.rank}/{self.num_replicas} "
                f"shuffle={self.shuffle} seed={self.seed} drop_last={self.drop_last} "
                f"epoch={self.epoch}>")


class LoaderDataset:
    """A loader's dataset seen as torchvision's ImageFolder: ``len()``, ``dataset[i]`` ->
    ``(image, label)``, ``classes``, ``class_to_idx``, ``samples`` (``[(path, label)]``),
    ``targets`` and ``imgs``. The image is the loader's transform applied to sample i: the
    bytes of its batch slot in the loader's current epoch (eval transforms do not depend on the
    epoch), a tensor ([C, H, W] float, or [H, W, C] uint8) or a numpy array without torch. It
    is what a script hands to ``torch.utils.data.Subset`` and a DataLoader for a few samples
    (pytorch/examples' imagenet validation of the tail DistributedSampler(drop_last=True)
    leaves out). Everything else of the C++ dataset (``fingerprint``, ``describe()``,
    ``name(i)``, ``label(i)``, ``size``, ...) passes through."""

    def __init__(self, loader: "Loader"):
        core = loader._core
        self._dataset = core.dataset
        self._transform = core.config.transform
        self._seed = core.config.seed
        self._loader = weakref.ref(loader)
        self._bfloat16 = self._transform.output == _OUTPUTS["bfloat16"]

    def __len__(self) -> int:
        return len(self._dataset)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        n = len(self._dataset)
        if isinstance(index, bool) or not isinstance(index, int):
            index = int(index)  # numpy and torch integers; anything else: TypeError
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"sample index {index} is outside [0, {n})")
        loader = self._loader()
        epoch = 0 if loader is None or loader.closed else loader.epoch
        image = _stoker.transform_sample(self._dataset, index, self._transform, self._seed, epoch)
        return _image_array(image, self._bfloat16), self._target(index)

    def _target(self, index: int) -> Any:
        if self._dataset.multi_label:
            return self._dataset.label_set(index)
        return self._dataset.label(index)

    @property
    def classes(self) -> List[str]:
        return list(self._dataset.classes)

    @property
    def class_to_idx(self) -> Dict[str, int]:
        return {name: i for i, name in enumerate(self._dataset.classes)}

    @property
    def samples(self) -> List[Tuple[str, Any]]:
        """[(path, label)] in index order, as ImageFolder.samples (built on each call)."""
        return [(self._dataset.name(i), self._target(i)) for i in range(len(self._dataset))]

    imgs = samples

    @property
    def targets(self) -> List[Any]:
        return [self._target(i) for i in range(len(self._dataset))]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_dataset"], name)

    def __repr__(self) -> str:
        return f"<stoker.LoaderDataset {self._dataset.describe()}>"


class Loader:
    """This rank's batches of a dataset, read, decoded and augmented by C++ threads.

    Args:
      source: a packed dataset, an ImageFolder (``DATA/<class>/.../<image>``) or a file list:
        headerless ``path<TAB>label`` lines, a CSV (or tab-separated) table with a header, or
        JSON lines. Labels may be integers or class names (sorted like ImageFolder's:
        ``classes``, ``class_to_idx``), several per sample (a JSON list, or ``3;7`` /
        ``cat|dog`` in a table: multi-hot float32 labels), or absent (label-free: labels -1).
        Or WebDataset tar shards: a ``.tar`` path, a brace pattern
        (``'train-{000000..000999}.tar'``), or ``http(s)://`` and ``s3://`` locations of them
        (S3 credentials, region and endpoint from the ``AWS_*`` variables or ``~/.aws``);
        the label is each sample's ``.cls``, else its ``.json`` label, else its ``.txt``.
      path_column, label_column: the list's column (or JSON member) names; default the first
        of path/file/filename/image/image_path/filepath/img and of
        label/labels/class/target/category/y (none: label-free). For tar shards
        label_column names the label's extension (``'cls'``, ``'txt'``) or JSON member.
      batch_size: samples per batch on each rank.
      transform: a stoker.TransformConfig, or its kind ('train' or 'eval') with its other
        fields as keywords: size (224), output ('float32'), scale, ratio, flip_p,
        crop_fraction, mean, std, channels, exact_decode (see TransformConfig).
      device: 'cpu' (default: the CPU threads augment) or 'cuda' / 'cuda:N' (the threads only
        decode each crop region into pinned memory; one batched kernel per batch crops,
        resizes, flips and normalises on that GPU, with the same bytes as on the CPU).
        With 'cuda', images are a tensor on that device, ready for work on torch's current
        stream at the time the batch was taken (its buffer is reused only after the work
        queued on that stream before the tensor was freed); labels and valid are copied to
        the device too; indices stay on the host.
      decode: where JPEGs are decoded with device='cuda': 'cpu' (default: by the threads,
        region + DCT-scaled, the same bytes as device='cpu'), 'gpu' (nvJPEG on the device:
        the hardware decoder where the chip has one, else the GPU hybrid backend; the threads
        only read and check the files, and decode the rest: PNG, progressive, CMYK...) or
        'auto' ('gpu' where this build has nvJPEG and it starts, else 'cpu'). With the GPU
        decode, pixels are those of exact_decode=True up to nvJPEG's IDCT (docs/gpu.md); a file
        is bad on the GPU path exactly when it is bad on the CPU path.
      jpeg_backend: decode='gpu' only: 'auto', 'hardware' or 'gpu_hybrid'.
      shuffle, seed: one permutation per (seed, epoch), the same on every rank. seed=None
        draws one (rank 0's, broadcast over the process group), which state_dict() records.
      mode: 'exact' (the default for training: each sample exactly once per epoch over all
        ranks; the last batch is full-size with padding slots masked in ``valid``, so that
        stoker.torch.masked_mean keeps means exact); 'short' (the default for an eval
        transform: exact's samples, each batch holding only its samples, so the last one is
        short as DataLoader's is and an unchanged evaluation loop counts each sample once; the
        last batches shrink so that none is empty, except where no layout avoids it: fewer
        samples left than ranks, or batches of one); 'pad' (as DistributedSampler + DataLoader: each rank ceil(N/ranks)
        samples, repeats included, the last batch short); 'even' (as
        DistributedSampler(drop_last=True) + DataLoader: each rank floor(N/ranks) samples, the
        last batch short); 'drop' (DataLoader's drop_last too: full batches only).
      drop_last: DistributedSampler's: True is mode='even' (what pytorch/examples' imagenet
        validation sampler sets); for full batches only (DataLoader's drop_last), mode='drop'.
      rank, world_size: give both or neither. Neither: from an initialised torch.distributed
        process group, else from torchrun / Open MPI / Slurm variables, else one rank. With
        a process group of several ranks, every rank must build its loader (the ranks
        compare dataset fingerprints with all_gather_object; under NCCL call
        torch.cuda.set_device first) and a mismatch raises stoker.Error on every rank.
      threads: worker threads (None or 0: the CPUs this process may use / ranks on the node).
      prefetch: batches in flight (None or 0: chosen by the loader).
      num_workers, prefetch_factor, persistent_workers, pin_memory: DataLoader's keywords.
        num_workers is threads (C++ threads, not processes; 0 is one thread), prefetch_factor
        x num_workers batches in flight, persistent_workers what the threads always are;
        pin_memory=True copies each CPU batch to page-locked memory (a warning and no copy
        where CUDA is absent, as DataLoader does).
      shard_window: shuffle in windows of this many batches over shards read in order, each
        rank reading one run of its shards per window (WebDataset's shard shuffle + shuffle
        buffer, still each sample once per epoch); None: 4 for remote tar shards, 0 (one
        global shuffle) otherwise.
      bad_samples: 'error' (raise stoker.BadSampleError naming the file) or 'skip' (zero-fill,
        mask invalid, warn, count). Only broken samples are skipped: a failed read (EIO,
        EACCES, a file gone, a truncated shard) is tried io.attempts times (3), then raises
        stoker.StorageError (an OSError with errno and filename) under either policy.
      io: how the source is read (a stoker.IoConfig: retries, remote timeouts, read-ahead,
        the node-local object cache, packed I/O); None: the defaults (docs/environment.md).
      close_timeout: seconds close() waits for reads in flight before abandoning the worker
        threads stuck in them, with a warning (None: STOKER_CLOSE_TIMEOUT, else 10).
      where: a filter on fields, run in C++ when the loader opens its source, before any
        decode: {"json.similarity": (">=", 0.28), "json.lang": "en"} (op one of < <= > >=
        == !=; a bare value means ==; numbers compare as numbers). Only the samples that
        pass exist for the sampler (each once per epoch over the ranks, resume included);
        ``loader.filtered`` counts those left out.
      tokenizer: a Hugging Face ``tokenizers.Tokenizer`` (or the path of its tokenizer.json)
        for the first text field: ``batch.fields[name]`` becomes int32 [B, context_length]
        token ids (truncated, padded with the tokenizer's pad id, else 0) and
        ``batch.fields[name + ".attention_mask"]`` int32 [B, L] (1 for tokens), the strings
        staying in ``batch.fields[name + ".text"]``. One ``encode_batch`` per batch (Rust, GIL
        released) on a background thread, one batch ahead of the training loop.
      fields: per-sample fields besides the image, read by the workers with the image and
        delivered in ``batch.fields`` (docs/fields.md): WebDataset member extensions ("txt",
        "json", "cls", ...) or "json.KEY" for one member of the sample's .json; a CSV / TSV /
        JSON-lines list's columns ("caption"). A sample without one is a bad sample
        (bad_samples decides); a name no sample has is an ArgumentError at construction.

    Iteration follows torch's DataLoader: each ``iter(loader)`` is one pass over an epoch
    from its beginning. Every new pass runs the next epoch (0, 1, 2, ...: a new order and new
    augmentations each time, never the same epoch again by accident), unless ``set_epoch(e)``
    was called since the last ``iter()``: then the pass runs epoch e (calling it before every
    epoch, as with DistributedSampler, gives the same epochs and is the way to repeat or choose
    one). ``set_epoch(e)`` after ``iter()`` but before that iterator's first batch applies to
    that iterator, as a DistributedSampler's does inside a DataLoader iterator that has not
    started (Lightning calls it in that order). A pass abandoned part-way (``break``) counts as
    a pass. Resuming: after
    ``load_state_dict(state)`` the next pass (and a ``set_epoch`` of the saved epoch before it)
    continues the saved epoch where the state was taken; the pass after it runs the next epoch.
    Only the newest iterator is live; advancing an older one raises RuntimeError.

    Close the loader (``close()``, ``with Loader(...) as loader:``, or dropping the last
    reference) to stop its threads; batches still held stay valid.

    Raises (every stoker error is a stoker.Error, a RuntimeError):
      stoker.ArgumentError (a ValueError; plain ValueError for Python-side conversions, and
      TypeError for a value of the wrong type): on a bad argument. stoker.MissingFileError (a FileNotFoundError) or stoker.StorageError (an
      OSError): a source that cannot be opened or read. stoker.BadSampleError: a broken sample
      under bad_samples='error'. stoker.Error: ranks that see different data, or an internal
      error.
    """

    def __init__(
        self,
        source: Union[str, os.PathLike],
        batch_size: int,
        *,
        transform: Union[str, TransformConfig, Any] = "train",
        batch_transform: Optional[Callable[[Any, Any], Tuple[Any, Any]]] = None,
        shuffle: bool = True,
        seed: Optional[int] = 0,
        mode: Optional[str] = None,
        drop_last: Optional[bool] = None,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        threads: Optional[int] = None,
        prefetch: Optional[int] = None,
        shard_window: Optional[int] = None,
        bad_samples: str = "error",
        device: str = "cpu",
        decode: str = "cpu",
        jpeg_backend: str = "auto",
        path_column: Optional[str] = None,
        label_column: Optional[str] = None,
        io: Optional[IoConfig] = None,
        close_timeout: Optional[float] = None,
        size: Optional[Union[int, Tuple[int, int]]] = None,
        output: Optional[str] = None,
        scale: Optional[Sequence[float]] = None,
        ratio: Optional[Sequence[float]] = None,
        mean: Optional[Sequence[float]] = None,
        std: Optional[Sequence[float]] = None,
        channels: Optional[int] = None,
        channels_last: Optional[bool] = None,
        flip_p: Optional[float] = None,
        crop_fraction: Optional[float] = None,
        exact_decode: Optional[bool] = None,
        num_workers: Optional[int] = None,
        pin_memory: bool = False,
        persistent_workers: bool = False,
        prefetch_factor: Optional[int] = None,
        fields: Optional[Sequence[str]] = None,
        where: Optional[Dict[str, Any]] = None,
        tokenizer: Any = None,
        context_length: int = 77,
    ) -> None:
        self._handle = None  # set last, so that __del__ copes with a failed __init__
        self._numpy = False  # numpy batches even where torch is installed (stoker.jax)
        threads, prefetch = _dataloader_habits(threads, prefetch, num_workers, prefetch_factor,
                                               persistent_workers)
        self._pin_memory = _pinning(pin_memory, device)
        given = {k: v for k, v in locals().items() if k in _TRANSFORM_FIELDS and v is not None}
        if isinstance(transform, (list, tuple)):
            transform = transforms.Compose(transform)
        if isinstance(transform, transforms.Compose):
            # What a list cannot say comes as keywords; the rest belongs in the list.
            beside = ("exact_decode", "channels", "channels_last")
            listed = sorted(k for k in given if k not in beside)
            if listed:
                raise ValueError(f"give {', '.join(listed)} in the transform list, not as "
                                 "keywords beside it (only exact_decode, channels and "
                                 "channels_last go beside a list)")
            transform = dataclasses.replace(transform.config(), **given)
            given = {}
        if isinstance(transform, TransformConfig):
            if given:
                raise ValueError(f"give the transform as a TransformConfig or as keywords, not "
                                 f"both (got {', '.join(sorted(given))} besides it)")
        else:
            transform = TransformConfig(kind=transform, **given)
        self._transform = transform
        if batch_transform is not None and not callable(batch_transform):
            raise TypeError(f"batch_transform must be callable (got {batch_transform!r})")
        # stoker's MixUp/CutMix run in the C++ workers; any other callable here, in Python.
        mix = transforms._mix_choices(batch_transform)
        if batch_transform is not None and _torch is None and mix is None:
            raise ValueError("a Python batch_transform needs torch")
        group = _torch_distributed()
        # Rank and world size from the group unless given.
        dist = group if rank is None and world_size is None else None
        if seed is None:  # over the group whether or not rank and world_size were given
            seed = _draw_seed(group, rank, world_size)
        self._seed = seed
        mode = _mode_for(mode, drop_last, evaluating=transform.kind == "eval")
        config = self._make_config(batch_size=batch_size, transform=transform, shuffle=shuffle,
                                   seed=seed, mode=mode, rank=rank, world_size=world_size,
                                   threads=threads, prefetch=prefetch, bad_samples=bad_samples)
        config.shard_window_batches = -1 if shard_window is None else shard_window
        if isinstance(fields, str):
            fields = [fields]
        self._fields = tuple(str(f) for f in (fields or ()))
        config.fields = list(self._fields)
        io_core = _io_core(io)
        config.read_retries = io_core.retries  # the sample's only retries, end to end
        if close_timeout is not None:
            config.close_timeout_seconds = close_timeout
        self._device = _parse_device(device)  # None: CPU augmentation
        if self._fields and self._device is not None:
            raise ValueError("fields= with device='cuda' is not offered yet: the fields ride on "
                             "host batches (device='cpu', then batch.to('cuda'))")
        if decode not in ("cpu", "gpu", "auto"):
            raise ValueError(f"decode must be 'cpu', 'gpu' or 'auto' (got {decode!r})")
        if decode == "gpu" and self._device is None:
            raise ValueError("decode='gpu' needs device='cuda' (the decoded images stay on the GPU)")
        source = os.fspath(source)  # a missing one: stoker.MissingFileError (FileNotFoundError)

        if dist is not None:
            config.rank = dist.get_rank()
            config.world_size = dist.get_world_size()

        # A list keeps the columns asked for as fields, and those the filter reads (other
        # sources ignore them: WebDataset shards index every member).
        conditions = _conditions(where)
        list_fields = list(dict.fromkeys(list(self._fields) + [c[0] for c in conditions]))
        dataset = _stoker.open_dataset(source, path_column or "", label_column or "", io_core,
                                       list_fields)
        # How each field is handed over: a list's columns are text, WebDataset members go by
        # name, a pack's kinds are in its manifest. (A field the source lacks is an error
        # when the loader is made, naming it.)
        self._field_kinds = {f: dataset.field_kind(f) for f in self._fields
                             if dataset.has_field(f)}
        self._tokenize = _tokenizing(tokenizer, context_length, self._field_kinds)
        if conditions:  # before any decode, in C++: the sampler sees only what passes
            dataset = _stoker.filter_dataset(dataset, conditions)
        if mix is not None:
            config.mix = transforms._batch_mix_config(mix, _stoker, dataset)
            batch_transform = None
        self._batch_transform = batch_transform
        if dist is not None and config.world_size > 1:
            _check_same_dataset(dist, dataset, config.rank)
        if self._device is None:
            self._handle = _stoker.Loader(dataset, config)
        else:
            usable, why = _stoker.cuda_available()
            if not usable:
                raise RuntimeError(f"stoker.Loader(device={device!r}): {why}")
            self._handle = _stoker.GpuLoader(dataset, config, self._device, decode, jpeg_backend)

    @staticmethod
    def _make_config(*, batch_size, transform, shuffle, seed, mode, rank, world_size, threads,
                     prefetch, bad_samples) -> "_stoker.LoaderConfig":
        # Values are checked by the C++ core (stoker.ArgumentError); only the conversions
        # from Python's names and types are here.
        c = _stoker.LoaderConfig()
        c.transform = transform._core()
        c.batch_size = batch_size
        c.threads = threads or 0
        c.prefetch = prefetch or 0
        c.shuffle = bool(shuffle)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64) (got {seed!r})")
        c.seed = seed
        c.mode = _choice("mode", mode, _MODES)
        c.bad_samples = _choice("bad_samples", bad_samples, _BAD_SAMPLES)
        c.rank, c.world_size = rank, world_size
        return c

    # -- the core, or an error once closed -------------------------------------------------

    @property
    def _core(self) -> "_stoker.Loader":
        if self._handle is None or self._handle.closed:
            raise RuntimeError("stoker.Loader is closed")
        return self._handle

    # -- epochs and iteration --------------------------------------------------------------

    def set_epoch(self, epoch: int) -> None:
        """Selects the epoch the next pass runs (reshuffles), and starts prefetching it.

        After load_state_dict, set_epoch of the saved epoch keeps the saved position."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be a non-negative integer (got {epoch!r})")
        self._core.set_epoch(epoch)  # the pass rule (which epoch each iter() runs) is C++'s

    @property
    def filtered(self) -> int:
        """Samples the `where` filter left out (0 without one)."""
        return self._core.dataset.filtered

    @property
    def epoch(self) -> int:
        """The epoch of the current (or last) pass, or the one set_epoch chose for the next."""
        return self._core.pass_epoch

    def __iter__(self) -> Iterator[Batch]:
        core = self._core
        batches = self._iterate(core, core.begin_pass())
        return batches if self._tokenize is None else _tokenized(batches, self._tokenize)

    def _iterate(self, core, pass_id: int) -> Iterator[Batch]:
        rank, world = core.rank, core.world_size
        while True:
            self._monitor_stats(core)
            core.check_pass(pass_id)  # raises once a newer iter() or set_epoch() took over
            if self._device is None:
                ref = core.next()  # GIL released while waiting
                if ref is None:
                    return
                batch = _wrap(ref, rank, world, numpy=self._numpy, field_names=self._fields,
                              name_of=core.dataset.name, field_kinds=self._field_kinds)
                if self._pin_memory:
                    batch = batch.pin_memory()
            else:
                from . import torch as _stoker_torch
                ref = core.next(_stoker_torch.current_stream(self._device))
                if ref is None:
                    return
                batch = _wrap_device(ref, rank, world, self._device)
            yield batch if self._batch_transform is None else self._apply_batch_transform(batch)

    def _apply_batch_transform(self, batch: Batch) -> Batch:
        """batch_transform(images, labels) under torch's generator seeded by (seed, epoch,
        batch index, rank): reproducible, and the caller's random state is left as it was."""
        key = hash((self._seed, batch.epoch, batch.index, batch.rank)) & (2**63 - 1)
        devices = [batch.images.device] if batch.images.is_cuda else []
        with _torch.random.fork_rng(devices=devices):
            _torch.manual_seed(key)
            images, labels = self._batch_transform(batch.images, batch.labels)
        return batch._replace(images=images, labels=labels)

    def __len__(self) -> int:
        """Batches per rank in a full epoch: the same on every rank."""
        return self._core.size()

    def batches_left(self) -> int:
        """Batches per rank of the current (possibly resumed) epoch plan."""
        return self._core.num_batches()

    # -- resume ----------------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """Where the job stands after the batches delivered so far (the same on every rank).

        A plain dict (JSON-compatible): dataset fingerprint and size, mode, shuffle, seed,
        epoch, and the samples of the epoch already consumed by all ranks together. It loads
        on any world size or batch size."""
        return json.loads(self._core.state().to_json())

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Resumes from state_dict(): the next pass continues the saved epoch.

        Raises stoker.Error when the state belongs to another dataset, mode, shuffle or seed."""
        if not isinstance(state, dict):
            raise ValueError(f"state must be a dict from state_dict() (got {type(state)})")
        self._core.load_state(_stoker.ResumeState.from_json(json.dumps(state)))

    # -- information -----------------------------------------------------------------------

    @property
    def rank(self) -> int:
        return self._core.rank

    @property
    def world_size(self) -> int:
        return self._core.world_size

    @property
    def transform(self) -> TransformConfig:
        return self._transform

    @property
    def batch_size(self) -> int:
        return self._core.config.batch_size

    @property
    def dataset(self) -> LoaderDataset:
        """The dataset, as DataLoader.dataset: len(), dataset[i] -> (image, label) under this
        loader's transform, and ImageFolder's classes, class_to_idx, samples and targets."""
        return LoaderDataset(self)

    @property
    def sampler(self) -> "LoaderSampler":
        """The sharding and shuffling of this loader, with DistributedSampler's attributes."""
        return LoaderSampler(self)

    #: DataLoader's attribute: None, as for a DataLoader that does not batch a sampler's
    #: indices itself (stoker's C++ core forms the batches; ``sampler`` has the sharding).
    batch_sampler = None

    @property
    def mode(self) -> str:
        """The sampler mode: 'exact', 'short', 'pad', 'even' or 'drop'."""
        core_mode = self._core.config.mode
        return next(name for name, value in _MODES.items() if value == core_mode)

    @property
    def drop_last(self) -> bool:
        """DistributedSampler's drop_last: the tail that does not divide over the ranks is left
        out (modes 'even' and 'drop')."""
        return self.mode in _DROPPING_MODES

    @property
    def fingerprint(self) -> str:
        """16 hex digits identifying the dataset's listing; ranks must agree on it."""
        return self._core.dataset.fingerprint

    @property
    def classes(self):
        """The class names, index = label (ImageFolder's sorted folder names, a list's sorted
        class names, or "0", "1", ... for integer labels; empty for a label-free list)."""
        return self.dataset.classes

    @property
    def class_to_idx(self) -> Dict[str, int]:
        """{class name: label}, as torchvision's ImageFolder.class_to_idx."""
        return self.dataset.class_to_idx

    @property
    def multi_label(self) -> bool:
        """True for a multi-label list: labels are then multi-hot float32 [B, classes]."""
        return bool(self._core.dataset.multi_label)

    def stats(self, advance: bool = True) -> Dict[str, Any]:
        """Live stats of this rank's loader: the stats JSON line of docs/doctor.md as a dict.

        Counters since the first epoch (threads, prefetch, cpus, batches, images, skipped,
        pool_buffers, pool_grown, wall_seconds, wait_seconds, busy_seconds,
        read_wall_seconds, process_cpu_seconds, cpu_seconds: {read, decode, augment, collate},
        epoch, epoch_start, epoch_batches, digest: {count, sum}) and ``window``: images/s,
        wait, busy, read fractions, CPU utilisation and queue occupancy since the previous
        call (``advance=False`` reads without starting a new window)."""
        return json.loads(self._core.stats_json(advance))

    def diagnose(self, measure: bool = True, sample: int = 200) -> Dict[str, Any]:
        """The doctor's live verdict over this loader's run so far: ``verdict``
        (input-bound-cpu, io-bound, healthy or unknown), ``summary``, ``evidence``, ``fixes``
        (with ``measure`` and an input-bound-cpu verdict, the pack fixes are measured on
        ``sample`` images of the data set, which takes a few seconds) and ``numbers``."""
        return json.loads(self._core.diagnose(measure, sample))

    # -- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Stops and joins the worker threads now (idempotent). Batches already delivered
        stay valid; any other call on a closed loader raises RuntimeError."""
        handle = self._handle
        if handle is not None:
            if not handle.closed:
                self._monitor_stats(handle, force=True)
            handle.close()  # GIL released while the workers are joined

    def _monitor_stats(self, core, force: bool = False) -> None:
        """Under ``stoker monitor`` (STOKER_STATS_FILE set), appends a stats line to that file
        every STOKER_STATS_INTERVAL seconds (default 1) and when the loader closes (``force``),
        so that the monitor's log holds the input pipeline beside CPU and GPU. The C++
        StatsFileWriter writes them (stoker/loader_stats.h), as it does for stoker bench."""
        core.write_stats(force)

    @property
    def closed(self) -> bool:
        return self._handle is None or self._handle.closed

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __repr__(self) -> str:
        if self.closed:
            return "<stoker.Loader (closed)>"
        core = self._core
        return (f"<stoker.Loader {core.dataset.describe()} batch_size={self.batch_size} "
                f"rank={core.rank}/{core.world_size} epoch={core.pass_epoch}>")


def _dataloader_habits(threads, prefetch, num_workers, prefetch_factor, persistent_workers):
    """(threads, prefetch) from DataLoader's keywords: num_workers is threads (0, DataLoader's
    "in the main process", is one thread: stoker never decodes on the consumer's thread),
    prefetch_factor x num_workers batches in flight as DataLoader keeps; persistent_workers is
    what stoker's threads always are."""
    for name, value in (("num_workers", num_workers), ("prefetch_factor", prefetch_factor)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise ValueError(f"{name} must be a non-negative integer (got {value!r})")
    if not isinstance(persistent_workers, bool):
        raise TypeError(f"persistent_workers must be a bool (got {persistent_workers!r})")
    if num_workers is not None:
        if threads is not None and threads != max(1, num_workers):
            raise ValueError(f"num_workers={num_workers} contradicts threads={threads} "
                             "(num_workers is DataLoader's name for threads; give one)")
        threads = max(1, num_workers)
    if prefetch_factor is not None:
        if prefetch_factor < 1:
            raise ValueError(f"prefetch_factor must be >= 1 (got {prefetch_factor})")
        if prefetch is None and threads is not None:
            prefetch = prefetch_factor * threads
    return threads, prefetch


_PIN_WARNING = ("'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.")  # DataLoader's words for the same case


def _pinning(pin_memory, device) -> bool:
    """Whether delivered CPU batches are copied to page-locked memory (DataLoader's
    pin_memory: a copy, made on the consumer's thread here); on a machine without CUDA a
    warning, as DataLoader gives, and no pinning."""
    if not isinstance(pin_memory, bool):
        raise TypeError(f"pin_memory must be a bool (got {pin_memory!r})")
    if not pin_memory or str(device) != "cpu":
        return False  # batches on the GPU need no pinning
    if _torch is None or not _torch.cuda.is_available():
        warnings.warn(_PIN_WARNING, stacklevel=3)
        return False
    return True


def _draw_seed(dist, rank, world_size) -> int:
    """seed=None: a fresh seed, the same on every rank (rank 0's, broadcast over the process
    group); state_dict() records it, so a resumed job continues the same order."""
    seed = int.from_bytes(os.urandom(8), "little") >> 1
    if dist is not None and dist.get_world_size() > 1:
        box = [seed]
        dist.broadcast_object_list(box, src=0)
        return int(box[0])
    if _stoker.discover_rank(rank, world_size).world_size > 1:  # arguments, torchrun, MPI...
        raise ValueError("seed=None on several ranks needs an initialised torch.distributed "
                         "process group (the ranks must agree on the seed); pass seed=")
    return seed


def _parse_device(device) -> Optional[int]:
    """'cpu' -> None; 'cuda' -> torch's current device (0 without torch); 'cuda:N' -> N."""
    name = str(device)
    if name == "cpu":
        return None
    if name == "cuda":
        from . import torch as _stoker_torch
        return _stoker_torch.current_device()
    if name.startswith("cuda:") and name[5:].isdigit():
        return int(name[5:])
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N' (got {device!r})")


def _bfloat16_numpy(array):
    """int16 bits of bfloat16 values as ml_dtypes.bfloat16 (numpy's bfloat16, which JAX
    uses) when ml_dtypes is installed; else the int16 bits as they are."""
    try:
        import ml_dtypes
    except ImportError:
        return array
    return array.view(ml_dtypes.bfloat16)


def _image_array(images, bfloat16: bool, numpy: bool = False):
    """Images from C++ (numpy; bfloat16 as its int16 bits) as the package hands them out: a
    torch tensor, or without torch (or with numpy=True) a numpy array, bfloat16 as
    ml_dtypes.bfloat16 where installed."""
    if _torch is not None and not numpy:
        tensor = _torch.from_numpy(images)
        return tensor.view(_torch.bfloat16) if bfloat16 else tensor
    return _bfloat16_numpy(images) if bfloat16 else images


_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def _tokenizing(tokenizer, context_length: int, field_kinds: Dict[str, str]):
    """Loader(tokenizer=...) as a function of a Batch that replaces its first text field
    (`field_kinds`: the loader's fields and their kinds, in order) by token ids (None without
    a tokenizer)."""
    if tokenizer is None:
        return None
    if isinstance(tokenizer, (str, os.PathLike)):
        import tokenizers
        tokenizer = tokenizers.Tokenizer.from_file(os.fspath(tokenizer))
    if not hasattr(tokenizer, "encode_batch"):
        raise TypeError(f"tokenizer must be a tokenizers.Tokenizer or a tokenizer.json path "
                        f"(got {tokenizer!r})")
    texts = [f for f, kind in field_kinds.items() if kind == "text"]
    if not texts:
        raise ValueError(f"tokenizer: no text field among fields={list(field_kinds)!r} (text: "
                         f"a WebDataset txt/text/caption member, a list's column, a pack's "
                         f"text field)")
    name = texts[0]
    if not isinstance(context_length, int) or context_length < 1:
        raise ValueError(f"context_length must be a positive int (got {context_length!r})")
    pad = tokenizer.token_to_id("[PAD]")
    pad = 0 if pad is None else pad
    # A copy that truncates and pads to context_length itself (in Rust): the user's tokenizer
    # keeps its own settings, and a batch is one encode_batch plus one array conversion.
    fixed = type(tokenizer).from_str(tokenizer.to_str())
    fixed.enable_truncation(max_length=context_length)
    fixed.enable_padding(length=context_length, pad_id=pad,
                         pad_token=tokenizer.id_to_token(pad) or "[PAD]")

    def tokenize(batch: Batch) -> Batch:
        import numpy as np
        strings = batch.fields[name]
        encodings = fixed.encode_batch(strings)  # Rust threads, the GIL released
        ids = np.array([e.ids for e in encodings], dtype=np.int32).reshape(-1, context_length)
        mask = np.array([e.attention_mask for e in encodings],
                        dtype=np.int32).reshape(-1, context_length)
        if _torch is not None and not isinstance(batch.images, np.ndarray):
            ids, mask = _torch.from_numpy(ids), _torch.from_numpy(mask)
        batch.fields = {**batch.fields, name: ids, name + ".attention_mask": mask,
                        name + ".text": strings}
        return batch

    return tokenize


def _tokenized(batches: Iterator[Batch], tokenize) -> Iterator[Batch]:
    """The batches, each tokenized on a background thread while the one before is used."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1, thread_name_prefix="stoker-tokenize") as pool:
        pending = None
        for batch in batches:
            ahead = pool.submit(tokenize, batch)
            if pending is not None:
                yield pending.result()
            pending = ahead
        if pending is not None:
            yield pending.result()


def _conditions(where: Optional[Dict[str, Any]]) -> List[Tuple[str, str, str]]:
    """Loader(where=...) as (field, op, value) triples: {"json.similarity": (">=", 0.28),
    "json.lang": "en"} (a bare value means ==)."""
    out = []
    for field, test in (where or {}).items():
        op, value = test if isinstance(test, tuple) and len(test) == 2 else ("==", test)
        if op not in _COMPARISONS:
            raise ValueError(f"where: {field!r}: {op!r} is not one of {', '.join(_COMPARISONS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"where: {field!r}: compare with a number or a string "
                             f"(got {value!r})")
        out.append((str(field), op, repr(float(value)) if isinstance(value, float)
                    else str(value)))
    return out


def _field_values(name: str, raw: List[bytes], valid, where, kind: str) -> Any:
    """One field's bytes per slot as Python values (Batch.fields), by its kind (text, json,
    bytes: Dataset.field_kind); `where(i)` names slot i's sample for an error."""
    if kind == "text":
        out = []
        for i, b in enumerate(raw):
            try:
                out.append(b.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise BadSampleError(f"{where(i)}: its field '{name}' is not UTF-8 text "
                                     f"({e.reason} at byte {e.start})") from None
        return out
    if kind == "json":
        values = [json.loads(b) if b else None for b in raw]
        numbers = [v for v, ok in zip(values, valid) if ok]
        if name != "json" and numbers and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
            import numpy as np
            return np.array([v if isinstance(v, (int, float)) else np.nan for v in values],
                            dtype=np.float64)
        return values
    return list(raw)


def _wrap(ref: "_stoker.Batch", rank: int, world_size: int, numpy: bool = False,
          field_names: Sequence[str] = (), name_of: Optional[Callable[[int], str]] = None,
          field_kinds: Optional[Dict[str, str]] = None) -> Batch:
    """The batch's views as torch tensors, or numpy arrays without torch (or with numpy=True:
    what stoker.jax hands to JAX)."""
    images, labels, indices, valid = ref.arrays()  # views; their base owns the C++ batch
    fields = {}
    if field_names:
        slots = valid.astype(bool)
        where = (lambda i: name_of(int(indices[i]))) if name_of else (lambda i: f"slot {i}")
        kinds = field_kinds or {}
        fields = {name: _field_values(name, raw, slots, where, kinds.get(name, "bytes"))
                  for name, raw in zip(field_names, ref.fields())}
    images = _image_array(images, ref.output == "bfloat16", numpy)
    if _torch is not None and not numpy:
        labels, indices, valid = (_torch.from_numpy(a) for a in (labels, indices, valid))
    return Batch(images, labels, indices, valid, ref.global_valid, ref.epoch, ref.index, rank,
                 world_size, ref.skipped, fields)


def _wrap_device(ref: "_stoker.DeviceBatch", rank: int, world_size: int, device: int) -> Batch:
    from . import torch as _stoker_torch
    images, labels, indices, valid = ref.arrays()
    images, labels, indices, valid = _stoker_torch.device_tensors(
        images, labels, indices, valid, ref.output, device)
    return Batch(images, labels, indices, valid, ref.global_valid, ref.epoch, ref.index, rank,
                 world_size, ref.skipped)


def _check_same_dataset(dist, dataset, rank: int) -> None:
    """Fails on every rank, naming the ranks and fingerprints, unless all ranks see the same
    dataset (docs/architecture.md, "Rank discovery and agreement")."""
    mine = (rank, dataset.fingerprint, dataset.size, dataset.describe())
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    first = everyone[0]
    for other in everyone[1:]:
        if other[1] != first[1]:
            raise Error(
                "ranks see different datasets: rank {} has fingerprint {} ({}), rank {} has "
                "fingerprint {} ({}); point every rank at the same data".format(
                    first[0], first[1], first[3], other[0], other[1], other[3]))


from . import torch  # noqa: E402,F401  (stoker.torch: masked_mean and friends)
