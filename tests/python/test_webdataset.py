"""WebDataset tar shards written by the webdataset package (PyPI), read by stoker from local
disk, from nginx over HTTP and from an S3 store (SeaweedFS), each giving byte for byte the
batches of the same images in a folder: the same digest (pixels of the random crops, labels,
valid masks, in order) on one rank and on each of two, and over torchrun the same samples on
each rank, each once per epoch."""

from __future__ import annotations

import collections
import os
import random
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

import stoker
from conftest import launch, stoker_bin, synth
from servers import FailingHttp, Nginx, SeaweedS3

webdataset = pytest.importorskip("webdataset")

N = 47
SHARD = 10  # samples per shard: 5 shards, the last one short


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    return synth(tmp_path_factory.mktemp("wds") / "folder", images=N, classes=3, width=96,
                 height=72, seed=5)


@pytest.fixture(scope="module")
def shards(images, tmp_path_factory) -> dict:
    """The folder's samples in its (torchvision) order as two shard sets: integer labels in
    .cls members (ShardWriter), and class names in .json members with folder-like keys
    (TarWriter)."""
    folder = stoker.open_dataset(images)
    out = tmp_path_factory.mktemp("shards")
    (out / "cls").mkdir()
    (out / "json").mkdir()
    with webdataset.ShardWriter(str(out / "cls" / "train-%06d.tar"), maxcount=SHARD,
                                verbose=0) as sink:
        for i in range(len(folder)):
            sink.write({"__key__": f"sample{i:06d}", "jpg": Path(folder.name(i)).read_bytes(),
                        "cls": folder.label(i)})
    for s in range(0, len(folder), SHARD):
        with webdataset.TarWriter(str(out / "json" / f"named-{s // SHARD:02d}.tar")) as sink:
            for i in range(s, min(s + SHARD, len(folder))):
                name = Path(folder.name(i))
                sink.write({"__key__": f"{name.parent.name}/{name.stem}",
                            "jpeg": name.read_bytes(),
                            "json": {"label": folder.classes[folder.label(i)], "w": 96}})
    return {"root": out, "cls": str(out / "cls" / "train-{000000..000004}.tar"),
            "json": str(out / "json" / "named-{00..04}.tar")}


def digest(data: str, env=None, rank: int = 0, world: int = 1, expect_error: bool = False,
           window=None):
    """`stoker bench --digest` over DATA: train crops and flips, seed 3, batch 8; `window`:
    --shard-window (None: the default, shard windows for remote shards only)."""
    cmd = [str(stoker_bin()), "bench", data, "--digest", "--batch", "8", "--threads", "2",
           "--seed", "3", "--size", "32", "--rank", str(rank), "--world", str(world)]
    if window is not None:
        cmd += ["--shard-window", str(window)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    if expect_error:
        assert r.returncode != 0, r.stdout
        return r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    return re.search(r"digest ([0-9a-f]{16})", r.stdout).group(1), r.stdout


SHAPES = ((0, 1), (0, 2), (1, 2))  # (rank, world)


def folder_digests(images):
    return [digest(str(images), rank=r, world=w)[0] for r, w in SHAPES]


def windowed_digests(pattern):
    """The local shards in shard windows of 4 batches: what remote shards give by default."""
    return [digest(pattern, rank=r, world=w, window=4)[0] for r, w in SHAPES]


def test_shards_on_disk_give_the_folder_batches(images, shards):
    want = folder_digests(images)
    for kind in ("cls", "json"):
        got = [digest(shards[kind], rank=r, world=w)[0] for r, w in SHAPES]
        assert got == want, kind
    data = stoker.open_dataset(shards["json"])
    assert len(data) == N
    assert data.classes == stoker.open_dataset(images).classes  # names sorted as folders are
    assert data.name(0).endswith("named-00.tar:class_00/img_00000.jpeg")


def test_shard_windows_keep_each_sample_once(images, shards):
    """Remote shards shuffle in shard windows by default: another order than the folder's,
    the same samples; the same order from disk with --shard-window 4."""
    assert windowed_digests(shards["cls"]) != folder_digests(images)
    data = stoker.open_dataset(shards["cls"])
    for world in (1, 2):
        seen = []
        for rank in range(world):
            loader = stoker.Loader(shards["cls"], batch_size=4, rank=rank, world_size=world,
                                   shard_window=2, transform="eval", size=8)
            batches = list(loader)
            seen += [i for b in batches for i, v in zip(b.indices.tolist(), b.valid.tolist())
                     if v]
            loader.close()
        assert sorted(seen) == list(range(len(data)))


def test_shards_over_https_check_the_server_against_the_ca_bundle_given(images, shards,
                                                                        tmp_path):
    """HTTPS: the server's certificate is checked against $SSL_CERT_FILE (or $CURL_CA_BUNDLE)
    when set, else the system's bundle (src/io/remote.cc): a self-signed server reads with its
    certificate given, and is refused, named, without it."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    want = folder_digests(images)[0]
    with Nginx(shards["root"], tmp_path / "nginx", tls=(cert, key)) as server:
        assert server.url.startswith("https://")
        url = f"{server.url}/cls/train-{{000000..000004}}.tar"
        clean = {k: "" for k in ("SSL_CERT_FILE", "CURL_CA_BUNDLE")}
        for variable in ("SSL_CERT_FILE", "CURL_CA_BUNDLE"):
            env = dict(clean, STOKER_CACHE_DIR=str(tmp_path / variable), **{variable: str(cert)})
            assert digest(url, env, window=0)[0] == want
        error = digest(url, dict(clean, STOKER_CACHE_DIR=str(tmp_path / "none")),
                       expect_error=True, window=0)
        # The shards open in parallel: the first to fail is named, whichever it is.
        assert re.search(r"train-00000\d\.tar: SSL certificate problem", error), error


def test_shards_over_http_from_nginx(images, shards, tmp_path):
    want = folder_digests(images)
    windowed = windowed_digests(shards["cls"])
    with Nginx(shards["root"], tmp_path / "nginx") as server:
        url = f"{server.url}/cls/train-{{000000..000004}}.tar"
        env = {"STOKER_CACHE_DIR": str(tmp_path / "cache")}
        assert digest(url, env, window=0)[0] == want[0]
        assert digest(url, env)[0] == windowed[0]
        first = server.requests()
        sizes = {f"/cls/{p.name}": p.stat().st_size for p in (shards["root"] / "cls").iterdir()}
        whole = lambda requests: [(path, rng) for method, path, rng in requests
                                  if method == "GET" and rng == f"bytes=0-{sizes[path] - 1}"]
        assert sorted(whole(first)) == sorted((p, f"bytes=0-{s - 1}") for p, s in sizes.items())
        # The index is cached: the next runs send one HEAD per shard and the members' ranges.
        assert [digest(url, env, rank=r, world=2, window=0)[0] for r in (0, 1)] == want[1:]
        later = server.requests()[len(first):]
        assert {m for m, _, _ in later} == {"HEAD", "GET"}
        assert sum(m == "HEAD" for m, _, _ in later) == 2 * 5
        assert [digest(url, env, rank=r, world=2)[0] for r in (0, 1)] == windowed[1:]
        assert not whole(later), later
        # A missing shard is an error naming it, at once.
        err = digest(f"{server.url}/cls/train-{{000000..000005}}.tar", env, expect_error=True)
        assert "train-000005.tar: HTTP 404 Not Found: no such object (tried 1 time)" in err


def test_shards_from_an_s3_store(images, shards, tmp_path):
    want = folder_digests(images)
    with SeaweedS3(tmp_path / "s3") as s3:
        s3.make_bucket("train")
        for path in sorted((shards["root"] / "cls").glob("*.tar")):
            s3.put("train", f"imagenet/{path.name}", path)
        env = dict(s3.env(), STOKER_CACHE_DIR=str(tmp_path / "cache"))
        url = "s3://train/imagenet/train-{000000..000004}.tar"
        assert [digest(url, env, rank=r, world=w, window=0)[0] for r, w in SHAPES] == want
        assert [digest(url, env, rank=r, world=w)[0] for r, w in SHAPES] == \
            windowed_digests(shards["cls"])
        # Wrong credentials: the store's refusal, named, not retried.
        err = digest(url, dict(env, AWS_SECRET_ACCESS_KEY="wrong"), expect_error=True)
        assert "HTTP 403" in err and "access denied (check the credentials" in err


def test_two_ranks_over_http_each_sample_once(images, shards, tmp_path):
    args = {"scenario": "epochs", "batch_size": 4, "epochs": [0, 1]}
    local = launch(2, tmp_path, dict(args, data=shards["cls"], shard_window=4))
    with Nginx(shards["root"], tmp_path / "nginx") as server:
        remote = launch(2, tmp_path, dict(args, data=f"{server.url}/cls/train-{{000000..000004}}.tar"))
    for epoch in ("0", "1"):
        per_rank = [r["epochs"][epoch]["valid"] for r in remote]
        counts = collections.Counter(i for valid in per_rank for i in valid)
        assert sorted(counts) == list(range(N)) and max(counts.values()) == 1
        assert per_rank == [r["epochs"][epoch]["valid"] for r in local]


def test_packed_datasets_over_http_and_written_to_s3(images, tmp_path):
    """stoker's own packs, read by range over HTTP and S3 as WebDataset shards are, and written
    to S3 by `stoker pack` (staged locally, the manifest uploaded last): the same batches as the
    pack on disk."""
    local = tmp_path / "pack"
    opts = ["--mode", "jpeg", "--max-side", "64", "--shard-size", "24kb"]
    subprocess.run([str(stoker_bin()), "pack", str(images), str(local), *opts], check=True,
                   capture_output=True)
    assert len(list(local.glob("shard-*.stk"))) >= 3
    env = {"STOKER_CACHE_DIR": str(tmp_path / "cache")}
    want = [digest(str(local), rank=r, world=w, window=0)[0] for r, w in SHAPES]
    windowed = [digest(str(local), rank=r, world=w, window=4)[0] for r, w in SHAPES]
    with Nginx(tmp_path, tmp_path / "nginx") as server:
        url = f"{server.url}/pack"
        assert [digest(url, env, rank=r, world=w, window=0)[0] for r, w in SHAPES] == want
        assert [digest(url, env, rank=r, world=w)[0] for r, w in SHAPES] == windowed
    with SeaweedS3(tmp_path / "s3") as s3:
        s3.make_bucket("packs")
        env = dict(s3.env(), STOKER_CACHE_DIR=str(tmp_path / "cache"))
        r = subprocess.run([str(stoker_bin()), "pack", str(images), "s3://packs/train/jpeg64",
                            *opts], capture_output=True, text=True,
                           env=dict(os.environ, **env))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "uploaded" in r.stderr and "to s3://packs/train/jpeg64" in r.stderr
        url = "s3://packs/train/jpeg64"
        assert [digest(url, env, rank=r, world=w, window=0)[0] for r, w in SHAPES] == want
        v = subprocess.run([str(stoker_bin()), "verify", url], capture_output=True, text=True,
                           env=dict(os.environ, **env))
        assert v.returncode == 0 and ": OK (" in v.stdout, v.stdout + v.stderr


def test_a_node_local_cache_fetches_each_shard_once(images, shards, tmp_path):
    """With STOKER_REMOTE_CACHE each remote shard is fetched whole once per node: the first
    rank's first read of it downloads it; the ranks after it (other processes of the node,
    later epochs) read the local copy, so only HEADs reach the server, and the batches are the
    folder's. A copy cut short is not trusted (fetched again), a dead writer's temporary file
    is removed, and the cache keeps to STOKER_REMOTE_CACHE_MIB."""
    want = folder_digests(images)
    cache = tmp_path / "objects"
    sizes = {f"/cls/{p.name}": p.stat().st_size for p in (shards["root"] / "cls").iterdir()}
    with Nginx(shards["root"], tmp_path / "nginx") as server:
        url = f"{server.url}/cls/train-{{000000..000004}}.tar"
        env = {"STOKER_CACHE_DIR": str(tmp_path / "cache"), "STOKER_REMOTE_CACHE": str(cache)}
        assert digest(url, env, window=0)[0] == want[0]
        first = server.requests()
        assert sorted((p, r) for m, p, r in first if m == "GET") == sorted(
            (p, f"bytes=0-{s - 1}") for p, s in sizes.items())  # one whole GET per shard
        copies = sorted(cache.glob("*.obj"))
        assert sorted(c.stat().st_size for c in copies) == sorted(sizes.values())

        assert [digest(url, env, rank=r, world=2, window=0)[0] for r in (0, 1)] == want[1:]
        later = server.requests()[len(first):]
        assert later and {m for m, _, _ in later} == {"HEAD"}, later

        for c in copies:  # cut short: each is fetched again
            c.write_bytes(c.read_bytes()[: c.stat().st_size // 2])
        stale = cache / "0123456789abcdef.obj.tmp-999999999-0"  # no such process
        stale.write_bytes(b"partial")
        assert digest(url, env, window=0)[0] == want[0]
        again = server.requests()[len(first) + len(later):]
        assert sum(m == "GET" for m, _, _ in again) == len(sizes), again
        assert sorted(c.stat().st_size for c in cache.glob("*.obj")) == sorted(sizes.values())
        assert not stale.exists()

    # A budget smaller than the set: least recently used copies make room, batches unchanged.
    big = tmp_path / "big"
    big.mkdir()
    folder = stoker.open_dataset(images)
    rng = random.Random(7)
    for s in range(3):
        with webdataset.TarWriter(str(big / f"big-{s}.tar")) as sink:
            for i in range(s * 2, s * 2 + 2):
                sink.write({"__key__": f"s{i:03d}", "jpg": Path(folder.name(i)).read_bytes(),
                            "cls": folder.label(i), "bin": rng.randbytes(300_000)})
    local = digest(str(big / "big-{0..2}.tar"), window=0)[0]
    budget = tmp_path / "small-cache"
    with Nginx(big, tmp_path / "nginx-big") as server:
        env = {"STOKER_CACHE_DIR": str(tmp_path / "cache2"), "STOKER_REMOTE_CACHE": str(budget),
               "STOKER_REMOTE_CACHE_MIB": "1"}
        assert digest(f"{server.url}/big-{{0..2}}.tar", env, window=0)[0] == local
    held = [c.stat().st_size for c in budget.glob("*.obj")]
    assert 1 <= len(held) < 3 and sum(held) <= 1 << 20, held


def member_ranges(shard_root: Path) -> dict:
    """(path, first byte, last byte) of each image member of the .cls shards, as URLs see them."""
    out = []
    for tar in sorted((shard_root / "cls").glob("train-*.tar")):
        with tarfile.open(tar) as t:
            out += [(f"/cls/{tar.name}", m.offset_data, m.offset_data + m.size - 1)
                    for m in t.getmembers() if m.name.endswith(".jpg")]
    return out


@pytest.mark.parametrize("read_ahead", [0, 8])
def test_a_failing_server_costs_each_sample_at_most_attempts_requests(shards, read_ahead):
    """Retries are counted once per sample, end to end. Before: the HTTP layer tried each
    request 6 times under each of the loader's 3 tries, up to 18 requests for one sample, and
    the IoRetryPolicy a caller chose never reached the loader. Now a sample's read is tried
    `attempts` times in all, the read-ahead's fetch of its run counting as the first, and the
    error says so."""
    with FailingHttp(shards["root"]) as server:
        url = f"{server.url}/cls/train-{{000000..000004}}.tar"
        assert len(stoker.open_dataset(url)) == N  # indexes the shards (cached)
        server.taken()
        server.fail = {"GET"}  # from here every GET answers 503; HEADs still pass
        io = stoker.IoConfig(attempts=3, first_backoff=0, read_ahead_connections=read_ahead)
        loader = stoker.Loader(url, batch_size=4, threads=2, transform="eval", size=16, io=io,
                               shuffle=False, shard_window=0)
        with pytest.raises(stoker.StorageError, match=r"HTTP 503 Service Unavailable \(tried 3 "
                                                      r"times\)"):
            next(iter(loader))
        loader.close()
        gets = [(path, rng) for method, path, rng in server.taken() if method == "GET"]
    assert gets
    covering = collections.Counter()
    for path, rng in gets:
        for member in member_ranges(shards["root"]):
            if member[0] == path and rng[0] <= member[2] and member[1] <= rng[1]:
                covering[member] += 1
    assert max(covering.values()) == 3, covering  # the sample that failed: 3 tries, no more


def test_opening_over_a_failing_server_tries_each_request_attempts_times(shards):
    """What no caller retries (a HEAD while opening) is tried `attempts` times by the remote
    layer, with the same policy."""
    with FailingHttp(shards["root"]) as server:
        server.fail = {"HEAD"}
        url = f"{server.url}/cls/train-000000.tar"
        with pytest.raises(stoker.StorageError, match=r"HTTP 503 .*\(tried 2 times\)"):
            stoker.open_dataset(url, io=stoker.IoConfig(attempts=2, first_backoff=0))
        assert [m for m, _, _ in server.taken()] == ["HEAD", "HEAD"]
