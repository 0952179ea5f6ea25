#!/usr/bin/env python3
"""Fashion-MNIST (IDX files) -> an ImageFolder of grayscale PNGs that stoker reads.

    examples/fashion_mnist_to_folder.py OUT [--idx DIR] [--pack]

The IDX files come from Debian's package dataset-fashion-mnist
(apt-get install dataset-fashion-mnist; they lie in /usr/share/datasets/fashion-mnist).
Writes

    OUT/train/<class>/<index>.png   60,000 images, 28x28 8-bit grayscale
    OUT/test/<class>/<index>.png    10,000 images

<class> is "<label>_<name>" ("0_T-shirt-top", "1_Trouser", ..., "9_Ankle_boot"), so that
ImageFolder's sorted class order gives back Fashion-MNIST's own label numbers; <index> is the
image's position in its IDX file (5 digits). The conversion is deterministic (the same IDX files
give the same bytes) and idempotent: OUT/stamp.json records the IDX files' SHA-256 and the
layout, and a second run with the same input does nothing. An interrupted run leaves no stamp
and is redone from scratch.

--pack then runs `stoker pack OUT/<split> OUT/<split>-packed --mode raw` for both splits
(raw decoded pixels, 28x28 kept as is since no --max-side is given): no PNG decoding at training
time. `stoker pack` resumes or skips work already done, so --pack is idempotent too.
Only the standard library, numpy and PIL are used.
"""

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

DEFAULT_IDX = Path("/usr/share/datasets/fashion-mnist")
CLASSES = [
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
]
SPLITS = {  # split -> (images file, labels file, count)
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", 60000),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 10000),
}
LAYOUT_VERSION = 1  # bump when the output layout or encoding changes


def default_stoker() -> Path:
    """The stoker command pip installed beside this interpreter, else the first on PATH."""
    beside = Path(sys.executable).parent / "stoker"
    return beside if beside.exists() else Path(shutil.which("stoker") or "stoker")


def class_dir(label):
    """Folder name of a label: its number first, so that sorted order is label order."""
    name = CLASSES[label].replace("/", "-").replace(" ", "_")
    return f"{label}_{name}"


def open_maybe_gzip(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def read_idx(path):
    """Reads an IDX file (gzip or plain) of unsigned bytes into an ndarray, checking its header."""
    with open_maybe_gzip(path) as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise SystemExit(f"{path}: not an IDX file of unsigned bytes")
    ndim = data[3]
    header = 4 + 4 * ndim
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    if len(data) != header + int(np.prod(dims)):
        raise SystemExit(f"{path}: {len(data) - header} bytes of data, header says {dims}")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def convert(idx_dir, out):
    files = {}
    for images, labels, _ in SPLITS.values():
        for name in (images, labels):
            path = idx_dir / name
            if not path.is_file():
                raise SystemExit(
                    f"{path} is missing: apt-get install dataset-fashion-mnist, or give --idx DIR")
            files[name] = sha256(path)
    stamp = {"layout": LAYOUT_VERSION, "classes": [class_dir(i) for i in range(10)],
             "idx_sha256": files}
    stamp_path = out / "stamp.json"
    if stamp_path.is_file():
        try:
            if json.loads(stamp_path.read_text()) == stamp:
                print(f"{out}: up to date (stamp.json matches the IDX files), nothing to do")
                return
        except ValueError:
            pass
        stamp_path.unlink()

    out.mkdir(parents=True, exist_ok=True)
    for split, (images_name, labels_name, count) in SPLITS.items():
        images = read_idx(idx_dir / images_name)
        labels = read_idx(idx_dir / labels_name)
        if images.shape != (count, 28, 28) or labels.shape != (count,) or labels.max() > 9:
            raise SystemExit(f"{split}: unexpected shapes {images.shape} {labels.shape}")
        # Written beside, then renamed: a split folder is never half there under its own name.
        tmp = out / f".{split}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        for label in range(10):
            (tmp / class_dir(label)).mkdir(parents=True)
        for i in range(count):
            # PNG with the default zlib level and no metadata: the same pixels give the same bytes.
            Image.fromarray(images[i], mode="L").save(
                tmp / class_dir(int(labels[i])) / f"{i:05d}.png", optimize=False)
        final = out / split
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
        per_class = np.bincount(labels, minlength=10)
        print(f"{final}: {count} images, per class {per_class.tolist()}")
    tmp_stamp = out / ".stamp.json.tmp"
    tmp_stamp.write_text(json.dumps(stamp, indent=1) + "\n")
    tmp_stamp.rename(stamp_path)


def pack(out, stoker):
    for split in SPLITS:
        cmd = [str(stoker), "pack", str(out / split), str(out / f"{split}-packed"), "--mode", "raw"]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="output folder (OUT/train, OUT/test)")
    ap.add_argument("--idx", type=Path, default=DEFAULT_IDX,
                    help=f"folder with the four IDX files (default {DEFAULT_IDX})")
    ap.add_argument("--pack", action="store_true",
                    help="also pack both splits with `stoker pack --mode raw` into OUT/*-packed")
    ap.add_argument("--stoker", type=Path, default=default_stoker(),
                    help="the stoker command for --pack (default: the one beside this Python, "
                         "as pip installs it, else the first on PATH)")
    args = ap.parse_args()
    convert(args.idx, args.out)
    if args.pack:
        if not os.access(args.stoker, os.X_OK):
            sys.exit(f"{args.stoker} not found: build it first (./run.sh build) or give --stoker")
        pack(args.out, args.stoker)


if __name__ == "__main__":
    main()
