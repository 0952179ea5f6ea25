"""Remote shards over a slow or lossy link: the latency of each read hidden by read-ahead in
shard windows, a bandwidth-bound link diagnosed as io-bound by the live verdict, and dropped
connections retried with nothing lost. The link: slowlink.py (latency, resets; this kernel
has no netem) and a veth into a network namespace shaped by the kernel's tbf (bandwidth).
Throughput numbers come from bench/remote.py (docs/perf.md), not from these tests."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess

from conftest import stoker_bin
from netns import Namespace
from servers import Nginx
from slowlink import SlowLink
from test_webdataset import N, digest, images, shards, windowed_digests  # noqa: F401


@contextlib.contextmanager
def indexed_then(shards, tmp_path, cache: str, **link):
    """nginx serving the shards, indexed through a plain link (the index cache is keyed by
    the URL), then the same address served by SlowLink(**link) (delay, drop_every, ...):
    yields the shards' pattern on it, so that a run opens from the cache and only its sample
    reads meet the link."""
    with Nginx(shards["root"], tmp_path / "nginx") as server:
        with SlowLink(f"127.0.0.1:{server.port}", 0.0, tmp_path / "link") as plain:
            url = f"{plain.url}/cls/train-{{000000..000004}}.tar"
            port = plain.port
            digest(url, {"STOKER_CACHE_DIR": cache})  # indexes the shards
        link.setdefault("delay", 0.0)
        with SlowLink(f"127.0.0.1:{server.port}", work=tmp_path / "link2", port=port, **link):
            yield url


def test_read_ahead_keeps_many_reads_in_flight_over_a_20ms_link(shards, tmp_path):
    want = windowed_digests(shards["cls"])
    with Nginx(shards["root"], tmp_path / "nginx") as server, \
            SlowLink(f"127.0.0.1:{server.port}", 0.010, tmp_path / "link") as link:
        url = f"{link.url}/cls/train-{{000000..000004}}.tar"
        env = {"STOKER_CACHE_DIR": str(tmp_path / "cache")}
        assert [digest(url, env, rank=r, world=w)[0] for r, w in ((0, 1), (0, 2), (1, 2))] == want
        served = server.requests()
        # Shard windows: members come in runs, a few range reads per rank and window, not one
        # round trip per sample (3 runs over 47 samples, plus one index read per shard).
        members = [r for r in served if r[0] == "GET"]
        assert len(members) < 3 * N / 2, members
        # The runs of a window and the next were fetched side by side, not one after another.
        assert link.stats()["max_open"] >= 3


def test_a_bandwidth_bound_link_is_diagnosed_io_bound(shards, tmp_path):
    with Namespace(rate="2mbit") as ns, \
            Nginx(shards["root"], tmp_path / "nginx", listen=ns.ip, netns=ns.name) as server:
        url = f"{server.url}/cls/train-{{000000..000004}}.tar"
        r = subprocess.run(
            [str(stoker_bin()), "bench", url, "--batch", "8", "--threads", "2", "--size", "32",
             "--images", "240", "--stats", "--stats-file", str(tmp_path / "stats.jsonl"),
             "--no-measure-fixes"],
            capture_output=True, text=True, timeout=300,
            env=dict(os.environ, STOKER_CACHE_DIR=str(tmp_path / "cache")))
        assert r.returncode == 0, r.stdout + r.stderr
        assert re.search(r"^verdict: io-bound", r.stdout, re.M), r.stdout
        assert "input-bound on reads" in r.stdout


def test_dropped_connections_are_retried_and_nothing_is_lost(shards, tmp_path):
    want = windowed_digests(shards["cls"])
    with Nginx(shards["root"], tmp_path / "nginx") as server, \
            SlowLink(f"127.0.0.1:{server.port}", 0.002, tmp_path / "link",
                     drop_every=5) as link:
        url = f"{link.url}/cls/train-{{000000..000004}}.tar"
        env = {"STOKER_CACHE_DIR": str(tmp_path / "cache"), "STOKER_IO_ATTEMPTS": "20"}
        runs = [subprocess.run(
            [str(stoker_bin()), "bench", url, "--digest", "--batch", "8", "--threads", "2",
             "--seed", "3", "--size", "32", "--rank", str(r), "--world", str(w)],
            capture_output=True, text=True, timeout=300, env=dict(os.environ, **env))
            for r, w in ((0, 1), (0, 2), (1, 2))]
        for run in runs:
            assert run.returncode == 0, run.stdout + run.stderr
        assert [re.search(r"digest ([0-9a-f]{16})", run.stdout).group(1) for run in runs] == want
        stats = link.stats()
        assert stats["drops"] == stats["chunks"] // 5 >= 3, stats
        assert any("trying again" in run.stderr for run in runs)


def test_a_link_that_never_delivers_is_an_error_not_skipped_samples(shards, tmp_path):
    """Retries are bounded, and an exhausted one is an I/O error naming the object, whatever
    the bad-sample policy: a dead link must not look like an epoch of corrupt images."""
    cache = str(tmp_path / "cache")
    env = dict(os.environ, STOKER_CACHE_DIR=cache, STOKER_IO_ATTEMPTS="3")
    # Every response reset: the cached index opens the shards (HEADs pass, being smaller than
    # 1000 bytes), the members' reads all fail.
    with indexed_then(shards, tmp_path, cache, drop_every=1, drop_min_bytes=1000) as url:
        r = subprocess.run([str(stoker_bin()), "bench", url, "--batch", "8", "--size", "32",
                            "--bad-samples", "skip"], capture_output=True, text=True,
                           timeout=300, env=env)
    assert r.returncode != 0, r.stdout
    assert re.search(r"train-00000\d\.tar: (member|members) .*\(tried 3 times\)", r.stderr), \
        r.stderr
    assert "skipping bad sample" not in r.stderr


def test_ctrl_c_interrupts_a_wait_for_a_stuck_read(shards, tmp_path):
    """Before: Ctrl-C in Python waited until the batch was done, for ever with a read stuck in
    storage. Now next() waits in slices and gives way to the signal; the batch is still not
    there when KeyboardInterrupt arrives (the reads take seconds on this link): no batch was
    delivered (the state counts none) and the next one is not ready."""
    import signal
    import threading

    import stoker
    cache = str(tmp_path / "cache")  # the autouse fixture's STOKER_CACHE_DIR
    with indexed_then(shards, tmp_path, cache, delay=1.0) as url:
        loader = stoker.Loader(url, batch_size=4, threads=1, transform="eval", size=16)
        it = iter(loader)
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            next(it)
            raise AssertionError("the batch came before the interrupt")
        except KeyboardInterrupt:
            pass
        finally:
            timer.cancel()
        assert loader.state_dict()["consumed"] == 0  # interrupted before the first batch
        assert not loader._handle.wait_ready(0)  # ... while its reads were pending
        loader.close()  # stops the reads in flight


def test_closing_a_loader_stops_its_reads_on_a_slow_link_rather_than_waiting(shards, tmp_path):
    """close() with reads in flight on a slow link waited for them, up to
    STOKER_CLOSE_TIMEOUT, then abandoned the worker threads. Now it cancels them (a remote
    request wakes every 0.1 s to look, stoker/cancel.h): with an hour of close timeout the
    process still closes, joins its workers and exits normally. (A read stuck where nothing
    can stop it, a hung mount, is still abandoned after the timeout: test_faults.py and
    LoaderCloseDeathTest in src/pipeline/loader_bad_input_test.cc.)"""
    import sys
    import textwrap
    cache = str(tmp_path / "cache")
    with indexed_then(shards, tmp_path, cache, delay=3.0) as url:
        script = textwrap.dedent(f"""
            import stoker
            loader = stoker.Loader({url!r}, batch_size=4, threads=1, transform="eval", size=16)
            loader.set_epoch(0)  # the first batches' reads start (and take seconds)
            assert not loader._handle.wait_ready(0.5)  # a worker is in a read by now
            loader.close()
            print("closed")
        """)
        env = dict(os.environ, STOKER_CACHE_DIR=cache, STOKER_CLOSE_TIMEOUT="3600")
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "closed" in r.stdout
    assert "abandoned" not in r.stderr and "trying again" not in r.stderr, r.stderr
