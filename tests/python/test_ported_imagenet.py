"""pytorch/examples' imagenet/main.py, ported by its data lines only (tests/ported/), counts
every validation image once with its own unchanged validate(): in one process (an eval
loader's default mode, 'short': a short last batch as DataLoader's) and under torchrun on 2
gloo ranks, where the port keeps upstream's DistributedSampler(drop_last=True) as
drop_last=True ('even': floor(87 / 2) images per rank) and the script's own tail loader reads
the 87th image through Subset(val_loader.dataset, ...) and a torch DataLoader."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torchvision", reason="the reference venv runs this file")
from conftest import synth, torchrun  # noqa: E402

HERE = Path(__file__).resolve().parent
MAIN = HERE.parents[1] / "tests" / "ported" / "imagenet_main.py"
RUNNER = HERE / "run_ported.py"
SUMMARY = re.compile(r"^ \*\s+Acc@1 \S+ \(count (\S+)\) Acc@5 \S+ \(count (\S+)\)$", re.M)
VAL_IMAGES = 87  # odd: on 2 ranks drop_last leaves one image to the script's tail loader


@pytest.fixture(scope="module")
def imagenet(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("imagenet")
    synth(root / "train", images=24, classes=4, width=300, height=260, seed=5)
    synth(root / "val", images=VAL_IMAGES, classes=4, width=300, height=260, seed=6)
    return root


def run(cmd, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1", STOKER_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path,
                         env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    return out.stdout


ARGS = ["-a", "mobilenet_v3_small", "-b", "32", "-j", "2", "-p", "1", "--epochs", "1"]


def test_one_process_trains_and_validates_every_image_once(imagenet, tmp_path):
    out = run([sys.executable, str(RUNNER), str(MAIN), str(imagenet), *ARGS], tmp_path)
    assert SUMMARY.findall(out) == [(str(VAL_IMAGES), str(VAL_IMAGES))], out
    # The progress line of the last validation batch: 3 batches (32 + 32 + 23).
    assert "Test: [3/3]" in out and "Epoch: [0][1/1]" in out, out


def test_two_ranks_under_torchrun_validate_every_image_once(imagenet, tmp_path):
    out = run([*torchrun(), "--standalone", "--nproc-per-node", "2", str(RUNNER), str(MAIN),
               str(imagenet), *ARGS, "--dist-url", "env://", "--dist-backend", "gloo"],
              tmp_path)
    # Each rank prints the all-reduced count: 43 + 43 from the loader, 1 from the tail.
    assert SUMMARY.findall(out) == [(str(VAL_IMAGES), str(VAL_IMAGES))] * 2, out
    # 2 loader batches (32 + 11) and the tail loader's one: upstream's own progress count.
    assert "Test: [3/3]" in out, out
