"""stoker on Ray: batches made by producer actors on CPU-only nodes, delivered to the trainer
ranks through Ray's object store, each step exactly once and in order (docs/ray.md).

On the cluster (the driver, or any process connected to it), once per job::

    pool = stoker.ray.start_producers("/data/train", batch_size=256, count=4, num_cpus=16,
                                      size=224, seed=0)

On each trainer rank (a torchrun rank or a Ray Train worker connected to the same cluster)::

    loader = stoker.ray.RayLoader(pool.name, rank=rank, world_size=world_size)
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for images, labels in loader:
            ...

A batch is a pure function of (dataset, recipe, seed, epoch, rank, step): any producer makes
any step with the same bytes as an in-process stoker.Loader. Each rank's steps are dealt to
the live producers in turn (producer i of n makes steps first + i, first + i + n, ...: one
stoker loader per rank on each producer, its threads and prefetch busy between requests).
When a producer dies, the step it owed is made again by another and the rest of the epoch is
dealt over the producers left; a producer that joins the pool gets its share from the next
step dealt. The trainer sees each step once, in order, and its state_dict() is stoker.Loader's:
the samples consumed, which loads on any number of producers, and by stoker's elastic rule on
any world size (also into a stoker.Loader).
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any, Dict, Iterator, List, Optional, Tuple

import ray
import ray.exceptions

import numpy as np

from . import Batch, Loader, _image_array, _stoker, _torch, _torch_distributed

__all__ = ["Producer", "ProducerPool", "RayLoader", "start_producers"]

# The failures that mean "this producer is gone": its step goes to another.
_GONE = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)


class Producer:
    """One stoker loader per (rank, world size) it is asked for, over one dataset and recipe
    (a Ray actor: start_producers). make() returns one step's batch as numpy arrays, which
    Ray puts in its object store for the trainer (zero-copy on the trainer's node)."""

    def __init__(self, source: str, batch_size: int, threads: int, options: Dict[str, Any]):
        self._source = source
        self._batch_size = batch_size
        self._threads = threads
        self._options = options
        self._template: Optional[Dict[str, Any]] = None
        self._streams: Dict[Tuple[int, int], _Stream] = {}
        self._guard = threading.Lock()  # over _streams (calls of several ranks at once)

    def describe(self) -> Dict[str, Any]:
        """What a trainer needs to plan its epochs: the loader's state at the start (dataset
        fingerprint and size, mode, shuffle, seed), the batch size and the producer's node."""
        if self._template is None:
            with Loader(self._source, self._batch_size, rank=0, world_size=1, threads=1,
                        **self._options) as loader:
                self._template = loader.state_dict()
        return {"state": self._template, "batch_size": self._batch_size,
                "node": ray.get_runtime_context().get_node_id()}

    def make(self, rank: int, world_size: int, epoch: int, consumed: int, first: int,
             stride: int, step: int) -> Dict[str, Any]:
        """Step `step` of (rank, world_size)'s epoch `epoch`, resumed after `consumed` samples,
        as the stream of steps first, first + stride, ... makes it."""
        stream = self._stream(rank, world_size)
        with stream.lock:
            batch = stream.take(epoch, consumed, first, stride, step)
        # bfloat16 travels as its int16 bits (ml_dtypes may be missing on either side); the
        # trainer turns them back as stoker.Loader does (_image_array).
        bfloat16 = stream.loader.transform.output == "bfloat16"
        return {"images": batch.images.view(np.int16) if bfloat16 else batch.images,
                "bfloat16": bfloat16, "labels": batch.labels, "indices": batch.indices,
                "valid": batch.valid, "global_valid": batch.global_valid,
                "skipped": batch.skipped, "fields": batch.fields, "epoch": epoch, "index": step,
                "producer": ray.get_runtime_context().get_actor_id()}

    def _stream(self, rank: int, world_size: int) -> "_Stream":
        with self._guard:
            key = (rank, world_size)
            if key not in self._streams:
                # Every rank deals its steps over every producer: the ranks' loaders here
                # share the producer's threads.
                threads = max(1, round(self._threads / world_size))
                loader = Loader(self._source, self._batch_size, rank=rank,
                                world_size=world_size, threads=threads, **self._options)
                loader._numpy = True  # numpy arrays: what Ray's object store holds zero-copy
                self._streams[key] = _Stream(loader)
            return self._streams[key]


class _Stream:
    """A producer's loader of one rank, positioned at a run of selected steps."""

    def __init__(self, loader: Loader):
        self.loader = loader
        self.lock = threading.Lock()  # one call of this rank at a time
        self.template = loader.state_dict()
        self.key: Optional[Tuple[int, int, int, int]] = None
        self.next_step = 0
        self.batches: Optional[Iterator[Batch]] = None

    def take(self, epoch: int, consumed: int, first: int, stride: int, step: int) -> Batch:
        if (step - first) % stride != 0 or step < first:
            raise ValueError(f"step {step} is not one of {first} + k * {stride}")
        key = (epoch, consumed, first, stride)
        if self.key != key or step < self.next_step:
            state = dict(self.template, epoch=epoch, consumed=consumed)
            self.loader.load_state_dict(state)
            self.loader._core.select_steps(first, stride)
            self.batches = iter(self.loader)
            self.key, self.next_step = key, first
        for batch in self.batches:
            if batch.index == step:
                self.next_step = step + stride
                return batch
        raise RuntimeError(f"step {step} is past the end of epoch {epoch}")


class ProducerPool:
    """The producers of a job: Ray actors named ``NAME-<n>`` in the job's namespace. A trainer
    finds them by name (RayLoader(pool.name) or RayLoader(pool)), so producers started later
    under the same name (add()) join, and dead ones drop out, while an epoch runs."""

    def __init__(self, name: str, source: str, batch_size: int, threads: int,
                 options: Dict[str, Any], actor_options: Dict[str, Any]):
        self.name = name
        self._args = (source, batch_size, threads, options)
        self._actor_options = actor_options
        # The handles keep the producers alive: Ray stops an actor (not detached) once its
        # creator holds no handle to it.
        self.handles: List[Any] = []

    def add(self, count: int = 1, **actor_options) -> List[Any]:
        """Starts `count` more producers (Ray actor options, e.g. scheduling_strategy, override
        the pool's)."""
        actor = ray.remote(Producer)
        handles = []
        for _ in range(count):
            options = dict(self._actor_options, **actor_options)
            handles.append(actor.options(name=f"{self.name}-{len(self.handles)}", **options)
                           .remote(*self._args))
            self.handles.append(handles[-1])
        ray.get([h.describe.remote() for h in handles])  # started: the dataset opens there
        return handles

    def shutdown(self) -> None:
        """Stops every producer of the pool (the trainers' next requests fail)."""
        for _, handle in _pool_members(self.name):
            ray.kill(handle)


def _pool_members(pool: str) -> List[Tuple[str, Any]]:
    """The live producers of pool `pool` (actors ``POOL-<n>`` in this job's namespace) as
    (name, handle), in the order they were started."""
    prefix = pool + "-"
    found = []
    for entry in ray.util.list_named_actors(all_namespaces=False):
        name = entry["name"] if isinstance(entry, dict) else entry
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            try:
                found.append((name, ray.get_actor(name)))
            except ValueError:  # gone between the listing and the lookup
                pass
    return sorted(found, key=lambda f: int(f[0][len(prefix):]))


def start_producers(source: str, batch_size: int, *, count: int, num_cpus: int,
                    name: str = "stoker-producer", threads: Optional[int] = None,
                    actor_options: Optional[Dict[str, Any]] = None,
                    **loader_options) -> ProducerPool:
    """Starts `count` producers of `num_cpus` CPUs each, each making batches of `source` as
    ``stoker.Loader(source, batch_size, **loader_options)`` would (transform, size, seed, mode,
    fields, ...; seed must be given or 0: every producer and trainer must agree on it). A
    producer's loaders (one per rank it serves) share `threads` threads (default num_cpus).
    The trainers then use ``RayLoader(name)``. Keep the pool: its producers live as long as it
    (Ray's rule for actors that are not detached; actor_options={"lifetime": "detached"} lets
    them outlive it, until pool.shutdown())."""
    if loader_options.get("seed", 0) is None:
        raise ValueError("stoker.ray needs a fixed seed (an integer), not seed=None")
    for key in ("rank", "world_size", "device", "threads", "num_workers"):
        if key in loader_options:
            raise ValueError(f"{key}= is the trainer's or the producer's, not a loader option here")
    options = dict(actor_options or {})
    options.setdefault("num_cpus", num_cpus)
    options.setdefault("max_concurrency", 64)  # one call per rank at a time, all ranks at once
    pool = ProducerPool(name, source, batch_size, threads or num_cpus, loader_options, options)
    pool.add(count)
    return pool


class RayLoader:
    """This rank's batches, made by a pool's producers: stoker.Loader's interface (the same
    Batch objects, len, set_epoch, the pass rule, state_dict / load_state_dict).

    Args:
      pool: a ProducerPool or its name (the actors ``NAME-<n>`` in this job's namespace).
      rank, world_size: give both or neither (neither: an initialised torch.distributed
        group's, as under torchrun or Ray Train's TorchTrainer; else torchrun's, Open MPI's or
        Slurm's variables; else one rank).
      ahead: steps requested beyond the one the trainer waits for (default: 2 per producer);
        each producer has at most one request of this rank at a time, and its loader's
        prefetch keeps its threads busy between requests.
      refresh: seconds between looks at the pool for producers that joined (a dead one is
        noticed at once, from its failed request).
    """

    def __init__(self, pool: Any, *, rank: Optional[int] = None,
                 world_size: Optional[int] = None, ahead: Optional[int] = None,
                 refresh: float = 2.0, timeout: float = 300.0):
        self._name = pool.name if isinstance(pool, ProducerPool) else str(pool)
        dist = _torch_distributed() if rank is None and world_size is None else None
        if dist is not None:  # a torchrun or Ray Train rank: its process group's numbers
            self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        else:
            info = _stoker.discover_rank(rank, world_size)
            self.rank, self.world_size = info.rank, info.world_size
        self._ahead = ahead
        self._refresh = refresh
        self._timeout = timeout
        producers = _pool_members(self._name)
        if not producers:
            raise RuntimeError(f"stoker.ray: no producer named {self._name}-<n> is running")
        described = ray.get(producers[0][1].describe.remote())
        self._template = described["state"]
        self.batch_size = int(described["batch_size"])
        self._pass_epoch = 0
        self._pass_fresh = True
        self._resume: Optional[Tuple[int, int]] = None  # (epoch, consumed) loaded
        self._position: Tuple[int, int, int] = (0, 0, 0)  # epoch, consumed at start, delivered
        self._pass_id = 0
        self.made_by: Dict[int, str] = {}  # step of the current pass -> producer's actor id

    # -- the plan (stoker's sampler arithmetic, no data needed here) -----------------------

    def _plan(self, epoch: int, consumed: int):
        t = self._template
        return _stoker.EpochPlan(int(t["dataset_size"]), self.batch_size, self.rank,
                                 self.world_size, t["mode"], bool(t["shuffle"]), int(t["seed"]),
                                 int(epoch), int(consumed))

    def __len__(self) -> int:
        return self._plan(0, 0).num_batches

    def set_epoch(self, epoch: int) -> None:
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be a non-negative integer (got {epoch!r})")
        self._pass_epoch = epoch
        self._pass_fresh = True

    @property
    def epoch(self) -> int:
        return self._pass_epoch

    def state_dict(self) -> Dict[str, Any]:
        """stoker.Loader's state: the samples of the epoch consumed by all ranks together."""
        epoch, start, delivered = self._position
        if self._resume is not None:
            epoch, consumed = self._resume
        else:
            consumed = self._plan(epoch, start).consumed_after(delivered)
        return dict(self._template, epoch=epoch, consumed=consumed)

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        for key in ("fingerprint", "dataset_size", "mode", "shuffle", "seed"):
            if str(state.get(key)) != str(self._template[key]):
                raise ValueError(f"the state belongs to another loader: {key} is "
                                 f"{state.get(key)!r}, the producers' is {self._template[key]!r}")
        self._resume = (int(state["epoch"]), int(state["consumed"]))
        self._pass_epoch, self._pass_fresh = self._resume[0], True

    # -- iteration -------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Batch]:
        if not self._pass_fresh:
            self._pass_epoch += 1
        self._pass_fresh = False
        epoch = self._pass_epoch
        consumed = 0
        if self._resume is not None and self._resume[0] == epoch:
            consumed = self._resume[1]
        self._resume = None
        self._pass_id += 1
        return self._run(self._pass_id, epoch, consumed)

    def _run(self, pass_id: int, epoch: int, consumed: int) -> Iterator[Batch]:
        plan = self._plan(epoch, consumed)
        self._position = (epoch, consumed, 0)
        self.made_by = {}
        deal = _Deal(self, epoch, consumed, plan.num_batches)
        try:
            for step in range(plan.num_batches):
                if pass_id != self._pass_id:
                    raise RuntimeError("this iterator was superseded by a newer iter()")
                payload = deal.get(step)
                self.made_by[step] = payload["producer"]
                self._position = (epoch, consumed, step + 1)
                yield self._batch(payload)
        finally:
            deal.close()

    def _batch(self, p: Dict[str, Any]) -> Batch:
        labels, indices, valid = p["labels"], p["indices"], p["valid"]
        # Views of the object store's copy (read-only for numpy, which torch warns about): the
        # batch is this rank's alone, and the copy is freed with the last view.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*not writable.*")
            images = _image_array(p["images"], p["bfloat16"])
            if _torch is not None:
                labels, indices, valid = (_torch.from_numpy(a) for a in (labels, indices, valid))
        return Batch(images, labels, indices, valid, p["global_valid"], p["epoch"], p["index"],
                     self.rank, self.world_size, p["skipped"], p["fields"])


class _Deal:
    """One pass of a rank: which producer makes which step, the requests in flight, and the
    steps received but not yet consumed (at most `ahead`)."""

    def __init__(self, loader: RayLoader, epoch: int, consumed: int, steps: int):
        self.loader = loader
        self.args = (loader.rank, loader.world_size, epoch, consumed)
        self.steps = steps
        self.issued = 0  # steps below this were requested (or are orphans, below)
        self.orphans: List[int] = []  # steps whose producer died before delivering them
        self.pending: Dict[int, Tuple[str, Any]] = {}  # step -> (producer name, ObjectRef)
        self.busy: Dict[str, int] = {}  # producer name -> its step in flight
        self.received: Dict[int, Dict[str, Any]] = {}
        self.dead: set = set()
        self._repartition()

    def _repartition(self) -> None:
        """Deals the steps from `issued` on over the live producers."""
        live = [(n, h) for n, h in _pool_members(self.loader._name) if n not in self.dead]
        if not live:
            raise RuntimeError(f"stoker.ray: no live producer left in pool {self.loader._name} "
                               f"(steps {self.issued}.. of the epoch still to make)")
        self.producers = live
        self.segment_start = self.issued
        self.looked = time.monotonic()
        n = len(live)
        self.ahead = self.loader._ahead or 2 * n

    def _owner(self, step: int) -> Tuple[int, str, Any]:
        i = (step - self.segment_start) % len(self.producers)
        return (i,) + self.producers[i]

    def _issue(self, step: int, name: str, handle: Any, first: int, stride: int) -> None:
        ref = handle.make.remote(*self.args, first, stride, step)
        self.pending[step] = (name, ref)
        self.busy[name] = step

    def _fill(self, want: int) -> None:
        if time.monotonic() - self.looked > self.loader._refresh:
            names = [n for n, _ in _pool_members(self.loader._name) if n not in self.dead]
            if names != [n for n, _ in self.producers]:
                self._repartition()  # producers joined: the next steps include them
            self.looked = time.monotonic()
        # Orphans first (each alone: a stream of one step), to any idle producer.
        for step in list(self.orphans):
            idle = [(n, h) for n, h in self.producers if n not in self.busy]
            if not idle:
                break
            name, handle = idle[0]
            self.orphans.remove(step)
            self._issue(step, name, handle, step, self.steps)
        while self.issued < self.steps and self.issued < want + self.ahead:
            i, name, handle = self._owner(self.issued)
            if name in self.busy:
                break  # its previous step is still being made: the deal stays in order
            self._issue(self.issued, name, handle, self.segment_start + i, len(self.producers))
            self.issued += 1

    def get(self, step: int) -> Dict[str, Any]:
        deadline = time.monotonic() + self.loader._timeout
        while step not in self.received:
            self._fill(step)
            if not self.pending:
                raise RuntimeError(f"stoker.ray: step {step} was never requested")
            refs = [ref for _, ref in self.pending.values()]
            ready, _ = ray.wait(refs, num_returns=1, timeout=1.0)
            for ref in ready:
                done = next(s for s, (_, r) in self.pending.items() if r == ref)
                name, _ = self.pending.pop(done)
                self.busy.pop(name, None)
                try:
                    self.received[done] = ray.get(ref)
                except _GONE:
                    self._lost(name, done)
            if time.monotonic() > deadline:
                raise TimeoutError(f"stoker.ray: step {step} not made in {self.loader._timeout} s")
        return self.received.pop(step)

    def _lost(self, name: str, step: int) -> None:
        """A producer died: its step is made again by another, and the steps not yet dealt are
        dealt over those left."""
        self.dead.add(name)
        self.orphans.append(step)
        for other, (owner, _) in list(self.pending.items()):
            if owner == name:  # (one request per producer: none, but be sure)
                self.pending.pop(other)
                self.orphans.append(other)
        self.busy.pop(name, None)
        self._repartition()

    def close(self) -> None:
        # An abandoned pass: what is still being made is dropped with its references (a
        # producer finishes the step it is on; its stream is repositioned by the next pass).
        self.pending.clear()
