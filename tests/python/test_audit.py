"""The cross-rank audit (stoker.torch.audit): each sharding pattern reproduced on real gloo
ranks and named, plus the judgement on hand-made records."""

import json
import subprocess

import pytest

import stoker
import stoker.torch
from conftest import launch, stoker_bin


def _patterns(report):
    return {f["pattern"] for f in report["findings"]}


def _run(small_set, tmp_path, pattern, world_size=2):
    args = {"scenario": "audit", "data": str(small_set), "batch_size": 3, "pattern": pattern}
    reports = launch(world_size, tmp_path, args)
    # A collective: every rank gets the same judgement.
    assert all(r["verdict"] == reports[0]["verdict"] for r in reports)
    assert all(r["checks"] == reports[0]["checks"] for r in reports)
    return reports[0]


def test_correct_sharding_is_disjoint_complete_and_balanced(small_set, tmp_path):
    report = _run(small_set, tmp_path, "sharded", world_size=3)
    assert report["checks"] == {"disjoint": True, "complete": True, "balanced": True}
    assert _patterns(report) <= {"straggler"}  # timing on a loaded machine is not asserted
    assert sum(r["count"] for r in report["ranks"]) == 23


def test_loaders_without_sharding_read_the_same_samples(small_set, tmp_path):
    report = _run(small_set, tmp_path, "no-sharding")
    assert report["verdict"] == "rank-imbalance"
    assert {"no-sharding", "duplicated"} <= _patterns(report)
    assert report["checks"]["disjoint"] is False
    assert [r["count"] for r in report["ranks"]] == [23, 23]


def test_one_rank_doing_the_work(small_set, tmp_path):
    report = _run(small_set, tmp_path, "single-rank-work")
    assert report["verdict"] == "rank-imbalance"
    assert "single-rank-work" in _patterns(report)
    assert "unbalanced" in _patterns(report)
    single = next(f for f in report["findings"] if f["pattern"] == "single-rank-work")
    assert single["ranks"] == [0, 1]


def test_straggler_is_named(small_set, tmp_path):
    report = _run(small_set, tmp_path, "straggler")
    assert report["verdict"] == "rank-imbalance"
    stragglers = [f for f in report["findings"] if f["pattern"] == "straggler"]
    assert [f["ranks"] for f in stragglers] == [[1]]
    assert report["checks"]["disjoint"] and report["checks"]["complete"]


def test_analyse_names_the_rank_whose_input_is_late_under_lockstep():
    count, total = stoker._stoker.group_digest(20, 3, 3, "exact", True, 0, 0, 0, 3)
    # Lockstep (DDP): equal rates; rank 2 waits for its batches, the others do not.
    ranks = [_record(0, 3, 7, total, batches=3, wait=0.05),
             _record(1, 3, 7, 0, batches=3, wait=0.04),
             _record(2, 3, 6, 0, batches=3, wait=0.55)]
    report = stoker.torch.analyse_audit(ranks)
    assert report["verdict"] == "rank-imbalance"
    assert [f["ranks"] for f in report["findings"]] == [[2]]
    assert report["checks"]["complete"] is True


def _record(rank, world, count, digest, batches=4, rate=100.0, wait=0.0, **kw):
    r = {"loader_rank": rank, "loader_world_size": world, "fingerprint": "f", "dataset_size": 20,
         "batch_size": 3, "mode": "exact", "shuffle": True, "seed": 0, "epoch": 0,
         "epoch_start": 0, "epoch_batches": batches, "count": count, "sum": f"{digest:016x}",
         "images": count, "images_per_second": rate, "wait_fraction": wait,
         "busy_fraction": 0.5}
    r.update(kw)
    return r


def test_analyse_catches_a_digest_that_does_not_add_up():
    count, total = stoker._stoker.group_digest(20, 3, 2, "exact", True, 0, 0, 0, 4)
    assert count == 20
    good = [_record(0, 2, 10, total), _record(1, 2, 10, 0)]
    assert stoker.torch.analyse_audit(good)["checks"]["complete"] is True
    assert stoker.torch.analyse_audit(good)["verdict"] == "healthy"
    bad = [_record(0, 2, 10, total), _record(1, 2, 10, 1)]
    report = stoker.torch.analyse_audit(bad)
    assert report["verdict"] == "rank-imbalance" and "overlap" in _patterns(report)
    assert report["checks"] == {"disjoint": False, "complete": False, "balanced": True}


def test_analyse_input_bound_when_every_rank_waits_on_a_saturated_pool():
    count, total = stoker._stoker.group_digest(20, 3, 2, "exact", True, 0, 0, 0, 4)
    ranks = [_record(0, 2, 10, total, wait=0.6, busy_fraction=0.95),
             _record(1, 2, 10, 0, wait=0.6, busy_fraction=0.95)]
    assert stoker.torch.analyse_audit(ranks)["verdict"] == "input-bound-cpu"


def test_audit_without_a_process_group(small_set):
    loader = stoker.Loader(small_set, 4, size=16, threads=1, rank=0, world_size=1)
    for _ in loader:
        pass
    report = stoker.torch.audit(loader)
    assert report["checks"] == {"disjoint": True, "complete": True, "balanced": True}
    assert report["verdict"] in {"healthy", "input-bound-cpu"}


def _dataloader_run(tmp_path, pattern, dataset_size=24):
    args = {"scenario": "dataloader-audit", "batch_size": 4, "pattern": pattern,
            "dataset_size": dataset_size}
    results = launch(2, tmp_path, args)
    audits = [r["audit"] for r in results]
    assert all(a["verdict"] == audits[0]["verdict"] for a in audits)
    return results


def test_a_dataloader_without_distributed_sampler_is_named_unsharded(tmp_path):
    results = _dataloader_run(tmp_path, "no-sampler")
    report = results[0]["audit"]
    assert report["verdict"] == "rank-imbalance"
    assert {"no-sharding", "duplicated"} <= _patterns(report)
    assert [r["count"] for r in report["ranks"]] == [24, 24]
    assert report["checks"]["disjoint"] is False
    no_sharding = next(f for f in report["findings"] if f["pattern"] == "no-sharding")
    assert "DistributedSampler" in no_sharding["message"]
    # Its wait per step was measured: one wait per batch, each inside its step.
    for r in results:
        stats = r["stats"]
        assert stats["batches"] == 6 and len(stats["wait_per_step"]) == 6
        assert all(0 < w <= s for w, s in zip(stats["wait_per_step"], stats["step_seconds"]))
        assert stats["images"] == 24
        assert r["diagnosis"]["verdict"] in {"input-bound", "healthy", "unknown"}
        assert r["diagnosis"]["numbers"]["steps"]["lines"] == 6


def test_a_dataloader_with_distributed_sampler_is_disjoint_and_complete(tmp_path):
    report = _dataloader_run(tmp_path, "distributed-sampler")[0]["audit"]
    assert report["checks"] == {"disjoint": True, "complete": True, "balanced": True}
    assert not _patterns(report) - {"straggler"}
    assert [r["count"] for r in report["ranks"]] == [12, 12]


def test_a_distributed_sampler_that_pads_is_named(tmp_path):
    # 23 samples over 2 ranks: DistributedSampler repeats one to give both ranks 12.
    report = _dataloader_run(tmp_path, "distributed-sampler", dataset_size=23)[0]["audit"]
    assert "overlap" in _patterns(report)
    assert report["checks"]["disjoint"] is False and report["checks"]["complete"] is False
    assert sum(r["count"] for r in report["ranks"]) == 24


def test_analyse_takes_the_cores_thresholds_and_overrides():
    ranks = _split_records([600, 1000], [0.05, 0.05])
    assert stoker.torch.analyse_audit(ranks)["verdict"] == "rank-imbalance"
    report = stoker.torch.analyse_audit(ranks, {"straggler_rate": 0.5})
    assert report["verdict"] == "healthy"
    assert report["ranks"] is ranks
    with pytest.raises(ValueError, match="unknown audit threshold 'straggler_ratio'"):
        stoker.torch.analyse_audit(ranks, {"straggler_ratio": 0.5})


# -- one rule: the audit and `stoker doctor --telemetry` judge the same numbers alike ---------

def _split_records(rates, waits):
    """Records of a correct split of 20 samples (3 per batch) over len(rates) ranks, with these
    images/s and wait fractions."""
    g = len(rates)
    batches = -(-20 // (3 * g))
    count, total = stoker._stoker.group_digest(20, 3, g, "exact", True, 0, 0, 0, batches)
    counts = [count // g + (count % g if i == 0 else 0) for i in range(g)]
    return [_record(i, g, counts[i], total if i == 0 else 0, batches=batches, rate=rates[i],
                    wait=waits[i]) for i in range(g)]


def _stats_log(path, rates, waits):
    """The stats JSON lines (docs/doctor.md) of ranks at these images/s and waits: three 1 s
    windows each."""
    with open(path, "w") as f:
        for t in range(3):
            for rank, (rate, wait) in enumerate(zip(rates, waits)):
                f.write(json.dumps({
                    "stoker_stats": 1, "time": 1764460000.0 + t, "rank": rank,
                    "world_size": len(rates), "threads": 8, "cpus": 8,
                    "window": {"seconds": 1.0, "images": rate, "wait_fraction": wait,
                               "busy_fraction": 0.5, "read_fraction": 0.02,
                               "cpu_utilisation": 0.5}}) + "\n")


@pytest.mark.parametrize("rates,waits,verdict,stragglers", [
    ([600, 1000], [0.05, 0.05], "rank-imbalance", [0]),  # issue 28's example
    ([900, 1000], [0.05, 0.05], "healthy", []),
    ([1000, 1000, 1000], [0.05, 0.04, 0.55], "rank-imbalance", [2]),  # late input, lockstep
    ([1000] * 7 + [3000], [0.05] * 8, "healthy", []),  # one fast rank makes no stragglers
], ids=["600-vs-1000", "900-vs-1000", "lockstep-wait", "one-fast-of-eight"])
def test_the_audit_and_the_doctor_give_one_verdict(tmp_path, rates, waits, verdict, stragglers):
    audit = stoker.torch.analyse_audit(_split_records(rates, waits))
    log = tmp_path / "stats.jsonl"
    _stats_log(log, rates, waits)
    out = subprocess.run([str(stoker_bin()), "doctor", "--telemetry", str(log), "--json"],
                         check=True, capture_output=True, text=True).stdout
    doctor = json.loads(out)
    assert audit["verdict"] == doctor["verdict"] == verdict, (audit["summary"],
                                                             doctor["summary"])
    assert audit["checks"] == {"disjoint": True, "complete": True, "balanced": True}
    assert {f["pattern"] for f in audit["findings"]} <= {"straggler"}
    assert [f["ranks"] for f in audit["findings"]] == [[r] for r in stragglers]
    assert [r["rank"] for r in doctor["numbers"]["ranks"] if r["straggler"]] == stragglers
