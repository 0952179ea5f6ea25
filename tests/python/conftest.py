"""Shared fixtures of the Python tests.

Run from the repository root after `./run.sh build`, with the venv's interpreter:
    .venv/bin/python -m pytest -q tests/python
The tests import the installed stoker package (the wheel run.sh installs into the venv), never
the source tree; the `stoker` command is $STOKER_BIN, else the one installed beside the
interpreter (the venv's bin/), else the first on PATH.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
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
    candidate = Path(sys.executable).parent / "stoker"
    if candidate.exists():
        return candidate
    found = shutil.which("stoker")
    if found is None:
        pytest.fail("the stoker command is neither beside the interpreter nor on PATH "
                    "(pip install the stoker wheel, or set STOKER_BIN)")
    return Path(found)


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


def torchrun() -> List[str]:
    """The torchrun of this interpreter's torch: the venv's `torchrun` script, else the module
    it runs (python -m torch.distributed.run)."""
    script = Path(sys.executable).parent / "torchrun"
    return [str(script)] if script.exists() else [sys.executable, "-m", "torch.distributed.run"]


def run_torchrun(cmd: List[str], timeout: float, env: Optional[Dict[str, str]] = None,
                 cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    """Runs a training job's command line, torchrun's or one Python process's (text stdout and
    stderr captured). A job still running after `timeout` s fails the test with every rank's
    and DataLoader worker's Python stacks: each gets SIGABRT, which PYTHONFAULTHANDLER turns
    into a dump of its threads on stderr, so a hang says where it hung; then every process of
    the job is killed, leaving nothing behind."""
    env = dict(os.environ if env is None else env, PYTHONFAULTHANDLER="1")
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_no_core_files)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # The job's first process (torchrun) stopped until its children have dumped, so that
        # it does not end them first; one dump at a time, so that they do not interleave.
        # Each process is held by a pidfd from here on: a pid that ends is never another's.
        job = [_pidfd(pid) for pid in [proc.pid, *descendants(proc.pid)]]
        _signal(job[0], signal.SIGSTOP)
        for fd in job[1:]:  # the ranks (each in a session of its own) and their workers
            _signal(fd, signal.SIGABRT)
            time.sleep(0.5)
        _signal(job[0], signal.SIGABRT)  # delivered on SIGCONT: a one-process job's stacks
        _signal(job[0], signal.SIGCONT)
        time.sleep(1)
        for fd in job:
            _signal(fd, signal.SIGKILL)
            if fd is not None:
                os.close(fd)
        try:
            stdout, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # a process outside the job's tree holds its output
            proc.kill()
            stdout, stderr = "", "(the job's output is still held open by an orphaned process)"
        raise AssertionError(f"the job (torchrun pid {proc.pid}) did not finish within {timeout} "
                             f"s (a hang?); its output and its processes' stacks:\n{stdout}\n"
                             f"{stderr[-30000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _no_core_files() -> None:
    """SIGABRT's dumps are the stacks on stderr, not core files in the job's folder."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _pidfd(pid: int) -> Optional[int]:
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


def _signal(pidfd: Optional[int], sig: int) -> None:
    if pidfd is None:
        return
    try:
        signal.pidfd_send_signal(pidfd, sig)
    except ProcessLookupError:
        pass


def descendants(pid: int) -> List[int]:
    """The processes below `pid`: its children, theirs, and so on (from /proc)."""
    children: Dict[int, List[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (comm)"
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def launch(world_size: int, tmp_path: Path, args: Dict, timeout: float = 180,
           per_rank: Optional[List[Dict]] = None, max_restarts: int = 0) -> List[Dict]:
    """Runs dist_worker.py on `world_size` ranks started by torchrun (--standalone, gloo) and
    returns each rank's JSON result (of the last attempt, with --max-restarts). `args` goes to
    every rank, `per_rank[r]` on top of it for rank r."""
    out = tmp_path / f"result-{len(list(tmp_path.glob('result-*')))}"
    out.mkdir()
    worker_args = dict(args, out=str(out), per_rank=per_rank or [])
    cmd = [*torchrun(), "--standalone", f"--nproc-per-node={world_size}",
           f"--max-restarts={max_restarts}", "--monitor-interval=0.2", str(WORKER),
           json.dumps(worker_args)]
    env = dict(os.environ, OMP_NUM_THREADS="1", STOKER_CACHE_DIR=str(tmp_path / "cache"))
    done = run_torchrun(cmd, timeout, env)
    assert done.returncode == 0, f"torchrun failed ({done.returncode}):\n{done.stdout}{done.stderr}"
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(world_size)]
