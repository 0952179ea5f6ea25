"""stoker.jax on jax's CPU platform with 8 simulated devices per process: sharded jax.Arrays
each step whose rows are the rank's batch, bfloat16 as bfloat16, every sample once per epoch
over one and two processes (jax.distributed on loopback). Runs in the JAX venv (run.sh), which
has no torch: the plain loader's batches there are numpy arrays."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax", reason="the JAX venv runs this file (./run.sh test)")
from conftest import synth  # noqa: E402

WORKER = Path(__file__).resolve().parent / "jax_worker.py"
IMAGES = 70  # 16 per process and step: the last step of each epoch is part padding


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("processes", [1, 2])
def test_each_step_is_sharded_and_each_sample_arrives_once(tmp_path, processes):
    data = synth(tmp_path / "data", images=IMAGES, classes=5, width=48, height=40, seed=8)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu", STOKER_CACHE_DIR=str(tmp_path / "cache"))
    port = free_port()
    outs = [tmp_path / f"out-{p}.json" for p in range(processes)]
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(data), str(outs[p]), str(p),
                               str(processes), str(port)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for p in range(processes)]
    logs = [p.communicate(timeout=600)[0] for p in procs]
    for proc, log in zip(procs, logs):
        assert proc.returncode == 0, log[-4000:]
    results = [json.loads(out.read_text()) for out in outs]
    steps = -(-IMAGES // (16 * processes))
    assert [r["steps"] for r in results] == [steps] * processes
    assert all(r["shape"] == [16 * processes, 32, 32, 3] for r in results)
    delivered = sorted(i for r in results for i in r["indices"])
    assert delivered == list(range(IMAGES))  # every sample once over all processes
    # The jitted sum over the global array sees every process's valid rows.
    per_step = [min(16 * processes, IMAGES - j * 16 * processes) for j in range(steps)]
    assert all(r["global_valid"] == per_step for r in results)
    assert all(r["np_asarray_is_images"] for r in results)


def test_a_shape_changing_mode_is_refused(tmp_path):
    import stoker.jax

    data = synth(tmp_path / "data", images=8, classes=2, width=48, height=40)
    with pytest.raises(ValueError, match="one batch shape"):
        stoker.jax.Loader(data, 8, mode="short")
