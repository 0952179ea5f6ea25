#!/usr/bin/env python3
"""Writes the committed seed corpora fuzz/corpus/<harness>/ (a few KB each).

usage: /usr/bin/python3 fuzz/make_seeds.py STOKER_BIN
Needs Pillow (python3-pil), the `zstd` command and a built `stoker` (for the tiny packs).
Deterministic images: re-running gives the same files, so the corpora only change on purpose.

  image_decode_fuzz/   4 control bytes + JPEG (baseline, gray, progressive, a progressive
                       scan repeated 520 times, CMYK, restart markers), PNG (RGB, palette, 16-bit, gray+alpha), WebP (lossy, lossless)
  raw_image_fuzz/      4 control bytes + raw payloads (RGB, gray, zstd)
  manifest_fuzz/       manifest.json of tiny packs in each mode
  packed_reader_fuzz/  u16 manifest length + manifest + shard of tiny packs (make_packed_seed.py)
  tar_fuzz/            WebDataset-style tar shards from Python's tarfile in its GNU, pax and
                       ustar formats (long names, a folder, a symlink, .cls/.json members)
"""
import io
import pathlib
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zlib

from PIL import Image

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def picture(w, h, mode="RGB"):
    img = Image.new("RGB", (w, h))
    img.putdata([((x * 37) % 256, (y * 53) % 256, ((x + y) * 29) % 256)
                 for y in range(h) for x in range(w)])
    return img.convert(mode) if mode != "RGB" else img


def encoded(img, fmt, **kw):
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def png16(w, h):
    """A 16-bit RGB PNG (Pillow cannot write one), built chunk by chunk."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xffffffff)
    rows = b"".join(b"\0" + b"".join(struct.pack(">HHH", x * 4000, y * 9000, (x + y) * 3000)
                                      for x in range(w)) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def write(harness, name, data):
    folder = CORPUS / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def endless_scans(progressive, repeats):
    """A progressive JPEG with its last scan repeated REPEATS times (issue 18's crafted file:
    libjpeg-turbo only warns about the bogus progression, so each repeat is decoded again);
    past the decoder's 500-scan limit it is bad data."""
    last_sos = progressive.rindex(b"\xff\xda")
    assert progressive.endswith(b"\xff\xd9")
    scan = progressive[last_sos:-2]
    return progressive[:-2] + scan * repeats + b"\xff\xd9"


def image_seeds():
    rgb = picture(24, 17)
    images = {
        "baseline.jpg": encoded(rgb, "JPEG", quality=80),
        "gray.jpg": encoded(picture(16, 16, "L"), "JPEG", quality=80),
        "progressive.jpg": encoded(rgb, "JPEG", quality=80, progressive=True),
        "endless_scans.jpg": endless_scans(encoded(picture(8, 8), "JPEG", quality=80,
                                                   progressive=True), 520),
        "cmyk.jpg": encoded(picture(16, 8, "CMYK"), "JPEG", quality=80),
        "s444.jpg": encoded(rgb, "JPEG", quality=90, subsampling=0),
        "restart.jpg": encoded(picture(40, 24), "JPEG", quality=70, restart_marker_blocks=1),
        # Segments that line up with MCU rows: decode_region cuts out the ones a region needs.
        "restart_rows.jpg": encoded(picture(64, 48), "JPEG", quality=80, restart_marker_rows=1),
        "restart_gray.jpg": encoded(picture(48, 40, "L"), "JPEG", quality=80,
                                    restart_marker_blocks=2),
        "restart_444.jpg": encoded(picture(32, 32), "JPEG", quality=90, subsampling=0,
                                   restart_marker_blocks=2),
        "rgb.png": encoded(rgb, "PNG"),
        "palette.png": encoded(rgb.convert("P"), "PNG"),
        "rgb16.png": png16(8, 6),
        "gray_alpha.png": encoded(picture(9, 7, "LA"), "PNG"),
        "lossy.webp": encoded(rgb, "WEBP", quality=70),
        "lossless.webp": encoded(rgb, "WEBP", lossless=True),
    }
    controls = [bytes([0x00, 0xff, 0x00, 0x00]), bytes([0x35, 0x77, 0x02, 0x01]),
                bytes([0x00, 0xff, 0x07, 0x02])]
    for i, (name, data) in enumerate(sorted(images.items())):
        write("image_decode_fuzz", name, controls[i % len(controls)] + data)


def raw_payload(w, h, channels, compress):
    pixels = bytes((i * 7) % 256 for i in range(w * h * channels))
    if compress:
        pixels = subprocess.run(["zstd", "-q", "-c", "-3", "--no-check"], input=pixels,
                                stdout=subprocess.PIPE, check=True).stdout
    header = b"STKRAW01" + struct.pack("<IIBBHI", w, h, channels, 1 if compress else 0, 0,
                                       len(pixels))
    return header + pixels


def raw_seeds():
    write("raw_image_fuzz", "rgb", bytes([1, 2, 8, 8]) + raw_payload(12, 9, 3, False))
    write("raw_image_fuzz", "gray", bytes([0, 0, 63, 63]) + raw_payload(7, 5, 1, False))
    write("raw_image_fuzz", "zstd", bytes([3, 1, 4, 4]) + raw_payload(16, 16, 3, True))


def pack_seeds(stoker):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        src = tmp / "src"
        for i in range(3):
            folder = src / f"c{i % 2}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{i}.jpg").write_bytes(encoded(picture(10 + i, 8), "JPEG", quality=60))
        (src / "c1" / "bad.jpg").write_bytes(b"not an image")  # listed under "skipped"
        for mode, extra in (("original", []), ("jpeg", ["--max-side", "8"]),
                            ("raw", ["--max-side", "8"]), ("rawz", ["--max-side", "8"])):
            out = tmp / mode
            args = ["--mode", "raw", "--zstd", "3"] if mode == "rawz" else ["--mode", mode]
            subprocess.run([stoker, "pack", str(src), str(out), *args, *extra, "--threads", "1",
                            "--bad-samples", "skip"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            write("manifest_fuzz", f"{mode}.json", (out / "manifest.json").read_bytes())
            dst = CORPUS / "packed_reader_fuzz" / mode
            dst.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, str(HERE / "make_packed_seed.py"), str(out),
                            str(dst)], check=True)


def tar_seeds():
    members = [("000001.jpg", encoded(picture(8, 8), "JPEG")), ("000001.cls", b"3"),
               ("000002.png", encoded(picture(4, 4), "PNG")),
               ("000002.json", b'{"label": "cat"}'),
               ("d/" + "k" * 120 + ".jpg", b"not a jpeg"), ("d/" + "k" * 120 + ".txt", b"dog")]
    for name, fmt in (("gnu.tar", tarfile.GNU_FORMAT), ("pax.tar", tarfile.PAX_FORMAT),
                      ("ustar.tar", tarfile.USTAR_FORMAT)):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
            folder = tarfile.TarInfo("d")
            folder.type, folder.mtime = tarfile.DIRTYPE, 1700000000
            tar.addfile(folder)
            link = tarfile.TarInfo("link.jpg")
            link.type, link.linkname, link.mtime = tarfile.SYMTYPE, "000001.jpg", 1700000000
            tar.addfile(link)
            for member, data in members:
                if fmt == tarfile.USTAR_FORMAT and len(member) > 100:
                    member = member[-90:]  # ustar: a prefix field, not a long name
                info = tarfile.TarInfo(member)
                info.size, info.mtime, info.uname = len(data), 1700000000, "ünï"
                tar.addfile(info, io.BytesIO(data))
        write("tar_fuzz", name, buf.getvalue())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for harness in ("image_decode_fuzz", "raw_image_fuzz", "manifest_fuzz",
                    "packed_reader_fuzz", "tar_fuzz"):
        shutil.rmtree(CORPUS / harness, ignore_errors=True)
    image_seeds()
    raw_seeds()
    tar_seeds()
    pack_seeds(sys.argv[1])
