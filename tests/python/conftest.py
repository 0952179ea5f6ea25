"""Shared fixtures of the Python tests.

Run from the repository root after `./run.sh build`:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python
The stoker package is found through PYTHONPATH; the `stoker` CLI (for `stoker synth`) is
looked up beside the package's build folder (build/stoker), else $STOKER_BIN.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import stoker

HERE = Path(__file__).resolve().parent
WORKER = HERE / "dist_worker.py"


def stoker_bin() -> Path:
    env = os.environ.get("STOKER_BIN")
    if env:
        return Path(env)
    # build/python/stoker/__init__.py -> build/stoker
    candidate = Path(stoker.__file__).resolve().parent.parent.parent / "stoker"
    if not candidate.exists():
        pytest.skip(f"stoker CLI not found at {candidate} (set STOKER_BIN)")
    return candidate


def synth(out: Path, images: int, classes: int = 3, width: int = 64, height: int = 48,
          seed: int = 0) -> Path:
    """A deterministic photo-like JPEG ImageFolder made by `stoker synth`."""
    subprocess.run([str(stoker_bin()), "synth", str(out), "--images", str(images), "--classes",
                    str(classes), "--width", str(width), "--height", str(height), "--seed",
                    str(seed)], check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="session")
def small_set(tmp_path_factory) -> Path:
    """23 small JPEGs in 3 classes."""
    return synth(tmp_path_factory.mktemp("small") / "data", images=23)


@pytest.fixture(scope="session")
def big_set(tmp_path_factory) -> Path:
    """A few large JPEGs: slow enough to decode to observe waiting in next()."""
    return synth(tmp_path_factory.mktemp("big") / "data", images=8, classes=2, width=1600,
                 height=1200)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Keep the folder-index cache out of the user's home."""
    monkeypatch.setenv("STOKER_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(world_size: int, tmp_path: Path, args: Dict, timeout: float = 120,
           per_rank: Optional[List[Dict]] = None) -> List[Dict]:
    """Runs dist_worker.py on `world_size` processes the way torchrun starts them (gloo) and
    returns each rank's JSON result. `args` goes to every rank, `per_rank[r]` on top."""
    port = free_port()
    procs = []
    outs = []
    for rank in range(world_size):
        out = tmp_path / f"rank{rank}-{port}.json"
        outs.append(out)
        rank_args = dict(args, out=str(out))
        if per_rank:
            rank_args.update(per_rank[rank])
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                   LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                   LOCAL_WORLD_SIZE=str(world_size), OMP_NUM_THREADS="1",
                   STOKER_CACHE_DIR=str(tmp_path / "cache"))
        procs.append(subprocess.Popen([sys.executable, str(WORKER), json.dumps(rank_args)],
                                      env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=timeout)[0])
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        raise AssertionError(f"ranks did not finish within {timeout} s (hang?)")
    for rank, p in enumerate(procs):
        assert p.returncode == 0, f"rank {rank} failed ({p.returncode}):\n{logs[rank]}"
    return [json.loads(out.read_text()) for out in outs]
