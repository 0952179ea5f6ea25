"""examples/train_clip.py: a tiny CLIP on CLIP-style shards written by webdataset's own
ShardWriter trains with stoker's loader and with webdataset + DataLoader, in one process and
under torchrun on 2 CPU ranks (gloo). Runs in the reference venv (torchvision and webdataset
for the webdataset variant)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("torchvision", reason="the reference venv runs this file")
pytest.importorskip("webdataset", reason="the reference venv runs this file")
import clip_shards  # noqa: E402
from conftest import run_torchrun  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_clip.py"
EPOCH = re.compile(r"^epoch (\d+): (\d+) steps of (\d+), (\d+) pairs on rank 0, mean loss (\S+),",
                   re.M)
SAMPLES = 96


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    return clip_shards.write(tmp_path_factory.mktemp("clip") / "shards", SAMPLES, 20)


def test_only_make_loader_names_a_loader():
    text = EXAMPLE.read_text()
    body = text[text.index("def make_loader"):text.index("# ---- end of data loading")]
    rest = text.replace(body, "").split("def main")[1]
    assert "stoker" not in rest and "webdataset" not in rest.replace("--loader", "")


def run(args, shards, loader, ranks=1):
    cmd = [str(EXAMPLE), "--shards", shards, "--samples", str(SAMPLES), "--loader", loader,
           "--batch-size", "8", "--workers", "1", "--epochs", "2"]
    if ranks == 1:
        cmd = [sys.executable] + cmd
    else:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks),
               "--master-port", str(29500 + os.getpid() % 1000)] + cmd
    out = run_torchrun(cmd, timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-4000:]
    epochs = EPOCH.findall(out.stdout)
    assert len(epochs) == 2, out.stdout
    return [(int(d), int(s), int(p), float(loss)) for _, d, s, p, loss in epochs]


@pytest.mark.parametrize("loader", ["stoker", "webdataset"])
def test_clip_trains_in_one_process(shards, loader):
    for done, steps, pairs, loss in run([], shards, loader):
        assert done == steps == SAMPLES // 8 and pairs == SAMPLES
        assert 0 < loss < 10


@pytest.mark.parametrize("loader", ["stoker", "webdataset"])
def test_clip_trains_under_torchrun_on_two_ranks(shards, loader):
    for done, steps, pairs, loss in run([], shards, loader, ranks=2):
        assert done == steps == SAMPLES // 16 and pairs == SAMPLES // 2
        assert 0 < loss < 10
