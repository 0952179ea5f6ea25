#!/usr/bin/env python3
"""stoker beside the loaders teams choose instead of a DataLoader, on the same photos and cores.

Driven by bench/peers (which installs the peers into their own venv and the Debian packages
they need); `./run.sh bench --peers` builds first. Every pipeline delivers float32 NCHW
batches of B images normalised with ImageNet's mean and std, from the same files
(bench/make_photo_set.py: real photographs of ~0.3 MP, JPEG q90 4:2:0) with the same number of
threads or worker processes, for

  train  RandomResizedCrop 224 (scale 0.08-1, ratio 3/4-4/3) + horizontal flip p=0.5
  eval   resize the shorter side to 256 + center crop 224

Pipelines (each measurement is a fresh Python process printing one JSON line):

  torchvision    ImageFolder + DataLoader(num_workers=T), Pillow decode (compare_torchvision)
  dali           DALI's CPU pipeline, device_id=None: fn.readers.file +
                 fn.decoders.image_random_crop (eval: fn.decoders.image + fn.resize) +
                 fn.resize + fn.crop_mirror_normalize, num_threads=T, DALIGenericIterator
  spdl           SPDL's Pipeline: demux_image + decode_packets with an FFmpeg filter graph
                 (crop, bilinear scale, flip; libavcodec decode) at concurrency T, aggregate,
                 convert_frames, normalise with torch
  ffcv-jpg/raw   FFCV Loader(num_workers=T, os_cache, RANDOM order) over .beton files written
                 by FFCV's own DatasetWriter (RGBImageField max_resolution=256, jpg q90 / raw):
                 RandomResizedCropRGBImageDecoder (eval: CenterCropRGBImageDecoder, ratio
                 224/256) + RandomHorizontalFlip + NormalizeImage(float32) + ToTorchImage
  stoker-folder  stoker.Loader(threads=T) on the folder of JPEGs
  stoker-jpeg    on `stoker pack --mode jpeg --max-side 256 --quality 90` of the folder
                 (restart markers every 2 MCUs: crops entropy-decode only what they touch)
  stoker-raw     on `stoker pack --mode raw --max-side 256`
  decode         T processes of build/bench/decode_baseline: plain libjpeg-turbo full-size
                 decoding of the same files, the floor a decoder of whole images cannot beat
  *-rst          torchvision, stoker-folder and decode on the same photos given restart
                 markers every 2 MCUs by `jpegtran -restart 2B -copy all` (lossless: the same
                 coefficients and pixels, ~5 % more bytes), as many cameras write them: stoker
                 then entropy-decodes only the segments a crop touches (docs/format.md)

Rounds alternate (the order rotates), medians and ratios come from one run. Per measurement:
images/s after the first batch, time to first batch (from the dataset/loader constructor),
peak memory of the process and its workers (PSS summed over the process tree, sampled every
0.1 s from /proc/PID/smaps_rollup; RSS summed too, which counts shared pages once per
process), CPU cores the pipeline used (its CPU time / wall time), and the cores other
processes kept busy meanwhile (disturbed measurements are repeated, as in
compare_torchvision). A peer that cannot run is reported with its exact error.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_torchvision as ct  # noqa: E402  (shared helpers: CPU accounting, JSON lines)

ROOT = ct.ROOT
DATA = os.path.join(HERE, "data")
PIPELINES = ("torchvision", "dali", "spdl", "ffcv-jpg", "ffcv-raw", "stoker-folder",
             "stoker-jpeg", "stoker-raw", "decode", "torchvision-rst", "stoker-folder-rst",
             "decode-rst")
# The stoker pipeline each row is compared with in the table's "stoker / this" column.
COUNTERPART = {"ffcv-jpg": "stoker-jpeg", "ffcv-raw": "stoker-raw",
               "torchvision-rst": "stoker-folder-rst", "decode-rst": "stoker-folder-rst"}
PACKS = {  # stoker pack arguments; the folder names are bench/packed_bench's, so both share
    "stoker-jpeg": ("photos-jpeg", ["--mode", "jpeg", "--max-side", "256", "--quality", "90",
                                    "--restart-interval", "2"]),
    "stoker-raw": ("photos-raw", ["--mode", "raw", "--max-side", "256"]),
}
BETONS = {"ffcv-jpg": "jpg", "ffcv-raw": "raw"}
# (numerator, denominator, target) on the train transform: issue 15's targets.
TARGETS = [
    ("stoker-folder", "torchvision", 6.0),
    ("stoker-folder", "decode", 1.2),
    ("stoker-folder", "dali", 2.0),
    ("stoker-folder", "spdl", 2.0),
    ("stoker-jpeg", "ffcv-jpg", 3.0),
    ("stoker-raw", "ffcv-raw", 2.0),
    ("stoker-folder-rst", "torchvision-rst", 6.0),  # the folder targets, on files with markers
    ("stoker-folder-rst", "decode-rst", 1.2),
]
MEAN, STD = ct.MEAN, ct.STD


# ------------------------------------------------------------------------- the workers
class Counter:
    """Counts images after the first batch; the first batch ends the time to first batch."""

    def __init__(self, args):
        self.args = args
        self.t_start = time.perf_counter()
        self.t_first = None
        self.images = 0
        self.batches = 0
        self.shape = None
        self.dtype = None

    def add(self, images):
        if self.t_first is None:
            self.t_first = time.perf_counter()
            self.shape = list(images.shape)
            self.dtype = str(images.dtype)
            return False
        self.images += int(images.shape[0])
        self.batches += 1
        return self.images >= self.args.images

    def report(self, **extra):
        t1 = time.perf_counter()
        size = self.args.size
        if self.shape is None or self.shape[1:] != [3, size, size] or "float32" not in self.dtype:
            raise SystemExit(f"wrong batch: shape {self.shape}, dtype {self.dtype}")
        print(json.dumps(dict({
            "images_per_second": round(self.images / (t1 - self.t_first), 2),
            "images": self.images, "batches": self.batches,
            "seconds": round(t1 - self.t_first, 3),
            "first_batch_seconds": round(self.t_first - self.t_start, 3),
            "batch_shape": self.shape, "dtype": self.dtype,
        }, **extra)))


def eval_resize(args):
    return round(args.size * 256 / 224)


def dali_worker(args):
    import nvidia.dali as dali
    from nvidia.dali import fn, pipeline_def, types
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    size = args.size

    @pipeline_def(batch_size=args.batch, num_threads=args.threads, device_id=None, seed=0)
    def pipeline():
        jpegs, labels = fn.readers.file(file_root=args.data, random_shuffle=True, name="Reader")
        if args.transform == "train":  # as DALI's ImageNet example, on the CPU
            images = fn.decoders.image_random_crop(
                jpegs, device="cpu", output_type=types.RGB, random_area=[0.08, 1.0],
                random_aspect_ratio=[0.75, 4.0 / 3.0], num_attempts=100)
            images = fn.resize(images, resize_x=size, resize_y=size,
                               interp_type=types.INTERP_TRIANGULAR)
            mirror = fn.random.coin_flip(probability=0.5)
        else:
            images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
            images = fn.resize(images, resize_shorter=eval_resize(args),
                               interp_type=types.INTERP_TRIANGULAR)
            mirror = False
        images = fn.crop_mirror_normalize(
            images, dtype=types.FLOAT, output_layout="CHW", crop=(size, size),
            mean=[m * 255 for m in MEAN], std=[s * 255 for s in STD], mirror=mirror)
        return images, labels

    counter = Counter(args)
    pipe = pipeline()
    pipe.build()
    it = DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader",
                             last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    done = False
    while not done:
        for out in it:
            if counter.add(out[0]["images"]):
                done = True
                break
    counter.report(version=dali.__version__)


def spdl_crop_filter(args, rng):
    """FFmpeg filter graph of one RandomResizedCrop + flip (train) or resize + center crop."""
    size = args.size
    if args.transform == "eval":
        short = eval_resize(args)
        return (f"scale=w='if(lt(iw,ih),{short},-2)':h='if(lt(iw,ih),-2,{short})'"
                f":flags=bilinear,crop={size}:{size},format=pix_fmts=rgb24")
    import math
    scale = rng.uniform(0.08, 1.0)
    ratio = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
    # torchvision's RandomResizedCrop retries when the drawn box does not fit; clamping to the
    # image instead keeps one filter graph per image (the crop is then at most the image).
    crop = (f"crop=w='min(iw,trunc(sqrt(iw*ih*{scale:.6f}*{ratio:.6f})))'"
            f":h='min(ih,trunc(sqrt(iw*ih*{scale:.6f}/{ratio:.6f})))'"
            f":x='trunc((iw-ow)*{rng.random():.6f})':y='trunc((ih-oh)*{rng.random():.6f})'")
    flip = ",hflip" if rng.random() < 0.5 else ""
    return f"{crop},scale=w={size}:h={size}:flags=bilinear{flip},format=pix_fmts=rgb24"


def spdl_worker(args):
    import random

    import spdl.io
    import torch
    from spdl.pipeline import PipelineBuilder

    files = list_images(args.data)
    rng = random.Random(0)
    mean = torch.tensor([m * 255 for m in MEAN]).view(1, 3, 1, 1)
    std = torch.tensor([s * 255 for s in STD]).view(1, 3, 1, 1)

    def source():
        order = list(range(len(files)))
        while True:  # epochs until the consumer has its images
            rng.shuffle(order)
            for i in order:
                yield files[i]

    def decode(path):
        packets = spdl.io.demux_image(path)
        return spdl.io.decode_packets(packets, filter_desc=spdl_crop_filter(args, rng))

    def collate(frames):
        batch = spdl.io.to_torch(spdl.io.convert_frames(frames))  # N, H, W, C uint8
        return batch.permute(0, 3, 1, 2).float().sub_(mean).div_(std)

    counter = Counter(args)
    pipeline = (PipelineBuilder()
                .add_source(source())
                .pipe(decode, concurrency=args.threads)
                .aggregate(args.batch)
                .pipe(collate)
                .add_sink(3)
                .build(num_threads=args.threads))
    with pipeline.auto_stop():
        for images in pipeline:
            if counter.add(images):
                break
    counter.report(version=package_version("spdl"))


def package_version(name):
    from importlib import metadata
    return metadata.version(name)


def ffcv_worker(args):
    import numpy as np
    from ffcv.fields.decoders import (CenterCropRGBImageDecoder, IntDecoder,
                                      RandomResizedCropRGBImageDecoder)
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import (NormalizeImage, RandomHorizontalFlip, Squeeze, ToTensor,
                                 ToTorchImage)

    size = args.size
    if args.transform == "train":
        head = [RandomResizedCropRGBImageDecoder((size, size)), RandomHorizontalFlip()]
    else:
        head = [CenterCropRGBImageDecoder((size, size), ratio=224 / 256)]
    image_pipeline = head + [
        NormalizeImage(np.array(MEAN) * 255, np.array(STD) * 255, np.float32),
        ToTensor(), ToTorchImage()]
    counter = Counter(args)
    loader = Loader(args.beton, batch_size=args.batch, num_workers=args.threads,
                    order=OrderOption.RANDOM, os_cache=True, drop_last=False, seed=0,
                    pipelines={"image": image_pipeline,
                               "label": [IntDecoder(), ToTensor(), Squeeze()]})
    done = False
    while not done:
        for images, _labels in loader:
            if counter.add(images):
                done = True
                break
    counter.report(version=package_version("ffcv"))


def ffcv_write(args):
    """Writes args.beton from the photo folder with FFCV's own writer."""
    from ffcv.fields import IntField, RGBImageField
    from ffcv.writer import DatasetWriter
    from torchvision.datasets import ImageFolder

    t0 = time.perf_counter()
    tmp = args.beton + ".tmp"
    writer = DatasetWriter(tmp, {
        "image": RGBImageField(write_mode=args.ffcv_mode, max_resolution=256, jpeg_quality=90),
        "label": IntField()}, num_workers=args.threads)
    writer.from_indexed_dataset(ImageFolder(args.data))
    os.replace(tmp, args.beton)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 2),
                      "bytes": os.path.getsize(args.beton)}))


def stoker_worker(args):
    import stoker

    counter = Counter(args)
    loader = stoker.Loader(args.source, args.batch, transform=args.transform, size=args.size,
                           output="float32", threads=args.threads, shuffle=True, seed=0,
                           rank=0, world_size=1)
    epoch = 0
    done = False
    while not done:
        loader.set_epoch(epoch)
        epoch += 1
        for batch in loader:
            if counter.add(batch.images):
                done = True
                break
    counter.report(version=stoker.__version__)
    loader.close()


def list_images(root):
    out = []
    for d, _dirs, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if f.lower().endswith((".jpg", ".jpeg"))]
    return sorted(out)


WORKERS = {"dali": dali_worker, "spdl": spdl_worker, "ffcv": ffcv_worker,
           "stoker": stoker_worker, "ffcv-write": ffcv_write}


# ------------------------------------------------------------------------- measuring
class TreeMemory:
    """Peak PSS and RSS summed over a process and its descendants, sampled every 0.1 s."""

    def __init__(self, pid):
        self.pid = pid
        self.peak_pss_kib = 0
        self.peak_rss_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self):
        children = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
        tree, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += children.get(p, [])
        return tree

    def _run(self):
        while not self._stop.wait(0.1):
            pss = rss = 0
            for p in self._tree():
                try:
                    with open(f"/proc/{p}/smaps_rollup") as f:
                        for line in f:
                            if line.startswith("Pss:"):
                                pss += int(line.split()[1])
                            elif line.startswith("Rss:"):
                                rss += int(line.split()[1])
                except OSError:
                    continue
            self.peak_pss_kib = max(self.peak_pss_kib, pss)
            self.peak_rss_kib = max(self.peak_rss_kib, rss)

    def stop(self):
        self._stop.set()
        self._thread.join()


def run_worker(cmd, timeout, env=None):
    """Runs one worker; returns (JSON result, error, peak memory)."""
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    except OSError as e:
        return None, str(e)
    mem = TreeMemory(p.pid)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        mem.stop()
        return None, f"timed out after {timeout} s"
    mem.stop()
    res = ct.last_json(out, "images_per_second") or ct.last_json(out, "seconds")
    if p.returncode != 0 or res is None:
        return None, f"exit {p.returncode}: {first_error(err or out)}"
    res["peak_pss_mib"] = round(mem.peak_pss_kib / 1024, 1)
    res["peak_rss_mib"] = round(mem.peak_rss_kib / 1024, 1)
    return res, None


def first_error(text):
    """The line that names the error: the last 'SomethingError: ...' line, else the last."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception")) or head == "error":
            return line[:400]
    return lines[-1][:400] if lines else "no output"


def worker_cmd(args, kind, **extra):
    cmd = [sys.executable, os.path.abspath(__file__), "--_worker", kind, "--data", args.data,
           "--images", str(args.images), "--batch", str(args.batch), "--size", str(args.size),
           "--threads", str(args.threads), "--transform", args.transform]
    for k, v in extra.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    return cmd


def measure_once(args, name):
    data = args.restart_data if name.endswith("-rst") else args.data
    base = name[:-len("-rst")] if name.endswith("-rst") else name
    if base == "torchvision":
        cmd = ct.torchvision_cmd(argparse.Namespace(
            data=data, images=args.images, batch=args.batch, size=args.size,
            tv_workers=args.threads, persistent_workers=True, transform=args.transform))
        res, err = run_worker(cmd, args.timeout)
        if res:
            import torchvision
            res["version"] = torchvision.__version__
        return res, err
    if base == "decode":
        res, err = ct.run_decode(argparse.Namespace(**dict(vars(args), data=data)),
                                 args.decode_exe)
        if res:
            res["images_per_second"] = res["decodes_per_second"]
        return res, err
    if name.startswith("ffcv"):
        return run_worker(worker_cmd(args, "ffcv", beton=args.betons[name]), args.timeout)
    if name.startswith("stoker"):
        source = data if base == "stoker-folder" else args.packs[name]
        return run_worker(worker_cmd(args, "stoker", source=source), args.timeout)
    return run_worker(worker_cmd(args, name), args.timeout)


def self_cpu_seconds():
    t = os.times()
    return t.user + t.system


def measure(args, name, t_begin):
    """The least disturbed of up to 1 + --retries attempts: (result, error)."""

    def attempt():
        busy0, self0, ours0 = ct.cpu_busy_seconds(), self_cpu_seconds(), ct.children_cpu_seconds()
        t = time.perf_counter()
        res, err = measure_once(args, name)
        took = time.perf_counter() - t
        busy1, self1, ours1 = ct.cpu_busy_seconds(), self_cpu_seconds(), ct.children_cpu_seconds()
        if err:
            return None, err, took
        others = None
        if busy0 is not None and busy1 is not None and took > 0:
            # This process's own time (the memory sampler) is not the machine's noise.
            mine = (ours1 - ours0) + (self1 - self0)
            others = round(max(0.0, (busy1 - busy0) - mine) / took, 2)
        res["other_cores"] = others
        # The pipeline's CPU time over its whole run (start-up included) / wall time.
        res["cpu_cores"] = round((ours1 - ours0) / took, 2)
        res["wall_seconds"] = round(took, 1)
        return res, None, took

    return ct.least_disturbed(
        attempt, args.retries, args.max_other_cores,
        lambda more: time.perf_counter() - t_begin + more <= args.budget,
        lambda others: print(f"    {name}: disturbed ({others} cores used by others), "
                             "measuring again", flush=True))


# ------------------------------------------------------------------------- data
def stoker_version(stoker_exe):
    return subprocess.run([stoker_exe, "--version"], stdout=subprocess.PIPE,
                          text=True).stdout.splitlines()[0]


def stamp_matches(out, stamp):
    """True when OUT exists and OUT.stamp says it was made as `stamp` describes."""
    try:
        with open(out + ".stamp") as f:
            return f.read().strip() == stamp and os.path.exists(out)
    except OSError:
        return False


def write_stamp(out, stamp):
    with open(out + ".stamp", "w") as f:
        f.write(stamp + "\n")


def ensure_pack(args, name):
    """bench/data/packed/photos-KIND, packed once per source and stoker version."""
    folder, pack_args = PACKS[name]
    out = os.path.join(DATA, "packed", folder)
    st = os.stat(args.data)
    # The stamp bench/packed_bench writes for the same pack, so that the two share it.
    stamp = (f"{stoker_version(args.stoker_exe)} | pack {args.data} {' '.join(pack_args)} | "
             f"{st.st_size} {int(st.st_mtime)}")
    if stamp_matches(out, stamp) and os.path.isfile(os.path.join(out, "manifest.json")):
        return out
    print(f"peers: packing {folder} ({' '.join(pack_args)}) ...", flush=True)
    subprocess.run(["rm", "-rf", out, out + ".stamp"], check=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run([args.stoker_exe, "pack", args.data, out] + pack_args, check=True,
                   stdout=subprocess.DEVNULL)
    write_stamp(out, stamp)
    return out


def ensure_restart_folder(args):
    """bench/data/<data>-restart: every JPEG losslessly given restart markers by jpegtran."""
    out = os.path.join(DATA, os.path.basename(args.data.rstrip("/")) + "-restart")
    st = os.stat(args.data)
    stamp = f"jpegtran -restart 2B -copy all | {args.data} {st.st_size} {int(st.st_mtime)}"
    if stamp_matches(out, stamp):
        return out, None
    print(f"peers: writing {os.path.basename(out)} (jpegtran -restart 2B) ...", flush=True)
    subprocess.run(["rm", "-rf", out, out + ".stamp"], check=True)
    for path in list_images(args.data):
        dst = os.path.join(out, os.path.relpath(path, args.data))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            subprocess.run(["jpegtran", "-restart", "2B", "-copy", "all", "-outfile", dst, path],
                           check=True, stderr=subprocess.PIPE, text=True)
        except (OSError, subprocess.CalledProcessError) as e:
            return None, f"jpegtran failed on {path}: {getattr(e, 'stderr', None) or e}"
    write_stamp(out, stamp)
    return out, None


def ensure_beton(args, name):
    """bench/data/ffcv/photos-MODE-256.beton, written by FFCV's DatasetWriter once."""
    mode = BETONS[name]
    from importlib import metadata
    try:
        version = metadata.version("ffcv")
    except metadata.PackageNotFoundError as e:
        return None, f"ffcv is not installed ({e})"
    out = os.path.join(DATA, "ffcv", f"photos-{mode}-256.beton")
    st = os.stat(args.data)
    stamp = f"ffcv {version} | {mode} max_resolution=256 q90 | {args.data} {st.st_size} " \
            f"{int(st.st_mtime)}"
    if stamp_matches(out, stamp):
        return out, None
    os.makedirs(os.path.dirname(out), exist_ok=True)
    print(f"peers: writing {os.path.basename(out)} with FFCV's DatasetWriter ...", flush=True)
    res, err = run_worker(worker_cmd(args, "ffcv-write", beton=out, ffcv_mode=mode),
                          args.timeout)
    if err:
        return None, f"writing the .beton failed: {err}"
    print(f"peers:   {res['seconds']} s, {res['bytes'] / 2**20:.1f} MiB", flush=True)
    write_stamp(out, stamp)
    return out, None


# ------------------------------------------------------------------------- report
def fmt(v, digits=0, unit=""):
    return "—" if v is None else f"{v:,.{digits}f}{unit}"


def report(args, transform, series, detail, notes):
    med = {k: (statistics.median(v) if v else None) for k, v in series.items()}

    def mid(name, key):
        vals = [d.get(key) for d in detail[name] if d.get(key) is not None]
        return statistics.median(vals) if vals else None

    print(f"\n{transform}: {args.threads} threads / workers / processes, batch {args.batch}, "
          f"{args.images} images per measurement, medians of {args.rounds}")
    head = (f"{'pipeline':<18}{'version':<16}{'images/s':>10}{'stoker / this':>15}"
            f"{'1st batch s':>13}{'peak PSS MiB':>14}{'RSS MiB':>9}{'cores':>7}  per round")
    print(head)
    rows = []
    for name in args.only:
        if name not in series:
            continue
        v = med[name]
        version = next((d.get("version") for d in detail[name] if d.get("version")), "")
        if name.startswith("decode"):
            version = "libjpeg-turbo"
        if v is None:
            print(f"{name:<18}{version:<16}{'unavailable: ' + notes.get(name, '?')}")
            rows.append({"pipeline": name, "error": notes.get(name)})
            continue
        counterpart = COUNTERPART.get(name, "stoker-folder")
        r = ct.ratio(med.get(counterpart), v) if not name.startswith("stoker") else None
        row = {"pipeline": name, "version": version, "images_per_second": round(v, 1),
               "rounds": series[name], "stoker_over": r,
               "stoker_counterpart": counterpart if r is not None else None,
               "first_batch_seconds": mid(name, "first_batch_seconds"),
               "peak_pss_mib": mid(name, "peak_pss_mib"),
               "peak_rss_mib": mid(name, "peak_rss_mib"),
               "cpu_cores": mid(name, "cpu_cores"),
               "other_cores": [d.get("other_cores") for d in detail[name]]}
        rows.append(row)
        print(f"{name:<18}{version[:15]:<16}{v:>10,.0f}{fmt(r, 2, 'x'):>15}"
              f"{fmt(row['first_batch_seconds'], 2):>13}{fmt(row['peak_pss_mib']):>14}"
              f"{fmt(row['peak_rss_mib']):>9}{fmt(row['cpu_cores'], 2):>7}  "
              + ", ".join(f"{x:,.0f}" for x in series[name]))
    print("stoker / this: stoker-jpeg for ffcv-jpg, stoker-raw for ffcv-raw, stoker-folder-rst "
          "for the -rst rows, stoker-folder for the rest")
    kept = {k: [d.get("other_cores") for d in v] for k, v in detail.items() if v}
    print("cores used by other processes during the kept measurements: "
          + "; ".join(f"{k} {', '.join(fmt(x, 2) for x in v)}" for k, v in kept.items()))
    verdicts = []
    if transform == "train":
        for num, den, target in TARGETS:
            if num not in args.only or den not in args.only:
                continue
            r = ct.ratio(med.get(num), med.get(den))
            ok = r is not None and r >= target
            verdicts.append({"ratio": f"{num}/{den}", "value": r, "target": target,
                             "met": ok})
            print(f"  {num} / {den}: {fmt(r, 2, 'x')} (the project's goal: {target:g}x; "
                  f"{'reached' if ok else 'below it' if r is not None else 'n/a'})")
    for name, why in notes.items():
        if name in series and not series[name]:
            print(f"  note: {name} unavailable: {why}")
    return {"transform": transform, "rows": rows, "targets": verdicts}


# ------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(prog="bench/peers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=ct.DEFAULT_DATA,
                    help="ImageFolder of JPEGs (default: build/reuse %(default)s)")
    ap.add_argument("--images", type=int, default=12000,
                    help="images per measurement, after the first batch (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--transform", default="train,eval",
                    help="comma list of train, eval (default %(default)s)")
    ap.add_argument("--only", default=",".join(PIPELINES),
                    help="comma list of pipelines (default: all of %(default)s)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--decode-seconds", type=float, default=8.0)
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument("--max-other-cores", type=float, default=0.25)
    ap.add_argument("--budget", type=float, default=1800,
                    help="no retries once this many seconds have passed")
    ap.add_argument("--timeout", type=int, default=600, help="per measurement (s)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    # Worker-only arguments.
    ap.add_argument("--_worker", dest="worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--source", help=argparse.SUPPRESS)
    ap.add_argument("--beton", help=argparse.SUPPRESS)
    ap.add_argument("--ffcv-mode", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.data = os.path.abspath(args.data)

    if args.worker:
        WORKERS[args.worker](args)
        return 0

    args.only = [s for s in (x.strip() for x in args.only.split(",")) if s]
    transforms = [s for s in (x.strip() for x in args.transform.split(",")) if s]
    bad = [s for s in args.only if s not in PIPELINES] + \
        [t for t in transforms if t not in ("train", "eval")]
    if bad or args.images <= 0 or args.rounds <= 0 or args.threads <= 0:
        ap.error(f"bad arguments ({', '.join(bad) or 'counts must be > 0'})")
    args.build = os.path.abspath(args.build)
    args.stoker_exe = os.path.join(args.build, "stoker")
    if not os.access(args.stoker_exe, os.X_OK):
        sys.exit(f"peers: {args.stoker_exe} not built (./run.sh build)")
    # The stoker rows run the installed package: it must not be older than the build (a
    # rebuilt build/ without a reinstall would measure the previous code).
    import stoker._stoker as module
    if os.path.getmtime(module.__file__) < os.path.getmtime(args.stoker_exe):
        sys.exit(f"peers: {module.__file__} is older than {args.stoker_exe}: run "
                 "./run.sh bench --peers (it builds and reinstalls the wheel)")

    if args.data == ct.DEFAULT_DATA:
        subprocess.run([sys.executable, os.path.join(HERE, "make_photo_set.py"), "--out",
                        args.data, "--quiet"], check=True)
    args.data_stats = ct.data_stats(args.data)
    notes = {}
    args.packs = {n: ensure_pack(args, n) for n in PACKS if n in args.only}
    args.betons = {}
    for n in BETONS:
        if n in args.only:
            beton, err = ensure_beton(args, n)
            if err:
                notes[n] = err
            else:
                args.betons[n] = beton
    args.restart_data = None
    if any(n.endswith("-rst") for n in args.only):
        args.restart_data, err = ensure_restart_folder(args)
        if err:
            for n in args.only:
                if n.endswith("-rst"):
                    notes[n] = err
    args.decode_exe = ct.decode_baseline_exe(argparse.Namespace(build=args.build,
                                                                decode_baseline=None))
    for n in ("decode", "decode-rst"):
        if n in args.only and args.decode_exe is None:
            notes[n] = f"{args.build}/bench/decode_baseline not built"

    s = args.data_stats
    print(f"peers: {s['images']} images in {s['classes']} classes, mean {s['mean_megapixels']} "
          f"MP, {s['mean_file_kib']} KiB; {args.threads} threads, batch {args.batch}, "
          f"{args.images} images per measurement, {args.rounds} rounds, "
          f"{', '.join(transforms)}", flush=True)
    t_begin = time.perf_counter()
    results = []
    for transform in transforms:
        args.transform = transform
        series = {n: [] for n in args.only}
        detail = {n: [] for n in args.only}
        order = [n for n in args.only]
        for rnd in range(args.rounds):
            k = rnd % len(order)
            for name in order[k:] + order[:k]:
                if name in notes:
                    continue
                res, err = measure(args, name, t_begin)
                if err:
                    notes[name] = err
                    print(f"  {transform} round {rnd + 1}: {name:<14} unavailable: {err}",
                          flush=True)
                    continue
                series[name].append(res["images_per_second"])
                detail[name].append(res)
                print(f"  {transform} round {rnd + 1}: {name:<14} "
                      f"{res['images_per_second']:>9,.0f} images/s  first batch "
                      f"{fmt(res.get('first_batch_seconds'), 2)} s, peak PSS "
                      f"{fmt(res.get('peak_pss_mib'))} MiB, {res['cpu_cores']} cores "
                      f"({res['wall_seconds']} s; others {fmt(res['other_cores'], 2)} cores)",
                      flush=True)
        results.append(report(args, transform, series, detail, notes))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({
                "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "machine": {"nproc": os.cpu_count(), "cpu": ct.cpu_model()},
                "stoker": stoker_version(args.stoker_exe),
                "data": dict(s, path=args.data), "threads": args.threads,
                "batch": args.batch, "size": args.size, "images": args.images,
                "rounds": args.rounds, "results": results, "unavailable": notes,
            }, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
