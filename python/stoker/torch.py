"""PyTorch helpers for stoker batches."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from typing import Any, Dict, List, Optional

__all__ = ["masked_mean", "audit", "analyse_audit", "init_process_group", "DistributedSampler",
           "SamplerBatch"]


# -- the process group under torchrun -----------------------------------------------------------

def init_process_group(backend: str, timeout: Optional[timedelta] = None) -> None:
    """torch.distributed.init_process_group(backend) from torchrun's environment, one that also
    survives torchrun's restarts (--max-restarts).

    After a restart torchrun hands the new workers the same agent store (MASTER_ADDR,
    MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE=True) without a per-attempt key prefix, so the
    new group can read the dead attempt's addresses and fail ("Gloo connectFullMesh failed ...
    Connection refused") or hang (seen here with torch 2.13 and 2.14 on most restarts; upstream
    pytorch/pytorch#167288 reports it for NCCL). Here each attempt's keys live under its own
    prefix (TORCHELASTIC_RESTART_COUNT). Outside torchrun's agent store this is exactly
    init_process_group(backend, init_method="env://")."""
    import torch.distributed as dist

    kwargs = {} if timeout is None else {"timeout": timeout}
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        dist.init_process_group(backend, init_method="env://", **kwargs)
        return
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                          is_master=False, **kwargs)
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    dist.init_process_group(backend, store=dist.PrefixStore(f"stoker/attempt{attempt}", store),
                            rank=int(os.environ["RANK"]),
                            world_size=int(os.environ["WORLD_SIZE"]), **kwargs)


# -- the device hand-off (stoker.Loader(device='cuda')) -----------------------------------------

def current_device() -> int:
    """torch's current CUDA device (0 when torch has no CUDA: the core then says why)."""
    import torch

    return torch.cuda.current_device() if torch.cuda.is_available() else 0


def current_stream(device: int) -> int:
    """torch's current stream on `device`, as the cudaStream_t integer the core takes."""
    import torch

    return torch.cuda.current_stream(device).cuda_stream


def device_tensors(images, labels, indices, valid, output: str, device: int):
    """Tensors of a device batch: `images` wraps the batch's device memory without a copy
    (its __cuda_array_interface__ owner stays alive with the tensor; freeing the tensor lets
    the core reuse the buffer after the work queued on the current stream so far). Labels and
    the valid mask are copied to the device on the current stream; indices stay on the host."""
    import torch

    target = torch.device("cuda", device)
    images = torch.as_tensor(images, device=target)
    if output == "bfloat16":
        images = images.view(torch.bfloat16)  # the bits travel as int16
    return (images, torch.from_numpy(labels).to(target), torch.from_numpy(indices),
            torch.from_numpy(valid).to(target))


def masked_mean(per_sample_loss, batch, world_size: Optional[int] = None):
    """The loss term whose DDP-averaged gradient is that of the exact global mean.

    Returns ``(loss * valid).sum() * W / global_valid`` for this rank, where ``valid`` is
    the batch's mask, ``global_valid`` = G the valid slots of this step over all ranks, and
    W the world size.

    Derivation. Let V_r be the valid slots of rank r at this step, so that G = sum_r |V_r|
    is the same number on every rank (the batch carries it; no communication needed). The
    exact mean over the step's samples is M = (1/G) * sum_r sum_{i in V_r} loss_i.
    DistributedDataParallel all-reduces gradients and divides by W, so rank r contributing
    L_r = (W / G) * sum_{i in V_r} loss_i gives the averaged gradient
    (1/W) * sum_r grad L_r = (1/G) * sum_r sum_{i in V_r} grad loss_i = grad M.
    Padding slots (duplicates that keep every rank in lockstep) count zero, so no sample
    counts twice; a rank whose batch is all padding contributes an exact zero (still
    connected to the graph, so DDP's all-reduce runs and nothing hangs); G >= 1 so nothing
    is divided by zero. The returned value on one rank is not M itself (M is the average of
    the W returned values); without DDP (W = 1) it is M.

    Invalid slots are zeroed with masked_fill rather than multiplied, so that a NaN or inf in
    a padding slot does not poison the sum.

    Args:
      per_sample_loss: [B] tensor, e.g. ``cross_entropy(logits, labels, reduction='none')``.
      batch: a stoker.Batch (needs ``valid``, ``global_valid`` and ``world_size``).
      world_size: overrides the batch's world size (default: the loader's, else the
        initialised torch.distributed group's, else 1).
    """
    import torch

    if per_sample_loss.dim() != 1 or per_sample_loss.shape[0] != batch.valid.shape[0]:
        raise ValueError(
            f"per_sample_loss must have shape [{batch.valid.shape[0]}] "
            f"(got {list(per_sample_loss.shape)}); use reduction='none'")
    if world_size is None:
        world_size = getattr(batch, "world_size", None)
    if world_size is None:
        dist = torch.distributed
        world_size = (dist.get_world_size()
                      if dist.is_available() and dist.is_initialized() else 1)
    global_valid = int(batch.global_valid)
    if global_valid < 1:
        raise ValueError(f"batch.global_valid must be >= 1 (got {global_valid}); "
                         "this mode has no valid sample at this step")
    valid = batch.valid.to(device=per_sample_loss.device, dtype=torch.bool)
    total = per_sample_loss.masked_fill(~valid, 0.0).sum()
    return total * (float(world_size) / float(global_valid))


# -- any DataLoader, timed ------------------------------------------------------------------

class WatchedLoader:
    """A ``torch.utils.data.DataLoader`` (or any iterable of batches) iterated as usual, with
    each step timed: how long ``next()`` waited for the batch against the whole step (from one
    batch's arrival to the next's). Made by :func:`watch`; ``len()`` and attributes are the
    wrapped loader's. Keeps the times of the current pass (``iter()`` starts a new one)."""

    def __init__(self, loader) -> None:
        self.loader = loader
        self._waits: List[float] = []
        self._steps: List[float] = []
        self._images = 0

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self):
        self._waits, self._steps, self._images = [], [], 0
        it = iter(self.loader)
        previous = None
        while True:
            asked = time.perf_counter()
            try:
                batch = next(it)
            except StopIteration:
                return
            arrived = time.perf_counter()
            wait = arrived - asked
            # The first batch's step is its wait alone (the workers' start); later ones run
            # from the previous batch's arrival.
            self._steps.append(wait if previous is None else arrived - previous)
            self._waits.append(wait)
            self._images += _batch_len(batch)
            previous = arrived
            yield batch

    def stats(self) -> Dict[str, Any]:
        """Steps, images, seconds waited and in all, and the per-step lists of this pass."""
        wall, wait = sum(self._steps), sum(self._waits)
        return {"batches": len(self._steps), "images": self._images, "wait_seconds": wait,
                "wall_seconds": wall, "wait_fraction": wait / wall if wall > 0 else 0.0,
                "images_per_second": self._images / wall if wall > 0 else 0.0,
                "step_seconds": list(self._steps), "wait_per_step": list(self._waits)}

    def diagnose(self) -> Dict[str, Any]:
        """The doctor's verdict on this pass's step times (as for a training log's Time/Data
        lines): ``input-bound`` by the share of each step spent waiting, or ``healthy``."""
        from . import _stoker

        return json.loads(_stoker.diagnose_step_times(self._steps, self._waits,
                                                      type(self.loader).__name__))


def watch(loader) -> WatchedLoader:
    """Times a DataLoader's steps (see :class:`WatchedLoader`): iterate what this returns
    instead of the loader; ``stats()`` and ``diagnose()`` say how input-bound the job is, and
    :func:`audit` checks its shards across ranks."""
    return WatchedLoader(loader)


def _batch_len(batch) -> int:
    """Samples in a batch: the first dimension of its first tensor (or of the tensor)."""
    first = batch
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    if isinstance(first, dict) and first:
        first = next(iter(first.values()))
    shape = getattr(first, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) > 0 else 1


def _dataloader_record(loader) -> Dict[str, Any]:
    """The audit's record of a torch DataLoader (or a WatchedLoader): the digest of the
    indices its sampler gives this epoch (samplers are re-iterated: DistributedSampler and
    SequentialSampler give the same indices, RandomSampler the same set), its rank and world
    size as the sampler sees them (1 without a DistributedSampler)."""
    import torch.utils.data as tud
    from . import _stoker

    watched = loader if isinstance(loader, WatchedLoader) else None
    dl = watched.loader if watched is not None else loader
    sampler = getattr(dl, "sampler", None)
    if isinstance(sampler, _distributed_sampler_class()):
        record = _sampler_record(dl, sampler)
        if watched is not None:
            s = watched.stats()
            record.update(images_per_second=s.get("images_per_second", 0.0),
                          wait_fraction=s.get("wait_fraction", 0.0))
        return record
    distributed = isinstance(sampler, tud.distributed.DistributedSampler)
    batches = dl.batch_sampler if getattr(dl, "batch_sampler", None) is not None else None
    indices = ([i for b in batches for i in b] if batches is not None else list(sampler))
    count, digest = _stoker.index_digest(indices)
    size = len(dl.dataset)
    stats = watched.stats() if watched is not None else {}
    return {
        "kind": "dataloader",
        "loader_rank": sampler.rank if distributed else 0,
        "loader_world_size": sampler.num_replicas if distributed else 1,
        "fingerprint": f"{type(dl.dataset).__name__}:{size}", "dataset_size": size,
        "batch_size": dl.batch_size, "mode": "dataloader",
        "shuffle": bool(getattr(sampler, "shuffle", isinstance(sampler, tud.RandomSampler))),
        "seed": getattr(sampler, "seed", 0), "epoch": getattr(sampler, "epoch", 0),
        "epoch_start": 0, "epoch_batches": len(dl), "count": count, "sum": f"{digest:016x}",
        "images": stats.get("images", count),
        "images_per_second": stats.get("images_per_second", 0.0),
        "wait_fraction": stats.get("wait_fraction", 0.0), "busy_fraction": 0.0,
    }


# -- cross-rank audit ----------------------------------------------------------------------

# AUDIT_THRESHOLDS' keys: the C++ AuditThresholds (stoker/audit.h) fields they set, as
# (member struct or None, field).
_AUDIT_THRESHOLD_FIELDS = {
    "straggler_rate": ("straggler", "rate"), "straggler_wait": ("straggler", "wait"),
    "straggler_ahead": ("straggler", "ahead"), "single_rank_share": (None, "single_rank_share"),
    "wait_input_bound": ("pipeline.wait", "healthy_below"),
    "busy_saturated": ("pipeline", "busy_saturated")}


def _threshold_part(t, part: Optional[str]):
    """The member struct of AuditThresholds that `part` names ("pipeline.wait": nested)."""
    for name in (part.split(".") if part else []):
        t = getattr(t, name)
    return t


def _audit_thresholds(overrides: Optional[Dict[str, float]] = None):
    """The C++ AuditThresholds, its defaults with ``overrides`` (AUDIT_THRESHOLDS' keys)."""
    from . import _stoker

    t = _stoker.AuditThresholds()
    for key, value in (overrides or {}).items():
        if key not in _AUDIT_THRESHOLD_FIELDS:
            raise ValueError(f"unknown audit threshold {key!r} (known: "
                             f"{', '.join(_AUDIT_THRESHOLD_FIELDS)})")
        part, field = _AUDIT_THRESHOLD_FIELDS[key]
        setattr(_threshold_part(t, part), field, float(value))
    return t


def _threshold_values(t) -> Dict[str, float]:
    return {key: getattr(_threshold_part(t, part), field)
            for key, (part, field) in _AUDIT_THRESHOLD_FIELDS.items()}


#: Thresholds of the audit (docs/doctor.md), the C++ defaults (stoker/audit.h): a rank is a
#: straggler when its images/s is below ``straggler_rate`` x the median of the other ranks, or
#: its consumer waits ``straggler_wait`` more than theirs while not ``straggler_ahead`` x ahead
#: (the rule the doctor applies to stats lines too); one rank "does the work" when it
#: delivered ``single_rank_share`` of all samples; the job is input-bound-cpu when the median
#: wait is ``wait_input_bound`` or more on pools ``busy_saturated`` busy.
AUDIT_THRESHOLDS = _threshold_values(_audit_thresholds())


def _rank_record(loader) -> Dict[str, Any]:
    s = loader.stats(advance=False)
    c = loader._core.config
    wall = s["wall_seconds"]
    return {
        "loader_rank": s["rank"], "loader_world_size": s["world_size"],
        "fingerprint": loader.fingerprint, "dataset_size": len(loader.dataset),
        "batch_size": c.batch_size, "mode": _stoker_mode_name(c.mode), "shuffle": c.shuffle,
        "seed": c.seed, "epoch": s["epoch"], "epoch_start": s["epoch_start"],
        "epoch_batches": s["epoch_batches"], "count": s["digest"]["count"],
        "sum": s["digest"]["sum"], "images": s["images"],
        "images_per_second": s["images"] / wall if wall > 0 else 0.0,
        "wait_fraction": s["wait_seconds"] / wall if wall > 0 else 0.0,
        "busy_fraction": (s["busy_seconds"] / (wall * max(1, s["threads"])) if wall > 0
                          else 0.0),
    }


def _stoker_mode_name(mode) -> str:
    return str(mode).rsplit(".", 1)[-1]


def audit(loader, group=None) -> Dict[str, Any]:
    """Cross-rank audit of a running job, a collective: every rank of ``group`` (default: the
    initialised torch.distributed group) must call it at the same point, e.g. after an epoch.
    ``loader`` is a stoker.Loader, a ``torch.utils.data.DataLoader`` (with or without a
    DistributedSampler), or a DataLoader wrapped by :func:`watch` (whose step times then give
    the rates and waits).

    Gathers each rank's loader stats and an order-independent digest of the sample indices it
    delivered in the current epoch (count and 64-bit sum of per-index hashes), then checks that
    the shards are disjoint, complete and balanced, and looks for the second scaling failure's
    patterns: ``no-sharding`` (loaders not split over the group), ``duplicated`` (every rank
    read the same samples), ``single-rank-work`` (one rank delivered nearly everything),
    ``unbalanced`` (different batch counts), ``overlap`` (digests do not add up), and
    ``straggler`` (a rank whose throughput or wait is an outlier). Returns the same report on
    every rank (see :func:`analyse_audit`)."""
    import torch.distributed as dist

    record = _rank_record if hasattr(loader, "_core") else _dataloader_record
    if not dist.is_available() or not dist.is_initialized():
        return analyse_audit([record(loader)])
    # A rank that cannot build its record still joins the collective (the others would wait
    # in all_gather_object until the group's timeout), and every rank raises the same error.
    try:
        mine = record(loader)
    except Exception as e:  # noqa: BLE001 - reported to every rank below
        mine = {"error": f"{type(e).__name__}: {e}"}
    records = [None] * dist.get_world_size(group)
    dist.all_gather_object(records, mine, group=group)
    failed = [(i, r["error"]) for i, r in enumerate(records) if "error" in r]
    if failed:
        raise RuntimeError("stoker audit: " + "; ".join(f"rank {i}: {e}" for i, e in failed))
    return analyse_audit(records)


def analyse_audit(records: List[Dict[str, Any]],
                  thresholds: Optional[Dict[str, float]] = None) -> Dict[str, Any]:
    """The audit's judgement over per-rank records (index = rank in the group): the C++
    audit (stoker/audit.h) over the records, ``thresholds`` overriding AUDIT_THRESHOLDS. Returns
    ``{"verdict", "summary", "findings": [{"pattern", "message", "ranks"}], "checks":
    {"disjoint", "complete", "balanced"}, "ranks": records}``."""
    from . import _stoker

    report = json.loads(_stoker.audit_ranks([_audit_record(r) for r in records],
                                            _audit_thresholds(thresholds)))
    report["ranks"] = records
    return report


def _audit_record(r: Dict[str, Any]):
    """One rank's record as the C++ AuditRecord."""
    from . import _stoker

    a = _stoker.AuditRecord()
    a.source = _stoker.parse_audit_source(r.get("kind", "stoker-loader"))
    for field in ("loader_rank", "loader_world_size", "dataset_size", "batch_size", "seed",
                  "epoch", "epoch_start", "epoch_batches"):
        setattr(a, field, int(r[field]))
    a.fingerprint, a.mode, a.shuffle = str(r["fingerprint"]), str(r["mode"]), bool(r["shuffle"])
    a.digest.count, a.digest.sum = int(r["count"]), int(r["sum"], 16)
    for field in ("images_per_second", "wait_fraction", "busy_fraction"):
        setattr(a, field, float(r[field]))
    return a


# -- any map-style Dataset: stoker's sharding as a torch sampler -------------------------------

class SamplerBatch:
    """What stoker.torch.masked_mean needs of one step of a DistributedSampler: ``valid``
    (bool [B]), ``global_valid`` (valid slots of the step over all ranks), ``world_size``,
    and the step's dataset ``indices`` (int64 [B]), ``epoch`` and ``index``."""

    __slots__ = ("indices", "valid", "global_valid", "world_size", "epoch", "index")

    def __init__(self, indices, valid, global_valid, world_size, epoch, index):
        self.indices, self.valid, self.global_valid = indices, valid, global_valid
        self.world_size, self.epoch, self.index = world_size, epoch, index

    def __repr__(self) -> str:
        return (f"<stoker.torch.SamplerBatch epoch={self.epoch} index={self.index} "
                f"valid={int(self.valid.sum())}/{len(self.valid)} "
                f"global_valid={self.global_valid}>")


_DISTRIBUTED_SAMPLER = None


def _distributed_sampler_class():
    global _DISTRIBUTED_SAMPLER
    if _DISTRIBUTED_SAMPLER is not None:
        return _DISTRIBUTED_SAMPLER
    import torch
    from torch.utils.data.distributed import DistributedSampler as TorchDistributedSampler

    from . import _DROPPING_MODES, _mode_for, _stoker

    class DistributedSampler(TorchDistributedSampler):
        """torch's DistributedSampler with stoker's sharding, for any map-style Dataset.

            sampler = stoker.torch.DistributedSampler(dataset, batch_size=64)   # was torch's
            loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=8)
            for epoch in range(epochs):
                sampler.set_epoch(epoch)
                for images, labels in loader:            # the loop as it was
                    ...

        Each rank yields its share of stoker's epoch plan (stoker/sampler.h): one permutation
        per (seed, epoch), the same on every rank, rank r taking every W-th sample. With
        ``batch_size`` equal to the DataLoader's, the DataLoader's batch j is the plan's batch
        j without its padding: every batch full but the last, and in the default mode
        ('exact', also ``drop_last=False``) every sample taken exactly once per epoch over
        all ranks, on the same number of batches everywhere (the last batch of some ranks
        is one sample shorter, never empty: a rank whose last batch would be empty gets one
        repeated sample there, marked invalid, which happens only when fewer samples than
        ranks are left for the last round). ``sampler.batch(step)`` gives each step's valid
        mask and the step's valid count over all ranks, so that
        ``stoker.torch.masked_mean(loss, sampler.batch(step))`` is the exact mean over the
        step's samples of all ranks (a plain mean weights the ranks' shorter last batches
        as DDP always does). ``mode='pad'`` has torch's per-rank counts (``ceil(N / W)``,
        repeats included), ``drop_last=True`` torch's meaning (``mode='even'``: ``floor(N /
        W)`` each, the tail left out), ``mode='drop'`` full batches only.

        Resume, also on another world size or batch size: ``state_dict(steps)`` after
        ``steps`` batches of the epoch, ``load_state_dict(state)`` before the next ``iter``
        (the saved epoch continues where it stopped; set_epoch of another epoch starts that
        one from its beginning). ``stoker.torch.audit(loader)`` checks the shards of a
        DataLoader using this sampler against the plan (disjoint, complete, balanced).
        """

        def __init__(self, dataset, num_replicas: Optional[int] = None,
                     rank: Optional[int] = None, shuffle: bool = True, seed: int = 0,
                     drop_last: bool = False, *, batch_size: int = 1,
                     mode: Optional[str] = None) -> None:
            super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle,
                             seed=seed, drop_last=drop_last)
            if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
                raise ValueError(f"batch_size must be an integer >= 1 (got {batch_size!r})")
            self.batch_size = batch_size
            self.mode = _mode_for(mode, drop_last if drop_last else None, evaluating=False)
            self.drop_last = self.mode in _DROPPING_MODES
            self._resume = None  # (epoch, consumed) of a loaded state
            self._plan_cache = None

        def _consumed(self) -> int:
            return self._resume[1] if self._resume and self._resume[0] == self.epoch else 0

        def _plan(self):
            key = (self.epoch, self._consumed(), len(self.dataset))
            if self._plan_cache is None or self._plan_cache[0] != key:
                plan = _stoker.EpochPlan(len(self.dataset), self.batch_size, self.rank,
                                         self.num_replicas, self.mode, bool(self.shuffle),
                                         int(self.seed), int(self.epoch), key[1])
                self._plan_cache = (key, plan)
            return self._plan_cache[1]

        def _yielded(self, plan, j: int):
            """Batch j of the plan as the DataLoader gets it: its valid slots (a prefix of the
            batch), or its first slot when it has none (an empty batch would leave this rank
            one batch short)."""
            indices, valid, global_valid = plan.batch(j)
            keep = max(1, int(valid.sum()))
            return indices[:keep], valid[:keep], global_valid

        def __iter__(self):
            plan = self._plan()
            for j in range(plan.num_batches):
                yield from self._yielded(plan, j)[0].tolist()

        def __len__(self) -> int:
            plan = self._plan()
            k = plan.num_batches
            return 0 if k == 0 else (k - 1) * self.batch_size + len(self._yielded(plan, k - 1)[0])

        def set_epoch(self, epoch: int) -> None:
            super().set_epoch(epoch)

        def batch(self, step: int) -> SamplerBatch:
            """Step ``step`` of this rank's epoch as the DataLoader delivers it: its indices,
            valid mask (False only for a repeated sample) and the step's valid count over all
            ranks."""
            indices, valid, global_valid = self._yielded(self._plan(), step)
            return SamplerBatch(torch.from_numpy(indices.copy()),
                                torch.from_numpy(valid.copy()).bool(), int(global_valid),
                                self.num_replicas, self.epoch, step)

        def _fingerprint(self) -> str:
            return f"{type(self.dataset).__name__}:{len(self.dataset)}"

        def state_dict(self, steps: int) -> Dict[str, Any]:
            """Where the job stands once every rank has taken ``steps`` batches of the
            current epoch (the same dict on every rank; loads on any world size)."""
            plan = self._plan()
            if not 0 <= steps <= plan.num_batches:
                raise ValueError(f"steps must be in [0, {plan.num_batches}] (got {steps})")
            consumed = plan.consumed_after(steps)
            epoch = int(self.epoch)
            if consumed >= len(self.dataset):
                epoch, consumed = epoch + 1, 0
            return {"fingerprint": self._fingerprint(), "dataset_size": len(self.dataset),
                    "mode": self.mode, "shuffle": bool(self.shuffle), "seed": int(self.seed),
                    "epoch": epoch, "consumed": int(consumed)}

        def load_state_dict(self, state: Dict[str, Any]) -> None:
            want = {"fingerprint": self._fingerprint(), "dataset_size": len(self.dataset),
                    "mode": self.mode, "shuffle": bool(self.shuffle), "seed": int(self.seed)}
            for key, value in want.items():
                if state.get(key) != value:
                    raise ValueError(f"the state belongs to another sampler: {key} is "
                                     f"{state.get(key)!r}, this sampler's is {value!r}")
            self.epoch = int(state["epoch"])
            self._resume = (self.epoch, int(state["consumed"]))

        def __repr__(self) -> str:
            return (f"<stoker.torch.DistributedSampler rank={self.rank}/{self.num_replicas} "
                    f"batch_size={self.batch_size} mode={self.mode} shuffle={self.shuffle} "
                    f"seed={self.seed} epoch={self.epoch}>")

    _DISTRIBUTED_SAMPLER = DistributedSampler
    return DistributedSampler


def __getattr__(name: str):
    # DistributedSampler subclasses torch's: made on first use, so that this module imports
    # without torch.
    if name == "DistributedSampler":
        return _distributed_sampler_class()
    raise AttributeError(f"module 'stoker.torch' has no attribute {name!r}")


def _sampler_record(dl, sampler) -> Dict[str, Any]:
    """The audit's record of a DataLoader over a stoker.torch.DistributedSampler: the valid
    indices of this epoch's plan, checked by the audit against stoker's plan for the group."""
    from . import _stoker

    if dl.batch_size != sampler.batch_size:
        raise ValueError(f"the DataLoader's batch_size {dl.batch_size} is not its "
                         f"stoker.torch.DistributedSampler's {sampler.batch_size}: batches and "
                         "masks do not line up")
    plan = sampler._plan()
    indices = []
    for j in range(plan.num_batches):
        idx, valid, _ = plan.batch(j)
        indices.extend(idx[valid.astype(bool)].tolist())
    count, digest = _stoker.index_digest(indices)
    return {
        "kind": "stoker-sampler", "loader_rank": sampler.rank,
        "loader_world_size": sampler.num_replicas, "fingerprint": sampler._fingerprint(),
        "dataset_size": len(sampler.dataset), "batch_size": sampler.batch_size,
        "mode": sampler.mode, "shuffle": bool(sampler.shuffle), "seed": int(sampler.seed),
        "epoch": int(sampler.epoch), "epoch_start": sampler._consumed(),
        "epoch_batches": plan.num_batches, "count": count, "sum": f"{digest:016x}",
        "images": count, "images_per_second": 0.0, "wait_fraction": 0.0, "busy_fraction": 0.0,
    }
