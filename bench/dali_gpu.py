"""DALI's GPU pipeline on a JPEG folder, for the side-by-side with stoker's GPU paths (issue 19).

    python3 bench/dali_gpu.py DATA_DIR [--threads 1,4,8,16] [--batch 256] [--size 224]
                              [--images 4096] [--max-seconds 3] [--json OUT]

The pipeline of DALI's ImageNet example, on the GPU: fn.readers.file -> fn.decoders.
image_random_crop(device="mixed": nvJPEG, the hardware decoder where the chip has one) ->
fn.resize (triangular, on the GPU) -> fn.crop_mirror_normalize (float32 CHW, coin-flip mirror),
one pipeline on device 0 with num_threads=T. Measured as gpu_bench measures stoker: images/s
after the first batch until N images or S seconds, process CPU seconds per image over the same
window, outputs left on the GPU (each batch's tensor is synchronised, not copied back).
Runs where DALI is importable (the GPU machine, with the nvidia-dali-cuda130 wheel); prints
one JSON line per thread count and, with --json, the list.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def cpu_seconds() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def measure(args, threads: int) -> dict:
    import nvidia.dali as dali
    from nvidia.dali import fn, pipeline_def, types
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    @pipeline_def(batch_size=args.batch, num_threads=threads, device_id=0, seed=0,
                  prefetch_queue_depth=2)
    def pipeline():
        jpegs, labels = fn.readers.file(file_root=args.data, random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(
            jpegs, device="mixed", output_type=types.RGB, random_area=[0.08, 1.0],
            random_aspect_ratio=[0.75, 4.0 / 3.0], num_attempts=100)
        images = fn.resize(images, resize_x=args.size, resize_y=args.size,
                           interp_type=types.INTERP_TRIANGULAR)
        images = fn.crop_mirror_normalize(
            images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
            mirror=fn.random.coin_flip(probability=0.5))
        return images, labels.gpu()

    pipe = pipeline()
    pipe.build()
    it = DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader",
                             last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    import torch

    images = 0
    t0 = c0 = None
    shape = None
    while True:
        for out in it:
            batch = out[0]["images"]
            torch.cuda.current_stream().synchronize()
            if t0 is None:  # the window starts after the first batch
                t0, c0, shape = time.perf_counter(), cpu_seconds(), list(batch.shape)
                continue
            images += int(batch.shape[0])
            elapsed = time.perf_counter() - t0
            if images >= args.images or elapsed >= args.max_seconds:
                seconds = time.perf_counter() - t0
                return {"peer": "dali-gpu", "version": dali.__version__, "threads": threads,
                        "images": images, "seconds": round(seconds, 3),
                        "images_per_second": round(images / seconds, 1),
                        "cpu_ms_per_image": round(1e3 * (cpu_seconds() - c0) / images, 4),
                        "batch_shape": shape}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("--threads", default="1,4,8,16")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--images", type=int, default=4096)
    p.add_argument("--max-seconds", type=float, default=3.0)
    p.add_argument("--json")
    args = p.parse_args()
    try:
        import nvidia.dali  # noqa: F401
    except ImportError as e:
        print(json.dumps({"peer": "dali-gpu", "error": f"DALI is not importable here: {e}"}))
        return 3
    runs = []
    for threads in (int(t) for t in args.threads.split(",")):
        r = measure(args, threads)
        print(json.dumps(r), flush=True)
        runs.append(r)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
