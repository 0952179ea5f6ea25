"""examples/train_classification.py: torchvision's reference recipe (RRC + flip +
TrivialAugmentWide + RandomErasing per sample, MixUp/CutMix per batch) trains with either
loader, and the stoker variant differs from the torchvision one only in its data loading.
Runs in the reference venv (torchvision for the model and the torchvision variant)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torchvision", reason="the reference venv runs this file")
from conftest import synth  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_classification.py"
EPOCH = re.compile(r"^epoch 0: (\d+) steps, (\d+) images, mean loss (\S+), soft targets "
                   r"\((\d+), (\d+)\)", re.M)


def test_the_transform_lists_are_the_same_lines():
    text = EXAMPLE.read_text()
    body = text[text.index("def make_train_loader"):text.index("# ---- end of data loading")]
    lists = re.findall(r"transform = T\.Compose\(\[(.*?)\]\)", body, re.S)
    assert len(lists) == 2
    assert " ".join(lists[0].split()) == " ".join(lists[1].split())
    mixes = re.findall(r"mix = T\.RandomChoice\(\[(.*?)\]\)", body, re.S)
    assert len(mixes) == 2
    assert " ".join(mixes[0].split()) == " ".join(mixes[1].split())
    # Outside make_train_loader nothing names a loader.
    rest = text.replace(body, "")
    assert "stoker" not in rest.split("def main")[1]


@pytest.mark.parametrize("loader", ["stoker", "torchvision"])
def test_the_recipe_trains(tmp_path, loader):
    data = tmp_path / "data"
    synth(data / "train", images=48, classes=4, width=96, height=72)
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--data-path", str(data), "--loader", loader,
         "--train-crop-size", "64", "--batch-size", "8", "--workers", "2", "--epochs", "1",
         "--lr", "0.01"],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    m = EPOCH.search(out.stdout)
    assert m, out.stdout
    steps, images, loss, rows, classes = m.groups()
    assert int(steps) == 6 and int(images) == 48
    assert (int(rows), int(classes)) == (8, 4)  # MixUp/CutMix made soft targets
    assert 0 < float(loss) < 10
