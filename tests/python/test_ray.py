"""stoker.ray on a real Ray cluster of this machine (ray.cluster_utils.Cluster: a head with the
trainer ranks and CPU-only nodes with the producers): every sample once per epoch and the same
bytes as an in-process stoker.Loader, through a node removed and one added mid-epoch, and
through a trainer killed and resumed. Skipped where ray is not installed."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import time
from collections import Counter
from typing import Dict, List, Tuple

import numpy as np
import pytest

# Every node on the loopback address (Ray otherwise takes the host's outward address): Ray's
# switch for "no multi-machine cluster", read when ray is imported and inherited by its nodes.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")
import ray.cloudpickle  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import stoker  # noqa: E402
import stoker.ray  # noqa: E402

from conftest import synth  # noqa: E402

BATCH = 4
WORLD = 2
RECIPE = {"size": 32, "seed": 5}
# Node failures noticed in about a second, not Ray's default of tens of seconds.
FAST_FAILURES = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
                 "health_check_failure_threshold": 2}


def digest(batch) -> str:
    h = hashlib.sha256()
    for a in (batch.images, batch.labels, batch.valid, batch.indices):
        h.update(np.ascontiguousarray(np.asarray(a)).tobytes())
    return h.hexdigest()[:16]


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    return synth(tmp_path_factory.mktemp("ray") / "data", images=150, seed=3)


@pytest.fixture(scope="module")
def reference(photos) -> Dict[Tuple[int, int], List[str]]:
    """(rank, epoch) -> the step digests of an in-process stoker.Loader."""
    out = {}
    for rank in range(WORLD):
        with stoker.Loader(photos, BATCH, rank=rank, world_size=WORLD, threads=1,
                           **RECIPE) as loader:
            for epoch in range(2):
                loader.set_epoch(epoch)
                out[(rank, epoch)] = [digest(b) for b in loader]
    return out


@pytest.fixture()
def cluster():
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"trainer": 4}, "object_store_memory": 100 * 2**20,
        "_system_config": FAST_FAILURES})
    nodes = [c.add_node(num_cpus=1, resources={"cpu_node": 1}, object_store_memory=100 * 2**20)
             for _ in range(2)]
    ray.init(address=c.address, namespace="stoker-test", log_to_driver=False)
    try:
        yield c, nodes
    finally:
        ray.shutdown()
        c.shutdown()


# The actors below go to Ray's workers by value (they cannot import this test module).
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@ray.remote(num_cpus=0, resources={"trainer": 0.01})  # on the head, with the trainers
class Gate:
    """Trainers wait here (at a chosen step) until the test opens it."""

    def __init__(self):
        self.event = asyncio.Event()
        self.count = 0

    async def wait(self):
        self.count += 1
        await self.event.wait()

    async def arrived(self) -> int:
        return self.count

    async def open(self):
        self.event.set()


@ray.remote(num_cpus=0, resources={"trainer": 1}, max_concurrency=2)
class Trainer:
    """A trainer rank: its RayLoader's batches, recorded (a training step would use them).
    max_concurrency=2: progress() answers while run() waits at a gate."""

    def __init__(self, pool: str, rank: int, world_size: int, state=None):
        self.loader = stoker.ray.RayLoader(pool, rank=rank, world_size=world_size,
                                           refresh=0.2)
        if state is not None:
            self.loader.load_state_dict(state)
        self.seen = []
        self.state = None

    def run(self, epochs, gate=None, pause=(0, 0), checkpoint=None):
        """[(epoch, step, digest, valid indices, producer)] of the epochs; waits at `gate`
        after step `pause` = (epoch, step); saves the state after step `checkpoint`."""
        for epoch in epochs:
            self.loader.set_epoch(epoch)  # a loaded state's epoch keeps its position
            for batch in self.loader:
                idx = batch.indices.numpy()[batch.valid.numpy().astype(bool)].tolist()
                self.seen.append((batch.epoch, batch.index, digest(batch), idx,
                                  self.loader.made_by[batch.index]))
                if (batch.epoch, batch.index) == checkpoint:
                    self.state = self.loader.state_dict()
                if gate is not None and (batch.epoch, batch.index) == pause:
                    ray.get(gate.wait.remote())
        return self.seen

    def progress(self):
        return self.seen, self.state


def producer_nodes(pool_name: str) -> Dict[str, str]:
    """Producer actor id -> node id."""
    return {h._actor_id.hex(): ray.get(h.describe.remote())["node"]
            for _, h in stoker.ray._pool_members(pool_name)}


def wait_for(predicate, what: str, runs=(), seconds: float = 120):
    """Waits until predicate(); a run in `runs` that ends meanwhile shows its error."""
    deadline = time.monotonic() + seconds
    while not predicate():
        done, _ = ray.wait(list(runs), timeout=0)
        if done:
            ray.get(done)
            pytest.fail(f"a trainer finished before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def check_exactly_once(records, epochs, size):
    for epoch in epochs:
        counts = Counter(i for r in records for e, _, _, idx, _ in r if e == epoch for i in idx)
        assert sorted(counts) == list(range(size)), f"epoch {epoch}: samples missing"
        assert max(counts.values()) == 1, f"epoch {epoch}: samples twice"


def test_a_node_removed_and_one_added_mid_epoch_every_sample_once_same_bytes(
        photos, reference, cluster):
    c, nodes = cluster
    pool = stoker.ray.start_producers(str(photos), BATCH, count=2, num_cpus=1, name="p",
                                      actor_options={"resources": {"cpu_node": 1}}, **RECIPE)
    where = producer_nodes("p")
    assert sorted(where.values()) == sorted(n.node_id for n in nodes)  # one on each CPU node
    gate = Gate.remote()
    trainers = [Trainer.remote("p", rank, WORLD) for rank in range(WORLD)]
    runs = [t.run.remote([0, 1], gate=gate, pause=(0, 5)) for t in trainers]
    wait_for(lambda: ray.get(gate.arrived.remote()) == WORLD, "both ranks at step 5", runs)

    # Mid-epoch 0: the first CPU node goes (its producer with it), a new one comes.
    victim = nodes[0]
    killed = [a for a, n in where.items() if n == victim.node_id]
    c.remove_node(victim, allow_graceful=False)
    c.add_node(num_cpus=1, resources={"cpu_node": 1}, object_store_memory=100 * 2**20)
    joined = {h._actor_id.hex() for h in pool.add(1)}
    ray.get(gate.open.remote())
    records = ray.get(runs, timeout=300)

    for rank, seen in enumerate(records):
        for epoch in (0, 1):
            got = [(step, d) for e, step, d, _, _ in seen if e == epoch]
            assert [s for s, _ in got] == list(range(len(reference[(rank, epoch)])))
            assert [d for _, d in got] == reference[(rank, epoch)], (rank, epoch)
    check_exactly_once(records, (0, 1), 150)
    made = [(e, s, p) for seen in records for e, s, _, _, p in seen]
    assert any(p in killed for e, s, p in made if e == 0 and s <= 5), "victim made no step"
    assert not any(p in killed for e, s, p in made if e == 1)
    assert any(p in joined for e, s, p in made if e == 0), "the new producer made no step"


def test_a_trainer_killed_and_resumed_mid_epoch_continues_exactly_once(
        photos, reference, cluster):
    pool = stoker.ray.start_producers(str(photos), BATCH, count=2, num_cpus=1, name="q",  # noqa
                                      actor_options={"resources": {"cpu_node": 1}}, **RECIPE)
    gate = Gate.remote()
    first = [Trainer.remote("q", rank, WORLD) for rank in range(WORLD)]
    runs = [t.run.remote([0], gate=gate, pause=(0, 9), checkpoint=(0, 6)) for t in first]
    wait_for(lambda: ray.get(gate.arrived.remote()) == WORLD, "both ranks at step 9", runs)
    progress = ray.get([t.progress.remote() for t in first])
    states = [state for _, state in progress]
    assert states[0] == states[1]  # the same on every rank
    assert states[0]["consumed"] == 7 * BATCH * WORLD
    # Killed mid-epoch, three steps after the checkpoint, with requests in flight: the steps
    # after the checkpoint are lost with the trainer, as a training job loses them.
    for t in first:
        ray.kill(t)
    before = [[r for r in seen if (r[0], r[1]) <= (0, 6)] for seen, _ in progress]
    # Resumed on the same world size: the rest of epoch 0, then epoch 1.
    again = [Trainer.remote("q", rank, WORLD, states[0]) for rank in range(WORLD)]
    after = ray.get([t.run.remote([0, 1]) for t in again])
    records = [b + a for b, a in zip(before, after)]
    check_exactly_once(records, (0, 1), 150)
    for rank, seen in enumerate(records):
        assert [d for e, _, d, _, _ in seen if e == 1] == reference[(rank, 1)]
        # Epoch 0's steps after the resume are the same bytes (numbered from the resume on).
        assert [d for e, _, d, _, _ in seen if e == 0] == reference[(rank, 0)]
    # And on one rank (stoker's elastic rule): exactly the rest of epoch 0.
    alone = Trainer.remote("q", 0, 1, states[0])
    rest = ray.get(alone.run.remote([0]))
    check_exactly_once([before[0] + before[1] + rest], (0,), 150)
