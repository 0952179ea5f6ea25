#!/usr/bin/env bash
# The GPU machine's one script (issues 6, 19 and 27): build, measure, then check (each check's
# failure is recorded and the run goes on; it exits non-zero at the end); 196-205 s on an H200
# with 16 cores (2026-12-04), the sanitizers capped. See tests/gpu/README.md for how to call it through the device tool
# (carry build-gpu-deps, made by tests/gpu/prepare.sh). Results go under $OUT (default:
# ./gpu-out), at most 8 files (what the device tool sends back):
#   run.log            everything printed (driver, builds, tests, sanitizers, measurements)
#   gtest.xml          cuda_test results (GPU output vs CPU, hand-off, buffer reuse)
#   checks.txt         the PyTorch hand-off and GPU decode checks, the digests (CPU vs GPU
#                      augmentation: equal), the doctor's GPU setups
#   gpu_decode.json    the GPU decode's pixel differences against the CPU path at scale 1
#   sanitizer.txt      compute-sanitizer memcheck and racecheck on short loader runs
#   gpu_bench.json     the measurements; dali.json: DALI's GPU pipeline on the same files
#   summary.md         the table for docs/perf.md
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
  { command -v nvidia-smi >/dev/null && nvidia-smi || echo "(no nvidia-smi)"; } | tee "$OUT/checks.txt"
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
  nvcc --version | tail -2 | tee -a "$OUT/checks.txt"
  nvcc -arch=sm_90 -o "$probe_dir/probe" "$probe_dir/probe.cu"
  "$probe_dir/probe" | tee -a "$OUT/checks.txt"
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
  nvjpeg=$root/build-gpu-deps/nvjpeg
  [ -f "$nvjpeg/include/nvjpeg.h" ] || { echo "run.sh: $nvjpeg missing: rerun tests/gpu/prepare.sh" >&2; exit 1; }
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_CUDA=ON \
    -DSTOKER_NVJPEG=ON -DSTOKER_NVJPEG_INCLUDE_DIR="$nvjpeg/include" \
    -DSTOKER_NVJPEG_LIBRARY="$nvjpeg/lib/libnvjpeg.so.13" \
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

# -- 3. test data, made on the spot ---------------------------------------------------------------
step "3. test data: synth + pack (jpeg and raw, longer side 256)"
# Outside $OUT: everything under $OUT travels back, and the raw pack alone is ~300 MB.
data=${STOKER_GPU_DATA:-/tmp/stoker-gpu-data}
rm -rf "$data"
images=2048
[ "$quick" = 1 ] && images=1024
# synth is single-threaded (~30 ms per 500x375 image): one process per core, each its own
# class folder (ImageFolder classes = the parts).
parts=16
synths=()
for ((p = 0; p < parts; ++p)); do
  "$stoker" synth "$data/src/part$p" --images $((images / parts)) --classes 1 --width 500 \
    --height 375 --seed "$p" >/dev/null &
  synths+=($!)
done
# By their ids: a bare `wait` also waits for the `tee` of the log above, which never ends.
for pid in "${synths[@]}"; do wait "$pid"; done
"$stoker" synth "$data/small" --images 23 --classes 3 --width 64 --height 48 >/dev/null
# Real photographs where prepare.sh found Debian's wallpapers (the "folder photos" targets).
[ -d "$root/build-gpu-deps/photos" ] && cp -r "$root/build-gpu-deps/photos" "$data/photos"
"$stoker" pack "$data/src" "$data/jpeg" --mode jpeg --max-side 256 --quality 90 --threads "$jobs"
"$stoker" pack "$data/src" "$data/raw" --mode raw --max-side 256 --threads "$jobs"

failures=()

# -- 4. measurements, before the checks: the numbers are what the device time is for -----------
step "4. gpu_bench: batch 256, size 224; folder, jpeg and raw packs; CPU path, GPU augment, GPU decode"
bench_images=4096 bench_seconds=3
[ "$quick" = 1 ] && bench_images=2048 bench_seconds=2
folders=(--data "folder=$data/src")
[ -d "$data/photos" ] && folders+=(--data "photos=$data/photos")
"$build/bench/gpu_bench" "${folders[@]}" --data "jpeg=$data/jpeg" --data "raw=$data/raw" \
  --threads 1,4,8,16 --batch 256 --size 224 --images "$bench_images" \
  --max-seconds "$bench_seconds" --json "$OUT/gpu_bench.json" || failures+=("gpu_bench")

step "4b. DALI's GPU pipeline (mixed nvJPEG decode) on the same folders"
dali_site=/tmp/stoker-dali-site
if [ ! -d "$dali_site" ] && [ -f /tmp/stoker-dali/PARTS ]; then
  parts=$(find /tmp/stoker-dali -name 'part*' | wc -l)
  if [ "$parts" = "$(cat /tmp/stoker-dali/PARTS)" ]; then
    (cd /tmp/stoker-dali && cat part* > dali.tar && sha256sum -c SHA256SUMS && tar xf dali.tar)
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$dali_site" \
      /tmp/stoker-dali/wheels/*.whl
  else
    echo "DALI: $parts of $(cat /tmp/stoker-dali/PARTS) parts staged (tests/gpu/stage_dali.sh)"
  fi
fi
if [ -d "$dali_site" ]; then
  for set in src photos; do
    [ -d "$data/$set" ] || continue
    PYTHONPATH="$dali_site:$PYTHONPATH" python3 bench/dali_gpu.py "$data/$set" --threads 1,4,8,16 \
      --images "$bench_images" --max-seconds "$bench_seconds" --json "/tmp/dali_$set.json" || true
  done
  python3 -c 'import json,sys,os; print(json.dumps({s: json.load(open(f"/tmp/dali_{s}.json")) for s in ("src","photos") if os.path.exists(f"/tmp/dali_{s}.json")}))' > "$OUT/dali.json"
else
  echo "DALI not staged: no DALI row (README.md, \"DALI\")" | tee "$OUT/dali.json"
fi

step "5. summary for docs/perf.md"
commit=$(git describe --always --dirty 2>/dev/null || cat build-gpu-deps/COMMIT 2>/dev/null || echo '?')
python3 - "$OUT/gpu_bench.json" "$commit" "$OUT/dali.json" \
  > "$OUT/summary.md" <<'PY' || failures+=("summary")
import datetime, json, sys
r = json.load(open(sys.argv[1]))
try:
    dali = json.load(open(sys.argv[3]))
except (OSError, ValueError):
    dali = {}
print(f"Measured {datetime.date.today()} on {r['device']}, commit {sys.argv[2]}, "
      f"batch {r['batch']}, size {r['size']}, train transform, float32 NCHW on the GPU; "
      f"GPU decode: {'hardware decoder' if r.get('hardware_decoder') else 'no hardware decoder'}.\n")
c = r["copy_kernel"]
print(f"Copy + kernel from pinned memory: {c['images_per_second']:,.0f} images/s "
      f"({c['staged_bytes_per_batch'] / 1e6:.1f} MB staged per batch).\n")
print("| data | mode | threads | images/s | CPU ms/image |")
print("|---|---|---:|---:|---:|")
for x in r["runs"]:
    print(f"| {x['data']} | {x['augment']} | {x['threads']} | {x['images_per_second']:,.0f} | "
          f"{x['cpu_ms_per_image']:.3f} |")
for name, runs in dali.items() if isinstance(dali, dict) else []:
    for x in runs:
        print(f"| {'folder' if name == 'src' else name} | DALI {x['version']} mixed | {x['threads']} | "
              f"{x['images_per_second']:,.0f} | {x['cpu_ms_per_image']:.3f} |")
print()
for name, t in r["targets"].items():
    if name == "copy_kernel_images_per_second":
        continue
    print(f"- {name}: CPU time per image GPU/CPU augmentation {100 * t['cpu_time_ratio_gpu_over_cpu']:.0f} %, "
          f"GPU augmentation at 16 threads {t['gpu_images_per_second_max_threads']:,.0f} images/s, "
          f"CPU path scaling 1->16 threads {100 * t['cpu_path_scaling_of_linear']:.0f} % of linear")
    for mode in ("hw", "hybrid"):
        d = t.get("decode_" + mode)
        if d:
            print(f"  - GPU decode ({mode}): {d['images_per_second']:,.0f} images/s, "
                  f"{d['speedup_over_cpu_path']:.2f}x the CPU path (target >= 2x), CPU time per "
                  f"image {100 * d['cpu_time_ratio_over_cpu_path']:.0f} % of it (target <= 40 %)")
hi = max(x["threads"] for x in r["runs"])
for name, set_ in (("src", "folder"), ("photos", "photos")):
    if not isinstance(dali, dict) or name not in dali:
        continue
    best_dali = max(x["images_per_second"] for x in dali[name])
    ours = [x for x in r["runs"] if x["data"] == set_ and x["augment"] != "cpu"]
    if ours:
        best = max(ours, key=lambda x: x["images_per_second"])
        print(f"- {set_}: stoker's best GPU path ({best['augment']}, {best['threads']} threads) "
              f"{best['images_per_second']:,.0f} images/s vs DALI's best {best_dali:,.0f}: "
              f"{best['images_per_second'] / best_dali:.2f}x (target >= 1)")
PY
cat "$OUT/summary.md"
# -- 6. checks: a failure is recorded and the run goes on (device time is scarce); it exits
# non-zero at the end. The measurements came first, so a failing check cannot cost them ---------
check() {
  local name=$1
  shift
  if ! "$@" 2>&1 | tee -a "$OUT/checks.txt"; then
    echo "run.sh: check FAILED: $name" >&2
    failures+=("$name")
  fi
}
step "6a. C++ tests on the GPU (cuda_test must not skip) and the shared-arithmetic tests"
check cuda_test env STOKER_REQUIRE_GPU=1 STOKER_TEST_TMP=/tmp "$build/cuda/cuda_test" \
  --gtest_output="xml:$OUT/gtest.xml"
check image_test "$build/src/image/image_test" --gtest_filter='AugmentKernel.*:JpegGpuCheck.*'
check pipeline_test env STOKER_TEST_TMP=/tmp "$build/src/pipeline/pipeline_test" \
  --gtest_filter='Deferred*:Staged*'

step "6b. PyTorch hand-off (device='cuda')"
check torch_handoff.py python3 tests/gpu/torch_handoff.py "$data/small"

step "6c. GPU decode (nvJPEG) against the CPU path at scale 1; bad files judged alike"
check gpu_decode_check.py python3 tests/gpu/gpu_decode_check.py "$data/src" "$OUT/gpu_decode.json"

step "6d. stoker bench --digest, CPU vs --device cuda: the same bytes"
digests_agree() {
  local set=$1 cpu gpu d_cpu d_gpu
  cpu=$("$stoker" bench "$data/$set" --threads "$jobs" --images 1024 --digest --json) || return 1
  gpu=$("$stoker" bench "$data/$set" --threads "$jobs" --images 1024 --digest --json \
    --device cuda) || return 1
  echo "$set cpu: $cpu" >> "$OUT/checks.txt"
  echo "$set gpu: $gpu" >> "$OUT/checks.txt"
  d_cpu=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["digest"])' "$cpu")
  d_gpu=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["digest"])' "$gpu")
  echo "$set: digest cpu $d_cpu, gpu $d_gpu" | tee -a "$OUT/checks.txt"
  [ "$d_cpu" = "$d_gpu" ]
}
for set in jpeg raw; do
  check "digest $set" digests_agree "$set"
done

step "6e. stoker doctor --device cuda"
doctor_measures_gpu() {
  "$stoker" doctor "$data/src" --gpus 8 --gpu-rate 3000 --sample 256 --seconds 1 \
    --device cuda --json > /tmp/doctor_cuda.json || return 1
  python3 - /tmp/doctor_cuda.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("doctor:", d["verdict"], d["summary"])
names = [s["name"] for s in d["capacity"]["setups"]]
for s in d["capacity"]["setups"]:
    print(f"  {s['name']}: {s['images_per_second']:.0f} images/s, {s['cpu_ms_per_image']:.3f} ms CPU/image")
for f in d.get("fixes", []):
    print("  fix:", f["action"], "-", f.get("reason", ""))
assert all("GPU augmentation" in n or "GPU decode" in n for n in names), names
assert any("GPU decode" in n for n in names), names  # measured, so recommended by numbers
PY
}
check "doctor --device cuda" doctor_measures_gpu

step "6f. compute-sanitizer memcheck and racecheck: short loader runs, GPU augment and decode"
# Last, and each capped: the sanitizers slow every kernel many times over.
sanitize() {
  local tool=$1
  shift
  echo "== compute-sanitizer --tool $tool $*" | tee -a "$OUT/sanitizer.txt"
  local rc=0
  timeout "$sanitizer_cap" compute-sanitizer --tool "$tool" --error-exitcode 9 \
    --print-limit 20 "$@" >>"$OUT/sanitizer.txt" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    echo "(exit status $rc; 124: stopped at the ${sanitizer_cap} s cap)" | tee -a "$OUT/sanitizer.txt"
    tail -40 "$OUT/sanitizer.txt"
    failures+=("compute-sanitizer $tool $*")
  fi
  tail -2 "$OUT/sanitizer.txt"
}
# racecheck instruments every shared-memory access of nvJPEG's kernels too: on the H200 a
# 192-image GPU-decode run did not finish in 60 s, so its runs are smaller and capped later.
sanitizer_cap=90
[ "$quick" = 1 ] && sanitizer_cap=60
sanitize memcheck "$stoker" bench "$data/jpeg" --device cuda --threads 4 --batch 32 --images 192
sanitize memcheck "$stoker" bench "$data/src" --device cuda --decode gpu --threads 4 --batch 32 \
  --images 192
sanitizer_cap=$((2 * sanitizer_cap))
sanitize racecheck "$stoker" bench "$data/jpeg" --device cuda --threads 4 --batch 16 --images 64
sanitize racecheck "$stoker" bench "$data/src" --device cuda --decode gpu --threads 4 --batch 16 \
  --images 64

step "all done in $(($(date +%s) - start)) s"
if [ "${#failures[@]}" -gt 0 ]; then
  printf 'run.sh: FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi
