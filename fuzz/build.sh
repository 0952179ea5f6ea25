#!/usr/bin/env bash
# Builds every libFuzzer harness fuzz/*_fuzz.cc with clang (Debian's clang-16), ASan + UBSan,
# outside the CMake build:  fuzz/build.sh [OUT_DIR]   (default build-fuzz)
# `./run.sh fuzz [SECONDS]` builds with this script and runs each harness on a copy of its
# committed seed corpus fuzz/corpus/<harness>/ (see fuzz/README.md).
#
# Adding a harness: drop fuzz/NAME_fuzz.cc
# defining LLVMFuzzerTestOneInput, add its seeds under fuzz/corpus/NAME_fuzz/, and append the
# library sources it needs to SOURCES below; build.sh and `./run.sh fuzz` pick it up by name.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-fuzz}
CXX=${CXX:-$(command -v clang++-16 || command -v clang++)}
mkdir -p "$OUT/obj"
FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
       -Iinclude -Isrc)
SOURCES=(src/util/error.cc src/util/log.cc src/util/env.cc src/io/file_util.cc
         src/io/random_access_file.cc src/io/packed_shard.cc src/io/file_list.cc
         src/io/sample_table.cc src/io/table_dataset.cc src/io/packed_manifest.cc
         src/io/packed_dataset.cc src/io/tar.cc src/io/blob.cc src/io/remote.cc
         src/io/table_file.cc src/io/cache_file.cc src/io/index_cache.cc src/io/read_ahead.cc
         src/io/object_cache.cc src/image/raw.cc src/image/probe.cc src/image/jpeg.cc
         src/image/png.cc src/image/webp.cc src/image/pixels.cc src/diagnose/verdict.cc
         src/diagnose/fixes.cc src/diagnose/pipeline_verdict.cc src/diagnose/telemetry_text.cc
         src/diagnose/telemetry_read.cc src/diagnose/telemetry_nvidia.cc
         src/diagnose/telemetry_cpu.cc src/diagnose/telemetry_json.cc
         src/diagnose/telemetry_paste.cc src/diagnose/telemetry_verdict.cc)
OBJS=()
for src in "${SOURCES[@]}"; do
  obj="$OUT/obj/$(echo "$src" | tr / _).o"
  # Rebuild only what changed (the source or any header is newer than the object).
  if [ ! -f "$obj" ] || [ -n "$(find "$src" include src -newer "$obj" \
                                 \( -name '*.h' -o -path "$src" \) -print -quit)" ]; then
    "$CXX" "${FLAGS[@]}" -c "$src" -o "$obj"
  fi
  OBJS+=("$obj")
done
LIBS=(-lfmt -lxxhash -lzstd -ljpeg -lpng -lwebp -lcurl -lpthread)
built=()
for harness in fuzz/*_fuzz.cc; do
  name=$(basename "$harness" .cc)
  "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$harness" "${OBJS[@]}" "${LIBS[@]}" -o "$OUT/$name"
  built+=("$OUT/$name")
done
echo "built ${built[*]}"
