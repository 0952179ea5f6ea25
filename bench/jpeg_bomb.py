#!/usr/bin/env python3
"""The progressive-JPEG scan bomb (issue 30): how much CPU stoker spends refusing it.

  bench/jpeg_bomb.py [--stoker PATH] [--rounds R]

Makes two large progressive JPEGs written by Pillow with progressive=True — a photograph of
Debian's mate-backgrounds at 4000x3000, and a flat 8192x8192 image (the red team's kind: its
bomb is a file of about 200 KB) — then a bomb of each: its smallest scan repeated until the file
has 600 scans (each repeated scan is a few bytes to a few KB of entropy data that still asks the
decoder to walk every block of its component). Each round runs `stoker bench` over a folder
holding only the bomb (--bad-samples skip, one thread) and over the same folder holding the
intact file instead, and reports the child process's CPU time (user + system, getrusage): the
bomb's is the refusal plus the command's start, the intact file's a real decode of the same
image, for scale. Prints medians over the rounds. Needs Pillow (the reference venv has it).
"""
from __future__ import annotations

import argparse
import glob
import io
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def progressive_photo(width: int, height: int, flat: bool = False) -> bytes:
    from PIL import Image

    if flat:
        img = Image.new("RGB", (width, height), (120, 140, 160))
    else:
        photos = sorted(glob.glob("/usr/share/backgrounds/mate/*/*.jpg"))
        if not photos:
            sys.exit("needs Debian's mate-backgrounds (apt-get install mate-backgrounds)")
        img = Image.open(photos[0]).convert("RGB").resize((width, height), Image.BILINEAR)
    out = io.BytesIO()
    img.save(out, "JPEG", quality=90, progressive=True)
    return out.getvalue()


def scans_of(jpeg: bytes):
    """(start, end) of each scan: its SOS marker up to the next marker that is not a restart
    or a stuffed 0xFF (the next scan's tables or SOS, or EOI)."""
    out, i, n = [], 0, len(jpeg)
    while i + 1 < n:
        if jpeg[i] == 0xFF and jpeg[i + 1] == 0xDA:
            j = i + 2 + (jpeg[i + 2] << 8 | jpeg[i + 3])
            while j + 1 < n and not (jpeg[j] == 0xFF and jpeg[j + 1] not in (0x00, *range(0xD0, 0xD8))):
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def bomb_of(jpeg: bytes, scans: int) -> bytes:
    """`jpeg` with its smallest scan (in bytes: a high AC band, little more than end-of-band
    runs, that still walks every block of its component) repeated before EOI until the file
    has `scans` scans."""
    found = scans_of(jpeg)
    start, end = min(found, key=lambda se: se[1] - se[0])
    return jpeg[:-2] + jpeg[start:end] * (scans - len(found)) + b"\xff\xd9"


def child_cpu(cmd) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stoker", default=shutil.which("stoker") or "build/stoker")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    photo = progressive_photo(4000, 3000)
    flat = progressive_photo(8192, 8192, flat=True)
    files = {"photo bomb": bomb_of(photo, 600), "photo intact": photo,
             "flat bomb": bomb_of(flat, 600), "flat intact": flat}
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for name, data in files.items():
            name = name.replace(" ", "-")
            d = Path(tmp) / name / "c"
            d.mkdir(parents=True)
            (d / f"{name}.jpg").write_bytes(data)
            folders[name] = d.parent
        times = {name: [] for name in folders}
        for _ in range(a.rounds):
            for name, folder in folders.items():
                times[name].append(child_cpu(
                    [a.stoker, "bench", str(folder), "--batch", "1", "--threads", "1",
                     "--bad-samples", "skip", "--size", "224"]))
    for (name, data), t in zip(files.items(), times.values()):
        print(f"{name:13} {len(data):>9} bytes: CPU {1000 * statistics.median(t):5.0f} ms "
              f"(median of {a.rounds}; min {1000 * min(t):.0f}, max {1000 * max(t):.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
