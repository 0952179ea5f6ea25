#!/usr/bin/env bash
# stoker's one entry point. Each command installs what is missing (Debian packages, through
# sudo when not root), builds Release into build/, then runs.
#   ./run.sh build         build only
#   ./run.sh test          build and run every test
#   ./run.sh demo          build and run the main job on the embedded default data set
#   ./run.sh bench [ARGS]  side-by-side benchmark against torchvision (bench/compare_torchvision)
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)

# Build and test dependencies, all from Debian's archive.
build_packages=(build-essential cmake ninja-build pkg-config git
  libjpeg62-turbo-dev libpng-dev libwebp-dev libzstd-dev libxxhash-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev python3-numpy)
# What the tests use besides the build: PyTorch and torchvision (the Python layer, the DDP job,
# the fidelity reference), real photographs and Fashion-MNIST from Debian's archive, and a
# headless browser for the doctor's HTML report.
test_packages=(python3-pytest python3-torch python3-torchvision python3-pil
  mate-backgrounds dataset-fashion-mnist chromium)
# The interpreter that has Debian's python3-torch; the first python3 on PATH may be another.
python=/usr/bin/python3

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# ensure_packages PKG...: installs the packages that are not installed yet (idempotent).
ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "run.sh: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

build() {
  ensure_packages "${build_packages[@]}"
  local jobs
  jobs=$(nproc)
  if [ ! -f build/CMakeCache.txt ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build build -j "$jobs"
}

stage() { printf '\n=== %s (%s)\n' "$1" "$(date +%T)"; }

cmd=${1:-help}
[ $# -gt 0 ] && shift
case "$cmd" in
  build)
    build
    ;;
  test)
    stage "build"
    build
    ensure_packages "${test_packages[@]}"
    stage "C++ and command-line tests"
    ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
    stage "Python tests"
    PYTHONPATH="$root/build/python" STOKER_BIN="$root/build/stoker" \
      "$python" -m pytest -q -p no:cacheprovider tests/python
    stage "done"
    ;;
  demo)
    build
    build/stoker demo "$@"
    ;;
  bench)
    build
    bench/compare_torchvision "$@"
    ;;
  *)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    [ "$cmd" = help ] || exit 2
    ;;
esac
