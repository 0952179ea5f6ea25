"""torchvision's classification transforms, run by stoker's C++ workers.

Compose them as with torchvision and give the list to the Loader::

    import stoker, stoker.transforms as T
    loader = stoker.Loader("/data/train", batch_size=256, transform=T.Compose([
        T.RandomResizedCrop(176), T.RandomHorizontalFlip(), T.TrivialAugmentWide(),
        T.ToDtype(torch.float32, scale=True), T.Normalize(mean, std), T.RandomErasing(0.1)]),
        batch_transform=T.RandomChoice([T.MixUp(0.2, num_classes=1000),
                                        T.CutMix(1.0, num_classes=1000)]))

A list is: a crop first (RandomResizedCrop, or Resize + CenterCrop),
then optionally RandomHorizontalFlip, then any of TrivialAugmentWide, RandAugment,
AutoAugment, ColorJitter, RandomVerticalFlip, RandomGrayscale, GaussianBlur, RandomApply of
those, and timm's policies (TimmAutoAugment, or stoker.timm's functions) in any order (on the
uint8 pixels), then ToDtype / Normalize (without them the batch is uint8 NHWC), then
RandomErasing (torchvision's, or timm's from stoker.timm). PILToTensor, ToImage and ToTensor
are accepted where torchvision needs them and do nothing here (the pixels are tensors already).
Each sample's randomness is keyed by (seed, epoch, index): the same batches on any number of
threads. Each op's arithmetic is torchvision.transforms.v2's on uint8 tensors (docs/transforms.md
has the measured agreement); the random draws are stoker's, with torchvision's distributions.

Batch transforms: MixUp, CutMix and a RandomChoice of one of each run in the C++ workers
(stoker/batch_mix.h; num_classes=None is the data set's class count), drawn per (seed, epoch,
batch, rank). Any other Python callable taking and returning ``(images, labels)`` runs on the
consumer thread with torch, after the batch is delivered, under torch's generator seeded per
(seed, epoch, batch, rank), so it is reproducible too; it is the slow path: it runs once per
batch in the training process, not in the workers.
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from . import _stoker

__all__ = ["AutoAugment", "CenterCrop", "ColorJitter", "Compose", "CutMix", "GaussianBlur",
           "MixUp", "Mixup", "Normalize", "PILToTensor", "RandAugment", "RandomApply",
           "RandomChoice", "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip",
           "RandomResizedCrop", "RandomVerticalFlip", "Resize", "TimmAutoAugment", "ToDtype",
           "ToImage", "ToTensor", "TrivialAugmentWide"]

Size = Union[int, Sequence[int]]

# The defaults torchvision's signatures share with the C++ structs, read from those
# (stoker/transform.h, stoker/augment_ops.h) so that each lives once.
_TRANSFORM = _stoker.TransformConfig()
_AUGMENT = _stoker.AugmentOp()
_ERASING = _stoker.ErasingConfig()


def _hw(name: str, size: Size) -> Tuple[int, int]:
    """(height, width) from an int or a (h, w) pair, as torchvision reads `size`."""
    if isinstance(size, int) and not isinstance(size, bool):
        return size, size
    try:
        values = [int(v) for v in size]
    except TypeError:
        raise ValueError(f"{name}: size must be an int or (height, width) (got {size!r})") from None
    if len(values) == 1:
        return values[0], values[0]
    if len(values) != 2:
        raise ValueError(f"{name}: size must be an int or (height, width) (got {size!r})")
    return values[0], values[1]


def _check_nearest_no_fill(name: str, interpolation: Any, fill: Any) -> None:
    if interpolation is not None and "NEAREST" not in str(interpolation).upper():
        raise ValueError(f"{name}: stoker runs the geometric ops with nearest interpolation "
                         f"(torchvision's default), not {interpolation!r}")
    if fill is not None:
        raise ValueError(f"{name}: stoker fills with 0 (torchvision's default fill=None), "
                         f"not {fill!r}")


def _factor_range(name: str, value: Any, center: float, low: float,
                  high: float = math.inf) -> Optional[Tuple[float, float]]:
    """ColorJitter's argument: a number v gives [center - v, center + v] (clamped at `low`), a
    pair is the range itself; 0 (or (c, c) around the centre) turns the adjustment off."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"ColorJitter: {name} must be non-negative (got {value})")
        if value == 0:
            return None
        lo, hi = max(low, center - value), center + value
    else:
        lo, hi = (float(v) for v in value)
    if not (low <= lo <= hi <= high):
        raise ValueError(f"ColorJitter: {name} range ({lo}, {hi}) must lie in [{low}, {high}]")
    if lo == hi == center:
        return None
    return float(lo), float(hi)


_INTERPOLATIONS = ("bilinear", "bicubic", "nearest")
_PIL_INTERPOLATIONS = {0: "nearest", 2: "bilinear", 3: "bicubic"}  # PIL.Image's constants


def _interpolation(name: str, interpolation: Any, antialias: Optional[bool]) -> str:
    """torchvision's interpolation argument (an InterpolationMode, PIL's constant, or its name)
    as stoker's: 'bilinear' (None), 'bicubic' or 'nearest'; antialiasing as torchvision's
    default (antialias=False would change the bytes of a downscale)."""
    if interpolation is None:
        mode = "bilinear"
    elif isinstance(interpolation, int) and not isinstance(interpolation, bool):
        mode = _PIL_INTERPOLATIONS.get(interpolation, str(interpolation))
    else:
        mode = str(getattr(interpolation, "value", interpolation)).lower()
    if mode not in _INTERPOLATIONS:
        raise ValueError(f"{name}: interpolation must be BILINEAR, BICUBIC or NEAREST (got "
                         f"{interpolation!r})")
    if antialias is False and mode != "nearest":
        raise ValueError(f"{name}: stoker resizes with antialiasing (torchvision's default, "
                         "and what PIL images always get); antialias=False is not offered")
    return mode


class _Op:
    """A step of a transform list (read by Compose)."""

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


class RandomResizedCrop(_Op):
    def __init__(self, size: Size, scale: Sequence[float] = tuple(_TRANSFORM.scale),
                 ratio: Sequence[float] = tuple(_TRANSFORM.ratio), interpolation: Any = None,
                 antialias: Optional[bool] = True) -> None:
        self.interpolation = _interpolation("RandomResizedCrop", interpolation, antialias)
        self.size = _hw("RandomResizedCrop", size)
        self.scale = tuple(float(v) for v in scale)
        self.ratio = tuple(float(v) for v in ratio)


class Resize(_Op):
    """Resize(s): the shorter side to s; Resize((h, w)): exactly h x w (the eval recipe's first
    step, before CenterCrop)."""

    def __init__(self, size: Size, interpolation: Any = None, antialias: Optional[bool] = True):
        self.interpolation = _interpolation("Resize", interpolation, antialias)
        if not isinstance(size, int) and len(size) == 1:
            size = size[0]
        if isinstance(size, int) and not isinstance(size, bool):
            if size < 1:
                raise ValueError(f"Resize: size must be >= 1 (got {size})")
            self.size = size
        else:
            self.size = _hw("Resize", size)


class CenterCrop(_Op):
    def __init__(self, size: Size) -> None:
        self.size = _hw("CenterCrop", size)


class RandomHorizontalFlip(_Op):
    def __init__(self, p: float = _TRANSFORM.flip_p) -> None:
        self.p = float(p)


class TrivialAugmentWide(_Op):
    def __init__(self, num_magnitude_bins: int = _AUGMENT.num_magnitude_bins,
                 interpolation: Any = None, fill: Any = None) -> None:
        _check_nearest_no_fill("TrivialAugmentWide", interpolation, fill)
        self.num_magnitude_bins = int(num_magnitude_bins)

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind = _stoker.AugmentKind.trivial_augment_wide
        op.num_magnitude_bins = self.num_magnitude_bins
        return op


class RandAugment(_Op):
    def __init__(self, num_ops: int = _AUGMENT.num_ops, magnitude: int = _AUGMENT.magnitude,
                 num_magnitude_bins: int = _AUGMENT.num_magnitude_bins,
                 interpolation: Any = None, fill: Any = None) -> None:
        _check_nearest_no_fill("RandAugment", interpolation, fill)
        self.num_ops, self.magnitude = int(num_ops), int(magnitude)
        self.num_magnitude_bins = int(num_magnitude_bins)

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind = _stoker.AugmentKind.rand_augment
        op.num_ops, op.magnitude = self.num_ops, self.magnitude
        op.num_magnitude_bins = self.num_magnitude_bins
        return op


class AutoAugment(_Op):
    def __init__(self, policy: Any = "imagenet", interpolation: Any = None,
                 fill: Any = None) -> None:
        _check_nearest_no_fill("AutoAugment", interpolation, fill)
        name = str(getattr(policy, "value", policy)).lower()
        if name != "imagenet":
            raise ValueError(f"AutoAugment: stoker has the ImageNet policy (got {policy!r})")
        self.policy = "imagenet"

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind = _stoker.AugmentKind.auto_augment
        return op


class ColorJitter(_Op):
    def __init__(self, brightness: Any = 0, contrast: Any = 0, saturation: Any = 0,
                 hue: Any = 0) -> None:
        self.brightness = _factor_range("brightness", brightness, 1.0, 0.0)
        self.contrast = _factor_range("contrast", contrast, 1.0, 0.0)
        self.saturation = _factor_range("saturation", saturation, 1.0, 0.0)
        self.hue = _factor_range("hue", hue, 0.0, -0.5, 0.5)

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind = _stoker.AugmentKind.color_jitter
        op.brightness, op.contrast = self.brightness, self.contrast
        op.saturation, op.hue = self.saturation, self.hue
        return op


class RandomVerticalFlip(_Op):
    def __init__(self, p: float = 0.5) -> None:
        self.p = float(p)

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind, op.p = _stoker.AugmentKind.vertical_flip, self.p
        return op


class RandomGrayscale(_Op):
    """torchvision's RandomGrayscale: rgb_to_grayscale with 3 output channels, with
    probability p."""

    def __init__(self, p: float = 0.1) -> None:
        self.p = float(p)

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind, op.p = _stoker.AugmentKind.grayscale, self.p
        return op


class GaussianBlur(_Op):
    """torchvision's GaussianBlur(kernel_size, sigma=(0.1, 2.0)): one sigma drawn per image
    from the range (a number is a fixed sigma)."""

    def __init__(self, kernel_size: Size, sigma: Any = (0.1, 2.0)) -> None:
        kx, ky = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        self.kernel_size = (int(kx), int(ky))
        if any(k < 1 or k % 2 == 0 for k in self.kernel_size):
            raise ValueError(f"GaussianBlur: kernel_size must be odd and positive "
                             f"(got {kernel_size!r})")
        lo, hi = (sigma, sigma) if isinstance(sigma, (int, float)) else sigma
        if not 0 < float(lo) <= float(hi):
            raise ValueError(f"GaussianBlur: sigma must satisfy 0 < min <= max (got {sigma!r})")
        self.sigma = (float(lo), float(hi))

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind = _stoker.AugmentKind.gaussian_blur
        op.kernel_size, op.sigma = self.kernel_size, self.sigma
        return op


class RandomApply(_Op):
    """torchvision's RandomApply(transforms, p): all of the augmentations, in order, with
    probability p (one draw per image), or none."""

    def __init__(self, transforms: Sequence[Any], p: float = 0.5) -> None:
        self.transforms = list(transforms)
        for t in self.transforms:
            if not isinstance(t, _AUGMENTS):
                raise ValueError(f"RandomApply: stoker applies pixel augmentations here "
                                 f"({', '.join(a.__name__ for a in _AUGMENTS)}), not {t!r}")
        self.p = float(p)

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind, op.p = _stoker.AugmentKind.random_apply, self.p
        op.children = [t._core(_stoker) for t in self.transforms]
        return op


class TimmAutoAugment(_Op):
    """timm's auto_augment string ('rand-m9-mstd0.5-inc1', 'augmix-m5-w4-d2', 'original',
    'originalr', 'v0', 'v0r', with '-mstd<x>') run by stoker's workers with timm's ops on PIL's
    arithmetic (stoker/timm_augment.h). `hparams` is timm's dict (translate_const, img_mean,
    interpolation, translate_pct, magnitude_std, magnitude_max); stoker.timm's functions and
    create_transform fill it as timm's create_transform does."""

    def __init__(self, config_str: str, hparams: Optional[dict] = None) -> None:
        self.config_str = str(config_str)
        self.hparams = dict(hparams or {})
        self._parsed = _stoker.parse_timm_augment(self.config_str, self._hparams_core())

    def _hparams_core(self):
        h = _stoker.TimmHparams()
        known = {"translate_const", "img_mean", "interpolation", "translate_pct",
                 "magnitude_std", "magnitude_max"}
        unknown = set(self.hparams) - known
        if unknown:
            raise ValueError(f"TimmAutoAugment: unknown hparams {sorted(unknown)} (stoker reads "
                             f"{sorted(known)})")
        if "translate_const" in self.hparams:
            h.translate_const = float(self.hparams["translate_const"])
        if "translate_pct" in self.hparams:
            h.translate_pct = float(self.hparams["translate_pct"])
        if "img_mean" in self.hparams:
            fill = [int(v) for v in self.hparams["img_mean"]]
            h.fill = (fill * 3)[:3] if len(fill) == 1 else fill
        if "interpolation" in self.hparams:
            value = self.hparams["interpolation"]
            # timm's default, a list of modes or 'random': drawn per op call.
            mode = "random"
            if not (isinstance(value, (list, tuple)) or str(value).lower() == "random"):
                try:
                    mode = _interpolation("TimmAutoAugment", value, None)
                except ValueError:
                    mode = None
            if mode not in ("bilinear", "bicubic", "random"):
                raise ValueError(f"TimmAutoAugment: interpolation must be bilinear, bicubic or "
                                 f"random (got {value!r})")
            h.resample = getattr(_stoker.TimmResample, mode)
        if "magnitude_std" in self.hparams:
            h.magnitude_std = float(self.hparams["magnitude_std"])
        if "magnitude_max" in self.hparams:
            h.magnitude_max = float(self.hparams["magnitude_max"])
        return h

    def _core(self, _stoker):
        op = _stoker.AugmentOp()
        op.kind, op.timm = _stoker.AugmentKind.timm, self._parsed
        return op

    def __repr__(self) -> str:
        return f"TimmAutoAugment({self.config_str!r}, hparams={self.hparams!r})"


class ToDtype(_Op):
    """ToDtype(torch.float32 / float16 / bfloat16 / uint8, scale=True): the batch's dtype.
    Float outputs are scaled to [0, 1] (then normalised when Normalize follows)."""

    _NAMES = {"torch.float32": "float32", "torch.float": "float32", "torch.float16": "float16",
              "torch.half": "float16", "torch.bfloat16": "bfloat16", "torch.uint8": "uint8",
              "float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
              "uint8": "uint8"}

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        name = self._NAMES.get(str(dtype))
        if name is None:
            raise ValueError(f"ToDtype: stoker outputs float32, float16, bfloat16 or uint8 "
                             f"(got {dtype!r})")
        if name != "uint8" and not scale:
            raise ValueError("ToDtype: float output from uint8 pixels needs scale=True (stoker "
                             "always scales to [0, 1])")
        self.dtype = name


class Normalize(_Op):
    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False):
        self.mean = tuple(float(v) for v in mean)
        self.std = tuple(float(v) for v in std)


class RandomErasing(_Op):
    """torchvision's RandomErasing (stoker.timm.RandomErasing is timm's)."""

    # p: torchvision's default (the C++ struct's 0 means off).
    def __init__(self, p: float = 0.5, scale: Sequence[float] = tuple(_ERASING.scale),
                 ratio: Sequence[float] = tuple(_ERASING.ratio), value: Any = 0,
                 inplace: bool = False) -> None:
        if isinstance(value, str):
            raise ValueError("RandomErasing: stoker erases with a constant value, not "
                             f"{value!r}")
        values = [float(value)] if isinstance(value, (int, float)) else [float(v) for v in value]
        if len(values) not in (1, 3):
            raise ValueError(f"RandomErasing: value must be one number or one per channel "
                             f"(got {value!r})")
        self.p = float(p)
        self.scale = tuple(float(v) for v in scale)
        self.ratio = tuple(float(v) for v in ratio)
        self.value = tuple(values * 3 if len(values) == 1 else values)

    def _core(self, _stoker):
        e = _stoker.ErasingConfig()
        e.p, e.scale, e.ratio, e.value = self.p, self.scale, self.ratio, list(self.value)
        return e


class _NoOp(_Op):
    """torchvision's conversions to tensors: stoker's pixels are tensors already."""


class PILToTensor(_NoOp):
    pass


class ToImage(_NoOp):
    pass


class ToTensor(_NoOp):
    """v1 ToTensor: uint8 -> float in [0, 1], like ToDtype(torch.float32, scale=True)."""


_AUGMENTS = (TrivialAugmentWide, RandAugment, AutoAugment, ColorJitter, RandomVerticalFlip,
             RandomGrayscale, GaussianBlur, RandomApply, TimmAutoAugment)


class Compose:
    """A list of per-sample transforms, turned into the C++ transform (stoker.TransformConfig).
    Raises ValueError naming the step a list cannot have where it is."""

    def __init__(self, transforms: Sequence[Any]) -> None:
        self.transforms = list(transforms)
        self._config = self._build()

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}," for t in self.transforms)
        return f"Compose([{inner}\n])"

    def _build(self):
        from . import TransformConfig  # the package imports this module first
        steps = list(self.transforms)
        fields: dict = {}
        pos = 0

        def at(kind) -> bool:
            return pos < len(steps) and isinstance(steps[pos], kind)

        while at(_NoOp):
            pos += 1
        if at(RandomResizedCrop):
            rrc = steps[pos]
            fields.update(kind="train", size=rrc.size, scale=rrc.scale, ratio=rrc.ratio,
                          interpolation=rrc.interpolation)
            pos += 1
        elif at(Resize):
            size = steps[pos].size
            fields.update(kind="eval", interpolation=steps[pos].interpolation)
            if isinstance(size, int):
                fields["resize"] = size
            else:
                fields["resize_hw"] = size
            pos += 1
            if not at(CenterCrop):
                raise ValueError("Compose: Resize must be followed by CenterCrop (a batch needs "
                                 "one output size)")
            fields["size"] = steps[pos].size
            pos += 1
        else:
            first = repr(steps[pos]) if pos < len(steps) else "nothing"
            raise ValueError("Compose: the list must start with RandomResizedCrop or with "
                             f"Resize + CenterCrop (got {first} first)")
        fields["flip_p"] = 0.0
        if at(RandomHorizontalFlip):
            fields["flip_p"] = steps[pos].p
            pos += 1
        ops = []
        while at(_AUGMENTS) or at(_NoOp):
            if at(_AUGMENTS):
                ops.append(steps[pos])
            pos += 1
        fields["ops"] = tuple(ops)
        output, normalized = "uint8", False
        while at(ToDtype) or at(Normalize) or at(_NoOp):
            step = steps[pos]
            if isinstance(step, ToDtype):
                output = step.dtype
            elif isinstance(step, ToTensor):
                output = "float32"
            elif isinstance(step, Normalize):
                if output == "uint8":
                    output = "float32"  # torchvision would need ToDtype first; same values
                fields.update(mean=step.mean, std=step.std)
                normalized = True
            pos += 1
        if output != "uint8" and not normalized:
            fields.update(mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0))
        fields["output"] = output
        if at(RandomErasing):
            fields["erasing"] = steps[pos]
            pos += 1
        if pos < len(steps):
            raise ValueError(f"Compose: {steps[pos]!r} cannot come here: the order is crop, "
                             "flip, augmentations, ToDtype/Normalize, RandomErasing")
        return TransformConfig(**fields)

    def config(self):
        """The stoker.TransformConfig this list runs as."""
        return self._config


# -- batch transforms: MixUp and CutMix run in the C++ workers --------------------------------

class _BatchMix:
    """What MixUp and CutMix share: alpha and num_classes (None: the data set's class count).
    The mix itself is the C++ one (stoker/batch_mix.h), run by the loader's workers."""

    def __init__(self, alpha: float = 1.0, num_classes: Optional[int] = None) -> None:
        if not alpha > 0:
            raise ValueError(f"{type(self).__name__}: alpha must be > 0 (got {alpha})")
        self.alpha, self.num_classes = float(alpha), num_classes

    def __call__(self, images, labels):
        raise TypeError(f"stoker.transforms.{type(self).__name__} runs in stoker's workers: give "
                        "it to stoker.Loader(batch_transform=...); on other tensors use "
                        f"torchvision.transforms.v2.{type(self).__name__}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alpha={self.alpha}, num_classes={self.num_classes})"


class MixUp(_BatchMix):
    """torchvision's MixUp, in the workers: lam ~ Beta(alpha, alpha); each image of a pair of
    slots becomes lam * itself + (1 - lam) * its partner; labels become soft [B, num_classes]
    (docs/transforms.md). Pairing with a padding or skipped slot is harmless: the valid mask
    removes that slot's loss."""


class CutMix(_BatchMix):
    """torchvision's CutMix, in the workers: a box of the partner is pasted in, labels mixed
    by the box's area share (docs/transforms.md)."""


class Mixup:
    """timm's Mixup (timm.data.Mixup), in the workers: MixUp and/or CutMix on a share `prob`
    of the batches, CutMix chosen with `switch_prob` when both are on, and timm's label
    smoothing (every label row one_hot(off = s / K, on = 1 - s + off) before the mix). `mode`
    is timm's: one lam for the batch ('batch'), one per pair of samples ('pair'), or one per
    sample ('elem': each sample takes its partner by its own lam, kind and box; prob gates
    each sample). stoker pairs slots (2k, 2k + 1) where timm pairs i with B - 1 - i. CutMix's
    label weight is the box's exact share (timm's correct_lam=True). The random draws are
    stoker's, from timm's distributions."""

    def __init__(self, mixup_alpha: float = 1.0, cutmix_alpha: float = 0.0,
                 cutmix_minmax: Any = None, prob: float = 1.0, switch_prob: float = 0.5,
                 mode: str = "batch", correct_lam: bool = True, label_smoothing: float = 0.1,
                 num_classes: Optional[int] = 1000) -> None:
        if cutmix_minmax is not None:
            raise ValueError("Mixup: cutmix_minmax is not offered (CutMix's box from lam only)")
        if mode not in ("batch", "pair", "elem"):
            raise ValueError(f"Mixup: mode must be 'batch', 'pair' or 'elem' (got {mode!r})")
        if not correct_lam:
            raise ValueError("Mixup: correct_lam=False is not offered (CutMix's label weight is "
                             "the box's exact share)")
        self.mixup_alpha, self.cutmix_alpha = float(mixup_alpha), float(cutmix_alpha)
        self.prob, self.switch_prob = float(prob), float(switch_prob)
        self.label_smoothing = float(label_smoothing)
        self.mode = mode
        self.num_classes = num_classes
        if self.mixup_alpha < 0 or self.cutmix_alpha < 0:
            raise ValueError("Mixup: alphas must be >= 0")

    def __call__(self, images, labels):
        raise TypeError("stoker.transforms.Mixup runs in stoker's workers: give it to "
                        "stoker.Loader(batch_transform=...)")

    def __repr__(self) -> str:
        return (f"Mixup(mixup_alpha={self.mixup_alpha}, cutmix_alpha={self.cutmix_alpha}, "
                f"prob={self.prob}, switch_prob={self.switch_prob}, mode={self.mode!r}, "
                f"label_smoothing={self.label_smoothing}, num_classes={self.num_classes})")


class RandomChoice:
    """One of the batch transforms per batch (torchvision's RandomChoice draw)."""

    def __init__(self, transforms: Sequence[Callable], p: Optional[List[float]] = None):
        self.transforms = list(transforms)
        if not self.transforms:
            raise ValueError("RandomChoice: give at least one transform")
        if p is None:
            p = [1.0] * len(self.transforms)
        if len(p) != len(self.transforms):
            raise ValueError("RandomChoice: one probability per transform")
        total = sum(p)
        self.p = [v / total for v in p]

    def __call__(self, images, labels):
        import torch

        idx = int(torch.multinomial(torch.tensor(self.p), 1))
        return self.transforms[idx](images, labels)

    def __repr__(self) -> str:
        return f"RandomChoice({self.transforms!r}, p={self.p})"


def _mix_choices(batch_transform) -> Optional[List[Tuple[_BatchMix, float]]]:
    """stoker's own batch transform as (MixUp or CutMix, probability) pairs: MixUp, CutMix, or
    a RandomChoice of one of each; None for anything else (a Python callable, run on the
    consumer thread). Raises ValueError for a MixUp or CutMix the workers cannot run."""
    if isinstance(batch_transform, (_BatchMix, Mixup)):
        return [(batch_transform, 1.0)]
    if not isinstance(batch_transform, RandomChoice):
        return None
    choices = batch_transform.transforms
    mixes = [t for t in choices if isinstance(t, _BatchMix)]
    if not mixes:
        return None
    kinds = [type(t) for t in choices]
    if len(mixes) != len(choices) or len(set(kinds)) != len(kinds):
        raise ValueError(f"RandomChoice: stoker runs MixUp and CutMix in its workers, as one "
                         f"MixUp, one CutMix or a choice of one of each (got {choices!r})")
    return list(zip(choices, batch_transform.p))


def _batch_mix_config(choices: List[Tuple[_BatchMix, float]], _stoker, dataset):
    """The C++ MixUp/CutMix config (stoker.BatchMixConfig) of _mix_choices' pairs over
    `dataset`: num_classes=None is the data set's class count."""
    classes = len(dataset.classes)
    widths = {classes if t.num_classes is None else t.num_classes for t, _ in choices}
    if None in {t.num_classes for t, _ in choices} and classes == 0:
        raise ValueError(f"MixUp/CutMix need labels: {dataset.describe()} has none (num_classes="
                         "None takes the data set's class count)")
    if len(widths) != 1:
        raise ValueError(f"MixUp/CutMix: one soft-label width for the batch, got num_classes "
                         f"{sorted(widths)} (None: the data set's {classes})")
    c = _stoker.BatchMixConfig()
    c.num_classes = widths.pop()
    if isinstance(choices[0][0], Mixup):  # timm's: both alphas, prob, switch, smoothing
        t = choices[0][0]
        c.mixup_alpha, c.cutmix_alpha = t.mixup_alpha, t.cutmix_alpha
        c.mixup_p = 1.0 - t.switch_prob if t.mixup_alpha > 0 and t.cutmix_alpha > 0 else 1.0
        c.prob, c.label_smoothing = t.prob, t.label_smoothing
        c.mode = getattr(_stoker.BatchMixMode, t.mode)
        c.validate()
        return c
    for t, share in choices:
        if isinstance(t, MixUp):
            c.mixup_alpha, c.mixup_p = t.alpha, share
        else:
            c.cutmix_alpha = t.alpha
    if c.cutmix_alpha == 0:
        c.mixup_p = 1.0
    c.validate()
    return c
