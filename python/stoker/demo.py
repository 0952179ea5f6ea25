"""The demo: the two failures of scaling a training job to more GPUs, each shown with numbers,
named by the doctor, and fixed.

  python -m stoker.demo [--dir DIR] [--images N] [--seconds S]

Story 1, the CPU-bound input pipeline: a torchvision DataLoader (ImageFolder + the ImageNet
example's transform, as many workers as cores) feeds 2, then 8 simulated GPUs. The GPUs are
timed sleeps: each trains at a rate calibrated on this machine (the DataLoader's own rate /
1.6), so the story reads the same on a laptop and a server. Throughput stays flat, the CPUs
are pinned, the GPUs idle; stoker.torch.watch() measures how long each step waited. Then
stoker feeds the same 8, one change at a time: its loader on the same JPEGs, then the same
images packed once.

Story 2, the unsharded dataset: two ranks (torch.distributed, gloo, on this machine) each
build a DataLoader without a DistributedSampler, so both train on every sample;
stoker.torch.audit() names it with numbers; with a DistributedSampler the shards are
disjoint and complete.

Needs torch and torchvision (./run.sh demo runs it in the reference venv that has both).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import stoker
import stoker.torch

BATCH = 64
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _cpu_busy():
    """(busy, total) CPU ticks of the whole machine so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


_MIN_STEPS = 3  # timed steps a measurement needs, whatever its duration


def _feed(batches, gpus: int, gpu_rate: float, seconds: float, name: str):
    """Consumes `batches` as `gpus` simulated GPUs training at `gpu_rate` images/s each would:
    one step of a batch takes BATCH / (gpus * gpu_rate) seconds (a sleep). Times each step and
    its wait for the batch, as stoker.torch.watch does, and judges them by the doctor's rule for
    a training loop's data time (diagnose_step_times: the thresholds of docs/doctor.md, "Waiting
    for data"). Returns images/s delivered, the machine's CPU busy share over the run and the
    verdict, whose numbers.steps.data_fraction is the share of the time the GPUs idled."""
    from . import _stoker

    step = BATCH / (gpus * gpu_rate)
    busy0, total0 = _cpu_busy()
    start = time.perf_counter()
    images = 0
    steps, waits = [], []
    previous = None

    def done() -> bool:
        # At least a few timed steps, however slow the machine: the first batch of a
        # DataLoader can take longer than `seconds` (worker start-up on a loaded machine).
        return time.perf_counter() - start >= seconds and len(steps) >= _MIN_STEPS

    while not done():
        it = iter(batches())
        while True:
            asked = time.perf_counter()
            try:
                next(it)
            except StopIteration:
                break
            arrived = time.perf_counter()
            if previous is not None:  # a step: from one batch's arrival to the next's
                steps.append(arrived - previous)
                waits.append(arrived - asked)
            previous = arrived
            images += BATCH
            time.sleep(step)
            if done():
                break
    took = time.perf_counter() - start
    busy1, total1 = _cpu_busy()
    cpu = (busy1 - busy0) / max(1, total1 - total0)
    verdict = json.loads(_stoker.diagnose_step_times(steps, waits, name))
    return images / took, cpu, verdict


def _said(verdict) -> str:
    """The verdict as the demo prints it: "input-bound (mildly)" for a mild wait."""
    mild = verdict["verdict"].startswith("input-bound") and "mildly" in verdict["summary"]
    return verdict["verdict"] + (" (mildly)" if mild else "")


def _torchvision_loader(data: Path, workers: int):
    import torch.utils.data as tud
    import torchvision
    import torchvision.transforms as T

    tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize(MEAN, STD)])
    ds = torchvision.datasets.ImageFolder(str(data), tf)
    return tud.DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers,
                          persistent_workers=workers > 0, drop_last=True)


def _say(text=""):
    print(text, flush=True)


def story_one(data: Path, packed: Path, seconds: float, cores: int) -> None:
    _say("== Story 1: more GPUs, same speed (the input pipeline is CPU-bound)")
    tv = _torchvision_loader(data, cores)
    # Calibrate: how fast this machine's DataLoader delivers when nothing else runs.
    rate, _, _ = _feed(lambda: tv, 1, 1e9, seconds, "DataLoader")
    gpu_rate = rate / 1.6
    _say(f"   A torchvision DataLoader ({cores} workers, RandomResizedCrop 224 + flip + "
         f"normalize) delivers {rate:.0f} images/s here.")
    _say(f"   Each simulated GPU (a timed sleep, not a real GPU) trains on {gpu_rate:.0f} "
         f"images/s: {2 * gpu_rate:.0f} for 2 GPUs, {8 * gpu_rate:.0f} for 8.")
    _say("   Each step is timed as stoker.torch.watch times a DataLoader, and judged by the "
         "doctor's rule: a step waiting under 15 % of its time for data is healthy, 15-30 % "
         "input-bound mildly, 30 % or more input-bound.")
    results = []
    for gpus in (2, 8):
        delivered, cpu, verdict = _feed(lambda: tv, gpus, gpu_rate, seconds, "DataLoader")
        idle = verdict["numbers"]["steps"]["data_fraction"]
        results.append((gpus, delivered, cpu, verdict, idle))
        _say(f"   DataLoader, {gpus} GPUs: {delivered:.0f} of {gpus * gpu_rate:.0f} images/s, "
             f"GPUs idle {100 * idle:.0f} %, CPUs {100 * cpu:.0f} % busy "
             f"-> {_said(verdict)}")
    del tv
    # The doctor's reading of the 8-GPU run, from what was measured above.
    gpus, delivered, cpu, verdict, idle = results[-1]
    speedup = delivered / max(results[0][1], 1e-9)
    if verdict["verdict"] == "input-bound" and cpu >= 0.85:
        _say(f"   The doctor: input-bound on the CPUs ({100 * cpu:.0f} % busy): 4x the GPUs "
             f"gave {speedup:.1f}x the images/s, each step waits {100 * idle:.0f} % of its "
             "time for decoding and augmentation.")
    else:
        _say(f"   The doctor: {_said(verdict)} ({verdict['confidence']} confidence): "
             f"{verdict['summary']}")
    _say("   Now stoker feeds the same 8 GPUs, one change at a time:")
    for name, source in (("stoker.Loader on the same JPEGs", data),
                         ("the same images packed once (stoker pack --mode raw "
                          "--max-side 256)", packed)):
        loader = stoker.Loader(source, BATCH, transform="train", size=224, threads=cores)

        def batches(loader=loader):
            return iter(loader)

        delivered, cpu, verdict = _feed(batches, 8, gpu_rate, seconds, "stoker.Loader")
        idle = verdict["numbers"]["steps"]["data_fraction"]
        loader.close()
        _say(f"   {name}: {delivered:.0f} of {8 * gpu_rate:.0f} images/s, GPUs idle "
             f"{100 * idle:.0f} %, CPUs {100 * cpu:.0f} % busy -> {_said(verdict)}")
    _say("   Your own job: wrap its DataLoader, `loader = stoker.torch.watch(loader)`, and "
         "print(loader.diagnose()) after an epoch; or measure the data: "
         "`stoker doctor DATA --gpus 8 --gpu-rate R --html report.html`.")


def _rank(rank: int, world: int, port: int, data: str, out: str, sharded: bool) -> None:
    import json

    import torch.distributed as dist
    import torch.utils.data as tud
    import torchvision
    import torchvision.transforms as T

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        tf = T.Compose([T.Resize(32), T.CenterCrop(32), T.ToTensor()])
        folder = torchvision.datasets.ImageFolder(data, tf)
        ds = tud.Subset(folder, range(min(96, len(folder))))
        sampler = tud.distributed.DistributedSampler(ds, seed=1) if sharded else None
        loader = stoker.torch.watch(tud.DataLoader(ds, batch_size=16, sampler=sampler,
                                                   shuffle=sampler is None))
        for _ in loader:
            pass
        report = stoker.torch.audit(loader)
        if rank == 0:
            Path(out).write_text(json.dumps(report))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def story_two(data: Path) -> None:
    import json

    import torch.multiprocessing as mp

    _say("")
    _say("== Story 2: every rank trains on the same samples (the data is not sharded)")
    with tempfile.TemporaryDirectory() as tmp:
        for sharded in (False, True):
            out = os.path.join(tmp, f"audit-{sharded}.json")
            mp.spawn(_rank, args=(2, _free_port(), str(data), out, sharded), nprocs=2)
            report = json.loads(Path(out).read_text())
            counts = [r["count"] for r in report["ranks"]]
            how = ("DataLoader with a DistributedSampler" if sharded
                   else "DataLoader without a DistributedSampler")
            size = report["ranks"][0]["dataset_size"]
            _say(f"   2 ranks, {how}: samples read per rank {counts} of {size} -> "
                 f"{report['verdict']}")
            for f in report["findings"]:
                if f["pattern"] != "straggler":
                    _say(f"     - {f['pattern']}: {f['message']}")
            if sharded:
                c = report["checks"]
                _say(f"     shards disjoint {c['disjoint']}, complete {c['complete']}, balanced "
                     f"{c['balanced']}")
    _say("   Your own job: call stoker.torch.audit(loader) on every rank after an epoch (it "
         "takes a DataLoader or a stoker.Loader).")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="build/demo-data", help="where the photo set is made")
    ap.add_argument("--images", type=int, default=512)
    ap.add_argument("--seconds", type=float, default=4.0, help="per measurement")
    a = ap.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    cli = shutil.which("stoker") or str(Path(sys.executable).parent / "stoker")
    data = Path(a.dir)
    stamp = data / ".stoker-synth"
    if not stamp.exists() or stamp.read_text().split()[0] != f"images={a.images}":
        shutil.rmtree(data, ignore_errors=True)
        subprocess.run([cli, "synth", str(data), "--images", str(a.images)], check=True,
                       stdout=subprocess.DEVNULL)
        stamp.write_text(f"images={a.images} v1\n")
    packed = Path(str(data) + "-raw256")
    # --force: the demo's own copy; a set generated anew replaces its old pack.
    subprocess.run([cli, "pack", str(data), str(packed), "--mode", "raw", "--max-side", "256",
                    "--force"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _say(f"demo: {a.images} photo-like JPEGs in {data}, {cores} cores\n")
    story_one(data, packed, a.seconds, cores)
    story_two(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
