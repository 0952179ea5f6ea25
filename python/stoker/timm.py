"""timm's data recipe over stoker: the names a timm training script imports from timm.data.

A script ported to stoker changes its imports and its loader lines only::

    from stoker.timm import Mixup, RandomErasing, create_transform
    transform = create_transform(224, is_training=True, auto_augment="rand-m9-mstd0.5-inc1",
                                 interpolation="bicubic", re_prob=0.25, re_mode="pixel")
    loader = stoker.Loader("/data/train", batch_size=128, transform=transform,
                           batch_transform=Mixup(mixup_alpha=0.8, cutmix_alpha=1.0,
                                                 label_smoothing=0.1, num_classes=1000))

create_transform builds the stoker.transforms list timm's create_transform builds (timm's
transforms_imagenet_train / transforms_imagenet_eval, with the same aa_params), and the
augmentations run in stoker's C++ workers: timm's auto-augment policies on PIL's arithmetic
(stoker/timm_augment.h), timm's RandomErasing on the normalised output, timm's Mixup on the
batch. timm itself is not needed. What is not offered says so (ValueError): 'random' crop
interpolation, the rkrc/rkrr crop modes, re_num_splits (AugMix's split batches), the '3a'
policies.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union

from . import transforms as T
from ._stoker import IMAGENET_MEAN, IMAGENET_STD

__all__ = ["Mixup", "RandomErasing", "augment_and_mix_transform", "auto_augment_transform",
           "create_transform", "rand_augment_transform"]

Mixup = T.Mixup

DEFAULT_CROP_PCT = 0.875  # timm.data.DEFAULT_CROP_PCT


def rand_augment_transform(config_str: str, hparams: Optional[dict] = None) -> T.TimmAutoAugment:
    """timm.data.rand_augment_transform: 'rand-m9-n2-mstd0.5-inc1' and its sections."""
    if not config_str.startswith("rand"):
        raise ValueError(f"rand_augment_transform: expected 'rand-...' (got {config_str!r})")
    return T.TimmAutoAugment(config_str, hparams)


def auto_augment_transform(config_str: str, hparams: Optional[dict] = None) -> T.TimmAutoAugment:
    """timm.data.auto_augment_transform: 'original', 'originalr', 'v0', 'v0r' (+ '-mstd<x>')."""
    return T.TimmAutoAugment(config_str, hparams)


def augment_and_mix_transform(config_str: str,
                              hparams: Optional[dict] = None) -> T.TimmAutoAugment:
    """timm.data.augment_and_mix_transform: 'augmix-m3-w3-d-1-a1-b0-mstd<x>'."""
    if not config_str.startswith("augmix"):
        raise ValueError(f"augment_and_mix_transform: expected 'augmix-...' "
                         f"(got {config_str!r})")
    return T.TimmAutoAugment(config_str, hparams)


class RandomErasing(T.RandomErasing):
    """timm.data.RandomErasing on the normalised output, in the workers: with probability
    `probability`, min_count to max_count boxes, each of area share uniform(min_area,
    max_area) / count and aspect log-uniform in (min_aspect, max_aspect), filled per `mode`:
    'const' zeros, 'rand' one normal value per channel, 'pixel' a normal value per value."""

    def __init__(self, probability: float = 0.5, min_area: float = 0.02,
                 max_area: float = 1 / 3, min_aspect: float = 0.3,
                 max_aspect: Optional[float] = None, mode: str = "const", min_count: int = 1,
                 max_count: Optional[int] = None, num_splits: int = 0,
                 device: Any = "cuda") -> None:
        if num_splits:
            raise ValueError("RandomErasing: num_splits (AugMix's split batches) is not offered")
        mode = (mode or "const").lower()
        if mode not in ("const", "rand", "pixel"):
            raise ValueError(f"RandomErasing: mode must be 'const', 'rand' or 'pixel' "
                             f"(got {mode!r})")
        max_aspect = max_aspect or 1 / min_aspect
        super().__init__(p=probability, scale=(min_area, max_area),
                         ratio=(min_aspect, max_aspect), value=0)
        self.mode = mode
        self.min_count, self.max_count = int(min_count), int(max_count or min_count)

    def _core(self, _stoker):
        e = super()._core(_stoker)
        e.timm, e.mode = True, getattr(_stoker.ErasingMode, self.mode)
        e.min_count, e.max_count = self.min_count, self.max_count
        return e


def _size(input_size: Union[int, Sequence[int]]) -> Tuple[int, int]:
    """timm's input_size: an int, (h, w) or (c, h, w)."""
    if isinstance(input_size, int):
        return input_size, input_size
    size = [int(v) for v in input_size]
    return (size[-2], size[-1]) if len(size) >= 2 else (size[0], size[0])


def create_transform(input_size: Union[int, Sequence[int]], is_training: bool = False,
                     no_aug: bool = False, train_crop_mode: Optional[str] = None,
                     scale: Optional[Sequence[float]] = None,
                     ratio: Optional[Sequence[float]] = None, hflip: float = 0.5,
                     vflip: float = 0.0, color_jitter: Any = 0.4,
                     color_jitter_prob: Optional[float] = None, force_color_jitter: bool = False,
                     grayscale_prob: float = 0.0, gaussian_blur_prob: float = 0.0,
                     auto_augment: Optional[str] = None, interpolation: str = "bilinear",
                     mean: Sequence[float] = tuple(IMAGENET_MEAN),
                     std: Sequence[float] = tuple(IMAGENET_STD), re_prob: float = 0.0,
                     re_mode: str = "const", re_count: int = 1, re_num_splits: int = 0,
                     crop_pct: Optional[float] = None, crop_mode: Optional[str] = None,
                     normalize: bool = True, **unsupported: Any) -> T.Compose:
    """timm.data.create_transform as a stoker.transforms.Compose (timm's defaults)."""
    if unsupported:
        raise ValueError(f"create_transform: {sorted(unsupported)} not offered by stoker")
    height, width = _size(input_size)
    if interpolation == "random":
        raise ValueError("create_transform: interpolation='random' (a resampling drawn per "
                         "image for the crop) is not offered; give 'bicubic' or 'bilinear'")
    final = [T.ToDtype("float32", scale=True)]
    if normalize:
        final.append(T.Normalize(mean, std))
    if not is_training:
        if crop_mode not in (None, "center"):
            raise ValueError(f"create_transform: crop_mode={crop_mode!r} is not offered")
        pct = crop_pct or DEFAULT_CROP_PCT
        if height == width:
            resize: Any = math.floor(height / pct)
        else:
            resize = (math.floor(height / pct), math.floor(width / pct))
        return T.Compose([T.Resize(resize, interpolation=interpolation),
                          T.CenterCrop((height, width))] + final)
    if train_crop_mode not in (None, "rrc"):
        raise ValueError(f"create_transform: train_crop_mode={train_crop_mode!r} is not offered")
    steps: list = [T.RandomResizedCrop((height, width), scale=tuple(scale or (0.08, 1.0)),
                                       ratio=tuple(ratio or (3 / 4, 4 / 3)),
                                       interpolation=interpolation)]
    if no_aug:
        return T.Compose(steps + final)
    if hflip > 0:
        steps.append(T.RandomHorizontalFlip(hflip))
    if vflip > 0:
        steps.append(T.RandomVerticalFlip(vflip))
    disable_color_jitter = False
    if auto_augment:
        disable_color_jitter = not (force_color_jitter or "3a" in auto_augment)
        hparams = {"translate_const": int(min(height, width) * 0.45),
                   "img_mean": tuple(min(255, round(255 * x)) for x in mean),
                   "interpolation": interpolation}
        if auto_augment.startswith("augmix"):
            hparams["translate_pct"] = 0.3
        steps.append(T.TimmAutoAugment(auto_augment, hparams))
    if color_jitter is not None and not disable_color_jitter:
        cj = (tuple(color_jitter) if isinstance(color_jitter, (list, tuple))
              else (float(color_jitter),) * 3)
        jitter = T.ColorJitter(*cj)
        steps.append(jitter if color_jitter_prob is None
                     else T.RandomApply([jitter], p=color_jitter_prob))
    if grayscale_prob:
        steps.append(T.RandomGrayscale(grayscale_prob))
    if gaussian_blur_prob:
        steps.append(T.RandomApply([T.GaussianBlur(kernel_size=23)], p=gaussian_blur_prob))
    if re_prob > 0:
        if not normalize:
            raise ValueError("create_transform: re_prob needs normalize=True (timm erases the "
                             "normalised tensor)")
        final.append(RandomErasing(re_prob, mode=re_mode, max_count=re_count,
                                   num_splits=re_num_splits))
    return T.Compose(steps + final)
