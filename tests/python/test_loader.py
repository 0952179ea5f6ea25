"""Single-process tests of stoker.Loader: the batch API, zero-copy lifetimes, the GIL,
closing, resume, stats and argument errors."""

from __future__ import annotations

import dis
import errno
import gc
import json
import math
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import stoker
import stoker.torch


def threads() -> set:
    return set(os.listdir("/proc/self/task"))


def test_batch_fields_and_shapes(small_set):
    loader = stoker.Loader(small_set, 4, size=32, threads=2, seed=3)
    batches = list(loader)
    assert len(loader) == len(batches) == math.ceil(23 / 4)
    b = batches[0]
    assert isinstance(b.images, torch.Tensor)
    assert b.images.shape == (4, 3, 32, 32) and b.images.dtype == torch.float32
    assert b.labels.dtype == torch.int64 and b.indices.dtype == torch.int64
    assert b.valid.dtype == torch.bool
    assert b.rank == 0 and b.world_size == 1
    assert [x.global_valid for x in batches] == [4, 4, 4, 4, 4, 3]
    last = batches[-1]
    assert last.valid.tolist() == [True, True, True, False]
    seen = torch.cat([x.indices[x.valid] for x in batches])
    assert sorted(seen.tolist()) == list(range(23))
    # Labels follow the dataset (ImageFolder order).
    ds = loader.dataset
    assert all(ds.label(int(i)) == int(l) for i, l in zip(b.indices, b.labels))

    u8 = stoker.Loader(small_set, 4, size=32, output="uint8", transform="eval")
    ub = next(iter(u8))
    assert ub.images.shape == (4, 32, 32, 3) and ub.images.dtype == torch.uint8


def test_len_and_modes(small_set):
    assert len(stoker.Loader(small_set, 5, rank=1, world_size=2)) == 3   # ceil(23/10)
    assert len(stoker.Loader(small_set, 5, rank=1, world_size=2, mode="drop")) == 2
    assert len(stoker.Loader(small_set, 5, rank=1, world_size=2, mode="pad")) == 3
    for rank in range(3):
        loader = stoker.Loader(small_set, 2, rank=rank, world_size=3, size=16, threads=1)
        assert len(loader) == sum(1 for _ in loader) == 4


def test_each_iter_is_a_full_pass_of_the_next_epoch_unless_set_epoch_chose_one(small_set):
    loader = stoker.Loader(small_set, 4, size=16, transform="eval", threads=1)
    orders = []
    for expected in range(3):  # no set_epoch: epochs 0, 1, 2, never a silent repeat
        batches = list(loader)
        assert {b.epoch for b in batches} == {expected} and loader.epoch == expected
        orders.append([b.indices.tolist() for b in batches])
    assert len({str(o) for o in orders}) == 3  # a new order every epoch
    for _ in loader:
        break  # an abandoned pass counts as a pass (epoch 3) ...
    assert next(iter(loader)).epoch == 4  # ... and the next one runs epoch 4
    loader.set_epoch(0)  # set_epoch wins: that epoch again, the same order
    assert loader.epoch == 0
    batches = list(loader)
    assert [b.indices.tolist() for b in batches] == orders[0]
    assert {b.epoch for b in batches} == {0}
    assert {b.epoch for b in loader} == {1}  # and on from there
    loader.set_epoch(4)
    loader.set_epoch(2)  # the last call chooses
    assert [b.indices.tolist() for b in loader] == orders[2]


def test_dataloader_habits(small_set):
    loader = stoker.Loader(small_set, 4, size=16, transform="eval", threads=1, seed=3)
    for images, labels in loader:  # unpacks as DataLoader's [images, labels]
        assert images.shape == (4, 3, 16, 16) and labels.shape == (4,)
        break
    batch = next(iter(loader))
    images, labels = batch
    assert images is batch.images and labels is batch.labels
    assert batch[0] is batch.images and batch[1] is batch.labels
    n = len(loader.dataset)
    assert n == loader.dataset.size and loader.batch_size == 4
    sampler = loader.sampler
    assert (sampler.num_replicas, sampler.rank, sampler.shuffle, sampler.seed) == (1, 0, True, 3)
    assert len(sampler) == n  # DistributedSampler's num_samples: ceil(N / ranks)
    sampler.set_epoch(9)
    assert loader.epoch == sampler.epoch == 9 and next(iter(loader)).epoch == 9
    # drop_last is DistributedSampler's: True leaves out what does not divide over the ranks
    # (mode 'even'; on one rank nothing), the last batch short; mode='drop' is DataLoader's
    # drop_last as well: full batches only.
    assert not loader.drop_last and not sampler.drop_last
    even = stoker.Loader(small_set, 4, size=16, threads=1, drop_last=True)
    assert even.drop_last and even.mode == "even" and len(even) == -(-n // 4)
    assert [len(b.labels) for b in even][-1] == n % 4 and all(bool(b.valid.all()) for b in even)
    two = stoker.Loader(small_set, 4, size=16, threads=1, drop_last=True, rank=1, world_size=2)
    assert len(two.sampler) == n // 2 == sum(len(b.labels) for b in two)
    dropped = stoker.Loader(small_set, 4, size=16, threads=1, mode="drop")
    assert dropped.drop_last and len(dropped) == n // 4
    assert all(len(b.labels) == 4 and bool(b.valid.all()) for b in dropped)
    assert stoker.Loader(small_set, 4, size=16, threads=1, mode="drop", drop_last=True).drop_last
    with pytest.raises(ValueError, match="contradicts"):
        stoker.Loader(small_set, 4, size=16, threads=1, mode="pad", drop_last=True)
    with pytest.raises(TypeError, match="drop_last"):
        stoker.Loader(small_set, 4, size=16, threads=1, drop_last="yes")


def test_an_eval_loader_counts_each_sample_once_in_a_loop_that_ignores_valid(small_set):
    """An eval transform's default mode is 'short': DataLoader's shapes, a short last batch of
    only its samples (23 = 8 + 8 + 7), so len(labels) summed is the data set's size; training
    keeps 'exact' (full batches, padding masked in valid)."""
    evaluation = stoker.Loader(small_set, 8, size=16, transform="eval", threads=1)
    assert evaluation.mode == "short"
    assert [len(labels) for _, labels in evaluation] == [8, 8, 7]
    counted = [int(i) for rank in range(3)
               for b in stoker.Loader(small_set, 4, size=16, transform="eval", threads=1,
                                      shuffle=False, rank=rank, world_size=3)
               for i in b.indices]
    assert sorted(counted) == list(range(23))  # 3 ranks x 2 steps, 8 + 8 + 7 samples
    training = stoker.Loader(small_set, 8, size=16, threads=1)
    assert training.mode == "exact"
    assert [len(labels) for _, labels in training] == [8, 8, 8]
    # The short last batch's pixels are those of the same samples in 'exact' mode.
    exact = stoker.Loader(small_set, 8, size=16, transform="eval", threads=1, mode="exact")
    evaluation.set_epoch(0)
    short_last, exact_last = list(evaluation)[-1], list(exact)[-1]
    assert torch.equal(short_last.images, exact_last.images[:7])
    assert torch.equal(short_last.indices, exact_last.indices[:7])


def test_the_dataset_is_an_image_folder_with_the_loaders_transform(small_set):
    loader = stoker.Loader(small_set, 5, size=16, transform="eval", threads=1, shuffle=False)
    ds = loader.dataset
    assert len(ds) == 23 and ds.classes == loader.classes
    assert ds.class_to_idx == {name: i for i, name in enumerate(ds.classes)}
    paths = sorted(str(p) for p in Path(small_set).rglob("*.jpg"))
    assert [path for path, _ in ds.samples] == paths  # ImageFolder's order
    assert ds.targets == [ds.class_to_idx[Path(p).parent.name] for p in paths]
    assert ds.imgs == ds.samples
    batch = next(iter(loader))
    for slot in range(5):  # dataset[i] is sample i's batch slot, byte for byte
        image, label = ds[int(batch.indices[slot])]
        assert torch.equal(image, batch.images[slot]) and label == int(batch.labels[slot])
    assert torch.equal(ds[-1][0], ds[22][0])
    with pytest.raises(IndexError):
        ds[23]
    # What pytorch/examples' imagenet/main.py builds for its tail: Subset + DataLoader.
    tail = torch.utils.data.DataLoader(torch.utils.data.Subset(ds, range(20, 23)), batch_size=2)
    assert [labels.tolist() for _, labels in tail] == [ds.targets[20:22], ds.targets[22:]]
    assert ds.fingerprint == loader.fingerprint and "image-folder" in ds.describe()


def test_dataloader_keywords_are_accepted(small_set):
    loader = stoker.Loader(small_set, 4, size=16, num_workers=2, prefetch_factor=3,
                           persistent_workers=True)
    assert loader.stats()["threads"] == 2 and loader.stats()["prefetch"] == 6
    assert stoker.Loader(small_set, 4, size=16, num_workers=0).stats()["threads"] == 1
    with pytest.raises(ValueError, match="contradicts"):
        stoker.Loader(small_set, 4, size=16, num_workers=2, threads=3)
    if not torch.cuda.is_available():  # DataLoader's warning, and no pinning
        with pytest.warns(UserWarning, match="pin_memory"):
            stoker.Loader(small_set, 4, size=16, pin_memory=True)
    # seed=None draws a seed (one rank here), which the state records.
    drawn = stoker.Loader(small_set, 4, size=16, seed=None)
    state = drawn.state_dict()
    again = stoker.Loader(small_set, 4, size=16, seed=int(state["seed"]))
    assert next(iter(drawn)).indices.tolist() == next(iter(again)).indices.tolist()
    with pytest.raises(ValueError, match="seed=None"):
        stoker.Loader(small_set, 4, size=16, seed=None, rank=0, world_size=2)


def test_only_the_newest_iterator_is_live(small_set):
    loader = stoker.Loader(small_set, 4, size=16, threads=1)
    old = iter(loader)
    next(old)
    new = iter(loader)
    next(new)
    with pytest.raises(RuntimeError, match="superseded"):
        next(old)
    loader.set_epoch(1)
    with pytest.raises(RuntimeError, match="superseded"):
        next(new)
    assert next(iter(loader)).epoch == 1


def test_tensors_outlive_the_loader_and_later_batches(small_set):
    kwargs = dict(size=48, threads=2, prefetch=2, seed=11)
    loader = stoker.Loader(small_set, 3, **kwargs)
    it = iter(loader)
    first = next(it)
    kept = first.images
    kept_u = first.labels
    del first
    for _ in it:  # the loader moves on, recycling every buffer it can
        pass
    # A fresh loader's batch 0 is byte-identical to the tensor kept from the first.
    fresh = next(iter(stoker.Loader(small_set, 3, **kwargs)))
    assert torch.equal(kept, fresh.images) and torch.equal(kept_u, fresh.labels)
    reference = kept.clone()
    loader.close()
    del loader, it
    gc.collect()
    assert torch.equal(kept, reference)  # still valid after the loader is gone
    assert kept.numpy().base is not None  # a view, not a copy


def test_holding_every_batch_grows_the_pool_without_deadlock(small_set):
    loader = stoker.Loader(small_set, 2, size=16, threads=2, prefetch=1)
    held = list(loader)  # 12 batches held at once
    assert len(held) == 12
    stats = loader.stats()
    assert stats["pool_grown"] > 0 and stats["pool_buffers"] >= 12
    # Every held batch still has its own, correct contents.
    seen = torch.cat([b.indices[b.valid] for b in held])
    assert sorted(seen.tolist()) == list(range(23))


def test_stats_fields(small_set):
    loader = stoker.Loader(small_set, 4, size=16, threads=2, rank=0, world_size=1)
    for _ in loader:
        pass
    s = loader.stats()
    for key in ("threads", "prefetch", "batches", "images", "skipped", "pool_buffers",
                "pool_grown", "wall_seconds", "wait_seconds", "busy_seconds", "cpu_seconds",
                "process_cpu_seconds", "window", "digest", "epoch_batches"):
        assert key in s, key
    assert set(s["cpu_seconds"]) == {"read", "decode", "augment", "collate"}
    assert s["stoker_stats"] == 1 and s["rank"] == 0 and s["world_size"] == 1
    assert s["threads"] == 2 and s["batches"] == 6 and s["images"] == 23 and s["skipped"] == 0
    assert s["cpu_seconds"]["decode"] > 0
    assert s["window"]["images"] == 23 and s["digest"]["count"] == 23
    # The digest is the sampler's group digest of the whole epoch (the audit compares them).
    count, total = stoker._stoker.group_digest(23, 4, 1, "exact", True, 0, 0, 0, 6)
    assert (count, total) == (23, int(s["digest"]["sum"], 16))
    # A new window starts at each call; advance=False peeks.
    assert loader.stats(advance=False)["window"]["images"] == 0
    assert loader.stats()["window"]["images"] == 0


def test_diagnose_live(small_set):
    loader = stoker.Loader(small_set, 4, size=16, threads=1, rank=0, world_size=1)
    for _ in loader:
        pass
    d = loader.diagnose(measure=False)
    assert d["verdict"] in {"input-bound-cpu", "io-bound", "healthy", "unknown"}
    assert set(d) >= {"verdict", "summary", "evidence", "fixes", "numbers"}


def _at_call(frame, code) -> bool:
    """True when `frame` (a thread's innermost Python frame) runs `code` and stands on a CALL
    instruction: the thread is inside a function implemented in C (no Python frame of its
    own) called from there."""
    if frame is None or frame.f_code is not code:
        return False
    return any(ins.offset == frame.f_lasti and ins.opname.startswith("CALL")
               for ins in dis.get_instructions(code))


def test_gil_released_while_waiting_in_next(big_set):
    """Deterministic, whatever the machine's speed: a second Python thread looks for a witness,
    a moment when it runs Python code itself (so it holds the GIL) while the main thread is
    inside the C++ next(). "Inside" is exact: the main thread's innermost frame stands on the
    CALL of core.next() in Loader._iterate, and the loader has not yet counted the batch that
    call delivers (stats()['batches'] is still the number of batches main has received; the
    C++ next() increments it before it returns). Were the GIL held for the whole of next(),
    no such moment could exist and the search below ends without a witness."""
    loader = stoker.Loader(big_set, 2, transform="eval", threads=1, prefetch=1,
                           exact_decode=True)
    main = threading.get_ident()
    code = stoker.Loader._iterate.__code__
    received = 0
    witness = threading.Event()
    stop = threading.Event()

    def look_for_witness():
        while not (stop.is_set() or witness.is_set()):
            seen = received
            if (_at_call(sys._current_frames().get(main), code)
                    and loader.stats(advance=False)["batches"] == seen):
                witness.set()
            time.sleep(0.0005)

    finder = threading.Thread(target=look_for_witness)
    finder.start()
    try:
        epoch = 0
        while not witness.is_set() and received < 400:  # 100 epochs of 4 batches at most
            loader.set_epoch(epoch)
            for _ in loader:
                received += 1
                if witness.is_set():
                    break
            epoch += 1
    finally:
        stop.set()
        finder.join()
        loader.close()
    print(f"\nGIL: a witness after {received} batches")
    assert witness.is_set(), "no other Python thread ran while next() waited: GIL held?"


def test_close_mid_epoch_leaves_no_thread(big_set):
    float(torch.ones(1 << 20).abs().sum())  # torch starts its own thread pool on first use
    before = threads()
    loader = stoker.Loader(big_set, 4, transform="eval", threads=2, prefetch=3)
    assert len(threads() - before) == 2
    batch = next(iter(loader))
    loader.close()  # joins the workers
    # pthread_join returns once the kernel clears the thread's id, a moment before the thread
    # leaves /proc/self/task: a joined thread may still be listed briefly (seen once in ~30
    # runs). A thread left behind would stay.
    deadline = time.monotonic() + 10
    while threads() - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not threads() - before, "a thread was left behind"
    assert loader.closed
    assert float(batch.images.abs().sum()) > 0  # the batch outlives its loader
    with pytest.raises(RuntimeError, match="closed"):
        len(loader)
    loader.close()  # idempotent

    with stoker.Loader(big_set, 4, transform="eval", threads=2) as loader:
        next(iter(loader))
    assert not threads() - before, "a thread was left behind"

    loader = stoker.Loader(big_set, 4, transform="eval", threads=2)
    next(iter(loader))
    del loader  # dropping the last reference closes it too
    gc.collect()
    assert not threads() - before, "a thread was left behind"


def test_state_dict_roundtrip_in_process(small_set):
    kwargs = dict(size=16, transform="eval", threads=1, seed=5)
    full = [b.indices[b.valid].tolist() for b in stoker.Loader(small_set, 3, **kwargs)]
    loader = stoker.Loader(small_set, 3, **kwargs)
    it = iter(loader)
    head = [next(it).indices.tolist() for _ in range(3)]
    state = loader.state_dict()
    assert state["consumed"] == 9 and state["epoch"] == 0
    other = stoker.Loader(small_set, 2, **kwargs)  # another batch size resumes too
    other.load_state_dict(state)
    tail = [i for b in other for i in b.indices[b.valid].tolist()]
    flat_full = [i for b in full for i in b]
    assert [i for h in head for i in h] + tail == flat_full
    # A state for another seed is refused with a clear error.
    with pytest.raises(stoker.Error, match="seed"):
        stoker.Loader(small_set, 3, **dict(kwargs, seed=6)).load_state_dict(state)


def test_masked_mean_single_process(small_set):
    loader = stoker.Loader(small_set, 4, size=8, threads=1)
    last = list(loader)[-1]
    loss = torch.arange(4, dtype=torch.float32)
    loss[3] = float("nan")  # a padding slot's NaN must not leak
    assert last.valid.tolist() == [True, True, True, False]
    assert float(stoker.torch.masked_mean(loss, last)) == pytest.approx((0 + 1 + 2) / 3)
    with pytest.raises(ValueError):
        stoker.torch.masked_mean(torch.zeros(3), last)


def test_bad_samples(tmp_path):
    from conftest import synth
    data = synth(tmp_path / "d", images=6, classes=1)
    (folder,) = [p for p in data.iterdir() if p.is_dir()]
    bad = folder / "zz_broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(stoker.BadSampleError, match="zz_broken.jpg"):
        for _ in stoker.Loader(data, 7, size=16, shuffle=False):
            pass
    loader = stoker.Loader(data, 7, size=16, shuffle=False, bad_samples="skip")
    (batch,) = list(loader)
    assert int(batch.valid.sum()) == 6 and batch.skipped == 1
    assert loader.stats()["skipped"] == 1


@pytest.mark.parametrize("kwargs, message", [
    (dict(batch_size=0), "batch_size"),
    (dict(transform="test"), "transform"),
    (dict(output="float64"), "output"),
    (dict(mode="evenly"), "mode"),
    (dict(bad_samples="ignore"), "bad_samples"),
    (dict(rank=1), "both rank and world_size"),
    (dict(rank=2, world_size=2), "rank"),
    (dict(size=0), "size"),
    (dict(scale=(0.5, 0.1)), "scale"),
    (dict(channels=2), "channels"),
    (dict(threads=-1), "threads"),
    (dict(flip_p=2.0), "flip_p"),
    (dict(crop_fraction=0.0), "crop_fraction"),
])
def test_bad_arguments_raise_value_error(small_set, kwargs, message):
    kwargs = dict(dict(batch_size=2), **kwargs)
    with pytest.raises(ValueError, match=message):
        stoker.Loader(small_set, **kwargs)


def test_arguments_checked_in_cpp_raise_argument_error(small_set):
    with pytest.raises(stoker.ArgumentError, match="std") as raised:
        stoker.Loader(small_set, 2, std=(0.2, -0.1, 0.2))
    assert isinstance(raised.value, ValueError) and raised.value.kind == "invalid-argument"


def test_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError) as raised:
        stoker.Loader(tmp_path / "nope", 2)
    e = raised.value
    assert isinstance(e, stoker.StorageError) and isinstance(e, stoker.Error)
    assert e.errno == errno.ENOENT and e.filename == str(tmp_path / "nope")
    assert str(e) == f"{tmp_path / 'nope'}: no such file or directory"


def test_a_file_gone_mid_job_is_a_storage_error_even_under_skip(tmp_path):
    """A file deleted after the folder was indexed is the storage's doing (a dead mount looks
    the same): an OSError naming the file and errno after stoker's retries, never a skipped
    sample; a broken JPEG in the same batch is still skipped."""
    from conftest import synth
    data = synth(tmp_path / "d", images=6, classes=1)
    (folder,) = [p for p in data.iterdir() if p.is_dir()]
    (folder / "zz_broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    loader = stoker.Loader(data, 7, size=16, shuffle=False, bad_samples="skip")
    # The io keyword's retry policy is the loader's: tried as often as it says.
    patient = stoker.Loader(data, 7, size=16, shuffle=False, bad_samples="skip",
                            io=stoker.IoConfig(attempts=5, first_backoff=0))
    gone = sorted(folder.glob("*.jpg"))[0]
    gone.unlink()
    with pytest.raises(stoker.StorageError) as raised:
        list(loader)
    e = raised.value
    assert isinstance(e, OSError) and e.errno == errno.ENOENT and e.filename == str(gone)
    assert "(tried 3 times)" in str(e)
    assert loader.stats()["skipped"] == 0
    with pytest.raises(stoker.StorageError, match=r"\(tried 5 times\)"):
        list(patient)


def test_file_names_that_are_not_utf8_keep_the_error_and_its_file(tmp_path):
    """issue 30: a file named in another encoding (b"\\xff" is not UTF-8) turned a
    BadSampleError or StorageError into a UnicodeDecodeError that lost the file and the reason.
    The message shows the byte as an escape; the filename round-trips to the bytes."""
    from conftest import synth
    data = synth(tmp_path / "d", images=6, classes=1)
    (folder,) = [p for p in data.iterdir() if p.is_dir()]
    raw = os.fsencode(folder) + b"/zz_bad\xff.jpg"
    with open(raw, "wb") as f:
        f.write(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(stoker.BadSampleError) as raised:
        list(stoker.Loader(data, 7, size=16, shuffle=False))
    assert "zz_bad\\xff.jpg" in str(raised.value)
    # A storage error on such a file: the errno and the file, which os.fsencode gives back.
    loader = stoker.Loader(data, 7, size=16, shuffle=False, bad_samples="skip",
                           io=stoker.IoConfig(attempts=1))
    os.unlink(raw)
    with pytest.raises(stoker.StorageError) as gone:
        list(loader)
    assert gone.value.errno == errno.ENOENT
    assert os.fsencode(gone.value.filename) == raw
    assert "zz_bad\\xff.jpg" in str(gone.value)


def test_io_and_close_timeout_keywords_reach_the_core_and_are_checked_there(small_set):
    loader = stoker.Loader(small_set, 4, size=8, close_timeout=2.5,
                           io=stoker.IoConfig(attempts=7, first_backoff=0.5, packed_io="pread"))
    config = loader._core.config
    assert (config.read_retries.attempts, config.read_retries.first_backoff_s) == (7, 0.5)
    assert config.close_timeout_seconds == 2.5
    loader.close()
    with pytest.raises(stoker.ArgumentError, match=r"close_timeout_seconds must be in \[0, "):
        stoker.Loader(small_set, 4, size=8, close_timeout=-1)
    with pytest.raises(stoker.ArgumentError, match=r"attempts must be in \[1, 100\] \(got 0\)"):
        stoker.Loader(small_set, 4, size=8, io=stoker.IoConfig(attempts=0))
    with pytest.raises(stoker.ArgumentError, match="packed I/O must be mmap or pread"):
        stoker.open_dataset(small_set, io=stoker.IoConfig(packed_io="map"))
    with pytest.raises(TypeError, match="io must be a stoker.IoConfig"):
        stoker.Loader(small_set, 4, size=8, io={"attempts": 2})


@pytest.mark.parametrize("name, value, message", [
    ("STOKER_CLOSE_TIMEOUT", "1O", "STOKER_CLOSE_TIMEOUT=1O: expected a number in [0, 86400]"),
    ("STOKER_IO_ATTEMPTS", "three", "STOKER_IO_ATTEMPTS=three: expected an integer in [1, 100]"),
    ("STOKER_PACKED_IO", "map", "STOKER_PACKED_IO=map: expected mmap or pread"),
    ("STOKER_STATS_INTERVAL", "1s", "STOKER_STATS_INTERVAL=1s: expected a number in [0, 3600]"),
])
def test_a_malformed_environment_variable_fails_naming_it(small_set, monkeypatch, name, value,
                                                          message):
    """Before: STOKER_CLOSE_TIMEOUT went through atof in the loader's destructor, so a typo
    was 0 s. The variables are only defaults of config fields, read when a config is made."""
    monkeypatch.setenv(name, value)
    with pytest.raises(stoker.ArgumentError) as raised:
        stoker.Loader(small_set, 4, size=8)
    assert str(raised.value) == message


def test_environment_variables_are_the_defaults_of_the_config_fields(small_set, monkeypatch):
    monkeypatch.setenv("STOKER_CLOSE_TIMEOUT", "0.25")
    monkeypatch.setenv("STOKER_IO_ATTEMPTS", "9")
    loader = stoker.Loader(small_set, 4, size=8)
    assert loader._core.config.close_timeout_seconds == 0.25
    assert loader._core.config.read_retries.attempts == 9
    loader.close()
    loader = stoker.Loader(small_set, 4, size=8, close_timeout=3, io=stoker.IoConfig(attempts=2))
    assert loader._core.config.close_timeout_seconds == 3  # a keyword wins
    assert loader._core.config.read_retries.attempts == 2
    loader.close()


def test_numpy_views_without_torch_conversion(small_set):
    ds = stoker.open_dataset(small_set)
    assert len(ds) == 23 and len(ds.fingerprint) == 16
    loader = stoker.Loader(small_set, 4, size=16, threads=1)
    b = next(iter(loader))
    assert isinstance(b.images.numpy(), np.ndarray)
    assert b.images.numpy().flags.writeable


def test_transform_config_is_the_keywords_in_one_object(small_set):
    tf = stoker.TransformConfig(kind="train", size=12, scale=(0.5, 1.0), flip_p=1.0)
    by_object = stoker.Loader(small_set, 3, transform=tf, threads=1, seed=4)
    by_keywords = stoker.Loader(small_set, 3, size=12, scale=(0.5, 1.0), flip_p=1.0, threads=1,
                                seed=4)
    assert by_object.transform == tf == by_keywords.transform
    for a, b in zip(by_object, by_keywords, strict=True):
        assert torch.equal(a.images, b.images) and a.images.shape == (3, 3, 12, 12)
    with pytest.raises(ValueError, match="not both"):
        stoker.Loader(small_set, 3, transform=tf, size=16)
    # Checked in C++ when a loader is made, as the keywords are.
    with pytest.raises(stoker.ArgumentError, match="flip_p"):
        stoker.Loader(small_set, 3, transform=stoker.TransformConfig(flip_p=1.5))


def test_transform_defaults_are_the_cores():
    """TransformConfig() converts to exactly the C++ struct's defaults (stoker/transform.h),
    and the ImageNet statistics are the C++ ones, as doubles."""
    core, ours = stoker._stoker.TransformConfig(), stoker.TransformConfig()._core()
    for field in ("kind", "output", "size", "height", "width", "channels", "scale", "ratio",
                  "flip_p", "crop_fraction", "resize", "resize_height", "resize_width", "mean",
                  "std", "dct_scaling"):
        assert getattr(ours, field) == getattr(core, field), field
    assert ours.ops == [] and ours.erasing.p == core.erasing.p == 0
    assert stoker.IMAGENET_MEAN == (0.485, 0.456, 0.406)
    assert stoker.IMAGENET_STD == (0.229, 0.224, 0.225)
    assert stoker.TransformConfig().kind == "train" and stoker.TransformConfig().size == 224


def test_a_loader_under_stoker_monitor_appends_its_stats_lines(small_set, tmp_path, monkeypatch):
    stats = tmp_path / "m.log.stats.jsonl"
    monkeypatch.setenv("STOKER_STATS_FILE", str(stats))
    monkeypatch.setenv("STOKER_STATS_INTERVAL", "0")
    loader = stoker.Loader(small_set, 4, size=8, threads=1)
    assert sum(1 for _ in loader) == 6
    loader.close()
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert len(lines) >= 6  # one per batch at interval 0, and the last when it closes
    assert all(line["stoker_stats"] == 1 and line["rank"] == 0 for line in lines)
    assert lines[-1]["images"] == 23


def test_a_loader_used_in_a_forked_child_raises_instead_of_hanging(small_set):
    """Before: a loader inherited by a fork() child (a DataLoader worker, multiprocessing's
    "fork") waited for worker threads that exist only in the parent, for ever. Now next()
    raises, saying so, and dropping the loader in the child neither hangs nor crashes."""
    loader = stoker.Loader(small_set, batch_size=4, threads=2, transform="eval", size=16)
    first = next(iter(loader))  # the workers run
    assert first is not None
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        code = 3
        try:
            next(iter(loader))
        except stoker.Error as e:
            code = 0 if "a fork() of it" in str(e) and "worker threads do not exist" in str(e) else 4
        except BaseException:
            code = 5
        try:
            del loader
            gc.collect()
        except BaseException:
            code = 6
        os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert len(list(loader)) == math.ceil(23 / 4)  # the parent's loader works on


def test_timms_mixup_smooths_then_mixes_in_the_workers(small_set):
    """stoker.transforms.Mixup (timm's arguments): prob=0 leaves every row timm's smoothed
    one-hot (float32 on/off values); with MixUp on every batch, the two rows of a pair add up to
    their two smoothed one-hots (lam and 1 - lam) and each row sums to 1."""
    import stoker.transforms as T

    k, s = 3, 0.1
    off = np.float32(s / k)
    on = np.float32(1 - s + s / k)

    def rows(**kwargs):
        loader = stoker.Loader(small_set, 8, size=16, threads=1, shuffle=False,
                               batch_transform=T.Mixup(label_smoothing=s, num_classes=None,
                                                       **kwargs))
        return [(b.labels.numpy(), np.array([loader.dataset.label(int(i)) for i in b.indices]))
                for b in loader]

    for soft, labels in rows(prob=0.0):
        want = np.full((len(labels), k), off, dtype=np.float32)
        want[np.arange(len(labels)), labels] = on
        assert np.array_equal(soft, want)
    for soft, labels in rows(mixup_alpha=0.8, prob=1.0):
        hot = np.full((len(labels), k), off, dtype=np.float32)
        hot[np.arange(len(labels)), labels] = on
        assert np.allclose(soft.sum(1), 1.0, atol=1e-6)
        for a in range(0, len(labels) - 1, 2):
            assert np.allclose(soft[a] + soft[a + 1], hot[a] + hot[a + 1], atol=1e-6)
    with pytest.raises(ValueError, match="mode must be 'batch', 'pair' or 'elem'"):
        T.Mixup(mode="each")
