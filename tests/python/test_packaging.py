"""The wheel as a user gets it: a new venv, `pip install <wheel> torch`, then the package, its
torch layer and the `stoker` command work there, on data the command makes.

The wheel is $STOKER_WHEEL (run.sh test sets it), else the one in build/dist/. torch is
pinned to the release the suite runs on (2.13.0: the CPU build where this machine keeps one
on disk); pip takes numpy from the wheel's own requirements. About a minute, most of it
installing torch.
"""

from __future__ import annotations

import os
import re
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


def project_version() -> str:
    """The version CMakeLists.txt's project() line gives the package and the command."""
    return next(line.split()[2] for line in (REPO / "CMakeLists.txt").read_text().splitlines()
                if line.startswith("project(stoker VERSION"))


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
    version = project_version()
    assert out[0] == version and out[1].startswith("2.") and out[2] == "9", out


def test_pip_installs_a_fresh_clone_with_build_isolation(tmp_path):
    """What a new user types: a fresh clone, a new venv and `pip install .` with pip's default
    build isolation (the build requirements from pyproject.toml only). The C++ libraries' -dev
    packages are this machine's (run.sh build installs them).

    One setting a user would not type: the build folder. pip's default is a new temporary folder
    per build, whose path is in every compile command, so ccache shared nothing and the test
    compiled the whole project (it took 844 s of the suite's 1578 when it also ran `pip wheel .`
    first, a second build from scratch). In clone/build, with the clone as ccache's base folder,
    the commands are those of run.sh's own build in build/ and hit its cache; only the bindings,
    which include pybind11 from pip's temporary build environment, compile again."""
    clone = tmp_path / "stoker"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)],
                   check=True)
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STOKER_BIN")}
    env.update(CMAKE_CXX_COMPILER_LAUNCHER="ccache", CCACHE_BASEDIR=str(clone),
               CCACHE_NOHASHDIR="1", SKBUILD_BUILD_DIR=str(clone / "build"))
    r = subprocess.run([str(py), "-m", "pip", "install", "."], cwd=clone, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, f"pip install .:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    version = project_version()
    # pip's own line for the wheel it built and installed ("Created wheel for stoker:
    # filename=stoker-<version>-cp311-cp311-linux_x86_64.whl size=... sha256=...").
    built = re.findall(r"Created wheel for stoker: filename=(\S+\.whl)", r.stdout)
    assert len(built) == 1 and built[0].startswith(f"stoker-{version}-"), r.stdout[-3000:]
    out = subprocess.run([str(py), "-c", "import stoker; print(stoker.__version__)"], env=env,
                         cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()
    command = subprocess.run([str(venv / "bin" / "stoker"), "--version"], env=env,
                             check=True, capture_output=True, text=True).stdout.strip()
    assert out == version and command == f"stoker {version}", (out, command)
