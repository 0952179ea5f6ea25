#!/usr/bin/env bash
# consumer_test.sh BUILD_DIR STOKER_CLI: installs stoker's C++ package from BUILD_DIR into a
# temporary prefix (`cmake --install --component dev`), builds tests/consumer against it with
# find_package(stoker) alone, and runs it on a small synthetic data set. A private header
# (src/) must not be reachable from the installed tree.
set -euo pipefail
build=$1
cli=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "${STOKER_TEST_TMP:-/tmp}"
tmp=$(cd "$(mktemp -d "${STOKER_TEST_TMP:-/tmp}/consumer.XXXXXX")" && pwd)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" --component dev >/dev/null
test -f "$tmp/prefix/include/stoker/loader.h"
test -f "$tmp/prefix/include/stoker/version.h"
test -f "$tmp/prefix/lib/cmake/stoker/stokerConfig.cmake"
if find "$tmp/prefix" -name '*_internal.h' -o -name 'test_util.h' | grep -q .; then
  echo "consumer_test: a private header was installed" >&2
  exit 1
fi

cmake -S "$here/consumer" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$tmp/build" >/dev/null
"$cli" synth "$tmp/data" --images 10 --classes 2 >/dev/null
out=$("$tmp/build/consumer" "$tmp/data")
echo "$out"
version=$(sed -n 's/^project(stoker VERSION \([0-9.]*\).*/\1/p' "$here/../CMakeLists.txt")
[ "$out" = "stoker $version: 3 batches, 10 images" ]
