"""The wheel as a user gets it: a new venv, `pip install <wheel> torch`, then the package, its
torch layer and the `stoker` command work there, on data the command makes.

The wheel is $STOKER_WHEEL (run.sh test sets it), else the one in build/dist/. torch is
pinned to the release the suite runs on (2.13.0: the CPU build where this machine keeps one
on disk); pip takes numpy from the wheel's own requirements. About a minute, most of it
installing torch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def wheel() -> Path:
    given = os.environ.get("STOKER_WHEEL")
    if given:
        return Path(given)
    found = sorted((REPO / "build" / "dist").glob("stoker-*.whl"))
    if not found:
        pytest.fail("no stoker wheel: run ./run.sh build (or set STOKER_WHEEL)")
    return found[-1]


def test_wheel_installs_and_works_in_a_new_venv(tmp_path):
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    py, bin_dir = venv / "bin" / "python", venv / "bin"
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel()), "torch==2.13.0"],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STOKER_BIN")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    help_text = subprocess.run(["stoker", "--help"], env=env, check=True, capture_output=True,
                               text=True).stdout
    assert "synth" in help_text and "doctor" in help_text
    subprocess.run(["stoker", "synth", str(tmp_path / "data"), "--images", "9"], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    stub = next(venv.glob("lib/python*/site-packages/stoker/_stoker.pyi"))
    stub_text = stub.read_text()
    assert "class Loader" in stub_text and "class StorageError(OSError, Error)" in stub_text
    script = (
        "import stoker, stoker.torch, torch\n"
        "assert stoker.__file__.startswith(%r), stoker.__file__\n"
        "loader = stoker.Loader(%r, 4, size=16, threads=1)\n"
        "batches = list(loader)\n"
        "assert isinstance(batches[0].images, torch.Tensor)\n"
        "print(stoker.__version__, torch.__version__, sum(b.num_valid for b in batches))\n"
    ) % (str(venv), str(tmp_path / "data"))
    out = subprocess.run([str(py), "-c", script], env=env, cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout.split()
    version = next(line.split()[2] for line in (REPO / "CMakeLists.txt").read_text().splitlines()
                   if line.startswith("project(stoker VERSION"))
    assert out[0] == version and out[1].startswith("2.") and out[2] == "9", out
