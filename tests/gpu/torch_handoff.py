"""The PyTorch hand-off of stoker.Loader(device='cuda'), checked on a real GPU.

    PYTHONPATH=build-gpu/python python3 tests/gpu/torch_handoff.py DATA_DIR

DATA_DIR: a small ImageFolder (tests/gpu/run.sh makes one with `stoker synth`). Plain Python
(no pytest needed on the GPU machine); tests/python/test_cuda.py calls run_all() too. Checks:
  1. every output dtype, train and eval: GPU batches on torch's current device, labels/valid
     on the device, and images equal to the CPU loader's (max abs error <= 1 on the 0-255
     scale and <= 1e-2 normalised; in fact the same bytes);
  2. buffer reuse: kernels queued on a side stream before a batch tensor is freed still
     read that batch, never a later one written into the recycled buffer;
  3. tensors outlive the loader.
Prints one line per check and the largest errors seen; exits non-zero on a failure.
"""

from __future__ import annotations

import gc
import sys

import torch

import stoker


def check_matches_cpu(data, output: str, transform: str) -> dict:
    kwargs = dict(size=40, threads=2, seed=4, output=output, transform=transform)
    cpu = stoker.Loader(data, 5, **kwargs)
    gpu = stoker.Loader(data, 5, device="cuda", **kwargs)
    worst, differing, batches = 0.0, 0, 0
    here = torch.device("cuda", torch.cuda.current_device())
    for epoch in (0, 1):
        cpu.set_epoch(epoch)
        gpu.set_epoch(epoch)
        for want, got in zip(cpu, gpu):
            assert got.images.device == here, got.images.device
            assert got.labels.device == here and got.valid.device == here
            assert got.images.dtype == want.images.dtype, (got.images.dtype, want.images.dtype)
            assert got.images.shape == want.images.shape
            assert torch.equal(got.labels.cpu(), want.labels)
            assert torch.equal(got.valid.cpu(), want.valid)
            assert torch.equal(got.indices, want.indices)
            g = got.images.cpu()
            worst = max(worst, (g.float() - want.images.float()).abs().max().item())
            differing += int((g != want.images).sum().item())
            batches += 1
    assert batches == 2 * len(cpu), batches
    bound = 1.0 if output == "uint8" else 1e-2
    assert worst <= bound, f"{output}/{transform}: max abs error {worst} > {bound}"
    assert differing == 0, f"{output}/{transform}: {differing} values differ from the CPU"
    return {"max_abs_error": worst, "differing": differing, "batches": batches}


def check_reuse_waits_for_consumer_stream(data) -> None:
    gpu = stoker.Loader(data, 4, size=64, threads=2, seed=9, device="cuda")
    cpu = stoker.Loader(data, 4, size=64, threads=2, seed=9)
    side = torch.cuda.Stream()
    sums = []
    with torch.cuda.stream(side):
        for batch in gpu:
            x = batch.images
            acc = torch.zeros_like(x)
            for _ in range(30):  # a long chain of kernels, then the tensor is freed at once
                acc = acc + x
            sums.append(acc)
            del batch, x
            gc.collect()
    side.synchronize()
    n = 0
    for acc, want in zip(sums, cpu):
        assert torch.allclose(acc.cpu() / 30, want.images, atol=1e-5), f"batch {n} overwritten"
        n += 1
    assert n == len(cpu)


def check_tensors_outlive_loader(data) -> None:
    gpu = stoker.Loader(data, 4, size=32, threads=2, seed=2, device="cuda")
    held = list(gpu)
    gpu.close()
    del gpu
    gc.collect()
    cpu = list(stoker.Loader(data, 4, size=32, threads=2, seed=2))
    assert len(held) == len(cpu)
    for got, want in zip(held, cpu):
        assert torch.equal(got.images.cpu(), want.images)


def run_all(data) -> dict:
    results = {}
    for output in ("float32", "uint8", "float16", "bfloat16"):
        for transform in ("train", "eval"):
            r = check_matches_cpu(data, output, transform)
            results[f"{output}/{transform}"] = r
            print(f"  GPU == CPU {output:8} {transform:5}: max abs error {r['max_abs_error']}, "
                  f"{r['batches']} batches", flush=True)
    check_reuse_waits_for_consumer_stream(data)
    print("  buffer reuse waits for the consumer stream: ok", flush=True)
    check_tensors_outlive_loader(data)
    print("  tensors outlive the loader: ok", flush=True)
    return results


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    usable, why = stoker._stoker.cuda_available()
    if not usable or not torch.cuda.is_available():
        print(f"torch_handoff: no usable GPU (stoker: {why}; torch.cuda: "
              f"{torch.cuda.is_available()})", file=sys.stderr)
        return 1
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    run_all(sys.argv[1])
    print("torch_handoff: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
