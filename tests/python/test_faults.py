"""Faults injected into real storage (issue 18): the data is read through faultfs, a FUSE
passthrough mounted by the test (tests/fault/faultfs.cc), which fails or stalls chosen calls;
ENOSPC comes from a small tmpfs. What is asserted is what stoker does with the kernel's own
errors: a storage failure is an error naming the file and errno, never a skipped sample, under
`bench`, `pack` and the Python loader; a fault that heals within the retries loses nothing (the
same digest); a stuck read does not hold Ctrl-C; a file system that refuses mmap still serves
packed data."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import stoker_bin, synth
from faultfs import FaultFS, Tmpfs, Unavailable, faultfs_binary

IMAGES = 48


@pytest.fixture(scope="module")
def binary(tmp_path_factory) -> Path:
    try:
        return faultfs_binary(tmp_path_factory.mktemp("faultfs-bin"))
    except Unavailable as e:
        pytest.skip(str(e))


def small_tmpfs(path: Path, size: str) -> Tmpfs:
    try:
        return Tmpfs(path, size)
    except Unavailable as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return synth(tmp_path_factory.mktemp("faults") / "folder", IMAGES, classes=3)


def bench(data: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(stoker_bin()), "bench", str(data), "--threads", "2", "--batch", "8",
                           "--size", "32", "--digest", *args], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, **(env or {})))


def digest_of(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(line for line in r.stdout.splitlines() if "digest" in line)
    return line


@pytest.mark.parametrize("op,error,reason", [("read", "EIO", "Input/output error"),
                                             ("open", "EACCES", "Permission denied"),
                                             ("open", "ENOENT", "No such file or directory")])
def test_a_failing_storage_is_an_error_not_skipped_samples(binary, folder, tmp_path, op, error,
                                                           reason):
    """Before: with --bad-samples skip, an epoch in which every read failed ended with exit 0
    and "skipped 48 bad samples". Now each failure is retried, then the run stops with the file
    and the errno's reason."""
    with FaultFS(binary, folder, tmp_path / "fs") as fs:
        fs.rules(f"{op} /*.jpg {error}\n")
        r = bench(fs.mount, "--bad-samples", "skip")
        assert any(line.startswith(f"{error} {op} /") for line in fs.log())
    assert r.returncode != 0, r.stdout + r.stderr
    assert reason in r.stderr, r.stderr
    assert str(fs.mount) in r.stderr  # the file is named
    assert "skipped" not in r.stdout + r.stderr


def test_a_burst_of_eio_that_heals_within_the_retries_loses_nothing(binary, folder, tmp_path):
    """Two failed reads (the fault log shows both were hit), then the storage answers again:
    the reads are tried again and the epoch is the one read from the folder itself."""
    want = digest_of(bench(folder))
    with FaultFS(binary, folder, tmp_path / "fs") as fs:
        fs.rules("read /*.jpg EIO 2\n")  # the first two read calls fail, then the storage heals
        got = bench(fs.mount)
        assert [line.split()[0] for line in fs.log()] == ["EIO", "EIO"]
    assert digest_of(got) == want


def test_a_mount_that_disappears_mid_run_is_an_error(binary, folder, tmp_path):
    """The mount is lazily unmounted while a read is in progress (held by a stall so that it is
    mid-run for certain): the files still open are read, the next opens find nothing. That is
    an I/O error naming the file, not a tail of skipped samples."""
    with FaultFS(binary, folder, tmp_path / "fs") as fs:
        bench(fs.mount, "--images", "8")  # index the folder while it is there
        fs.rules("read /*.jpg stall 1\n")
        proc = subprocess.Popen([str(stoker_bin()), "bench", str(fs.mount), "--threads", "2",
                                 "--batch", "8", "--size", "32", "--bad-samples", "skip"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            fs.wait_for_log("stall read")
            fs.lazy_unmount()
            fs.rules("")  # the stalled read goes on, on its still open file
            out, err = proc.communicate(timeout=120)
        finally:
            proc.kill()
        assert "resumed read" in " ".join(fs.log())
    assert proc.returncode != 0, out + err
    assert "No such file or directory" in err, err
    assert "skipped" not in out + err


def test_pack_never_records_an_io_failure_as_a_skipped_sample(binary, folder, tmp_path):
    """Before: `pack --bad-samples skip` wrote a passing EIO into the pack as a skipped sample,
    and the re-run said "already complete". Now the pack stops (no manifest), and the re-run
    once the storage is back packs every sample."""
    out = tmp_path / "pack"
    with FaultFS(binary, folder, tmp_path / "fs") as fs:
        victim = sorted(p for p in fs.mount.rglob("*.jpg"))[5]
        fs.rules(f"read /{victim.relative_to(fs.mount)} EIO\n")
        pack = [str(stoker_bin()), "pack", str(fs.mount), str(out), "--bad-samples", "skip",
                "--threads", "2"]
        r = subprocess.run(pack, capture_output=True, text=True, timeout=300)
        assert r.returncode != 0, r.stdout + r.stderr
        assert str(victim) in r.stderr and "Input/output error" in r.stderr, r.stderr
        assert not (out / "manifest.json").exists()
        fs.rules("")
        r = subprocess.run(pack, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    verify = subprocess.run([str(stoker_bin()), "verify", str(out)], capture_output=True,
                            text=True, timeout=300)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{IMAGES} records" in verify.stdout
    assert " 0 skipped" in r.stdout, r.stdout


def test_the_python_loader_raises_a_storage_error(binary, folder, tmp_path):
    import errno

    import stoker
    with FaultFS(binary, folder, tmp_path / "fs") as fs:
        fs.rules("read /*.jpg EIO\n")
        loader = stoker.Loader(str(fs.mount), batch_size=8, threads=2, transform="eval", size=32,
                               bad_samples="skip")
        with pytest.raises(stoker.StorageError) as info:
            for _ in loader:
                pass
        loader.close()
    assert isinstance(info.value, OSError) and info.value.errno == errno.EIO
    assert str(fs.mount) in str(info.value)


def test_ctrl_c_and_close_with_a_read_stuck_in_storage(binary, folder, tmp_path):
    """Every read hangs (until the rule is lifted). Ctrl-C still interrupts next() while the
    reads are stuck (the fault log has no "resumed" yet), and close() abandons the stuck workers
    after STOKER_CLOSE_TIMEOUT with a warning; the process exits normally."""
    with FaultFS(binary, folder, tmp_path / "fs") as fs:
        fs.rules("read /*.jpg stall\n")
        log = tmp_path / "fs" / "faults.log"
        script = textwrap.dedent(f"""
            import os, signal, threading, time
            from pathlib import Path
            import stoker
            loader = stoker.Loader({str(fs.mount)!r}, batch_size=8, threads=2, transform="eval",
                                   size=32)
            it = iter(loader)
            def interrupt():
                while "stall read" not in Path({str(log)!r}).read_text():
                    time.sleep(0.01)
                global sent
                sent = time.monotonic()
                os.kill(os.getpid(), signal.SIGINT)
            threading.Thread(target=interrupt, daemon=True).start()
            try:
                next(it)
                print("a batch came while every read was stuck")
            except KeyboardInterrupt:
                print(f"interrupted after {{time.monotonic() - sent:.3f}} s")
                print("resumed before the interrupt:", "resumed" in Path({str(log)!r}).read_text())
            loader.close()
            print("closed")
        """)
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, STOKER_CLOSE_TIMEOUT="0.5"))
        print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "interrupted after" in r.stdout, r.stdout + r.stderr
    assert "resumed before the interrupt: False" in r.stdout
    assert "closed" in r.stdout
    assert "abandoned, not joined" in r.stderr, r.stderr


def test_packed_data_on_a_file_system_that_refuses_mmap(binary, folder, tmp_path):
    """faultfs --direct-io refuses shared mappings (ENODEV), as some network file systems do:
    the packed reader falls back to reads, and STOKER_PACKED_IO=pread never tries to map;
    both give the batches of the same pack on a local disk."""
    pack = tmp_path / "pack"
    subprocess.run([str(stoker_bin()), "pack", str(folder), str(pack), "--mode", "jpeg",
                    "--max-side", "48", "--shard-size", "16kb"], check=True, capture_output=True)
    want = digest_of(bench(pack))
    with FaultFS(binary, pack, tmp_path / "fs", direct_io=True) as fs:
        import mmap
        with open(next(fs.mount.glob("shard-*.stk")), "rb") as f:
            with pytest.raises(OSError):
                mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ, flags=mmap.MAP_SHARED)
        assert digest_of(bench(fs.mount)) == want
        assert digest_of(bench(fs.mount, env={"STOKER_PACKED_IO": "pread"})) == want


def test_pack_into_a_full_file_system(folder, tmp_path):
    """ENOSPC while packing: an error naming the file being written and the reason, no manifest
    (the pack is not complete), and after space is freed the same command finishes a pack that
    verifies."""
    with small_tmpfs(tmp_path / "small", "48k") as fs:
        out = fs.path / "pack"
        pack = [str(stoker_bin()), "pack", str(folder), str(out), "--threads", "2"]
        r = subprocess.run(pack, capture_output=True, text=True, timeout=300)
        assert r.returncode != 0, r.stdout + r.stderr
        assert "No space left on device" in r.stderr, r.stderr
        assert str(out) in r.stderr
        assert not (out / "manifest.json").exists()
        fs.resize("16m")
        r = subprocess.run(pack, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        verify = subprocess.run([str(stoker_bin()), "verify", str(out)], capture_output=True,
                                text=True, timeout=300)
        assert verify.returncode == 0, verify.stdout + verify.stderr


def test_threads_the_system_refuses_are_an_error_not_an_abort(folder):
    """Before: threads=100000 (or a thread limit) ended in std::terminate ("terminate called
    without an active exception"), killing the Python interpreter. Under an address-space limit
    that leaves room for ~100 thread stacks, asking for more is an ArgumentError naming the
    thread that could not start, in the command and in Python."""
    limit = "ulimit -v 1000000; "  # KiB: 1 GB of address space, 8 MiB per thread stack
    r = subprocess.run(["bash", "-c", limit + f"exec {stoker_bin()} bench {folder} --threads 1000 "
                        "--batch 4 --size 16"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "could not start thread" in r.stderr and "ask for fewer threads" in r.stderr, r.stderr
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        import stoker
        try:
            stoker.Loader({str(folder)!r}, 4, threads=2000)
        except stoker.ArgumentError as e:
            print("raised:", e)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "raised: could not start thread" in r.stdout, r.stdout + r.stderr
