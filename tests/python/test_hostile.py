"""Hostile servers and shared caches (issue 30): nothing is trusted that was not checked.

Each test plays one finding of the red-team pass against a loopback HTTP server started here
(servers.FailingHttp, which records what it receives) and checks the clear error or the right
bytes: a 206 with another range than asked; an S3 session token following a redirect; presigned
queries and userinfo in messages; a presigned .tar URL taken for a pack; the node-local object
cache served a copy corrupted in place, a planted symbolic link or a poisoned copy, a lock
file planted as a symbolic link, a folder others can write; a server without ETags replacing a
shard by one of the same size under a cached index. docs/soak.md's fault table names each test
beside its finding."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

import stoker
from conftest import stoker_bin, synth
from servers import FailingHttp

SAMPLES = 12


@pytest.fixture(scope="module")
def shard_root(tmp_path_factory) -> Path:
    """Two tar shards of 6 JPEGs each with .cls labels, as WebDataset writes them."""
    folder = stoker.open_dataset(
        synth(tmp_path_factory.mktemp("hostile") / "folder", images=SAMPLES, classes=2,
              width=64, height=48, seed=9))
    root = tmp_path_factory.mktemp("shards")
    for s in range(2):
        write_shard(root / f"s-{s}.tar",
                    [(f"k{i:03d}", Path(folder.name(i)).read_bytes(), folder.label(i))
                     for i in range(6 * s, 6 * s + 6)])
    return root


def write_shard(path: Path, samples) -> None:
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for key, jpg, label in samples:
            for ext, data in (("jpg", jpg), ("cls", str(label).encode())):
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size = len(data)
                info.mtime = 0
                tar.addfile(info, io.BytesIO(data))


def flipped(path: Path) -> bytes:
    """The shard with every label 0 <-> 1: the same size, other training data."""
    out = io.BytesIO()
    with tarfile.open(path) as src, tarfile.open(fileobj=out, mode="w",
                                                 format=tarfile.USTAR_FORMAT) as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read()
            if m.name.endswith(".cls"):
                data = b"1" if data == b"0" else b"0"
            dst.addfile(m, io.BytesIO(data))
    return out.getvalue()


def read_all(location: str, **io_args):
    """(labels, sha256 of the pixels) of every sample, in order, one thread: what training
    would see."""
    loader = stoker.Loader(location, SAMPLES, size=16, transform="eval", shuffle=False,
                           threads=1, output="uint8", io=stoker.IoConfig(**io_args))
    labels, pixels = [], hashlib.sha256()
    for batch in loader:
        valid = np.asarray(batch.valid).astype(bool)
        labels += np.asarray(batch.labels)[valid].tolist()
        pixels.update(np.ascontiguousarray(np.asarray(batch.images)[valid]).tobytes())
    loader.close()
    return labels, pixels.hexdigest()


@pytest.fixture()
def server(shard_root):
    with FailingHttp(shard_root) as s:
        yield s


PATTERN = "s-{0..1}.tar"


def test_a_206_with_another_range_than_asked_is_an_error_never_used(server, shard_root):
    expected = read_all(str(shard_root / PATTERN))
    assert read_all(f"{server.url}/{PATTERN}", attempts=1) == expected
    server.wrong_range = True
    with pytest.raises(stoker.StorageError, match="answered another range than the one asked "
                                                  r"for \(Content-Range"):
        read_all(f"{server.url}/{PATTERN}", attempts=1)


def run_cli(args, env=None):
    return subprocess.run([str(stoker_bin()), *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **(env or {})))


def test_signed_requests_are_not_redirected_so_the_token_stays_with_the_endpoint(shard_root):
    """The SigV4 Authorization header was withheld by libcurl on a redirect, but the session
    token (x-amz-security-token, a custom header) went to the redirect's host."""
    with FailingHttp(shard_root) as target, FailingHttp(shard_root) as endpoint:
        endpoint.redirect_to = target.url
        env = {"AWS_ACCESS_KEY_ID": "AKIATESTKEY", "AWS_SECRET_ACCESS_KEY": "secret-key-value",
               "AWS_SESSION_TOKEN": "session-token-value", "AWS_ENDPOINT_URL": endpoint.url,
               "AWS_REGION": "us-east-1", "STOKER_S3_ADDRESSING_STYLE": "path"}
        r = run_cli(["bench", "s3://bucket/s-0.tar", "--batch", "4", "--io-attempts", "1"], env)
        assert r.returncode != 0
        assert "redirects this signed request" in r.stderr, r.stderr
        assert endpoint.requests and "x-amz-security-token" in endpoint.headers[0]
        assert target.requests == [], "the redirect's host was reached"
        assert "session-token-value" not in r.stderr and "secret-key-value" not in r.stderr
    # Unsigned requests carry no credentials and follow redirects as before.
    with FailingHttp(shard_root) as target, FailingHttp(shard_root) as endpoint:
        endpoint.redirect_to = target.url
        r = run_cli(["bench", f"{endpoint.url}/s-0.tar", "--batch", "4", "--images", "6"])
        assert r.returncode == 0, r.stderr
        assert target.requests


def test_presigned_queries_and_userinfo_never_reach_a_message(server):
    host = server.url.split("://")[1]
    r = run_cli(["bench", f"{server.url}/missing.tar?X-Amz-Credential=AKIA%2Fabc&"
                          "X-Amz-Signature=0123456789abcdef", "--io-attempts", "1"])
    assert r.returncode != 0
    assert "0123456789abcdef" not in r.stderr and "AKIA" not in r.stderr
    assert "missing.tar?X-Amz-Credential=***&X-Amz-Signature=***" in r.stderr, r.stderr
    r = run_cli(["bench", f"http://alice:pass-word-123@{host}/missing.tar", "--io-attempts", "1"])
    assert r.returncode != 0
    assert "pass-word-123" not in r.stderr and "alice" not in r.stderr
    assert f"http://***@{host}/missing.tar" in r.stderr, r.stderr
    # In Python: the message, the filename and str() alike.
    with pytest.raises(stoker.StorageError) as raised:
        stoker.Loader(f"{server.url}/missing.tar?token=0123456789abcdef", 4,
                      io=stoker.IoConfig(attempts=1))
    assert "0123456789abcdef" not in str(raised.value)
    assert "0123456789abcdef" not in (raised.value.filename or "")


def test_a_presigned_tar_url_is_a_shard_not_a_pack(server, shard_root):
    """The query used to be kept in the name, so "x.tar?sig" did not end in .tar and was taken
    for a pack's folder (manifest.json appended after the query)."""
    labels, _ = read_all(f"{server.url}/s-0.tar?X-Amz-Signature=0123456789abcdef", attempts=1)
    assert len(labels) == 6
    assert all(path.startswith("/s-0.tar?") for _, path, _ in server.requests)


def cached_copy(cache: Path) -> Path:
    (copy,) = cache.glob("*.obj")
    return copy


def test_a_cached_copy_is_checked_before_use(server, shard_root, tmp_path):
    """A copy corrupted in place, a symbolic link planted under a copy's name and a poisoned
    copy (flipped labels, the same size) were served as the object, forever."""
    cache = tmp_path / "objects"
    location = f"{server.url}/s-0.tar"
    expected = read_all(str(shard_root / "s-0.tar"))
    assert read_all(location, remote_cache_dir=cache) == expected
    copy = cached_copy(cache)
    assert Path(str(copy) + ".xxh3").is_file()
    assert oct(cache.stat().st_mode & 0o777) == "0o700"

    def whole_gets() -> int:
        return sum(1 for m, p, r in server.taken() if m == "GET" and r and r[0] == 0)

    whole_gets()
    # Read again through the copy: nothing fetched.
    assert read_all(location, remote_cache_dir=cache) == expected
    assert whole_gets() == 0
    # 1. Corrupted in place (a flipped byte in a JPEG): detected, deleted, fetched again.
    data = bytearray(copy.read_bytes())
    data[700] ^= 0xFF
    copy.write_bytes(bytes(data))
    assert read_all(location, remote_cache_dir=cache) == expected
    assert whole_gets() == 1
    # 2. Poisoned: the labels flipped, the same size, without (or with a stale) checksum.
    copy.write_bytes(flipped(shard_root / "s-0.tar"))
    assert read_all(location, remote_cache_dir=cache) == expected
    assert whole_gets() == 1
    Path(str(copy) + ".xxh3").unlink()
    assert read_all(location, remote_cache_dir=cache) == expected
    assert whole_gets() == 1
    # 3. A symbolic link to another file of the same size: not followed.
    poison = tmp_path / "poison.tar"
    poison.write_bytes(flipped(shard_root / "s-0.tar"))
    copy.unlink()
    copy.symlink_to(poison)
    assert read_all(location, remote_cache_dir=cache) == expected
    assert whole_gets() == 1
    assert not cached_copy(cache).is_symlink()


def test_a_lock_file_planted_as_a_symbolic_link_is_not_followed(server, tmp_path):
    """<key>.lock was opened with O_CREAT through a planted link: a process (root's, say)
    created a file wherever the link pointed."""
    cache = tmp_path / "objects"
    location = f"{server.url}/s-1.tar"
    read_all(location, remote_cache_dir=cache)
    copy = cached_copy(cache)
    lock = copy.with_suffix(".lock")
    for f in (copy, Path(str(copy) + ".xxh3"), lock):
        f.unlink(missing_ok=True)
    outside = tmp_path / "outside" / "created-by-stoker"
    outside.parent.mkdir()
    lock.symlink_to(outside)
    labels, _ = read_all(location, remote_cache_dir=cache)  # read remotely instead
    assert len(labels) == 6
    assert not outside.exists()


def test_a_cache_folder_others_can_write_is_refused_naming_the_fix(server, tmp_path):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    with pytest.raises(stoker.ArgumentError, match=r"writable by other users \(mode 0777\).*"
                                                   r"chmod go-w"):
        read_all(f"{server.url}/s-0.tar", remote_cache_dir=cache)
    if os.geteuid() == 0:  # only root can give a folder to another user
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        with pytest.raises(stoker.ArgumentError, match="not by this user"):
            read_all(f"{server.url}/s-0.tar", remote_cache_dir=theirs)


def test_a_download_in_progress_keeps_its_checksum_while_others_make_room(server, tmp_path):
    """Making room for a fetch deleted another download's checksum while it was written (its
    temporary file holds no lock of its own) or just after it was put in place (before the
    copy): that download then failed, and its object was read remotely (seen as a flaky
    test_a_node_local_cache_fetches_each_shard_once). Here a fetch of s-0.tar makes room
    beside a download in progress, whose files this test holds as a live writer would."""
    import fcntl
    cache = tmp_path / "objects"
    cache.mkdir(mode=0o700)
    key = "0123456789abcdef"
    download = cache / f"{key}.obj.tmp-{os.getpid()}-0"
    download.write_bytes(b"x" * 100)
    writing = cache / f"{key}.obj.tmp-{os.getpid()}-0.xxh3"
    writing.write_text("0" * 16 + "\n")
    placed = cache / f"{key}.obj.xxh3"  # in place before the copy is
    placed.write_text("0" * 16 + "\n")
    orphan = cache / "fedcba9876543210.obj.xxh3"  # its copy was evicted: no fetch holds it
    orphan.write_text("0" * 16 + "\n")
    dead = cache / "00000000000000aa.obj.tmp-999999999-0.xxh3"  # its download is gone
    dead.write_text("0" * 16 + "\n")
    with open(download, "rb") as d, open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(d, fcntl.LOCK_EX)
        fcntl.flock(lock, fcntl.LOCK_EX)
        labels, _ = read_all(f"{server.url}/s-0.tar", remote_cache_dir=cache)
        assert len(labels) == 6
        assert download.exists() and writing.exists() and placed.exists()
    assert not orphan.exists() and not dead.exists()
    assert len(list(cache.glob("*.obj"))) == 1  # s-0.tar's copy, with its checksum
    assert len(list(cache.glob("*.obj.xxh3"))) == 2


@pytest.mark.parametrize("last_modified", [False, True])
def test_a_shard_replaced_without_an_etag_never_gets_the_old_index(shard_root, tmp_path,
                                                                   last_modified):
    """Without an ETag the index stamp was the size alone: a shard replaced by one of the same
    size kept its old index, and so its old labels."""
    root = tmp_path / "served"
    root.mkdir()
    (root / "s-0.tar").write_bytes((shard_root / "s-0.tar").read_bytes())
    with FailingHttp(root) as server:
        server.etag = False
        server.last_modified = last_modified
        before, _ = read_all(f"{server.url}/s-0.tar")
        replaced = flipped(root / "s-0.tar")
        assert len(replaced) == (root / "s-0.tar").stat().st_size
        (root / "s-0.tar").write_bytes(replaced)
        os.utime(root / "s-0.tar", (2_000_000_000, 2_000_000_000))  # a new Last-Modified
        after, _ = read_all(f"{server.url}/s-0.tar")
        assert after == [1 - x for x in before]


# ---- Failing fast and interruptibly ----------------------------------------------------------
# Each child below would wait for hours if its open or read were not stopped (a stalled server,
# a stall timeout of an hour); the timeout of the wait for the child only keeps a regression
# from hanging the suite: no test asserts how long anything took.

SIXTY_FOUR = "s-{00..63}.tar"


def start_child(code: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    import sys
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def finish(child: subprocess.Popen) -> tuple[str, str]:
    try:
        return child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        pytest.fail(f"the child was not stopped: {out}\n{err}")


def wait_for_requests(server: FailingHttp, method: str) -> None:
    import time
    for _ in range(6000):
        if any(r[0] == method for r in server.requests):
            return
        time.sleep(0.01)
    pytest.fail(f"no {method} reached the server")


OPEN = """
import errno, sys, time, stoker
start = time.monotonic()
try:
    stoker.open_dataset(sys.argv[1], io=stoker.IoConfig(stall_timeout=3600,
                                                        open_timeout=float(sys.argv[2])))
    print("opened")
except stoker.StorageError as e:
    print(errno.errorcode.get(e.errno), type(e).__name__, e)
print(f"{time.monotonic() - start:.2f} s", file=sys.stderr)
"""


def test_an_open_of_stalled_shards_ends_at_its_one_deadline(server):
    """64 stalled shards at a 2 s timeout took 67 s: shards x tries x timeout."""
    server.stall = {"HEAD", "GET"}
    out, err = finish(start_child(OPEN, f"{server.url}/{SIXTY_FOUR}", "2"))
    assert out.startswith("ETIMEDOUT StorageError "), out + err
    assert "not opened within 2 s (IoConfig::open_timeout_s, STOKER_OPEN_TIMEOUT" in out


def test_the_first_shard_to_fail_stops_the_open_of_the_others(server):
    server.stall = {"HEAD", "GET"}
    server.missing = {"/s-05.tar"}
    out, err = finish(start_child(OPEN, f"{server.url}/{SIXTY_FOUR}", "0"))  # no deadline
    assert out.startswith("ENOENT MissingFileError ") or out.startswith("EIO StorageError "), out
    assert "/s-05.tar: HTTP 404" in out and "no such object" in out, out + err


def test_ctrl_c_stops_an_open_waiting_on_a_stalled_server(server):
    server.stall = {"HEAD", "GET"}
    child = start_child("""
import sys, stoker
try:
    stoker.open_dataset(sys.argv[1], io=stoker.IoConfig(stall_timeout=3600, open_timeout=0))
except KeyboardInterrupt:
    print("interrupted")
""", f"{server.url}/{SIXTY_FOUR}")
    wait_for_requests(server, "HEAD")
    child.send_signal(__import__("signal").SIGINT)
    out, err = finish(child)
    assert out.strip() == "interrupted", out + err


def test_ctrl_c_stops_a_read_stalled_on_the_server_and_close_returns(server, tmp_path):
    """The open's index comes from the cache; then every GET stalls. Ctrl-C interrupts the
    wait for the batch, and close() stops the stalled reads and read-ahead instead of waiting
    for them (the close timeout is an hour)."""
    env = {"STOKER_CACHE_DIR": str(tmp_path / "index"), "STOKER_CLOSE_TIMEOUT": "3600"}
    count = "import sys, stoker; print(len(stoker.open_dataset(sys.argv[1])))"
    out, err = finish(start_child(count, f"{server.url}/{PATTERN}", env=env))
    assert out.strip() == str(SAMPLES), out + err
    server.taken()
    server.stall = {"GET"}
    child = start_child("""
import sys, stoker
loader = stoker.Loader(sys.argv[1], 4, threads=2, transform="eval", size=32,
                       io=stoker.IoConfig(stall_timeout=3600))
try:
    next(iter(loader))
except KeyboardInterrupt:
    print("interrupted")
loader.close()
print("closed")
""", f"{server.url}/{PATTERN}", env=env)
    wait_for_requests(server, "GET")
    child.send_signal(__import__("signal").SIGINT)
    out, err = finish(child)
    assert out.split() == ["interrupted", "closed"], out + err
    assert "abandoned" not in err, err
