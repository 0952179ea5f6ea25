#!/usr/bin/env python3
"""Builds the benchmark ImageFolder: real photographs of about 0.3 megapixels as JPEG.

Sources are the photographs shipped in Debian's `mate-backgrounds` and
`plasma-workspace-wallpapers` packages (abstract / vector / painted wallpapers are
left out; the list below was checked by eye). Each source photo is decoded once; from it
we cut deterministic crops at a few scales (a fraction of the source's short side),
resize them with PIL's LANCZOS filter to one of a few ~0.3 MP shapes (640x480, 480x640,
632x474, 474x632) and store them as baseline JPEG, quality 90, 4:2:0 chroma subsampling.
Crops only ever shrink (never upscale), so the files have the statistics of downscaled
camera photographs, like a typical training set.

Class = source photo group (10 groups). Same files every run: crop geometry comes from a
fixed-seed RNG per source photo, and PIL's encoder is deterministic. Idempotent: a stamp
file (.stamp.json) records the parameters and the source files; when it matches and every
output file is present, nothing is done.

Usage: .venv/bin/python bench/make_photo_set.py [--out DIR] [--count N] [--quality Q]
                                                 [--jobs J] [--force]
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import zlib

VERSION = 1  # bump when the generation procedure changes

MATE = "/usr/share/backgrounds/mate/nature"
PLASMA = "/usr/share/wallpapers"

# class -> source photographs (real photos only).
GROUPS = {
    "flower": [f"{MATE}/FreshFlower.jpg", f"{MATE}/Garden.jpg", f"{MATE}/YellowFlower.jpg"],
    "macro": [f"{MATE}/TwoWings.jpg", f"{MATE}/LadyBird.jpg", f"{MATE}/Aqua.jpg"],
    "grass": [f"{MATE}/Blinds.jpg", f"{MATE}/GreenMeadow.jpg", f"{MATE}/RainDrops.jpg"],
    "coast": [f"{MATE}/Dune.jpg", f"{MATE}/Storm.jpg"],
    "wood": [f"{MATE}/Wood.jpg", "plasma:BytheWater"],
    "lake": ["plasma:ColdRipple", "plasma:DarkestHour", "plasma:summer_1am"],
    "harbour": ["plasma:EveningGlow"],
    "forest": ["plasma:Path", "plasma:OneStandsOut", "plasma:FallenLeaf"],
    "sky": ["plasma:Kite"],
    "objects": ["plasma:ColorfulCups", "plasma:Grey"],
}

# Output shapes (w, h): all about 0.3 MP, landscape and portrait.
SHAPES = [(640, 480), (480, 640), (632, 474), (474, 632)]
SHAPE_WEIGHTS = [4, 2, 3, 1]
# Crop scales: crop short side = scale * source short side (clamped so we never upscale).
SCALES = [1.0, 0.75, 0.55, 0.4]


def resolve(src):
    """Path of a source photo; `plasma:NAME` is the largest JPEG of that wallpaper."""
    if not src.startswith("plasma:"):
        return src
    d = os.path.join(PLASMA, src.split(":", 1)[1], "contents", "images")
    best, best_area = None, -1
    for name in os.listdir(d):
        stem, ext = os.path.splitext(name)
        if ext.lower() not in (".jpg", ".jpeg"):
            continue
        try:
            w, h = (int(v) for v in stem.split("x"))
        except ValueError:
            continue
        if w * h > best_area:
            best, best_area = os.path.join(d, name), w * h
    if best is None:
        raise FileNotFoundError(f"no JPEG in {d}")
    return best


def plan(count):
    """Deterministic list of (class, source index in class, output name) for `count` files,
    spread evenly over the source photos (round robin)."""
    sources = [(cls, i) for cls, srcs in GROUPS.items() for i in range(len(srcs))]
    per_source = {s: 0 for s in sources}
    for k in range(count):
        per_source[sources[k % len(sources)]] += 1
    return per_source


def crops_for(src_path, src_size, n):
    """n deterministic (box, out_size) pairs for one source photo."""
    seed = zlib.crc32(f"stoker-photo-set-v{VERSION}:{os.path.basename(src_path)}".encode())
    rng = random.Random(seed)
    sw, sh = src_size
    out = []
    for k in range(n):
        ow, oh = rng.choices(SHAPES, weights=SHAPE_WEIGHTS)[0]
        scale = SCALES[k % len(SCALES)]
        aspect = ow / oh
        # Largest box of this aspect ratio inside the source, then scaled down.
        bw = min(sw, sh * aspect)
        bh = bw / aspect
        bw, bh = bw * scale, bh * scale
        if bw < ow or bh < oh:  # never upscale
            bw, bh = float(ow), float(oh)
        bw, bh = min(bw, sw), min(bh, sh)
        x0 = rng.uniform(0, sw - bw)
        y0 = rng.uniform(0, sh - bh)
        box = (round(x0), round(y0), round(x0 + bw), round(y0 + bh))
        out.append((box, (ow, oh)))
    return out


def build_source(job):
    """Worker: cut, resize and encode every output of one source photo."""
    from PIL import Image

    cls, src_path, n, first_index, out_dir, quality = job
    im = Image.open(src_path)
    im = im.convert("RGB")
    stem = os.path.splitext(os.path.basename(src_path))[0]
    if stem[0].isdigit():  # plasma wallpapers are named by size: use the folder name
        stem = src_path.split(os.sep)[-4]
    names = []
    for k, (box, size) in enumerate(crops_for(src_path, im.size, n)):
        tile = im.resize(size, Image.LANCZOS, box=box)
        name = os.path.join(cls, f"{stem}_{first_index + k:04d}.jpg")
        path = os.path.join(out_dir, name)
        tmp = path + ".tmp"
        tile.save(tmp, "JPEG", quality=quality, subsampling=2, optimize=False,
                  progressive=False)
        os.replace(tmp, path)
        names.append(name)
    return names


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "data", "photos-0.3mp"))
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--force", action="store_true", help="rebuild even if the stamp matches")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    try:
        sources = {cls: [resolve(s) for s in srcs] for cls, srcs in GROUPS.items()}
    except FileNotFoundError as e:
        sys.exit(f"make_photo_set: missing source photos ({e}); install the Debian packages "
                 "mate-backgrounds and plasma-workspace-wallpapers")
    for srcs in sources.values():
        for s in srcs:
            if not os.path.isfile(s):
                sys.exit(f"make_photo_set: missing {s}; install mate-backgrounds and "
                         "plasma-workspace-wallpapers")

    def digest(p):
        h = hashlib.sha256()
        with open(p, "rb") as f:
            h.update(f.read())
        return h.hexdigest()[:16]

    import PIL
    params = {
        "version": VERSION,
        "count": args.count,
        "quality": args.quality,
        "subsampling": "4:2:0",
        "shapes": SHAPES,
        "scales": SCALES,
        "pillow": PIL.__version__,
        "sources": {cls: [[s, digest(s)] for s in srcs] for cls, srcs in sources.items()},
    }
    stamp_path = os.path.join(args.out, ".stamp.json")
    if not args.force and os.path.isfile(stamp_path):
        try:
            with open(stamp_path) as f:
                stamp = json.load(f)
            if stamp.get("params") == json.loads(json.dumps(params)) and all(
                    os.path.isfile(os.path.join(args.out, n)) for n in stamp.get("files", [])):
                if not args.quiet:
                    print(f"make_photo_set: {args.out} is up to date "
                          f"({len(stamp['files'])} images)")
                return 0
        except (OSError, ValueError):
            pass

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    for cls in GROUPS:
        os.makedirs(os.path.join(args.out, cls), exist_ok=True)

    per_source = plan(args.count)
    jobs = []
    for (cls, i), n in per_source.items():
        if n:
            jobs.append((cls, sources[cls][i], n, 0, args.out, args.quality))
    if not args.quiet:
        print(f"make_photo_set: building {args.count} images from "
              f"{sum(len(s) for s in sources.values())} photos into {args.out} ...", flush=True)
    if args.jobs > 1:
        import multiprocessing
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(build_source, jobs, chunksize=1)
    else:
        results = [build_source(j) for j in jobs]
    files = sorted(n for r in results for n in r)

    # Statistics, handy for docs/perf.md.
    from PIL import Image
    px = 0
    size = 0
    for n in files:
        p = os.path.join(args.out, n)
        with Image.open(p) as im:
            px += im.size[0] * im.size[1]
        size += os.path.getsize(p)
    stats = {
        "images": len(files),
        "classes": len(GROUPS),
        "mean_megapixels": round(px / len(files) / 1e6, 4),
        "mean_file_kib": round(size / len(files) / 1024, 1),
        "total_mib": round(size / 2**20, 1),
    }
    with open(stamp_path + ".tmp", "w") as f:
        json.dump({"params": params, "stats": stats, "files": files}, f, indent=1)
    os.replace(stamp_path + ".tmp", stamp_path)
    if not args.quiet:
        print("make_photo_set: done " + json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
