#!/usr/bin/env bash
# stoker's one entry point. Each command installs what is missing (Debian packages, through
# sudo when not root), builds Release into build/, then runs.
#   ./run.sh build         build only
#   ./run.sh test          build and run every test, then the unit tests under ASan+UBSan
#                          (build-asan/) and the engine and sampler tests under TSan (build-tsan/)
#   ./run.sh fuzz [SECS]   build the libFuzzer harnesses fuzz/*_fuzz.cc, run each SECS (60) s
#   ./run.sh demo          build and run the main job on the embedded default data set
#   ./run.sh bench [ARGS]  side-by-side benchmark against torchvision (bench/compare_torchvision)
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)

# Build and test dependencies, all from Debian's archive.
build_packages=(build-essential cmake ninja-build pkg-config git
  libjpeg62-turbo-dev libpng-dev libwebp-dev libzstd-dev libxxhash-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev python3-numpy ccache)
# What the tests use besides the build: PyTorch and torchvision (the Python layer, the DDP job,
# the fidelity reference), real photographs and Fashion-MNIST from Debian's archive, and a
# headless browser for the doctor's HTML report.
test_packages=(python3-pytest python3-torch python3-torchvision python3-pil
  mate-backgrounds dataset-fashion-mnist chromium)
# The fuzzers: clang 14 with libFuzzer and its sanitizer runtimes (fuzz/build.sh).
fuzz_packages=(clang-14 libclang-rt-14-dev)
# The interpreter that has Debian's python3-torch; the first python3 on PATH may be another.
python=/usr/bin/python3

# Every build goes through ccache, whose cache lives outside the clone so that it survives a
# clean checkout (CI). NOHASHDIR + BASEDIR: clones at different paths share hits.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/stoker/ccache}
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G}

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

# configure DIR ARGS...: (re)configures a build folder; cheap when nothing changed, and it
# puts the ccache launcher on build folders made before it existed.
configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@" >/dev/null
}

build() {
  ensure_packages "${build_packages[@]}"
  configure build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j "$(nproc)"
}

# sanitizer_build DIR KIND [TARGET...]: the libraries and unit tests with STOKER_SANITIZE=KIND
# (-O1 -g; no CLI, Python module or benchmarks). Without targets, everything in that build.
sanitizer_build() {
  local dir=$1 kind=$2
  shift 2
  configure "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DSTOKER_SANITIZE="$kind" -DSTOKER_PYTHON=OFF -DSTOKER_BENCHMARKS=OFF
  cmake --build "$dir" -j "$(nproc)" ${1:+--target "$@"}
}

# stage NAME: prints the time the previous stage took and starts the next; `stage done` ends
# with a summary of every stage's seconds.
stage_names=()
stage_seconds=()
stage_start=
stage() {
  local now
  now=$(date +%s)
  if [ -n "$stage_start" ]; then
    stage_seconds+=($((now - stage_start)))
    printf '=== %s took %d s\n' "${stage_names[-1]}" "${stage_seconds[-1]}"
  fi
  if [ "$1" = done ]; then
    printf '\n=== stage timings\n'
    for i in "${!stage_names[@]}"; do
      printf '%6d s  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
    done
    printf '%6d s  total\n' "$((now - ${stage_first:-$now}))"
    return
  fi
  stage_names+=("$1")
  stage_start=$now
  stage_first=${stage_first:-$now}
  printf '\n=== %s (%s)\n' "$1" "$(date +%T)"
}

# fuzz SECONDS: builds every fuzz/*_fuzz.cc (fuzz/build.sh) and runs each for SECONDS on a
# fresh copy of its seed corpus fuzz/corpus/<harness>/ (libFuzzer adds to the copy, never to
# the committed seeds). Any crash, leak, timeout or out-of-memory fails the command; the
# reproducer is left in build-fuzz/artifacts/. A new harness (e.g. telemetry_fuzz.cc) is
# picked up by its file name; see fuzz/build.sh for the sources it links.
fuzz() {
  local seconds=$1 out=build-fuzz failed=()
  ensure_packages "${build_packages[@]}" "${fuzz_packages[@]}"
  fuzz/build.sh "$out"
  mkdir -p "$out/artifacts"
  for harness in fuzz/*_fuzz.cc; do
    local name
    name=$(basename "$harness" .cc)
    stage "fuzz $name ($seconds s)"
    rm -rf "$out/run-corpus/$name"
    mkdir -p "$out/run-corpus/$name"
    if [ -d "fuzz/corpus/$name" ]; then cp -r "fuzz/corpus/$name/." "$out/run-corpus/$name/"; fi
    if ! "$out/$name" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$name-" \
      "$out/run-corpus/$name" 2>"$out/$name.log"; then
      failed+=("$name")
      tail -n 60 "$out/$name.log"
    fi
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+ *DONE' \
      "$out/$name.log" || true
  done
  stage done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "run.sh fuzz: findings in ${failed[*]} (reproducers in $out/artifacts/)" >&2
    return 1
  fi
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case "$cmd" in
  build)
    build
    ;;
  test)
    stage "build"
    ccache --zero-stats >/dev/null 2>&1 || true
    build
    ensure_packages "${test_packages[@]}"
    stage "C++ and command-line tests"
    ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
    stage "Python tests"
    PYTHONPATH="$root/build/python" STOKER_BIN="$root/build/stoker" \
      "$python" -m pytest -q -p no:cacheprovider tests/python
    # Sanitizers: every unit test under ASan + UBSan (undefined behaviour aborts), the engine
    # and sampler under TSan. halt_on_error: the first report fails the test.
    stage "ASan+UBSan build"
    sanitizer_build build-asan address
    stage "C++ tests under ASan+UBSan"
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:strict_string_checks=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 900
    stage "TSan build (engine and sampler tests)"
    sanitizer_build build-tsan thread pipeline_test sampler_test
    stage "engine and sampler tests under TSan"
    # EpochPlan.LargeDatasets is single-threaded arithmetic over 10^6-sample permutations
    # (80 s under TSan, nothing to race); ASan+UBSan and the Release run cover it.
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" --timeout 900 \
      -L '^(pipeline_test|sampler_test)$' -E '^EpochPlan\.LargeDatasets$'
    stage done
    echo "ccache ($CCACHE_DIR), this run:"
    ccache --show-stats 2>/dev/null | grep -E '^ *(Hits|Misses):' || true
    ;;
  fuzz)
    fuzz "${1:-60}"
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
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    [ "$cmd" = help ] || exit 2
    ;;
esac
