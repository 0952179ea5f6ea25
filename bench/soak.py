"""The soak run of issue 18: a 2-rank gloo job trained for many epochs over storage that fails,
stalls and is killed, checked for every epoch delivered exactly once and flat memory.

    ./run.sh bench --soak            (or: .venv/bin/python bench/soak.py [--epochs 30] ...)

What it does (as root: the data is read through tests/fault/faultfs.cc, a FUSE passthrough):
  1. `stoker synth` writes an image folder; faultfs mounts it.
  2. The reference: each rank's batches of every epoch (stoker.Loader with rank/world_size, on
     the folder itself), as a digest per batch.
  3. `torchrun --nproc-per-node 2 --max-restarts N` runs a training loop on the mount: gloo
     (stoker.torch.init_process_group, which survives torchrun's restarts),
     one all_reduce per batch (the gradient sync that keeps DDP ranks in step), a checkpoint
     per batch (loader state, batch digests and sample indices so far), resume from the newest
     checkpoint every rank has (ranks are at most one batch apart).
  4. Meanwhile this script injects, at chosen points of the run: a burst of EIO the retries
     absorb; a burst that outlasts them (the job stops with a storage error naming the file and
     torchrun restarts it); a read stalled for some seconds; and K SIGKILLs of a random rank at
     random batches (torchrun restarts both ranks, which resume).
  5. It checks, for every epoch and rank, that the delivered batch digests equal the reference
     (the same bytes, in order, across every restart) and that the ranks' valid indices cover
     the dataset exactly once; and it reports each worker process's RSS at its epoch ends.

Prints a summary and writes it as JSON (--out/summary.json). Exit 1 when a check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

BATCH = 8
SIZE = 32
SEED = 7
WORLD = 2


def loader_for(data: str, **kw):
    import stoker
    return stoker.Loader(data, BATCH, transform="train", size=SIZE, seed=SEED, threads=1, **kw)


def batch_digest(batch) -> str:
    h = hashlib.blake2b(digest_size=8)
    h.update(batch.images.numpy().tobytes())
    h.update(batch.labels.numpy().tobytes())
    h.update(batch.valid.numpy().tobytes())
    return h.hexdigest()


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# --- the training job (one process per rank, started by torchrun) ------------------------------

def save(path: Path, ck: dict) -> None:
    """The newest checkpoint replaces the previous one, which is kept as .prev: after a kill the
    ranks may be one batch apart, and the one ahead goes back to the batch the other has."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(ck))
    if path.exists():
        os.replace(path, path.with_suffix(".prev"))
    os.replace(tmp, path)


def load_checkpoints(path: Path) -> list:
    out = []
    for p in (path, path.with_suffix(".prev")):
        try:
            out.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            pass
    return out


def worker(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    import stoker.torch
    stoker.torch.init_process_group("gloo")
    rank = dist.get_rank()
    with open(Path(args.out) / "starts", "a") as f:
        f.write(f"{rank} {os.getpid()}\n")
    ck_path = Path(args.out) / f"rank{rank}.json"
    candidates = load_checkpoints(ck_path)
    newest = max((c["step"] for c in candidates), default=0)
    agreed = torch.tensor([newest])
    dist.all_reduce(agreed, op=dist.ReduceOp.MIN)
    step = int(agreed.item())
    ck = next((c for c in candidates if c["step"] == step), None)
    if ck is None:
        assert step == 0, f"rank {rank}: no checkpoint of step {step} in {candidates}"
        ck = {"step": 0, "epoch": 0, "loader": None, "digests": {}, "seen": {}}
    loader = loader_for(args.data)
    with open(Path(args.out) / "rss.jsonl", "a") as rss_log:
        for epoch in range(ck["epoch"], args.epochs):
            if ck["loader"] is not None:
                loader.load_state_dict(ck["loader"])
            loader.set_epoch(epoch)
            digests = ck["digests"].setdefault(str(epoch), [])
            seen = ck["seen"].setdefault(str(epoch), [])
            for batch in loader:
                digests.append(batch_digest(batch))
                seen += batch.indices[batch.valid].tolist()
                dist.all_reduce(torch.ones(1))  # the training step's gradient sync
                ck["step"] += 1
                ck["loader"] = loader.state_dict()
                save(ck_path, ck)
                progress = Path(args.out) / f"progress{rank}"
                progress.write_text(str(ck["step"]))
            ck["epoch"], ck["loader"] = epoch + 1, None
            save(ck_path, ck)
            rss_log.write(json.dumps({"pid": os.getpid(), "rank": rank, "epoch": epoch,
                                      "rss_kib": rss_kib()}) + "\n")
            rss_log.flush()
    loader.close()
    dist.destroy_process_group()


# --- the controller -------------------------------------------------------------------------

def reference(data: str, epochs: int) -> dict:
    out = {}
    for rank in range(WORLD):
        with loader_for(data, rank=rank, world_size=WORLD) as loader:
            for epoch in range(epochs):
                loader.set_epoch(epoch)
                out[(rank, epoch)] = [batch_digest(b) for b in loader]
    return out


def worker_pids(agent: int) -> list:
    """The worker processes torchrun (pid AGENT) runs now: its children."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == agent:
            pids.append(int(proc.name))
    return pids


def progress(out: Path) -> int:
    try:
        return int((out / "progress0").read_text() or 0)
    except (OSError, ValueError):
        return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--images", type=int, default=480)
    ap.add_argument("--stall", type=float, default=3.0, help="seconds a read stays stalled")
    ap.add_argument("--seed", type=int, default=None, help="where the kills land (default: "
                    "random, printed)")
    ap.add_argument("--out", default=None, help="work folder (default: a new one in /tmp)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0

    from faultfs import FaultFS, faultfs_binary

    out = Path(args.out or subprocess.run(["mktemp", "-d", "/tmp/stoker-soak.XXXXXX"],
                                          capture_output=True, text=True).stdout.strip())
    out.mkdir(parents=True, exist_ok=True)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    rng = random.Random(seed)
    stoker_cmd = os.environ.get("STOKER_BIN") or str(Path(sys.executable).parent / "stoker")
    folder = out / "folder"
    if not folder.exists():
        subprocess.run([stoker_cmd, "synth", str(folder), "--images", str(args.images),
                        "--classes", "4"], check=True, capture_output=True)
    print(f"soak: {args.images} images, {WORLD} ranks, {args.epochs} epochs, batch {BATCH}, "
          f"{args.kills} kills (seed {seed}), work in {out}", flush=True)
    t0 = time.monotonic()
    want = reference(str(folder), args.epochs)
    steps = len(want[(0, 0)]) * args.epochs
    print(f"soak: reference epochs in {time.monotonic() - t0:.1f} s, {steps} steps per rank",
          flush=True)

    # The faults, by the step of rank 0 at which they start.
    events = [(int(steps * 0.2), "eio-absorbed"), (int(steps * 0.4), "eio-outlasting"),
              (int(steps * 0.6), "stall")]
    events += [(s, "kill") for s in sorted(rng.sample(range(5, steps - 5), args.kills))]
    events.sort()
    for f in out.glob("rank*.json*"):
        f.unlink()
    for f in list(out.glob("progress*")) + [out / "rss.jsonl", out / "starts"]:
        if not f.exists():
            continue
        f.unlink()

    binary = faultfs_binary(Path(os.environ.get("STOKER_CACHE_DIR",
                                                Path.home() / ".cache" / "stoker")) / "faultfs")
    log = []
    with FaultFS(binary, folder, out / "fs") as fs:
        # torchrun restarts the worker group after each failure, as a user's job is run; the
        # workers open their group with stoker.torch.init_process_group, which keeps each
        # attempt's gloo addresses apart in torchrun's reused agent store.
        torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                    f"--nproc-per-node={WORLD}", f"--max-restarts={args.kills + 5}",
                    str(Path(__file__).resolve()), "--worker", "--out", str(out),
                    "--data", str(fs.mount), "--epochs", str(args.epochs)]
        job_log = (out / "job.log").open("w")
        t_job = time.monotonic()
        job = subprocess.Popen(torchrun, stdout=job_log, stderr=subprocess.STDOUT,
                               env=dict(os.environ, OMP_NUM_THREADS="1"))
        killed_groups = set()
        while job.poll() is None:
            now = progress(out)
            while events and now >= events[0][0]:
                at, what = events.pop(0)
                if what == "kill":
                    # One kill per worker group: the next waits for the restarted group.
                    pids = worker_pids(job.pid)
                    if len(pids) < WORLD or set(pids) & killed_groups:
                        events.insert(0, (at, what))
                        break
                    killed_groups.update(pids)
                    os.kill(rng.choice(pids), signal.SIGKILL)
                elif what == "eio-absorbed":
                    fs.rules("read /*.jpg EIO 2\n")  # two failed reads, within the 3 tries
                elif what == "eio-outlasting":
                    fs.rules("read /*.jpg EIO\n")
                    time.sleep(1.0)  # longer than the retries' backoff (0.05 + 0.2 s)
                    fs.rules("")
                elif what == "stall":
                    fs.rules("read /*.jpg stall 1\n")
                    time.sleep(args.stall)
                    fs.rules("")
                log.append({"step": now, "event": what, "t": round(time.monotonic() - t_job, 2)})
                print(f"soak: step {now}: {what}", flush=True)
            time.sleep(0.01)
        job_log.close()
        faults = fs.log()
    wall = time.monotonic() - t_job

    failures = []
    if job.returncode != 0:
        failures.append(f"torchrun exited {job.returncode} (see {out / 'job.log'})")
    if events:
        failures.append(f"events never reached: {events}")
    epochs_ok = 0
    for epoch in range(args.epochs):
        seen = []
        ok = True
        for rank in range(WORLD):
            ck = json.loads((out / f"rank{rank}.json").read_text()) if (
                out / f"rank{rank}.json").exists() else {"digests": {}, "seen": {}}
            got = ck["digests"].get(str(epoch))
            if got != want[(rank, epoch)]:
                ok = False
                failures.append(f"epoch {epoch} rank {rank}: batches differ from the reference")
            seen += ck["seen"].get(str(epoch), [])
        if sorted(seen) != list(range(args.images)):
            ok = False
            failures.append(f"epoch {epoch}: {len(seen)} indices, {len(set(seen))} distinct, "
                            f"not each of the {args.images} once")
        epochs_ok += ok
    text = (out / "job.log").read_text(errors="replace")
    storage_errors = [line for line in text.splitlines() if "StorageError:" in line]
    starts = len((out / "starts").read_text().splitlines()) // WORLD
    rss = [json.loads(line) for line in (out / "rss.jsonl").read_text().splitlines()]
    by_pid = {}
    for r in rss:
        by_pid.setdefault(r["pid"], []).append(r)
    lifetimes = []
    for pid, rows in by_pid.items():
        rows.sort(key=lambda r: r["epoch"])
        lifetimes.append({"pid": pid, "rank": rows[0]["rank"], "epochs": len(rows),
                          "first_mib": round(rows[0]["rss_kib"] / 1024, 1),
                          "last_mib": round(rows[-1]["rss_kib"] / 1024, 1),
                          "max_mib": round(max(r["rss_kib"] for r in rows) / 1024, 1)})
    by_epoch = {}
    for r in rss:
        by_epoch[r["epoch"]] = max(by_epoch.get(r["epoch"], 0), r["rss_kib"])
    rss_by_epoch = [round(by_epoch[e] / 1024, 1) for e in sorted(by_epoch)]
    longest = max(lifetimes, key=lambda x: x["epochs"]) if lifetimes else None
    # Flat: the longest-lived worker ends within 8 MiB of its first epoch's RSS.
    if longest is None or longest["last_mib"] - longest["first_mib"] > 8:
        failures.append(f"RSS not flat: {longest}")
    summary = {"seed": seed, "images": args.images, "epochs": args.epochs, "ranks": WORLD,
               "steps_per_rank": steps, "wall_s": round(wall, 1), "events": log,
               "faults_injected": {k: sum(f.startswith(k) for f in faults)
                                   for k in ("EIO", "stall", "resumed")},
               "worker_group_starts": starts, "storage_errors": storage_errors,
               "epochs_exactly_once_and_identical": epochs_ok,
               "rss_mib_by_epoch": rss_by_epoch, "longest_lived_worker": longest,
               "worker_rss": lifetimes,
               "failures": failures}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    print(f"soak: {'FAILED' if failures else 'OK'}: {epochs_ok}/{args.epochs} epochs exactly "
          f"once with the reference batches, {len(log)} events, {wall:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
