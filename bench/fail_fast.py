#!/usr/bin/env python3
"""How fast an open or a read gives up on a stalled server (issue 30; docs/perf.md, "Nothing
trusted that was not checked").

  .venv/bin/python bench/fail_fast.py [--python PY] [--wait 200]

Serves 64 WebDataset shard names from a loopback HTTP server (tests/python/servers.py's
FailingHttp) that accepts each request and never answers, and times, in a fresh process of PY
(default: this interpreter; an older stoker in another venv for a "before"):

  stall-2s       open with stall_timeout=2 and no open deadline: the first shard to fail
                 (after its tries) stops the others
  deadline-2s    open with stall_timeout=3600 and open_timeout=2: the one deadline
  404-first      shard 5 answers 404, the others stall (stall_timeout=3600): the 404 stops all
  ctrl-c-open    SIGINT during an open of the stalled shards: when KeyboardInterrupt is raised
  ctrl-c-read    SIGINT while a read stalls (the index came from the cache), then close() with
                 STOKER_CLOSE_TIMEOUT=3600: when each returns

A case still running after --wait seconds is reported as such. An older stoker without
IoConfig.open_timeout runs the cases without it.
"""
from __future__ import annotations

import argparse
import io
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))
from servers import FailingHttp  # noqa: E402

OPEN = """
import errno, sys, time, stoker
start = time.monotonic()
kw = dict(stall_timeout=float(sys.argv[3]))
if sys.argv[2] != "none" and "open_timeout" in stoker.IoConfig.__dataclass_fields__:
    kw["open_timeout"] = float(sys.argv[2])
try:
    stoker.open_dataset(sys.argv[1], io=stoker.IoConfig(**kw))
    print("opened")
except stoker.StorageError as e:
    print(errno.errorcode.get(e.errno), str(e)[:120])
except KeyboardInterrupt:
    print("interrupted", time.time())
print(f"{time.monotonic() - start:.2f} s")
"""

READ = """
import sys, time, stoker
loader = stoker.Loader(sys.argv[1], 4, threads=2, transform="eval", size=32,
                       io=stoker.IoConfig(stall_timeout=3600))
try:
    next(iter(loader))
except KeyboardInterrupt:
    print("interrupted", time.time(), flush=True)
loader.close()
print("closed", time.time(), flush=True)
"""

PATTERN = "s-{00..63}.tar"


def run(py: str, code: str, args, wait: float, env=None) -> str:
    try:
        r = subprocess.run([py, "-c", code, *args], capture_output=True, text=True, timeout=wait,
                           env={**os.environ, **(env or {})})
        return (r.stdout.strip() or r.stderr.strip()[-200:]).replace("\n", " | ")
    except subprocess.TimeoutExpired:
        return f"still running after {wait:.0f} s"


def interrupt(py: str, code: str, args, server, method: str, wait: float, env=None) -> str:
    child = subprocess.Popen([py, "-c", code, *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    while not any(r[0] == method for r in server.requests):
        time.sleep(0.01)
    time.sleep(0.5)  # well inside the stalled request
    sent = time.time()
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        child.kill()
        return f"still running {wait:.0f} s after SIGINT"
    words = out.split()
    marks = [f"{words[i]} after {float(words[i + 1]) - sent:.3f} s"
             for i in range(len(words) - 1) if words[i] in ("interrupted", "closed")]
    return ", ".join(marks) or (out + err)[-200:]


def shards(root: Path) -> None:
    """s-00.tar: 12 tiny JPEG samples with .cls labels (the others are only ever stalled)."""
    from PIL import Image
    with tarfile.open(root / "s-00.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(12):
            jpg = io.BytesIO()
            Image.new("RGB", (32, 24), (i * 20, 80, 160)).save(jpg, "JPEG")
            for ext, data in (("jpg", jpg.getvalue()), ("cls", str(i % 2).encode())):
                info = tarfile.TarInfo(f"k{i:03d}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--wait", type=float, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shards(root)
        cases = [("stall-2s", {"HEAD", "GET"}, set(), "none", "2"),
                 ("deadline-2s", {"HEAD", "GET"}, set(), "2", "3600"),
                 ("404-first", {"HEAD", "GET"}, {"/s-05.tar"}, "0", "3600")]
        for name, stall, missing, deadline, stall_timeout in cases:
            with FailingHttp(root) as server:
                server.stall, server.missing = stall, missing
                args = [f"{server.url}/{PATTERN}", deadline, stall_timeout]
                print(f"{name:12} {run(a.python, OPEN, args, a.wait)}", flush=True)
        with FailingHttp(root) as server:
            server.stall = {"HEAD", "GET"}
            args = [f"{server.url}/{PATTERN}", "0", "3600"]
            print(f"{'ctrl-c-open':12} {interrupt(a.python, OPEN, args, server, 'HEAD', a.wait)}",
                  flush=True)
        env = {"STOKER_CACHE_DIR": str(root / "index"), "STOKER_CLOSE_TIMEOUT": "3600"}
        with FailingHttp(root) as server:
            url = f"{server.url}/s-00.tar"
            run(a.python, "import sys, stoker; stoker.open_dataset(sys.argv[1])", [url], a.wait,
                env)  # indexes the shard: the timed open needs no GET
            server.taken()
            server.stall = {"GET"}
            result = interrupt(a.python, READ, [url], server, "GET", a.wait, env)
            print(f"{'ctrl-c-read':12} {result}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
