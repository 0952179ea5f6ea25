"""stoker without torch, as a numpy (or JAX) consumer sees it: numpy batches, bfloat16 as
ml_dtypes.bfloat16, float NHWC (channels_last), np.asarray(batch) and DLPack give the images.
Runs in the project venv (torch installed: tensors, converted by __array__) and in the JAX
venv (no torch: numpy arrays all along)."""

from __future__ import annotations

import numpy as np
import pytest

import stoker

try:
    import torch
except ImportError:
    torch = None


def images_of(batch) -> np.ndarray:
    return np.asarray(batch)  # what a numpy consumer writes


def test_channels_last_is_the_transpose_with_the_same_values(small_set):
    kwargs = dict(transform="eval", size=24, shuffle=False, threads=1)
    first = next(iter(stoker.Loader(small_set, 5, **kwargs)))
    last = next(iter(stoker.Loader(small_set, 5, channels_last=True, **kwargs)))
    a, b = images_of(first), images_of(last)
    assert a.shape == (5, 3, 24, 24) and b.shape == (5, 24, 24, 3)
    assert np.array_equal(a.transpose(0, 2, 3, 1), b)
    # A transform list takes channels_last beside it, as exact_decode and channels.
    import stoker.transforms as T
    listed = stoker.Loader(small_set, 5, transform=[T.Resize(27), T.CenterCrop(24),
                                                    T.Normalize(stoker.IMAGENET_MEAN,
                                                                stoker.IMAGENET_STD)],
                           channels_last=True, shuffle=False, threads=1)
    assert np.array_equal(images_of(next(iter(listed))), b)


def test_bfloat16_arrives_as_bfloat16(small_set):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    kwargs = dict(transform="eval", size=16, shuffle=False, threads=1)
    f32 = images_of(next(iter(stoker.Loader(small_set, 4, **kwargs))))
    loader = stoker.Loader(small_set, 4, output="bfloat16", **kwargs)
    batch = next(iter(loader))
    bf16 = images_of(batch)
    assert bf16.dtype == ml_dtypes.bfloat16
    # float32 rounded to nearest-even bfloat16: within half a bfloat16 step.
    assert np.allclose(bf16.astype(np.float32), f32, rtol=2 ** -8, atol=0)
    if torch is None:  # the batch and the dataset's samples are numpy arrays
        assert batch.images.dtype == ml_dtypes.bfloat16 and isinstance(batch.labels, np.ndarray)
        image, _ = loader.dataset[int(batch.indices[0])]
        assert image.dtype == ml_dtypes.bfloat16
        assert np.array_equal(image.view(np.uint16), bf16[0].view(np.uint16))


def test_dlpack_and_array_give_the_images(small_set):
    batch = next(iter(stoker.Loader(small_set, 4, transform="eval", size=16, threads=1)))
    via_dlpack = np.from_dlpack(batch)
    assert np.array_equal(via_dlpack, images_of(batch))
    assert np.asarray(batch, dtype=np.float64).dtype == np.float64
    labels = np.asarray(batch.labels)
    assert labels.shape == (4,) and labels.dtype == np.int64
