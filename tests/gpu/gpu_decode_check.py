"""stoker.Loader(device='cuda', decode='gpu') checked on a real GPU (nvJPEG).

    PYTHONPATH=build-gpu/python python3 tests/gpu/gpu_decode_check.py DATA_DIR [JSON_OUT]

DATA_DIR: an ImageFolder of baseline JPEGs (tests/gpu/run.sh makes one with `stoker synth`).
Plain Python (no pytest on the GPU machine); tests/python/test_cuda.py calls run_all() too.
Checks, each printed on one line, all numbers also in JSON_OUT:
  1. pixels: uint8 batches of decode='gpu' against the CPU path at scale 1
     (exact_decode=True, the GPU decode's reference: the same crops, libjpeg-turbo's IDCT),
     train and eval, for every backend this GPU has: labels, indices, valid equal; the
     documented tolerance (docs/gpu.md, "GPU decode") holds: mean |difference| <= 1.0 and at
     most 1 % of values off by more than 8 on 0-255; the measured distribution is recorded;
  2. bad files: in a folder with truncated and corrupted JPEGs, bad_samples='skip' skips the
     same samples (valid masks equal over an epoch) on the GPU decode as on the CPU path, and
     'error' fails on both;
  3. mixed folders: PNG and progressive JPEGs are decoded by the workers in the same batches;
  4. counters: the hardware decoder took the images where the GPU has one; nothing fell back
     to the host on good files.
Exits non-zero on a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch

import stoker
from stoker import _stoker

MEAN_TOLERANCE = 1.0       # mean |GPU decode - CPU scale-1| on 0-255
OFF_BY_MORE_THAN = 8       # ... and at most OFF_FRACTION of values beyond this
OFF_FRACTION = 0.01


def _pairs(cpu, gpu, epoch):
    cpu.set_epoch(epoch)
    gpu.set_epoch(epoch)
    for want, got in zip(cpu, gpu):
        yield want, got


def check_pixels(data, transform: str, backend: str) -> dict:
    kwargs = dict(size=112, threads=4, seed=3, output="uint8", transform=transform)
    cpu = stoker.Loader(data, 32, exact_decode=True, **kwargs)
    gpu = stoker.Loader(data, 32, device="cuda", decode="gpu", jpeg_backend=backend, **kwargs)
    diffs = []
    for want, got in _pairs(cpu, gpu, 0):
        assert torch.equal(got.labels.cpu(), want.labels)
        assert torch.equal(got.indices.cpu(), want.indices)
        assert torch.equal(got.valid.cpu(), want.valid)
        d = (got.images.cpu().to(torch.int16) - want.images.to(torch.int16)).abs()
        diffs.append(d.flatten())
    d = torch.cat(diffs).to(torch.float32)
    counters = gpu._handle.augmenter_stats()
    result = {
        "transform": transform, "backend": backend, "values": int(d.numel()),
        "mean_abs": float(d.mean()), "max_abs": int(d.max()),
        "p99_abs": float(torch.quantile(d[:: max(1, d.numel() // 1_000_000)], 0.99)),
        "equal_fraction": float((d == 0).float().mean()),
        "off_by_more_than_8": float((d > OFF_BY_MORE_THAN).float().mean()),
        "decoded_hardware": counters["decoded_hardware"],
        "decoded_hybrid": counters["decoded_hybrid"],
        "decoded_fallback": counters["decoded_fallback"],
    }
    assert result["mean_abs"] <= MEAN_TOLERANCE, result
    assert result["off_by_more_than_8"] <= OFF_FRACTION, result
    assert counters["decoded_fallback"] == 0, counters
    if backend == "hardware":
        assert counters["decoded_hardware"] > 0, counters
    if backend == "gpu_hybrid":
        assert counters["decoded_hybrid"] > 0 and counters["decoded_hardware"] == 0, counters
    return result


def _bad_folder(data: str, root: Path) -> Path:
    folder = root / "bad"
    (folder / "a").mkdir(parents=True)
    sources = sorted(Path(data).rglob("*.jpg"))[:24]
    for i, src in enumerate(sources):
        raw = bytearray(src.read_bytes())
        if i % 6 == 1:
            raw = raw[: len(raw) * 2 // 3]           # truncated inside the scan
        elif i % 6 == 3:
            raw[len(raw) // 2: len(raw) // 2 + 64] = b"\xff\xc4" * 32  # markers in the scan
        elif i % 6 == 5:
            raw[2:40] = os.urandom(38)               # a broken header
        (folder / "a" / f"f{i:02d}.jpg").write_bytes(bytes(raw))
    return folder


def check_bad_files(data, root: Path) -> dict:
    folder = str(_bad_folder(data, root))
    kwargs = dict(size=64, threads=4, seed=2, output="uint8", bad_samples="skip")
    cpu = stoker.Loader(folder, 8, exact_decode=True, **kwargs)
    gpu = stoker.Loader(folder, 8, device="cuda", decode="gpu", **kwargs)
    skipped_cpu = skipped_gpu = 0
    for want, got in _pairs(cpu, gpu, 0):
        assert torch.equal(got.valid.cpu(), want.valid), (got.valid, want.valid)
        skipped_cpu += int((want.valid == 0).sum())
        skipped_gpu += int((got.valid.cpu() == 0).sum())
    assert skipped_cpu > 0 and skipped_cpu == skipped_gpu
    for loader in (stoker.Loader(folder, 8, exact_decode=True, size=64, seed=2),
                   stoker.Loader(folder, 8, device="cuda", decode="gpu", size=64, seed=2)):
        try:
            for _ in loader:
                pass
        except stoker.Error:
            continue
        raise AssertionError("bad_samples='error' did not fail")
    return {"skipped": skipped_cpu}


def check_mixed(data, root: Path) -> dict:
    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "image"
    folder = root / "mixed"
    (folder / "a").mkdir(parents=True)
    for i, src in enumerate(sorted(Path(data).rglob("*.jpg"))[:12]):
        shutil.copy(src, folder / "a" / f"j{i:02d}.jpg")
    for name in ("progressive.jpg", "cmyk.jpg", "rgba.png", "palette.png"):
        shutil.copy(fixtures / name, folder / "a" / name)
    kwargs = dict(size=64, threads=4, seed=6, output="uint8")
    cpu = stoker.Loader(str(folder), 8, exact_decode=True, **kwargs)
    gpu = stoker.Loader(str(folder), 8, device="cuda", decode="gpu", **kwargs)
    worst = 0
    for want, got in _pairs(cpu, gpu, 0):
        assert torch.equal(got.indices.cpu(), want.indices)
        d = (got.images.cpu().to(torch.int16) - want.images.to(torch.int16)).abs().float()
        worst = max(worst, float(d.mean()))
    counters = gpu._handle.augmenter_stats()
    decoded = counters["decoded_hardware"] + counters["decoded_hybrid"]
    assert decoded == 12, counters  # the baseline JPEGs only
    assert worst <= MEAN_TOLERANCE, worst
    return {"gpu_decoded": decoded, "worst_batch_mean_abs": worst}


def run_all(data) -> dict:
    assert _stoker.built_with_gpu_decode, "this build has no nvJPEG"
    results = {"pixels": []}
    probe = stoker.Loader(data, 4, device="cuda", decode="gpu")
    hardware = probe._handle.augmenter_stats()["hardware_decoder"]
    del probe
    backends = ["gpu_hybrid"] + (["hardware"] if hardware else [])
    results["hardware_decoder"] = hardware
    for backend in backends:
        for transform in ("train", "eval"):
            r = check_pixels(data, transform, backend)
            print(f"pixels {backend} {transform}: mean |d| {r['mean_abs']:.3f}, max {r['max_abs']},"
                  f" p99 {r['p99_abs']:.1f}, equal {100 * r['equal_fraction']:.1f} %, "
                  f"> 8: {100 * r['off_by_more_than_8']:.3f} % of {r['values']:,}")
            results["pixels"].append(r)
    with tempfile.TemporaryDirectory() as tmp:
        results["bad_files"] = check_bad_files(data, Path(tmp))
        print(f"bad files: the same {results['bad_files']['skipped']} skipped on both paths")
        results["mixed"] = check_mixed(data, Path(tmp))
        print(f"mixed folder: {results['mixed']}")
    return results


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    results = run_all(sys.argv[1])
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(results, indent=1))
    print("gpu decode checks: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
