"""stoker in PyTorch Lightning: examples/lightning_ddp.py trains with Trainer(strategy="ddp")
on 2 CPU ranks (gloo), and stoker.lightning.DataModule keeps the loader's position in its
state (what a checkpoint holds)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytorch_lightning", reason="pytorch-lightning is in the project venv")
import stoker.lightning  # noqa: E402
from conftest import synth  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lightning_ddp.py"
EPOCH = re.compile(r"^epoch (\d+): train loss (\S+) over (\d+) images \(audit (\S+)\), "
                   r"val accuracy \S+% on (\d+) images$", re.M)


def test_a_lightning_ddp_job_on_two_cpu_ranks_trains_with_stoker(tmp_path):
    synth(tmp_path / "data" / "train", images=60, classes=3, width=48, height=40, seed=3)
    synth(tmp_path / "data" / "val", images=21, classes=3, width=48, height=40, seed=4)
    out = subprocess.run([sys.executable, str(EXAMPLE), "--data", str(tmp_path / "data"),
                          "--devices", "2", "--epochs", "3"], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-4000:]
    epochs = EPOCH.findall(out.stdout)
    assert [int(e[0]) for e in epochs] == [0, 1, 2], out.stdout + out.stderr[-2000:]
    for _, loss, images, verdict, val_images in epochs:
        # Every training image exactly once per epoch over the 2 ranks, every val image once.
        assert (int(images), verdict, int(val_images)) == (60, "healthy", 21)
        assert math.isfinite(float(loss)) and float(loss) < 5


def test_the_datamodule_state_resumes_the_epoch_where_it_stopped(tmp_path):
    data = synth(tmp_path / "train", images=30, classes=3, width=40, height=32)
    kwargs = dict(transform="eval", size=16, threads=1, seed=2, rank=0, world_size=1)
    first = stoker.lightning.DataModule(str(data), 4, **kwargs)
    loader = first.train_dataloader()
    loader.sampler.set_epoch(1)  # as Lightning does before each epoch
    it = iter(loader)
    seen = [int(i) for _ in range(3) for i in next(it).indices]
    state = first.state_dict()
    first.teardown("fit")
    second = stoker.lightning.DataModule(str(data), 4, **kwargs)
    second.load_state_dict(state)
    rest = [int(i) for b in second.train_dataloader() for i, ok in zip(b.indices, b.valid) if ok]
    assert sorted(seen + rest) == list(range(30))
    second.teardown("fit")


WORKER = Path(__file__).resolve().parent / "lightning_eval_worker.py"


@pytest.mark.parametrize("images", [87, 81])
def test_validate_test_and_predict_count_each_sample_once_on_two_ranks(tmp_path, images):
    """Unchanged Lightning eval loops (torchmetrics sums, trainer.predict's outputs) on 2 DDP
    ranks count every image once: the eval loaders' last batches hold only their samples. 81
    images in batches of 8: the last step has one image, rank 1 an empty batch."""
    pytest.importorskip("torchmetrics")
    data = synth(tmp_path / "val", images=images, classes=3, width=48, height=40, seed=7)
    out = subprocess.run([sys.executable, str(WORKER), str(data), "--devices", "2"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-4000:]
    stages = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [s["stage"] for s in stages] == ["validate", "test", "predict"], out.stdout
    for stage in stages:
        assert stage["count"] == images, stage["stage"]
        assert stage["indices"] == list(range(images)), stage["stage"]
    assert stages[0]["accuracy"] == stages[1]["accuracy"]  # the same images, the same model


def test_the_datamodule_checks_its_keywords_when_made():
    with pytest.raises(TypeError, match="takes no 'num_worker'"):
        stoker.lightning.DataModule("train", 8, num_worker=4)
    stoker.lightning.DataModule("train", 8, num_workers=4, pin_memory=False, seed=3)
