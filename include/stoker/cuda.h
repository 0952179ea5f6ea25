// The cuda layer: GPU augmentation (and optionally JPEG decoding) fed by page-locked host batches
// (only in builds with CUDA; STOKER_HAVE_CUDA is defined for code that links stoker_cuda).
//
//   auto loader = stoker::cuda::GpuLoader(dataset, {.batch_size = 256}, /*device=*/0);
//   loader.set_epoch(0);
//   while (auto batch = loader.next(stream)) { use(batch->images, stream); }
//
// The loader's workers decode each sample's crop region into pinned memory; next() copies the
// batch to the device and augments it there, with the same bytes as the CPU path (how: README,
// "GPU augmentation").
//
// Hand-off: next(stream) makes `stream` (the consumer's, e.g. torch's current stream) wait for
// the batch's copy and kernels with an event (no host wait). Releasing the batch does not mean
// the GPU is done with it: the release records an event on that same stream, and the device
// buffer is reused only after it. The pinned host batch goes back to the loader once its copy
// has finished. Host waits sleep on events (no spinning).
//
// Errors: every CUDA call is checked; failures throw stoker::Error naming the call and the
// CUDA error. Thread-safety: one consumer thread per GpuLoader/Augmenter (calls serialise);
// batches may be released from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/loader.h"

namespace stoker::cuda {

// Whether a CUDA device can run this build's kernels (a driver new enough for the CUDA runtime
// the build uses, a device, code for its architecture). Never throws; `why` gets the reason when
// not.
bool available(std::string* why = nullptr);
int device_count();
std::string device_name(int device);  // "NVIDIA H200 (sm_90, 139 GiB, 132 SMs)"

// Page-locked host memory (cudaHostAlloc, portable), for LoaderConfig::memory.
std::shared_ptr<HostMemory> pinned_memory();

// One batch on the GPU: images [B, C, S, S] (float32/float16/bfloat16) or [B, S, S, C] (uint8)
// in device memory of `device`; the rest as in stoker::Batch, on the host.
struct DeviceBatch {
  int64_t epoch = 0, index = 0, global_valid = 0;
  int batch_size = 0;
  OutputKind output = OutputKind::kFloat32;
  int channels = 3, height = 0, width = 0;
  int device = 0;
  void* images = nullptr;
  size_t image_bytes = 0;
  uintptr_t stream = 0;  // the consumer stream it was handed to (cudaStream_t)
  std::vector<int64_t> labels, indices;
  std::vector<uint8_t> valid;
  int skipped = 0;
};

// The batch's images copied to the host, after the work queued on its stream (blocks).
std::vector<uint8_t> copy_to_host(const DeviceBatch& batch);

// Where a GpuLoader's JPEGs are decoded. kCpu: by the workers (region + DCT-scaled, as the CPU
// path). kGpu: by nvJPEG on the device (the hardware decoder where the chip has one, region
// decode there; else the GPU hybrid backend), the workers only read, check and stage the
// files: what image::jpeg_gpu_decodable accepts (baseline or extended single-scan YCbCr or
// gray); anything else (PNG, progressive, CMYK, ...) is still decoded by the workers, and a
// file is judged bad exactly as the CPU path judges it. Pixels: the CPU path's with DCT scaling
// off (which kGpu sets for the workers' decodes too), up to nvJPEG's own IDCT and colour
// conversion (docs/gpu.md, "GPU decode").
// kAuto: kGpu where this build has nvJPEG and it starts on the device, else kCpu.
enum class DecodeOn { kCpu, kGpu, kAuto };
DecodeOn parse_decode_on(const std::string& name);  // "cpu" | "gpu" | "auto"

struct GpuDecodeConfig {
  DecodeOn where = DecodeOn::kCpu;
  std::string jpeg_backend = "auto";  // "auto" | "hardware" | "gpu_hybrid"
};

// Whether this build has the GPU JPEG decoder (nvJPEG was found when it was configured).
bool gpu_decode_built();
// libnvjpeg is loaded at run time (a build with the GPU decode runs without it): true with the
// library's path in *path_or_why, or false with why it cannot be loaded. Needs no GPU.
bool gpu_decode_library(std::string* path_or_why);

struct AugmenterStats {
  int64_t batches = 0;
  int64_t device_buffers = 0;  // output buffers allocated (grows if the consumer holds many)
  int64_t staged_bytes = 0;    // copied host -> device
  double submit_seconds = 0;   // consumer CPU time in submit (geometry, enqueueing, waits)
  // GPU decode: images decoded by the hardware decoder, by the GPU hybrid backend, and by the
  // host after nvJPEG refused them.
  int64_t decoded_hardware = 0, decoded_hybrid = 0, decoded_fallback = 0;
  bool gpu_decode = false;        // this augmenter decodes staged JPEGs
  bool hardware_decoder = false;  // ... and has the hardware decoder
};

// Runs the batched augmentation of staged (kDeferred) host batches on one device.
class Augmenter {
 public:
  // Batches of `batch_size` slots augmented as `transform` says, on `device`; with
  // decode.where kGpu (or kAuto where it starts), JPEGs staged encoded are decoded there first.
  Augmenter(const TransformConfig& transform, int batch_size, int device,
            const GpuDecodeConfig& decode = {});
  ~Augmenter();
  Augmenter(const Augmenter&) = delete;
  Augmenter& operator=(const Augmenter&) = delete;

  // Enqueues the copy and the kernels for `host` (a kDeferred batch in pinned memory) and
  // makes `stream` (cudaStream_t; 0 = the legacy default stream) wait for them. `host` is
  // kept until its copy has finished. The device batch's release orders buffer reuse after
  // the work queued on `stream` so far.
  std::shared_ptr<const DeviceBatch> submit(std::shared_ptr<const Batch> host, uintptr_t stream);
  // Blocks until everything enqueued has finished (and host batches are let go).
  void synchronize();

  int device() const;
  AugmenterStats stats() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

// A Loader in AugmentMode::kDeferred with pinned batches, plus an Augmenter.
class GpuLoader {
 public:
  // config.augment and config.memory are set here (kDeferred, pinned_memory()), and
  // config.stage_encoded_jpegs when the augmenter decodes JPEGs (decode).
  GpuLoader(std::shared_ptr<const Dataset> dataset, LoaderConfig config, int device = 0,
            const GpuDecodeConfig& decode = {});
  ~GpuLoader();

  void set_epoch(int64_t epoch);
  // The next batch on the device, ordered before work queued on `stream` after this call;
  // nullptr at the end of the epoch. Blocks (no spinning) while the workers catch up.
  std::shared_ptr<const DeviceBatch> next(uintptr_t stream = 0);

  Loader& host();  // the underlying loader: state, load_state, stats, num_batches
  const Loader& host() const;
  AugmenterStats augmenter_stats() const;
  int device() const;

 private:
  // Declared first, destroyed last: the augmenter holds host batches that return to the loader's
  // pool; the pool outlives the loader, so either order is safe, this one frees GPU work first.
  std::unique_ptr<Loader> loader_;
  std::unique_ptr<Augmenter> augmenter_;
};

}  // namespace stoker::cuda
