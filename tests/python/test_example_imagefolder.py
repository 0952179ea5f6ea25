"""examples/imagefolder_ddp.py on 2 gloo ranks (torchrun): a plain torchvision ImageFolder +
DataLoader job that switches only its sampler gets exactly-once epochs, equal batch counts and
a clean audit; with torch's DistributedSampler the same job repeats samples and the audit says
so. One image per class, so the labels the ranks trained on name the samples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("torchvision", reason="the reference venv runs this file")
from conftest import run_torchrun, synth, torchrun  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "imagefolder_ddp.py"
LINE = re.compile(r"^epoch (\d): (\d+) samples over 2 ranks, (\d+) distinct, batches per rank "
                  r"\[(\d+), (\d+)\], audit (\S+) \(disjoint=(\w+), complete=(\w+), "
                  r"balanced=(\w+)\)$", re.M)


@pytest.mark.parametrize("sampler", ["stoker", "torch"])
def test_switching_the_sampler_gives_exactly_once_epochs(tmp_path, sampler):
    data = synth(tmp_path / "data", images=37, classes=37, width=48, height=40, seed=2)
    out = run_torchrun(torchrun() + ["--standalone", "--nproc-per-node", "2", str(EXAMPLE),
                                     "--data", str(data), "--sampler", sampler], timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    epochs = LINE.findall(out.stdout)
    assert len(epochs) == 2, out.stdout
    for epoch, samples, distinct, k0, k1, verdict, disjoint, complete, balanced in epochs:
        assert k0 == k1 == "5" and balanced == "True"
        if sampler == "stoker":
            assert (samples, distinct, verdict) == ("37", "37", "healthy")
            assert disjoint == complete == "True"
        else:  # torch pads the last round with a repeat, and the audit names it
            assert (samples, distinct, verdict) == ("38", "37", "rank-imbalance")
            assert disjoint == "False"
