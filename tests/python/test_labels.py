"""Labels and manifests: CSV / TSV with a header, JSON lines, class names, multi-label,
label-free. The lists are written by Python's own csv and json modules (not by stoker)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch

import stoker
import stoker.transforms as T
from conftest import synth


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list:
    root = synth(tmp_path_factory.mktemp("imgs") / "data", images=12, classes=1, width=40,
                 height=32)
    return sorted(str(p) for p in Path(root).rglob("*.jpg"))


NAMES = ["zebra", "ant", "golden retriever, large", "ant", "bee", "zebra", "bee", "ant",
         "golden retriever, large", "zebra", "ant", "bee"]


def delivered(loader):
    """{dataset index: label row or label} over one epoch, valid slots only."""
    out = {}
    for batch in loader:
        for slot, ok in enumerate(batch.valid.tolist()):
            if ok:
                label = batch.labels[slot]
                out[int(batch.indices[slot])] = label.tolist() if label.ndim else int(label)
    return out


def test_csv_class_names_map_like_imagefolder(tmp_path, images):
    path = tmp_path / "train.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)  # quotes the name with a comma; CRLF line ends
        w.writerow(["image_id", "filepath", "category"])
        for i, (image, name) in enumerate(zip(images, NAMES)):
            w.writerow([i, image, name])
    loader = stoker.Loader(path, 4, transform="eval", size=16, threads=1, shuffle=False)
    assert loader.classes == sorted(set(NAMES))
    assert loader.class_to_idx == {c: i for i, c in enumerate(sorted(set(NAMES)))}
    got = delivered(loader)
    assert got == {i: loader.class_to_idx[n] for i, n in enumerate(NAMES)}


def test_json_lines_multi_label_gives_multi_hot_rows(tmp_path, images):
    path = tmp_path / "train.jsonl"
    tags = [["cat"], ["dog", "cat"], [], ["bird"]] * 3
    with open(path, "w") as f:
        for image, t in zip(images, tags):
            f.write(json.dumps({"path": image, "labels": t}) + "\n")
    loader = stoker.Loader(path, 5, transform="eval", size=16, threads=1, shuffle=False)
    assert loader.multi_label and loader.classes == ["bird", "cat", "dog"]
    got = delivered(loader)
    for i, t in enumerate(tags):
        assert got[i] == [1.0 if c in t else 0.0 for c in loader.classes], i
    # MixUp mixes multi-hot rows as torchvision mixes one-hot ones.
    mixed = stoker.Loader(path, 4, transform="eval", size=16, threads=1, shuffle=False,
                          batch_transform=T.MixUp(0.5, num_classes=3))
    batch = next(iter(mixed))
    assert batch.labels.shape == (4, 3) and batch.labels.dtype == torch.float32
    assert torch.all(batch.labels <= 1.0) and torch.all(batch.labels >= 0.0)


def test_tsv_header_integer_multi_label_and_label_free(tmp_path, images):
    tsv = tmp_path / "train.tsv"
    with open(tsv, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["path", "labels"])
        for i, image in enumerate(images):
            w.writerow([image, f"{i % 4};{(i + 1) % 4}"])
    data = stoker.open_dataset(tsv)
    assert data.multi_label and data.label_set(3) == [0, 3]
    free = tmp_path / "unlabelled.csv"
    with open(free, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path"])
        for image in images:
            w.writerow([image])
    loader = stoker.Loader(free, 6, transform="eval", size=16, threads=1)
    assert loader.classes == [] and not loader.multi_label
    assert set(delivered(loader).values()) == {-1}
    with pytest.raises(ValueError, match="need labels"):
        stoker.Loader(free, 6, transform="eval", size=16, threads=1,
                      batch_transform=T.MixUp(num_classes=2))
    # Without num_classes, the data set's class count, which a label-free list does not have.
    with pytest.raises(ValueError, match="need labels: .* has none"):
        stoker.Loader(free, 6, transform="eval", size=16, threads=1, batch_transform=T.MixUp())


def test_bad_rows_and_columns_are_errors_naming_the_line(tmp_path, images):
    path = tmp_path / "bad.csv"
    path.write_text(f"path,label\n{images[0]},1\n{images[1]}\n")
    with pytest.raises(stoker.ArgumentError, match=r"bad\.csv:3: 1 fields, the header has 2"):
        stoker.Loader(path, 2)
    path.write_text(f"file,kind\n{images[0]},1\n")
    with pytest.raises(ValueError, match=r"no column 'cls'"):
        stoker.Loader(path, 2, label_column="cls")
    assert stoker.open_dataset(path, label_column="kind").label(0) == 1
    jl = tmp_path / "bad.jsonl"
    jl.write_text(json.dumps({"path": images[0], "label": 1}) + "\n" + "not json\n")
    with pytest.raises(stoker.ArgumentError, match=r"bad\.jsonl:2: not JSON"):
        stoker.open_dataset(jl)


def test_mix_without_num_classes_takes_the_data_sets_classes(tmp_path, images):
    path = tmp_path / "train.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path", "label"])
        for i, image in enumerate(images):
            w.writerow([image, ["cat", "dog", "bird", "fish", "owl"][i % 5]])
    mix = T.RandomChoice([T.MixUp(0.8), T.CutMix(1.0)], p=[0.25, 0.75])
    loader = stoker.Loader(path, 4, transform="eval", size=16, threads=1, batch_transform=mix)
    config = loader._core.config.mix  # run by the workers, not in Python
    assert (config.num_classes, config.mixup_alpha, config.cutmix_alpha) == (5, 0.8, 1.0)
    assert config.mixup_p == 0.25
    batch = next(iter(loader))
    assert batch.labels.shape == (4, 5) and batch.labels.dtype == torch.float32
    assert torch.allclose(batch.labels.sum(1), torch.ones(4))
    # The same with the count given; a different one for each is refused.
    given = stoker.Loader(path, 4, transform="eval", size=16, threads=1,
                          batch_transform=T.MixUp(0.8, num_classes=5))
    assert given._core.config.mix.num_classes == 5
    with pytest.raises(ValueError, match=r"one soft-label width .* \[4, 5\]"):
        stoker.Loader(path, 4, transform="eval", size=16, threads=1,
                      batch_transform=T.RandomChoice([T.MixUp(), T.CutMix(num_classes=4)]))


def test_mix_runs_in_the_workers_only():
    # Beside a Python callable in a RandomChoice, or called on tensors: refused, saying why.
    with pytest.raises(ValueError, match="one MixUp, one CutMix or a choice of one of each"):
        stoker.Loader("/nonexistent", 4,
                      batch_transform=T.RandomChoice([T.MixUp(), lambda x, y: (x, y)]))
    with pytest.raises(ValueError, match="one MixUp, one CutMix or a choice of one of each"):
        stoker.Loader("/nonexistent", 4, batch_transform=T.RandomChoice([T.MixUp(), T.MixUp()]))
    with pytest.raises(TypeError, match="torchvision.transforms.v2.CutMix"):
        T.CutMix()(torch.zeros(2, 3, 8, 8), torch.zeros(2, dtype=torch.int64))
