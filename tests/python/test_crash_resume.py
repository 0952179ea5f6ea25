"""Crash safety of training: SIGKILL a real training process at random points, resume from its
last checkpoint (loader.state_dict() saved atomically after each batch), and check that the
samples delivered before the kill and after the resume are exactly the epoch's samples, each
once, in the order of an uninterrupted epoch."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import stoker
from conftest import synth

WORKER = Path(__file__).resolve().parent / "crash_worker.py"
EPOCH = 2


def uninterrupted(data: Path, batch_size: int) -> list:
    loader = stoker.Loader(data, batch_size, size=16, transform="train", threads=2, seed=11)
    loader.set_epoch(EPOCH)
    return [i for b in loader for i in b.indices[b.valid].tolist()]


def test_sigkill_mid_epoch_then_resume_delivers_exactly_the_rest(tmp_path):
    data = synth(tmp_path / "data", images=61, classes=3, width=40, height=30)
    batch_size = 4
    full = uninterrupted(data, batch_size)
    assert sorted(full) == list(range(61))
    batches = -(-61 // batch_size)  # 16
    rng = random.Random(os.getpid())
    kills = []
    for trial, resume_batch in enumerate((batch_size, 3, 7)):  # resume on other batch sizes too
        checkpoint = tmp_path / f"ck{trial}.json"
        kill_after = rng.randint(1, batches - 2)  # batches checkpointed before the kill
        extra_delay = rng.uniform(0, 0.02)         # lands anywhere in the next step
        proc = subprocess.Popen([sys.executable, str(WORKER), str(data), str(checkpoint),
                                 str(EPOCH), str(batch_size)], stdout=subprocess.PIPE, text=True,
                                env=dict(os.environ, OMP_NUM_THREADS="1"))
        try:
            for line in proc.stdout:
                if line.strip() == f"batch {kill_after}":
                    break
            else:
                raise AssertionError(f"worker ended early (rc {proc.wait()})")
            time.sleep(extra_delay)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            rc = proc.wait(timeout=30)
        assert rc == -signal.SIGKILL, f"the worker was not killed mid-epoch (rc {rc})"

        saved = json.loads(checkpoint.read_text())
        state, seen = saved["state"], saved["seen"]
        assert state["epoch"] == EPOCH
        assert state["consumed"] == len(seen) >= kill_after * batch_size

        loader = stoker.Loader(data, resume_batch, size=16, transform="train", threads=2, seed=11)
        loader.load_state_dict(state)
        loader.set_epoch(EPOCH)  # the saved epoch keeps the saved position
        rest = [i for b in loader for i in b.indices[b.valid].tolist()]
        assert len(seen) + len(rest) == 61, "a sample was lost or delivered twice"
        assert sorted(seen + rest) == list(range(61))
        assert seen + rest == full, "the resumed job does not continue the epoch's order"
        kills.append(len(seen))
    print(f"killed after {kills} samples; resumed with batch sizes 4, 3, 7")
