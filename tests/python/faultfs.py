"""Storage that fails on cue, for the fault-injection tests and the soak run (bench/soak.py):
tests/fault/faultfs.cc (a FUSE passthrough on libfuse3) compiled on first use, mounted over a
folder by its user, its rules rewritten while a job runs (see the rules in faultfs.cc's header).
Needs root (mount(2)) and /dev/fuse; Unavailable says why not."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import List

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "tests" / "fault" / "faultfs.cc"


class Unavailable(Exception):
    """This machine cannot mount: no /dev/fuse, or not root."""


def faultfs_binary(cache: Path) -> Path:
    """faultfs built from its source (g++ and Debian's libfuse3-dev, installed by run.sh); kept
    under CACHE by the source's hash."""
    if not Path("/dev/fuse").exists() or os.geteuid() != 0:
        raise Unavailable("the fault-injection file system needs /dev/fuse and root (mount(2))")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    binary = cache / f"faultfs-{digest}"
    if binary.exists():
        return binary
    pkg = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True,
                         text=True)
    if pkg.returncode != 0 or shutil.which("g++") is None:
        raise RuntimeError("faultfs needs g++ and libfuse3-dev (run.sh's test packages)")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_suffix(".tmp")
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-o", str(tmp), str(SOURCE),
                    *pkg.stdout.split()], check=True)
    tmp.rename(binary)
    return binary


class FaultFS:
    """SOURCE passed through at MOUNT; rules() sets the faults, log() reads what was injected."""

    def __init__(self, binary: Path, source: Path, work: Path, direct_io: bool = False):
        work.mkdir(parents=True, exist_ok=True)
        self.mount = work / "mnt"
        self.mount.mkdir(exist_ok=True)
        self._rules = work / "rules"
        self._rules.write_text("")
        self._log = work / "faults.log"
        self._log.write_text("")
        self._out = work / "faultfs.out"
        args = [str(binary), str(source), str(self.mount), f"--rules={self._rules}",
                f"--log={self._log}", "-f"]
        if direct_io:
            args.append("--direct-io")
        self.proc = subprocess.Popen(args, stdout=self._out.open("w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not os.path.ismount(self.mount):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"faultfs did not mount:\n{self._out.read_text()}")
            time.sleep(0.05)
        self.mounted = True

    def rules(self, text: str) -> None:
        """Replaces the rules at once (a new file renamed over the old: faultfs sees a new
        inode even within one mtime tick)."""
        tmp = self._rules.with_suffix(".new")
        tmp.write_text(text)
        tmp.rename(self._rules)

    def log(self) -> List[str]:
        return self._log.read_text().splitlines()

    def wait_for_log(self, prefix: str, timeout: float = 120) -> None:
        """Until an injected fault starting with PREFIX (e.g. "stall read") was logged."""
        deadline = time.monotonic() + timeout
        while not any(line.startswith(prefix) for line in self.log()):
            if time.monotonic() > deadline:
                raise AssertionError(f"no '{prefix}' in the fault log: {self.log()}")
            time.sleep(0.02)

    def lazy_unmount(self) -> None:
        """`umount -l`: the mount leaves the name space at once; open files stay readable,
        new opens find the empty folder below."""
        subprocess.run(["umount", "-l", str(self.mount)], check=True)
        self.mounted = False

    def close(self) -> None:
        self.rules("")  # a stalled call must not keep the file system from exiting
        if getattr(self, "mounted", False):
            subprocess.run(["umount", "-l", str(self.mount)], check=False)
            self.mounted = False
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "FaultFS":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Tmpfs:
    """A tmpfs of SIZE at PATH (ENOSPC on cue), unmounted at the end of the with block."""

    def __init__(self, path: Path, size: str):
        if os.geteuid() != 0:
            raise Unavailable("mounting a tmpfs needs root")
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                       check=True)
        self.path = path

    def resize(self, size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", str(self.path)], check=True)

    def __enter__(self) -> "Tmpfs":
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["umount", "-l", str(self.path)], check=False)
