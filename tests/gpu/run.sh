#!/usr/bin/env bash
# The GPU machine's one script (issue 6): build, check, measure; about 3-4 minutes on 16 cores.
# See tests/gpu/README.md for how to call it through the device tool (carry build-gpu-deps,
# made by tests/gpu/prepare.sh). Results go under $OUT (default: ./gpu-out):
#   run.log            everything printed
#   driver.txt         nvidia-smi and the CUDA probe
#   gtest.xml          cuda_test results (GPU output vs CPU, hand-off, buffer reuse)
#   handoff.txt        the PyTorch hand-off checks
#   digests.txt        `stoker bench --digest`, CPU vs GPU augmentation (must be equal)
#   gpu_bench.json     the measurements; summary.md: the table for docs/perf.md
#
#   tests/gpu/run.sh [--build-only] [--skip-build] [--quick]
#     --build-only  configure and build only (to test the recipe on a machine without a GPU)
#     --skip-build  reuse build-gpu/ (a rerun on a warm machine)
#     --quick       fewer images per measurement
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1

build_only=0 skip_build=0 quick=0
for arg in "$@"; do
  case "$arg" in
    --build-only) build_only=1 ;;
    --skip-build) skip_build=1 ;;
    --quick) quick=1 ;;
    *) echo "run.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

start=$(date +%s)
step() { printf '\n[gpu %s +%ss] %s\n' "$(date +%T)" "$(($(date +%s) - start))" "$*"; }
jobs=$(nproc)
build=$root/build-gpu
deps=$root/build-gpu-deps/root
libarch=x86_64-linux-gnu
cuda_home=${CUDA_HOME:-/usr/local/cuda}
export PATH="$cuda_home/bin:$PATH"

# -- 1. the driver runs CUDA 13 code -------------------------------------------------------------
if [ "$build_only" = 0 ]; then
  step "1. driver and CUDA 13 probe"
  { command -v nvidia-smi >/dev/null && nvidia-smi || echo "(no nvidia-smi)"; } | tee "$OUT/driver.txt"
  probe_dir=$(mktemp -d)
  cat > "$probe_dir/probe.cu" <<'CU'
#include <cstdio>
__global__ void add(int* x) { *x += 1; }
int main() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::printf("CUDA runtime %d, driver supports %d\n", runtime, driver);
  if (driver < 13000) { std::printf("the driver does not run CUDA 13 code\n"); return 1; }
  int* x = nullptr;
  int h = 41;
  cudaError_t s = cudaMalloc(&x, sizeof(int));
  if (s == cudaSuccess) s = cudaMemcpy(x, &h, sizeof h, cudaMemcpyHostToDevice);
  if (s == cudaSuccess) { add<<<1, 1>>>(x); s = cudaGetLastError(); }
  if (s == cudaSuccess) s = cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost);
  cudaDeviceProp p;
  if (s == cudaSuccess) s = cudaGetDeviceProperties(&p, 0);
  if (s != cudaSuccess || h != 42) {
    std::printf("probe kernel failed: %s\n", cudaGetErrorString(s));
    return 1;
  }
  std::printf("probe kernel ran on %s (sm_%d%d)\n", p.name, p.major, p.minor);
  return 0;
}
CU
  nvcc --version | tail -2 | tee -a "$OUT/driver.txt"
  nvcc -arch=sm_90 -o "$probe_dir/probe" "$probe_dir/probe.cu"
  "$probe_dir/probe" | tee -a "$OUT/driver.txt"
fi

# -- 2. build with the carried Debian packages ---------------------------------------------------
if [ "$skip_build" = 0 ]; then
  step "2. configure and build (deps: $deps)"
  [ -d "$deps" ] || { echo "run.sh: $deps missing: run tests/gpu/prepare.sh first and carry build-gpu-deps" >&2; exit 1; }
  export PKG_CONFIG_LIBDIR="$deps/usr/lib/$libarch/pkgconfig:$deps/usr/share/pkgconfig"
  pkg_config_args=()
  if ! command -v pkg-config >/dev/null || [ "${STOKER_GPU_CARRIED_PKGCONF:-0}" = 1 ]; then
    export LD_LIBRARY_PATH="$deps/usr/lib/$libarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    pkg_config_args=(-DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf")
    echo "no pkg-config here: using the carried pkgconf"
  fi
  python=$(command -v python3)
  python_args=(-DPython_EXECUTABLE="$python")
  if pybind_dir=$("$python" -m pybind11 --cmakedir 2>/dev/null); then
    python_args+=(-Dpybind11_DIR="$pybind_dir")
  fi
  # jconfig.h and friends live in the multiarch include folder, which is a default include
  # path only for the system's own /usr.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_PREFIX_PATH="$deps/usr" -DCMAKE_LIBRARY_PATH="$deps/usr/lib/$libarch" \
    -DCMAKE_INCLUDE_PATH="$deps/usr/include/$libarch;$deps/usr/include" \
    -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include/$libarch -isystem $deps/usr/include" \
    "${pkg_config_args[@]}" "${python_args[@]}"
  targets=(stoker cuda_test image_test pipeline_test gpu_bench)
  if cmake --build "$build" --target help | grep -q '^stoker_python'; then
    targets+=(stoker_python)
  else
    echo "run.sh: the Python module is not configured (see the cmake output above)" >&2
    [ "$build_only" = 1 ] || exit 1
  fi
  cmake --build "$build" -j "$jobs" --target "${targets[@]}"
fi
if [ "$build_only" = 1 ]; then
  step "build only: done"
  exit 0
fi
export PYTHONPATH="$build/python"
stoker=$build/stoker

# -- 3. GPU output against the CPU reference -----------------------------------------------------
step "3. C++ tests on the GPU (cuda_test must not skip) and the shared-arithmetic tests"
STOKER_REQUIRE_GPU=1 STOKER_TEST_TMP=/tmp "$build/cuda/cuda_test" \
  --gtest_output="xml:$OUT/gtest.xml"
"$build/src/image/image_test" --gtest_filter='AugmentKernel.*'
STOKER_TEST_TMP=/tmp "$build/src/pipeline/pipeline_test" --gtest_filter='Deferred*:Staged*'

# -- 4. test data, made on the spot ---------------------------------------------------------------
step "4. test data: synth + pack (jpeg and raw, longer side 256)"
# Outside $OUT: everything under $OUT travels back, and the raw pack alone is ~300 MB.
data=${STOKER_GPU_DATA:-/tmp/stoker-gpu-data}
rm -rf "$data"
images=2048
[ "$quick" = 1 ] && images=1024
# synth is single-threaded (~30 ms per 500x375 image): one process per core, each its own
# class folder (ImageFolder classes = the parts).
parts=16
for ((p = 0; p < parts; ++p)); do
  "$stoker" synth "$data/src/part$p" --images $((images / parts)) --classes 1 --width 500 \
    --height 375 --seed "$p" >/dev/null &
done
wait
"$stoker" synth "$data/small" --images 23 --classes 3 --width 64 --height 48 >/dev/null
"$stoker" pack "$data/src" "$data/jpeg" --mode jpeg --max-side 256 --quality 90 --threads "$jobs"
"$stoker" pack "$data/src" "$data/raw" --mode raw --max-side 256 --threads "$jobs"

# -- 5. the PyTorch hand-off ----------------------------------------------------------------------
step "5. PyTorch hand-off (device='cuda')"
python3 tests/gpu/torch_handoff.py "$data/small" | tee "$OUT/handoff.txt"

# -- 6. the CLI: GPU and CPU augmentation deliver the same bytes ---------------------------------
step "6. stoker bench --digest, CPU vs --device cuda"
for set in jpeg raw; do
  cpu=$("$stoker" bench "$data/$set" --threads "$jobs" --images 1024 --digest --json)
  gpu=$("$stoker" bench "$data/$set" --threads "$jobs" --images 1024 --digest --json --device cuda)
  echo "$set cpu: $cpu" >> "$OUT/digests.txt"
  echo "$set gpu: $gpu" >> "$OUT/digests.txt"
  d_cpu=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["digest"])' "$cpu")
  d_gpu=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["digest"])' "$gpu")
  echo "$set: digest cpu $d_cpu, gpu $d_gpu"
  [ "$d_cpu" = "$d_gpu" ] || { echo "run.sh: $set: GPU and CPU batches differ" >&2; exit 1; }
done

# -- 6b. the doctor measures GPU augmentation ------------------------------------------------------
step "6b. stoker doctor --device cuda"
"$stoker" doctor "$data/src" --gpus 8 --gpu-rate 3000 --sample 256 --seconds 1 --device cuda \
  --json > "$OUT/doctor_cuda.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d["summary"]); assert all("GPU augmentation" in s["name"] for s in d["capacity"]["setups"])' "$OUT/doctor_cuda.json"

# -- 7. measurements -----------------------------------------------------------------------------
step "7. gpu_bench: batch 256, size 224, jpeg and raw, GPU vs CPU augmentation, 1-16 threads"
bench_images=4096 bench_seconds=3
[ "$quick" = 1 ] && bench_images=2048 bench_seconds=2
"$build/bench/gpu_bench" --data "jpeg=$data/jpeg" --data "raw=$data/raw" --threads 1,2,4,8,16 \
  --batch 256 --size 224 --images "$bench_images" --max-seconds "$bench_seconds" \
  --json "$OUT/gpu_bench.json" | tee "$OUT/gpu_bench.txt"

step "8. summary for docs/perf.md"
commit=$(git describe --always --dirty 2>/dev/null || cat build-gpu-deps/COMMIT 2>/dev/null || echo '?')
python3 - "$OUT/gpu_bench.json" "$commit" \
  > "$OUT/summary.md" <<'PY'
import datetime, json, sys
r = json.load(open(sys.argv[1]))
print(f"Measured {datetime.date.today()} on {r['device']}, commit {sys.argv[2]}, "
      f"batch {r['batch']}, size {r['size']}, train transform, float32 NCHW on the GPU.\n")
c = r["copy_kernel"]
print(f"Copy + kernel from pinned memory: {c['images_per_second']:,.0f} images/s "
      f"({c['staged_bytes_per_batch'] / 1e6:.1f} MB staged per batch).\n")
print("| data | augment | threads | images/s | CPU ms/image |")
print("|---|---|---:|---:|---:|")
for x in r["runs"]:
    print(f"| {x['data']} | {x['augment']} | {x['threads']} | {x['images_per_second']:,.0f} | "
          f"{x['cpu_ms_per_image']:.3f} |")
print()
for name, t in r["targets"].items():
    if name == "copy_kernel_images_per_second":
        continue
    print(f"- {name}: CPU time per image GPU/CPU augmentation {100 * t['cpu_time_ratio_gpu_over_cpu']:.0f} %, "
          f"GPU augmentation at 16 threads {t['gpu_images_per_second_max_threads']:,.0f} images/s, "
          f"CPU path scaling 1->16 threads {100 * t['cpu_path_scaling_of_linear']:.0f} % of linear")
PY
cat "$OUT/summary.md"
step "all done in $(($(date +%s) - start)) s"
