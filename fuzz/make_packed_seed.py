#!/usr/bin/env python3
"""Turns a one-shard packed dataset into a seed for packed_reader_fuzz.

usage: fuzz/make_packed_seed.py PACKED_DIR SEED_FILE
(make PACKED_DIR with e.g. `stoker pack --shard-size 1gb` on a few small images; the manifest
must be under 64 KiB). Seed layout: u16 little-endian manifest length, manifest, shard bytes.
"""
import pathlib
import struct
import sys

src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
manifest = (src / "manifest.json").read_bytes()
shard = (src / "shard-00000.stk").read_bytes()
if len(manifest) >= 1 << 16 or (src / "shard-00001.stk").exists():
    sys.exit("need one shard and a manifest under 64 KiB")
dst.write_bytes(struct.pack("<H", len(manifest)) + manifest + shard)
