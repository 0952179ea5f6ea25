"""stoker.transforms against torchvision.transforms.v2, op by op, for the same parameters.

Per-op: stoker's C++ op (``_stoker.apply_pixel_op``) and torchvision's
``_apply_image_or_video_transform`` (what TrivialAugmentWide / RandAugment / AutoAugment call
for a drawn (op, magnitude); ``adjust_hue`` for ColorJitter's hue) on the same uint8 pixels of
real photographs, at square, non-square and odd sizes, RGB and gray. The documented tolerance
(docs/transforms.md): at most 0.1 % of the values may differ, by at most 1, except that the
nearest-neighbour ops (shear, translate, rotate) may take the other source pixel where the
exact sampling position is a rounding tie (torch's float32 grid comes from a matrix product
whose rounding depends on the CPU's kernels); on an AVX-512 machine they are byte-identical.
Policies: each op stoker drew (its trace), applied to stoker's image before it, is
torchvision's op within that tolerance, the ops in sequence are stoker's result exactly, and
every magnitude drawn is one of torchvision's magnitude tables.
MixUp / CutMix (run by the workers): for the loader's drawn lam and box, torchvision's
arithmetic on each pair of slots.
The training recipe runs end to end in test_example_recipe.py.
"""

from __future__ import annotations

import glob
import math

import numpy as np
import pytest
import torch

import stoker
import stoker.transforms as T
from stoker import _stoker

torchvision = pytest.importorskip(
    "torchvision", reason="torchvision is in the reference venv: ./run.sh test runs this file there")
from PIL import Image  # noqa: E402
from torchvision.transforms import v2  # noqa: E402
from torchvision.transforms.v2 import InterpolationMode  # noqa: E402
from torchvision.transforms.v2 import functional as F  # noqa: E402

MAX_DIFFERING = 0.001  # share of values allowed to differ (by at most 1)
RANGES = dict(ShearX=(-0.99, 0.99), ShearY=(-0.99, 0.99), TranslateX=(-40, 40),
              TranslateY=(-40, 40), Rotate=(-135, 135), Brightness=(-0.99, 0.99),
              Color=(-0.99, 0.99), Contrast=(-0.99, 0.99), Sharpness=(-0.99, 0.99),
              Posterize=(0, 8), Solarize=(0, 1), AutoContrast=None, Equalize=None, Invert=None,
              Hue=(-0.5, 0.5), Identity=None)
# Magnitudes torchvision's own tables hold at exact cases (rot90, no-op translate, ...).
EXACT = dict(Rotate=[90, -90, 180, 270, 0, 45], TranslateX=[0, 0.7, -0.7], Posterize=[8, 0],
             Solarize=[0, 1], Brightness=[0, -0.99], Sharpness=[0], Contrast=[0])


@pytest.fixture(scope="module")
def pixels():
    files = sorted(glob.glob("/usr/share/backgrounds/mate/*/*.jpg"))[:6]
    if len(files) < 6:
        pytest.skip("needs Debian's mate-backgrounds (apt-get install mate-backgrounds)")
    out = []
    for i, f in enumerate(files):
        for (w, h) in ((224, 224), (160, 224), (97, 61)):
            rgb = np.asarray(Image.open(f).convert("RGB").resize((w, h), Image.BILINEAR))
            out.append(np.ascontiguousarray(rgb))
        if i % 3 == 0:
            gray = np.asarray(Image.open(f).convert("L").resize((120, 90)))[:, :, None]
            out.append(np.ascontiguousarray(gray))
    return out


_TA = v2.TrivialAugmentWide()


def torchvision_op(img: np.ndarray, op: str, magnitude: float) -> np.ndarray:
    t = torch.from_numpy(img.copy()).permute(2, 0, 1).contiguous()
    if op == "Hue":
        out = F.adjust_hue(t, magnitude)
    else:
        out = _TA._apply_image_or_video_transform(t, op, magnitude,
                                                  interpolation=InterpolationMode.NEAREST,
                                                  fill={type(t): None})
    return out.permute(1, 2, 0).numpy()


GEOMETRIC = ("ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate")
TIE = 1e-3  # pixels: how close to a half-integer a float32 grid may round either way


def rounding_ties(op: str, magnitude: float, h: int, w: int) -> np.ndarray:
    """[h, w] mask of the output pixels whose exact (float64) source position, by torchvision's
    own inverse matrix for the op, lies within TIE of a nearest-neighbour rounding boundary."""
    from torchvision.transforms.functional import _get_inverse_affine_matrix

    if op == "Rotate":  # rotate_image: centre (0, 0), the angle negated
        m = _get_inverse_affine_matrix([0.0, 0.0], -magnitude, [0.0, 0.0], 1.0, [0.0, 0.0])
    elif op.startswith("Shear"):  # affine_image with center=[0, 0] in pixels
        deg = math.degrees(math.atan(magnitude))
        m = _get_inverse_affine_matrix([-w * 0.5, -h * 0.5], 0.0, [0.0, 0.0], 1.0,
                                       [deg, 0.0] if op == "ShearX" else [0.0, deg])
    else:
        t = [float(int(magnitude)), 0.0] if op == "TranslateX" else [0.0, float(int(magnitude))]
        m = _get_inverse_affine_matrix([0.0, 0.0], 0.0, t, 1.0, [0.0, 0.0])
    # affine_grid + grid_sample(align_corners=False): source = m @ (x - (w-1)/2, y - (h-1)/2, 1)
    # + ((w-1)/2, (h-1)/2), rounded to the nearest pixel.
    by, bx = np.mgrid[0:h, 0:w].astype(np.float64)
    bx -= (w - 1) / 2
    by -= (h - 1) / 2
    sx = m[0] * bx + m[1] * by + m[2] + (w - 1) / 2
    sy = m[3] * bx + m[4] * by + m[5] + (h - 1) / 2

    def near_half(v):
        return np.abs(v - np.floor(v) - 0.5) < TIE

    return near_half(sx) | near_half(sy)


def assert_close(ours: np.ndarray, theirs: np.ndarray, what: str, op: str | None = None,
                 magnitude: float = 0.0) -> float:
    assert ours.shape == theirs.shape, what
    d = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
    share = float((d > 0).mean())
    if op in GEOMETRIC:
        off = (d > 0).any(axis=2)
        outside = off & ~rounding_ties(op, magnitude, *ours.shape[:2])
        assert not outside.any() and share <= MAX_DIFFERING, \
            f"{what}: {int(outside.sum())} pixels differ away from a rounding tie, " \
            f"{share:.4%} of values differ"
        return share
    assert d.max() <= 1 and share <= MAX_DIFFERING, \
        f"{what}: {share:.4%} of values differ, by up to {d.max()}"
    return share


def test_every_op_matches_torchvision_for_the_same_magnitude(pixels, record_property):
    rng = np.random.default_rng(7)
    worst = {}
    for op, span in RANGES.items():
        for k, img in enumerate(pixels):
            magnitudes = [0.0] if span is None else [float(rng.uniform(*span)) for _ in range(3)]
            if op == "Posterize":
                magnitudes = [float(int(m)) for m in magnitudes]
            if k == 0:
                magnitudes += EXACT.get(op, [])
            for m in magnitudes:
                share = assert_close(_stoker.apply_pixel_op(img, op, m),
                                     torchvision_op(img, op, m),
                                     f"{op}({m}) on {img.shape}", op, m)
                worst[op] = max(worst.get(op, 0.0), share)
    print("share of values differing from torchvision, per op:", worst)
    record_property("differing", worst)


def assert_replays(img: np.ndarray, trace, out: np.ndarray, what: str) -> None:
    """Each drawn op on stoker's image before it is torchvision's op (a tie taken the other way
    by one op would otherwise change every op after it), and the ops in sequence are out."""
    for op, m in trace:
        step = _stoker.apply_pixel_op(img, op, m)
        assert_close(step, torchvision_op(img, op, m), f"{what}: {op}({m})", op, m)
        img = step
    assert np.array_equal(img, out), what


def magnitude_table(space, op: str, bins: int, h: int, w: int):
    fn, signed = space[op]
    values = fn(bins, h, w)
    return None if values is None else {float(v) for v in values}


@pytest.mark.parametrize("policy", ["ta", "ra", "aa", "jitter"])
def test_policies_apply_what_they_drew_from_torchvision_tables(pixels, policy):
    ops = {"ta": T.TrivialAugmentWide(), "ra": T.RandAugment(num_ops=2, magnitude=9),
           "aa": T.AutoAugment(), "jitter": T.ColorJitter(0.4, 0.4, 0.4, 0.1)}[policy]
    space = {"ta": v2.TrivialAugmentWide._AUGMENTATION_SPACE,
             "ra": v2.RandAugment._AUGMENTATION_SPACE,
             "aa": v2.AutoAugment._AUGMENTATION_SPACE}.get(policy)
    seen = set()
    for key in range(80):
        img = pixels[key % len(pixels)]
        h, w = img.shape[:2]
        out, trace = _stoker.apply_augment_ops(img, [ops._core(_stoker)], key)
        assert_replays(img, trace, out, f"{policy} key {key} {trace}")
        for op, m in trace:
            seen.add(op)
            if space is None:  # ColorJitter: factors from its ranges, each at most once
                lo, hi = {"Brightness": (0.6, 1.4), "Contrast": (0.6, 1.4),
                          "Color": (0.6, 1.4), "Hue": (-0.1, 0.1)}[op]
                value = m if op == "Hue" else 1.0 + m
                assert lo - 1e-9 <= value <= hi + 1e-9, (op, m)
                continue
            bins = 10 if policy == "aa" else 31
            table = magnitude_table(space, op, bins, h, w)
            if table is None:
                assert m == 0.0, (op, m)
            elif policy == "ra":
                fn, _ = space[op]
                assert abs(m) == float(fn(31, h, w)[9]), (op, m)
            else:
                assert abs(m) in table, (op, m, sorted(table)[:4])
        if policy == "jitter":
            assert len({op for op, _ in trace}) == len(trace) == 4
    expected = {"ta": 14, "ra": 12, "aa": 9, "jitter": 4}[policy]
    assert len(seen) >= expected, seen


def test_loader_runs_the_recipe_and_is_reproducible(tmp_path):
    from conftest import synth

    data = synth(tmp_path / "data", images=24, classes=4, width=96, height=72)
    recipe = [T.RandomResizedCrop((48, 40)), T.RandomHorizontalFlip(), T.TrivialAugmentWide(),
              T.PILToTensor(), T.ToDtype(torch.float32, scale=True),
              T.Normalize(stoker.IMAGENET_MEAN, stoker.IMAGENET_STD), T.RandomErasing(0.5)]
    mix = T.RandomChoice([T.MixUp(0.2, num_classes=4), T.CutMix(1.0, num_classes=4)])

    def epoch(threads):
        with stoker.Loader(data, 8, transform=recipe, batch_transform=mix, threads=threads,
                           seed=3) as loader:
            return [(b.images.clone(), b.labels.clone()) for b in loader]

    one, two = epoch(1), epoch(2)
    assert len(one) == 3
    for (ai, al), (bi, bl) in zip(one, two):
        assert ai.shape == (8, 3, 48, 40) and al.shape == (8, 4)
        assert torch.equal(ai, bi) and torch.equal(al, bl)
    # The erased rectangles hold exactly 0 in every channel (value=0 after Normalize).
    zeros = sum(int((ai == 0).all(1).sum()) for ai, _ in one)
    assert zeros > 0


def test_compose_rejects_what_it_cannot_run_and_says_why():
    with pytest.raises(ValueError, match="must start with"):
        T.Compose([T.RandomHorizontalFlip(), T.RandomResizedCrop(32)])
    with pytest.raises(ValueError, match="followed by CenterCrop"):
        T.Compose([T.Resize(40)])
    with pytest.raises(ValueError, match="cannot come here"):
        T.Compose([T.RandomResizedCrop(32), T.Normalize((0, 0, 0), (1, 1, 1)),
                   T.TrivialAugmentWide()])
    with pytest.raises(ValueError, match="nearest"):
        T.TrivialAugmentWide(interpolation=InterpolationMode.BILINEAR)
    with pytest.raises(ValueError, match="ImageNet policy"):
        T.AutoAugment(v2.AutoAugmentPolicy.CIFAR10)
    with pytest.raises(ValueError, match="Resize"):
        stoker.Loader("/nonexistent", 4, transform=[T.Resize(30), T.CenterCrop(32)])
    with pytest.raises(ValueError, match="give size in the transform list"):
        stoker.Loader("/nonexistent", 4, transform=[T.RandomResizedCrop(32)], size=64)
    with pytest.raises(TypeError, match="runs in stoker's workers"):
        T.MixUp(num_classes=3)(torch.zeros(2, 3, 8, 8), torch.zeros(2))
    # ColorJitter reads its arguments as torchvision does.
    j = T.ColorJitter(brightness=0.4, contrast=(0.5, 1.5), saturation=0, hue=0.1)
    assert j.brightness == (0.6, 1.4) and j.contrast == (0.5, 1.5)
    assert j.saturation is None and j.hue == (-0.1, 0.1)
    assert math.isclose(T.ColorJitter(brightness=1.5).brightness[0], 0.0)


@pytest.mark.parametrize("alpha,which", [(0.8, "mixup"), (1.0, "cutmix")])
def test_mix_in_the_workers_is_torchvisions_arithmetic_on_pairs(tmp_path, alpha, which):
    """The loader's MixUp/CutMix (C++ workers, pairs 2k / 2k + 1) against the unmixed batch
    mixed with torch by torchvision's formulas, for the loader's own drawn lam and box."""
    from conftest import synth

    data = synth(tmp_path / "data", images=21, classes=5, width=80, height=64)
    plain = [T.RandomResizedCrop((40, 48)), T.RandomHorizontalFlip(), T.TrivialAugmentWide(),
             T.ToDtype(torch.float32, scale=True), T.Normalize(stoker.IMAGENET_MEAN,
                                                              stoker.IMAGENET_STD)]
    mix = (T.MixUp if which == "mixup" else T.CutMix)(alpha, num_classes=5)
    kwargs = dict(transform=plain, threads=2, seed=11)
    with stoker.Loader(data, 7, **kwargs) as a, \
            stoker.Loader(data, 7, batch_transform=mix, **kwargs) as b:
        config = b._core.config.mix
        assert config.num_classes == 5  # run by the workers, not in Python
        for x, y in zip(a, b):
            d = _stoker.draw_batch_mix(config, 11, y.epoch, y.index, 0, 1, 40, 48)
            assert d["kind"] == which
            lam = d["lam"]
            partner = [i ^ 1 if i ^ 1 < 7 else i for i in range(7)]
            xp = x.images[partner]
            if which == "mixup":
                want = xp.mul(1.0 - lam).add_(x.images.mul(lam))
                want[6] = x.images[6]  # the odd slot has no partner
            else:
                x1, y1, x2, y2 = d["box"]
                want = x.images.clone()
                want[:6, :, y1:y2, x1:x2] = xp[:6, :, y1:y2, x1:x2]
            assert torch.equal(y.images, want)
            hot = torch.nn.functional.one_hot(x.labels, 5).float()
            label_lam = d["label_lam"]
            soft = hot[partner].mul(1.0 - label_lam).add_(hot.mul(label_lam))
            soft[6] = hot[6]
            assert torch.equal(y.labels, soft)
            assert torch.allclose(y.labels.sum(1), torch.ones(7))


@pytest.mark.parametrize("mode", ["pair", "elem"])
def test_timm_mixup_modes_mix_each_slot_by_its_own_draw(tmp_path, mode):
    """timm's Mixup(mode='pair' | 'elem') in the workers against the unmixed batch mixed with
    torch by timm's per-element formulas, for each slot's own drawn kind, lam and box."""
    from conftest import synth

    data = synth(tmp_path / "data", images=21, classes=5, width=80, height=64)
    plain = [T.RandomResizedCrop((40, 48)), T.ToDtype(torch.float32, scale=True),
             T.Normalize(stoker.IMAGENET_MEAN, stoker.IMAGENET_STD)]
    mix = T.Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, prob=0.9, mode=mode,
                  label_smoothing=0.1, num_classes=5)
    kinds = set()
    with stoker.Loader(data, 7, transform=plain, threads=2, seed=11) as a, \
            stoker.Loader(data, 7, transform=plain, threads=2, seed=11,
                          batch_transform=mix) as b:
        config = b._core.config.mix
        for x, y in zip(a, b):
            draws = _stoker.slot_mixes(config, 11, y.epoch, y.index, 0, 1, 7, 40, 48)
            if mode == "pair":
                assert all(draws[i] == draws[i ^ 1] for i in range(6))
            off, on = 0.1 / 5, 1 - 0.1 + 0.1 / 5
            hot = torch.full((7, 5), off, dtype=torch.float64)
            hot[torch.arange(7), x.labels] = on
            hot = hot.float()
            for i in range(7):
                d, p = draws[i], i ^ 1
                kinds.add(d["kind"])
                want, soft = x.images[i].clone(), hot[i]
                if p < 7 and d["kind"] == "mixup":
                    lam = d["lam"]
                    want = x.images[p].mul(1.0 - lam).add_(x.images[i].mul(lam))
                elif p < 7 and d["kind"] == "cutmix":
                    x1, y1, x2, y2 = d["box"]
                    want[:, y1:y2, x1:x2] = x.images[p][:, y1:y2, x1:x2]
                if p < 7 and d["kind"] != "none":
                    soft = hot[p].mul(1.0 - d["label_lam"]).add_(hot[i].mul(d["label_lam"]))
                assert torch.equal(y.images[i], want), (i, d)
                assert torch.equal(y.labels[i], soft), (i, d)
    assert {"mixup", "cutmix"} <= kinds
