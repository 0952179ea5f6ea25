#!/usr/bin/env bash
# Builds every libFuzzer harness fuzz/*_fuzz.cc with clang (Debian's clang-16), libFuzzer,
# ASan + UBSan, from the CMake targets: fuzz/build.sh [OUT_DIR]   (default build-fuzz)
# The top-level CMakeLists.txt with STOKER_FUZZ=ON instruments the libraries; fuzz/CMakeLists.txt
# defines one executable per harness, OUT_DIR/NAME. `./run.sh fuzz [SECONDS]` builds with this
# script and runs each harness on a copy of its seed corpus fuzz/corpus/<harness>/
# (fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-fuzz}
CXX=${CXX:-$(command -v clang++-16 || command -v clang++)}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# A folder configured before keeps its compiler and cache; CMake only re-runs what changed.
cmake -S . -B "$OUT" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" "${launcher[@]}" -DSTOKER_FUZZ=ON \
  -DSTOKER_TESTS=OFF -DSTOKER_BENCHMARKS=OFF -DSTOKER_PYTHON=OFF -DSTOKER_CUDA=OFF >/dev/null
cmake --build "$OUT" -j "$(nproc)"
