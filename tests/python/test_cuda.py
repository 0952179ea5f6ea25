"""stoker.Loader(device='cuda') and the half-precision outputs.

The GPU tests skip unless torch has CUDA and the core was built with a usable CUDA device
(tests/gpu/run.sh runs them on a GPU machine); the rest run everywhere.
"""

from __future__ import annotations

import pytest
import torch

import stoker
from stoker import _stoker

USABLE, WHY = _stoker.cuda_available()
needs_gpu = pytest.mark.skipif(not (USABLE and torch.cuda.is_available()),
                               reason=f"no usable GPU: {WHY}")


def test_half_outputs_are_rounded_float32(small_set):
    f32 = next(iter(stoker.Loader(small_set, 4, size=24, threads=2, seed=5)))
    for output, dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        half = next(iter(stoker.Loader(small_set, 4, size=24, threads=2, seed=5, output=output)))
        assert half.images.dtype == dtype and half.images.shape == (4, 3, 24, 24)
        # torch's float32 -> half conversions round to nearest-even, as stoker does.
        assert torch.equal(half.images, f32.images.to(dtype))


def test_device_argument_is_checked(small_set):
    with pytest.raises(ValueError, match="device must be"):
        stoker.Loader(small_set, 4, device="tpu")
    cpu = next(iter(stoker.Loader(small_set, 4, size=24, seed=1, device="cpu")))
    default = next(iter(stoker.Loader(small_set, 4, size=24, seed=1)))
    assert cpu.images.device.type == "cpu" and torch.equal(cpu.images, default.images)


@pytest.mark.skipif(USABLE, reason="a usable GPU is present")
def test_cuda_without_a_usable_gpu_says_why(small_set):
    with pytest.raises(RuntimeError, match="device='cuda'"):
        stoker.Loader(small_set, 4, device="cuda")
    assert WHY  # names the reason (no driver, built without CUDA, ...)


@needs_gpu
def test_torch_handoff_on_the_gpu(small_set):
    """tests/gpu/torch_handoff.py's checks (the GPU machine runs that script directly)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "gpu" / "torch_handoff.py"
    spec = importlib.util.spec_from_file_location("torch_handoff", path)
    handoff = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(handoff)
    results = handoff.run_all(small_set)
    assert len(results) == 8


def test_decode_argument_is_checked(small_set):
    with pytest.raises(ValueError, match="decode must be"):
        stoker.Loader(small_set, 4, decode="nvjpeg")
    with pytest.raises(ValueError, match="needs device='cuda'"):
        stoker.Loader(small_set, 4, decode="gpu")
    # 'auto' on the CPU path is the CPU decode: the same batches as the default.
    auto = next(iter(stoker.Loader(small_set, 4, size=24, seed=1, decode="auto")))
    default = next(iter(stoker.Loader(small_set, 4, size=24, seed=1)))
    assert torch.equal(auto.images, default.images)
    assert isinstance(_stoker.built_with_gpu_decode, bool)
    assert _stoker.built_with_cuda or not _stoker.built_with_gpu_decode


@pytest.mark.skipif(not _stoker.built_with_gpu_decode, reason="built without nvJPEG")
def test_libnvjpeg_is_found_beside_the_installed_stoker():
    """libnvjpeg is loaded at run time: from the venv's nvidia-nvjpeg wheel (requirements-dev)."""
    found, path = _stoker.gpu_decode_library()
    assert found, path
    assert path.endswith("libnvjpeg.so.13")


@pytest.mark.skipif(USABLE, reason="a usable GPU is present")
def test_gpu_decode_without_a_usable_gpu_says_why(small_set):
    with pytest.raises(RuntimeError, match="device='cuda'"):
        stoker.Loader(small_set, 4, device="cuda", decode="gpu")


@needs_gpu
@pytest.mark.skipif(not _stoker.built_with_gpu_decode, reason="built without nvJPEG")
def test_gpu_decode_on_the_gpu(tmp_path):
    """tests/gpu/gpu_decode_check.py's checks (the GPU machine runs that script directly)."""
    import importlib.util
    from pathlib import Path

    from conftest import synth

    data = synth(tmp_path / "jpegs", images=96, width=160, height=120)
    path = Path(__file__).resolve().parent.parent / "gpu" / "gpu_decode_check.py"
    spec = importlib.util.spec_from_file_location("gpu_decode_check", path)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    results = check.run_all(str(data))
    assert results["bad_files"]["skipped"] > 0
