"""One rank of a distributed test, started by torchrun (conftest.launch): MASTER_ADDR,
MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK and
TORCHELASTIC_RESTART_COUNT come from torchrun's environment.

argv[1] is a JSON object: {"scenario": ..., "out": folder, "per_rank": [{...}, ...], ...};
rank r adds per_rank[r] to it and writes its result to out/rank<r>.json. The loader is always
built without rank/world_size, so both come from the initialised gloo process group.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sys
from pathlib import Path
from datetime import timedelta

import torch
import torch.distributed as dist

import stoker
import stoker.torch


def make_loader(args, **overrides):
    kwargs = dict(transform="eval", size=16, batch_size=args["batch_size"],
                  seed=args.get("seed", 0), mode=args.get("mode", "exact"), threads=1,
                  shard_window=args.get("shard_window"))
    kwargs.update(overrides)
    return stoker.Loader(args["data"], **kwargs)


def run_epochs(args):
    """Every epoch of args["epochs"]: this rank's valid indices and batch count."""
    loader = make_loader(args)
    result = {"len": len(loader), "rank": loader.rank, "world_size": loader.world_size,
              "epochs": {}}
    for epoch in args["epochs"]:
        loader.set_epoch(epoch)
        valid, batches, global_valid = [], 0, []
        for batch in loader:
            assert batch.world_size == dist.get_world_size()
            valid += batch.indices[batch.valid].tolist()
            global_valid.append(batch.global_valid)
            batches += 1
        result["epochs"][str(epoch)] = {"valid": valid, "batches": batches,
                                        "global_valid": global_valid}
    result["state"] = loader.state_dict()
    loader.close()
    return result


def run_save(args):
    """Takes `stop_after` batches of epoch `epoch`, then saves the state."""
    loader = make_loader(args)
    loader.set_epoch(args["epoch"])
    valid = []
    for j, batch in enumerate(loader):
        valid += batch.indices[batch.valid].tolist()
        if j + 1 == args["stop_after"]:
            break
    state = loader.state_dict()
    states = [None] * dist.get_world_size()
    dist.all_gather_object(states, state)
    return {"valid": valid, "state": state, "same_state_everywhere": all(
        s == state for s in states)}


def run_resume(args):
    """Loads the state (a different world size), runs the rest of the epoch, then one more."""
    loader = make_loader(args)
    loader.load_state_dict(args["state"])
    epoch = args["state"]["epoch"]
    loader.set_epoch(epoch)  # the usual loop: set_epoch of the saved epoch keeps the offset
    valid, batches = [], 0
    for batch in loader:
        valid += batch.indices[batch.valid].tolist()
        batches += 1
    loader.set_epoch(epoch + 1)
    next_valid = [i for b in loader for i in b.indices[b.valid].tolist()]
    return {"valid": valid, "batches": batches, "next_valid": next_valid}


def run_train(args):
    """A tiny DDP model trained with masked_mean on every batch. At every step the DDP
    gradient is compared with the gradient of the plain mean over the step's valid samples
    of all ranks (gathered here), which is what masked_mean promises."""
    torch.manual_seed(0)
    loader = make_loader(args, size=8)
    classes = len(loader.classes)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, classes))
    reference = copy.deepcopy(model)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    world = dist.get_world_size()
    losses, padding_only, max_grad_error, steps = [], 0, 0.0, 0
    for epoch in range(args.get("epochs", 2)):
        loader.set_epoch(epoch)
        for batch in loader:
            if not bool(batch.valid.any()):
                padding_only += 1
            optimizer.zero_grad()
            per_sample = torch.nn.functional.cross_entropy(ddp(batch.images), batch.labels,
                                                           reduction="none")
            loss = stoker.torch.masked_mean(per_sample, batch)
            loss.backward()

            # Reference: the global mean over all ranks' valid samples, on one replica.
            gathered = [None] * world
            dist.all_gather_object(gathered, (batch.images[batch.valid],
                                              batch.labels[batch.valid]))
            images = torch.cat([g[0] for g in gathered])
            labels = torch.cat([g[1] for g in gathered])
            assert images.shape[0] == batch.global_valid
            reference.load_state_dict(model.state_dict())
            reference.zero_grad()
            ref_loss = torch.nn.functional.cross_entropy(reference(images), labels)
            ref_loss.backward()
            for p, q in zip(model.parameters(), reference.parameters()):
                max_grad_error = max(max_grad_error, float((p.grad - q.grad).abs().max()))

            optimizer.step()
            losses.append(float(loss))
            steps += 1
    assert all(math.isfinite(x) for x in losses), losses
    assert all(bool(torch.isfinite(p).all()) for p in model.parameters())
    return {"steps": steps, "losses": losses, "padding_only": padding_only,
            "max_grad_error": max_grad_error}


def run_fingerprint(args):
    """Each rank gets its own folder: building the loader must fail on every rank."""
    try:
        make_loader(args)
    except stoker.Error as e:
        return {"error": str(e), "type": type(e).__name__}
    return {"error": None}


def run_audit(args):
    """One audit pattern (args["pattern"]), then stoker.torch.audit on every rank."""
    import time

    pattern = args["pattern"]
    rank = dist.get_rank()
    if pattern == "no-sharding":  # every rank builds its loader for a world of one
        loader = make_loader(args, rank=0, world_size=1)
    else:
        loader = make_loader(args)
    loader.set_epoch(1)
    for batch in loader:
        if pattern == "single-rank-work" and rank != 0:
            break  # the other ranks take nothing
        if pattern == "straggler" and rank == 1:
            time.sleep(0.05)  # a slow rank: its training step takes longer
    if pattern == "single-rank-work" and rank != 0:
        loader.close()
        loader = make_loader(args, rank=rank, world_size=dist.get_world_size())
    report = stoker.torch.audit(loader)
    loader.close()
    return report


def run_dataloader_audit(args):
    """A plain torch DataLoader (no stoker.Loader) over a Dataset whose reads take a while,
    with (pattern "distributed-sampler") or without ("no-sampler") a DistributedSampler,
    timed by stoker.torch.watch, then stoker.torch.audit on every rank."""
    import time

    import torch
    from torch.utils.data import DataLoader, Dataset
    from torch.utils.data.distributed import DistributedSampler

    class SlowSquares(Dataset):
        def __len__(self):
            return args["dataset_size"]

        def __getitem__(self, i):
            time.sleep(0.002)  # a read that costs something, so the step waits for data
            return torch.tensor([float(i)]), i % 3

    data = SlowSquares()
    sampler = (DistributedSampler(data, shuffle=True, seed=5)
               if args["pattern"] == "distributed-sampler" else None)
    loader = stoker.torch.watch(DataLoader(data, batch_size=args["batch_size"],
                                           shuffle=sampler is None, sampler=sampler))
    if sampler is not None:
        sampler.set_epoch(1)
    for _ in loader:
        time.sleep(0.001)  # the training step
    stats = loader.stats()
    return {"audit": stoker.torch.audit(loader), "stats": stats, "diagnosis": loader.diagnose()}


def run_elastic(args):
    """One epoch with a checkpoint after every step, under torchrun --max-restarts. In the
    first attempt, rank args["crash_rank"] dies (exit 17) in step args["crash_step"]; torchrun
    restarts every rank, which resume from the checkpoint. Every attempt logs each step's
    valid indices (log/attempt<A>.rank<R>.jsonl) so that the test can check that the committed
    steps of the first attempt and the steps of the second are each sample exactly once."""
    attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    rank = dist.get_rank()
    checkpoint = Path(args["checkpoint"])
    loader = make_loader(args, threads=None)  # the default: CPUs / LOCAL_WORLD_SIZE
    committed = 0
    if checkpoint.exists():
        saved = json.loads(checkpoint.read_text())
        loader.load_state_dict(saved["state"])
        committed = saved["step"]
    loader.set_epoch(args["epoch"])  # the saved epoch keeps the saved position
    log_dir = Path(args["log"])
    log_dir.mkdir(exist_ok=True)
    valid, step = [], committed
    with open(log_dir / f"attempt{attempt}.rank{rank}.jsonl", "a") as log:
        for batch in loader:
            step += 1
            indices = batch.indices[batch.valid].tolist()
            valid += indices
            log.write(json.dumps({"step": step, "valid": indices}) + "\n")
            log.flush()
            if attempt == 0 and rank == args["crash_rank"] and step == args["crash_step"]:
                os._exit(17)  # a rank dies mid-epoch: torchrun restarts the group
            dist.barrier()  # every rank has taken this step: it can be committed
            if rank == 0:  # the state is the same on every rank
                tmp = checkpoint.with_name(checkpoint.name + ".tmp")
                tmp.write_text(json.dumps({"state": loader.state_dict(), "step": step}))
                tmp.replace(checkpoint)
    return {"attempt": attempt, "resumed_from_step": committed, "steps": step,
            "valid": valid, "group_rank": int(os.environ["GROUP_RANK"]),
            "local_world_size": int(os.environ["LOCAL_WORLD_SIZE"]),
            "stats": loader.stats(advance=False)}


def run_nodes(args):
    """Epochs on the loader's own per-node defaults (threads from the node's ranks), with
    where this rank runs: its node (GROUP_RANK), the node's ranks, and the node's cache."""
    loader = make_loader(args, threads=None)
    result = {"group_rank": int(os.environ["GROUP_RANK"]),
              "local_world_size": int(os.environ["LOCAL_WORLD_SIZE"]),
              "cpus": len(os.sched_getaffinity(0)), "epochs": {}}
    for epoch in args["epochs"]:
        loader.set_epoch(epoch)
        valid = []
        for batch in loader:
            valid += batch.indices[batch.valid].tolist()
        result["epochs"][str(epoch)] = valid
    result["threads"] = loader.stats()["threads"]
    result["cache"] = sorted(os.listdir(os.environ["STOKER_CACHE_DIR"]))
    loader.close()
    return result


SCENARIOS = {"nodes": run_nodes, "elastic": run_elastic, "epochs": run_epochs, "save": run_save, "resume": run_resume, "train": run_train,
             "fingerprint": run_fingerprint, "audit": run_audit,
             "dataloader-audit": run_dataloader_audit}


def main():
    args = json.loads(sys.argv[1])
    rank = int(os.environ["RANK"])
    if args["per_rank"]:
        args.update(args["per_rank"][rank])
    stoker.torch.init_process_group("gloo", timeout=timedelta(seconds=60))
    try:
        result = SCENARIOS[args["scenario"]](args)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    with open(Path(args["out"]) / f"rank{rank}.json", "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
