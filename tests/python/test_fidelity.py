"""stoker's eval transform against torchvision's on real photographs.

torchvision: Resize(256) + CenterCrop(224) (+ ToTensor + Normalize for float32) on
PIL.Image.open(path).convert("RGB"); stoker: transform='eval', size=224 (crop_fraction 0.875
-> shorter side 256). The mean absolute difference on the 0-255 scale is printed (pytest -s)
and recorded as a property; it must stay <= 3, with and without DCT-scaled decoding, and the
default eval decode (full scale) gives torchvision's bytes exactly, bilinear and bicubic.
Photos: Debian's mate-backgrounds (full-size JPEG wallpapers, 1280x1024 to 2560x1920).
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pytest
import torch

import stoker

torchvision = pytest.importorskip(
    "torchvision", reason="torchvision is in the reference venv: ./run.sh test runs this file there")
from PIL import Image  # noqa: E402
from torchvision import transforms as T  # noqa: E402

PHOTO_GLOBS = ("/usr/share/backgrounds/mate/nature/*.jpg",
               "/usr/share/backgrounds/mate/abstract/Elephants.jpg",
               "/usr/share/backgrounds/mate/desktop/*.jpg")
PHOTOS = 8
MAX_MEAN_ABS_DIFF = 3.0


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> Path:
    files = sorted({f for g in PHOTO_GLOBS for f in glob.glob(g)})[:PHOTOS]
    if len(files) < PHOTOS:
        pytest.skip("needs Debian's mate-backgrounds (apt-get install mate-backgrounds)")
    root = tmp_path_factory.mktemp("photos") / "data"
    (root / "photos").mkdir(parents=True)
    for f in files:
        (root / "photos" / Path(f).name).symlink_to(f)
    return root


@pytest.fixture(scope="module")
def references(photos):
    """torchvision's uint8 HWC eval crops, keyed by path."""
    tv = T.Compose([T.Resize(256), T.CenterCrop(224)])
    out = {}
    for path in sorted((photos / "photos").iterdir()):
        with Image.open(path) as im:
            out[str(path)] = np.asarray(tv(im.convert("RGB")), dtype=np.uint8)
    return out


def stoker_outputs(photos, output: str, exact_decode, transform="eval"):
    if not isinstance(transform, str):  # a list says its output itself (uint8 without ToDtype)
        output = None
    loader = stoker.Loader(photos, 4, transform=transform, output=output, shuffle=False,
                           exact_decode=exact_decode, threads=2)
    ds = loader.dataset
    out = {}
    for batch in loader:
        for slot in range(batch.batch_size):
            if batch.valid[slot]:
                out[ds.name(int(batch.indices[slot]))] = batch.images[slot].clone()
    loader.close()
    return out


@pytest.mark.parametrize("exact_decode", [None, True, False], ids=["default", "exact",
                                                                   "dct-scaled"])
@pytest.mark.parametrize("output", ["uint8", "float32"])
def test_eval_matches_torchvision(photos, references, output, exact_decode, record_property):
    ours = stoker_outputs(photos, output, exact_decode)
    assert set(ours) == set(references)
    std = torch.tensor(stoker.IMAGENET_STD).view(3, 1, 1)
    diffs = []
    for path, ref in references.items():
        ref_t = torch.from_numpy(ref.copy())
        if output == "uint8":
            assert ours[path].shape == (224, 224, 3)
            diff = (ours[path].float() - ref_t.float()).abs()
        else:
            # torchvision's float path: ToTensor + Normalize; compared on the 0-255 scale.
            ref_f = T.Normalize(stoker.IMAGENET_MEAN, stoker.IMAGENET_STD)(
                T.ToTensor()(Image.fromarray(ref)))
            assert ours[path].shape == (3, 224, 224)
            diff = ((ours[path] - ref_f).abs() * std * 255.0)
        diffs.append(float(diff.mean()))
    mad = float(np.mean(diffs))
    worst = max(diffs)
    label = f"{output}/{ {None: 'default', True: 'exact', False: 'dct-scaled'}[exact_decode]}"
    print(f"\nfidelity {label}: mean |stoker - torchvision| = {mad:.4f} (0-255 scale), "
          f"worst photo {worst:.4f}, {len(diffs)} photos")
    record_property(f"mean_abs_diff_{label}", round(mad, 4))
    assert mad <= MAX_MEAN_ABS_DIFF
    if exact_decode is not False:  # the default eval decode is torchvision's, byte for byte
        assert worst == 0


@pytest.mark.parametrize("interpolation", ["BILINEAR", "BICUBIC"])
def test_eval_bytes_are_torchvisions_by_default(photos, interpolation, record_property):
    """Resize(256, interpolation) + CenterCrop(224) as a stoker.transforms list with no decode
    option: every photo's bytes equal torchvision's on the PIL image."""
    import stoker.transforms as ST
    from torchvision.transforms import InterpolationMode

    mode = InterpolationMode[interpolation]
    tv = T.Compose([T.Resize(256, interpolation=mode), T.CenterCrop(224)])
    ours = stoker_outputs(photos, "uint8", None,
                          transform=[ST.Resize(256, interpolation=mode), ST.CenterCrop(224)])
    equal = 0
    for path, image in ours.items():
        with Image.open(path) as im:
            ref = torch.from_numpy(np.asarray(tv(im.convert("RGB")), dtype=np.uint8).copy())
        equal += int(torch.equal(image, ref))
    print(f"\nfidelity {interpolation} eval, default decode: {equal} of {len(ours)} photos "
          "byte-identical to torchvision")
    record_property(f"identical_{interpolation}", equal)
    assert equal == len(ours) == PHOTOS


def test_nearest_is_torchvisions_on_tensors(photos):
    """NEAREST resizes as torchvision does on uint8 tensors (PIL rounds its coordinates
    otherwise): the photo decoded by PIL, as a tensor, through v2.Resize + CenterCrop."""
    import stoker.transforms as ST
    from torchvision.transforms import InterpolationMode, v2

    mode = InterpolationMode.NEAREST
    tv = v2.Compose([v2.Resize(256, interpolation=mode), v2.CenterCrop(224)])
    ours = stoker_outputs(photos, "uint8", None,
                          transform=[ST.Resize(256, interpolation=mode), ST.CenterCrop(224)])
    for path, image in ours.items():
        with Image.open(path) as im:
            chw = torch.from_numpy(np.asarray(im.convert("RGB")).copy()).permute(2, 0, 1)
        assert torch.equal(image, tv(chw).permute(1, 2, 0)), path


@pytest.mark.parametrize("resize,crop", [(256, (224, 160)), (256, (160, 224)), (256, (200, 200)),
                                         ((240, 200), (224, 160)), ((200, 300), (200, 300))])
def test_eval_with_any_height_and_width_matches_torchvision(photos, resize, crop,
                                                            record_property):
    """stoker.transforms' Resize(s or (h, w)) + CenterCrop((h, w)) (a stoker.transforms list,
    exact decode) against torchvision's on the same photos."""
    import stoker.transforms as ST

    tv = T.Compose([T.Resize(resize), T.CenterCrop(crop)])
    loader = stoker.Loader(photos, 4, transform=[ST.Resize(resize), ST.CenterCrop(crop)],
                           shuffle=False, exact_decode=True, threads=2)
    diffs = []
    for batch in loader:
        assert batch.images.shape[1:] == (crop[0], crop[1], 3)
        for slot in range(batch.batch_size):
            if not batch.valid[slot]:
                continue
            with Image.open(loader.dataset.name(int(batch.indices[slot]))) as im:
                ref = torch.from_numpy(np.asarray(tv(im.convert("RGB")), dtype=np.uint8).copy())
            diffs.append(float((batch.images[slot].float() - ref.float()).abs().mean()))
    loader.close()
    mad = float(np.mean(diffs))
    print(f"\nfidelity Resize({resize}) + CenterCrop{crop}: mean |stoker - torchvision| = "
          f"{mad:.4f}")
    record_property(f"mean_abs_diff_{resize}_{crop[0]}x{crop[1]}", round(mad, 4))
    assert len(diffs) == PHOTOS and mad <= MAX_MEAN_ABS_DIFF
