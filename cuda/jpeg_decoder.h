// The GPU decode of staged JPEGs (LoaderConfig::stage_encoded_jpegs) with nvJPEG's batched API,
// for the Augmenter (gpu_loader.cc). Only in builds that found nvJPEG (STOKER_HAVE_NVJPEG).
//
// Backends, chosen per image: the hardware decoder (NVJPEG_BACKEND_HARDWARE: A100, H100, H200;
// baseline single-scan JPEGs, not 4:1:1 / 4:1:0) with region-of-interest decode, else
// NVJPEG_BACKEND_GPU_HYBRID (Huffman on the GPU for batches of baseline JPEGs, on the CPU
// otherwise; the whole image decoded, then the roi cut out on the device). An image group that
// nvJPEG refuses is decoded by the host reference (image::decode_encoded_on_host, libjpeg-turbo
// at scale 1) and copied: the workers already judged every staged file as the CPU decoder does,
// so a file nvJPEG cannot decode is still decoded, never dropped nor judged differently.
//
// Output: each roi uint8 HWC (RGB interleaved, or the Y plane for one channel) at its
// DecodedSlot offset of device memory, stream-ordered on the caller's stream. nvJPEG's IDCT,
// chroma upsampling and colour conversion are its own, so pixels differ slightly from
// libjpeg-turbo's (the tolerance is in docs/gpu.md). Thread-safety: one caller at a time.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <string>

#include "image/staged_geometry.h"
#include "stoker/image.h"

namespace stoker::cuda {

enum class JpegBackend { kAuto, kHardware, kGpuHybrid };
JpegBackend parse_jpeg_backend(const std::string& name);  // "auto" | "hardware" | "gpu_hybrid"

struct JpegDecodeStats {
  int64_t hardware = 0;  // images decoded by the hardware decoder
  int64_t hybrid = 0;    // by the GPU hybrid backend
  int64_t fallback = 0;  // by the host reference after nvJPEG refused their group
};

class JpegDecoder {
 public:
  // Throws stoker::Error naming the nvJPEG call when no backend can be created (kHardware: when
  // the chip has no hardware decoder).
  JpegDecoder(int device, int channels, JpegBackend backend);
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Decodes `decoded`'s slots: JPEG bytes at host_staging + StagedRegion::offset (pinned host
  // memory), rois to device_memory + DecodedSlot::offset, on `stream`.
  void decode(const image::StagedView& batch, const uint8_t* host_staging,
              std::span<const image::DecodedSlot> decoded, uint8_t* device_memory,
              cudaStream_t stream, const DecodeConfig& options);

  bool has_hardware() const;
  JpegDecodeStats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker::cuda
