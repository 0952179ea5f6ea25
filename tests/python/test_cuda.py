"""stoker.Loader(device='cuda') and the half-precision outputs.

The GPU tests skip unless torch has CUDA and the core was built with a usable CUDA device
(tests/gpu/run.sh runs them on a GPU machine); the rest run everywhere.
"""

from __future__ import annotations

import gc

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
@pytest.mark.parametrize("output", ["float32", "uint8", "float16", "bfloat16"])
@pytest.mark.parametrize("transform", ["train", "eval"])
def test_gpu_batches_match_cpu_batches(small_set, output, transform):
    kwargs = dict(size=40, threads=2, seed=4, output=output, transform=transform)
    cpu = stoker.Loader(small_set, 5, **kwargs)
    gpu = stoker.Loader(small_set, 5, device="cuda", **kwargs)
    for epoch in (0, 1):
        cpu.set_epoch(epoch)
        gpu.set_epoch(epoch)
        pairs = list(zip(cpu, gpu))
        assert len(pairs) == len(cpu)
        for want, got in pairs:
            assert got.images.device == torch.device("cuda", torch.cuda.current_device())
            assert got.images.dtype == want.images.dtype
            assert got.images.shape == want.images.shape
            assert torch.equal(got.labels.cpu(), want.labels)
            assert torch.equal(got.valid.cpu(), want.valid)
            assert torch.equal(got.indices, want.indices)
            diff = (got.images.cpu().float() - want.images.float()).abs().max().item()
            assert diff <= (1.0 if output == "uint8" else 1e-2), diff
            # The shared arithmetic: in fact the same bytes.
            assert torch.equal(got.images.cpu(), want.images)


@needs_gpu
def test_freed_tensor_buffer_waits_for_the_consumer_stream(small_set):
    """Work queued on torch's current stream before a batch tensor is freed still reads that
    batch, not a later one written into the recycled buffer."""
    gpu = stoker.Loader(small_set, 4, size=64, threads=2, seed=9, device="cuda")
    cpu = stoker.Loader(small_set, 4, size=64, threads=2, seed=9)
    side = torch.cuda.Stream()
    sums = []
    with torch.cuda.stream(side):
        for batch in gpu:
            # A long chain of kernels on the side stream, then the tensor is freed at once.
            x = batch.images
            acc = torch.zeros_like(x)
            for _ in range(30):
                acc = acc + x
            sums.append(acc)
            del batch, x
            gc.collect()
    side.synchronize()
    for acc, want in zip(sums, cpu):
        assert torch.allclose(acc.cpu() / 30, want.images, atol=1e-5)


@needs_gpu
def test_gpu_tensors_outlive_the_loader(small_set):
    gpu = stoker.Loader(small_set, 4, size=32, threads=2, seed=2, device="cuda")
    held = list(gpu)
    gpu.close()
    cpu = list(stoker.Loader(small_set, 4, size=32, threads=2, seed=2))
    for got, want in zip(held, cpu):
        assert torch.equal(got.images.cpu(), want.images)
