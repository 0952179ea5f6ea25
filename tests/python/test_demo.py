"""The demo (python -m stoker.demo, ./run.sh demo) tells both stories with numbers: run small
in the reference venv, which has torchvision. What it measures depends on the machine, so the
test checks that each story ran and said what it measured, not how fast anything was."""

import re
import subprocess
import sys

import pytest

pytest.importorskip("torchvision")


def test_demo_tells_both_stories(tmp_path):
    out = subprocess.run([sys.executable, "-m", "stoker.demo", "--dir", str(tmp_path / "d"),
                          "--images", "128", "--seconds", "0.5"],
                         check=True, capture_output=True, text=True, timeout=600).stdout
    assert "== Story 1" in out and "== Story 2" in out
    # Story 1: the DataLoader at 2 and 8 simulated GPUs, then stoker, each with its numbers.
    # Each verdict agrees with the idle share printed beside it, by the doctor's thresholds
    # (docs/doctor.md, "Waiting for data": under 15 % healthy, 15-30 % mildly, 30 % or more
    # input-bound); the printed share is rounded, so a verdict at a boundary may round either way.
    for label in ("DataLoader, 2 GPUs", "DataLoader, 8 GPUs", "stoker.Loader on the same JPEGs",
                  "the same images packed once"):
        line = next(l for l in out.splitlines() if label in l)
        m = re.search(r"\d+ of \d+ images/s, GPUs idle (\d+) %, CPUs \d+ % busy -> (.+)$", line)
        assert m, line
        idle, said = int(m.group(1)), m.group(2)
        allowed = set()
        if idle <= 15:
            allowed.add("healthy")
        if 15 <= idle <= 30:
            allowed.add("input-bound (mildly)")
        if idle >= 30:
            allowed.add("input-bound")
        assert said in allowed, line
    assert "The doctor:" in out
    # Story 2: the audit names the unsharded ranks, then finds the sharded ones correct.
    assert "samples read per rank [96, 96] of 96 -> rank-imbalance" in out
    assert "no-sharding:" in out and "duplicated:" in out
    assert "samples read per rank [48, 48] of 96 -> healthy" in out
    assert "shards disjoint True, complete True, balanced True" in out
