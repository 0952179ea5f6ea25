"""Multi-process tests over gloo: exactly-once sharding, lockstep batch counts, elastic
resume, DDP training with padding-only steps, and the cross-rank dataset check."""

from __future__ import annotations

import collections
import json
import math

import pytest

from conftest import launch, synth

N = 23  # the small_set fixture


@pytest.mark.parametrize("world_size", [2, 3])
def test_each_sample_exactly_once_per_epoch(small_set, tmp_path, world_size):
    results = launch(world_size, tmp_path, {"scenario": "epochs", "data": str(small_set),
                                            "batch_size": 4, "epochs": [0, 1]})
    assert [r["rank"] for r in results] == list(range(world_size))
    assert {r["world_size"] for r in results} == {world_size}
    expected_batches = math.ceil(N / (4 * world_size))
    orders = []
    for epoch in ("0", "1"):
        per_rank = [r["epochs"][epoch] for r in results]
        # Lockstep: every rank has the same number of batches, and len() says it.
        assert {p["batches"] for p in per_rank} == {expected_batches}
        assert {r["len"] for r in results} == {expected_batches}
        # Exactly once: the valid indices of all ranks are the dataset, without repeats.
        everything = [i for p in per_rank for i in p["valid"]]
        counts = collections.Counter(everything)
        assert sorted(counts) == list(range(N)), f"epoch {epoch}: missing or extra samples"
        assert max(counts.values()) == 1, f"epoch {epoch}: repeated samples"
        # global_valid is the same on every rank and adds up to N.
        assert len({tuple(p["global_valid"]) for p in per_rank}) == 1
        assert sum(per_rank[0]["global_valid"]) == N
        orders.append([p["valid"] for p in per_rank])
    assert orders[0] != orders[1], "set_epoch did not reshuffle"
    # After a full epoch the state is the same on every rank and counts all samples.
    states = [r["state"] for r in results]
    assert all(s == states[0] for s in states)
    assert states[0]["consumed"] == N and states[0]["epoch"] == 1


def test_resume_on_a_different_world_size(small_set, tmp_path):
    common = {"data": str(small_set), "batch_size": 3, "seed": 7}
    # 2 ranks take 2 batches each (12 samples) of epoch 3 ...
    saved = launch(2, tmp_path, dict(common, scenario="save", epoch=3, stop_after=2))
    assert all(r["same_state_everywhere"] for r in saved)
    state = saved[0]["state"]
    assert state["epoch"] == 3 and state["consumed"] == 2 * 3 * 2
    seen = [i for r in saved for i in r["valid"]]
    assert len(seen) == len(set(seen)) == 12
    # ... and 3 ranks finish the epoch: exactly the samples not yet seen.
    resumed = launch(3, tmp_path, dict(common, scenario="resume", state=state))
    rest = [i for r in resumed for i in r["valid"]]
    assert len(rest) == len(set(rest))
    assert sorted(seen + rest) == list(range(N))
    assert {r["batches"] for r in resumed} == {math.ceil((N - 12) / (3 * 3))}
    # The next epoch is whole again.
    following = [i for r in resumed for i in r["next_valid"]]
    assert sorted(following) == list(range(N))


def test_padding_only_steps_train_without_nan_or_hang(tmp_path):
    # N=7, W=3, B=2: K=2 steps; at step 1 ranks 1 and 2 hold nothing but padding.
    data = synth(tmp_path / "seven", images=7, classes=2, width=40, height=32)
    results = launch(3, tmp_path, {"scenario": "train", "data": str(data), "batch_size": 2,
                                   "epochs": 2})
    assert {r["steps"] for r in results} == {4}
    assert sum(r["padding_only"] for r in results) == 4  # ranks 1, 2 at the last step, twice
    for r in results:
        assert all(math.isfinite(x) for x in r["losses"])
        # DDP's averaged gradient of masked_mean == gradient of the exact global mean.
        assert r["max_grad_error"] < 1e-5, r["max_grad_error"]


def test_ranks_with_different_datasets_fail_clearly(tmp_path):
    a = synth(tmp_path / "a", images=6, seed=1)
    b = synth(tmp_path / "b", images=7, seed=2)
    results = launch(2, tmp_path, {"scenario": "fingerprint", "batch_size": 2},
                     per_rank=[{"data": str(a)}, {"data": str(b)}])
    for r in results:
        assert r["type"] == "Error", r
        message = r["error"]
        assert "different datasets" in message
        assert "rank 0" in message and "rank 1" in message
    fingerprints = [w for w in results[0]["error"].split() if len(w) == 16]
    assert len(set(fingerprints)) == 2, results[0]["error"]


def test_torchrun_restart_resumes_from_the_checkpoint_exactly_once(tmp_path):
    """torchrun --max-restarts 1: rank 1 dies in step 7 of 16; torchrun restarts both ranks,
    which load the last checkpoint (written after every step all ranks finished). The steps
    committed before the failure and the steps of the restarted attempt hold every sample
    of the epoch exactly once; the uncommitted steps of the first attempt are redone."""
    data = synth(tmp_path / "data", images=61, classes=3, width=40, height=30)
    log = tmp_path / "log"
    results = launch(2, tmp_path, {"scenario": "elastic", "data": str(data), "batch_size": 2,
                                   "epoch": 4, "seed": 3, "checkpoint": str(tmp_path / "ck.json"),
                                   "log": str(log), "crash_rank": 1, "crash_step": 7},
                     max_restarts=1)
    assert [r["attempt"] for r in results] == [1, 1], "torchrun did not restart the ranks"
    resumed = results[0]["resumed_from_step"]
    assert {r["resumed_from_step"] for r in results} == {resumed}
    assert 5 <= resumed <= 6  # step 6 is committed unless rank 0 was stopped while saving it
    assert {r["steps"] for r in results} == {16}  # ceil(61 / (2 * 2)): the same on both ranks

    def logged(attempt: int):
        return [json.loads(line) for rank in (0, 1)
                for line in (log / f"attempt{attempt}.rank{rank}.jsonl").read_text().splitlines()]

    first, second = logged(0), logged(1)
    assert max(r["step"] for r in first) == 7  # the crash came mid-epoch, after step 6
    committed = [i for r in first if r["step"] <= resumed for i in r["valid"]]
    after = [i for r in second for i in r["valid"]]
    assert min(r["step"] for r in second) == resumed + 1
    assert sorted(after) == sorted(i for r in results for i in r["valid"])
    assert sorted(committed + after) == list(range(61)), "lost or repeated samples"
    # torchrun's node and local-world variables: one node, two ranks on it, and the default
    # thread count divides this node's CPUs between them.
    for r in results:
        assert r["group_rank"] == 0 and r["local_world_size"] == 2
        assert r["stats"]["threads"] == max(1, r["stats"]["cpus"] // 2)
