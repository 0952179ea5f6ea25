"""CLIP-style WebDataset shards written by webdataset's own ShardWriter: key.jpg (a photo-like
JPEG), key.txt (its caption), key.json (metadata), as img2dataset lays out LAION / DataComp.
Used by tests/python/test_example_clip.py and bench/clip_loaders.py."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

COLOURS = ["red", "green", "blue", "yellow", "purple", "orange", "white", "black"]
SHAPES = ["square", "stripe", "disc", "cross"]


def caption(i: int) -> str:
    return f"a {COLOURS[i % len(COLOURS)]} {SHAPES[(i // len(COLOURS)) % len(SHAPES)]}, photo {i}"


def image(i: int, size=(96, 72), photos=None) -> bytes:
    """A photo when `photos` (a list of paths) is given, else a textured image whose colour and
    shape follow the caption (so that a model can learn the pairing)."""
    buf = io.BytesIO()
    if photos:
        Image.open(photos[i % len(photos)]).convert("RGB").save(buf, "JPEG", quality=90)
        return buf.getvalue()
    rng = np.random.default_rng(i)
    w, h = size
    base = np.array([[255, 0, 0], [0, 160, 0], [0, 0, 255], [230, 230, 0], [128, 0, 128],
                     [255, 140, 0], [240, 240, 240], [20, 20, 20]])[i % len(COLOURS)]
    pixels = rng.integers(0, 60, (h, w, 3)) + base * 0.7
    yy, xx = np.mgrid[0:h, 0:w]
    shape = (i // len(COLOURS)) % len(SHAPES)
    mask = [(abs(xx - w / 2) < w / 4) & (abs(yy - h / 2) < h / 4), (xx // 8) % 2 == 0,
            (xx - w / 2) ** 2 + (yy - h / 2) ** 2 < (h / 3) ** 2,
            (abs(xx - w / 2) < 6) | (abs(yy - h / 2) < 6)][shape]
    pixels[mask] = 255 - pixels[mask]
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def write(out: Path, samples: int, per_shard: int, photos=None) -> str:
    """The shards under `out` and their brace pattern."""
    import webdataset

    out.mkdir(parents=True, exist_ok=True)
    with webdataset.ShardWriter(str(out / "pairs-%04d.tar"), maxcount=per_shard) as sink:
        for i in range(samples):
            sink.write({"__key__": f"{i:08d}", "jpg": image(i, photos=photos), "txt": caption(i),
                        "json": json.dumps({"key": f"{i:08d}", "caption": caption(i),
                                            "similarity": 0.2 + (i % 10) / 50})})
    shards = len(list(out.glob("pairs-*.tar")))
    return str(out / f"pairs-{{0000..{shards - 1:04d}}}.tar")


if __name__ == "__main__":
    print(write(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
