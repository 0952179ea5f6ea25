#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (Debian's clang-14 works), ASan + UBSan, outside
# the CMake build:  fuzz/build.sh [OUT_DIR]   (default build-fuzz)
# Run:  build-fuzz/packed_reader_fuzz -max_total_time=60 build-fuzz/corpus-packed
#       build-fuzz/raw_image_fuzz -max_total_time=60
# Seeds: build-fuzz/make_packed_seed writes one valid input (a tiny pack) to the corpus folder.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-fuzz}
CXX=${CXX:-$(command -v clang++-14 || command -v clang++)}
mkdir -p "$OUT/obj" "$OUT/corpus-packed"
FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -Ifuzz/compat -Iinclude -Isrc)
SOURCES=(src/util/error.cc src/util/log.cc src/io/file_util.cc src/io/packed_shard.cc
         src/io/packed_manifest.cc src/io/packed_dataset.cc src/image/raw.cc src/image/probe.cc
         src/image/jpeg.cc src/image/png.cc src/image/webp.cc src/image/pixels.cc)
OBJS=()
for src in "${SOURCES[@]}"; do
  obj="$OUT/obj/$(echo "$src" | tr / _).o"
  "$CXX" "${FLAGS[@]}" -c "$src" -o "$obj"
  OBJS+=("$obj")
done
LIBS=(-lfmt -lxxhash -lzstd -ljpeg -lpng -lwebp -lpthread)
for h in packed_reader_fuzz raw_image_fuzz; do
  "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "fuzz/$h.cc" "${OBJS[@]}" "${LIBS[@]}" -o "$OUT/$h"
done
echo "built $OUT/packed_reader_fuzz $OUT/raw_image_fuzz"
