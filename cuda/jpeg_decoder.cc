// nvJPEG batched decode of staged JPEGs. See jpeg_decoder.h for the contract.

#include "jpeg_decoder.h"

#include <vector>

#include "cuda_check.h"
#include "cuda_resources.h"
#include "nvjpeg_api.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"

namespace stoker::cuda {
namespace {

const char* nvjpeg_status_name(nvjpegStatus_t s) {
  switch (s) {
    case NVJPEG_STATUS_SUCCESS:
      return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED:
      return "not initialized";
    case NVJPEG_STATUS_INVALID_PARAMETER:
      return "invalid parameter";
    case NVJPEG_STATUS_BAD_JPEG:
      return "bad JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED:
      return "JPEG not supported";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE:
      return "allocator failure";
    case NVJPEG_STATUS_EXECUTION_FAILED:
      return "execution failed";
    case NVJPEG_STATUS_ARCH_MISMATCH:
      return "architecture mismatch (no such backend here)";
    case NVJPEG_STATUS_INTERNAL_ERROR:
      return "internal error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
      return "implementation not supported";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM:
      return "incomplete bitstream";
  }
  return "unknown status";
}

#define STOKER_NVJPEG_CHECK(call)                                                          \
  do {                                                                                     \
    const nvjpegStatus_t stoker_nvjpeg_status_ = (call);                                   \
    if (stoker_nvjpeg_status_ != NVJPEG_STATUS_SUCCESS) {                                  \
      STOKER_THROW("{}: nvJPEG {} ({})", #call, nvjpeg_status_name(stoker_nvjpeg_status_), \
                   static_cast<int>(stoker_nvjpeg_status_));                               \
    }                                                                                      \
  } while (0)

// One batched-decode state and the event after its last batch: nvJPEG wants a state's previous
// batch finished before the state is initialised or decodes again (as nvImageCodec and DALI
// wait), so a Backend alternates two, and waits only for the batch before the previous one.
struct BatchState {
  nvjpegJpegState_t state = nullptr;
  Event done;
  bool used = false;
  int initialized_batch = -1;
};

// One nvJPEG handle with its batched-decode states, parse stream and per-image parameters.
struct Backend {
  explicit Backend(const NvjpegApi* nvjpeg) : api(nvjpeg) {}
  const NvjpegApi* api;
  nvjpegHandle_t handle = nullptr;
  BatchState states[2];
  int next_state = 0;
  nvjpegJpegStream_t parsed = nullptr;  // header parses for the per-image support checks
  std::vector<nvjpegDecodeParams_t> params;

  // Returns the status of nvjpegCreateEx (the hardware backend is refused on chips without).
  nvjpegStatus_t create(nvjpegBackend_t backend) {
    const nvjpegStatus_t s = api->nvjpegCreateEx(backend, nullptr, nullptr, 0, &handle);
    if (s != NVJPEG_STATUS_SUCCESS) {
      handle = nullptr;
      return s;
    }
    for (BatchState& b : states) {
      STOKER_NVJPEG_CHECK(api->nvjpegJpegStateCreate(handle, &b.state));
      b.done = Event::create();
    }
    STOKER_NVJPEG_CHECK(api->nvjpegJpegStreamCreate(handle, &parsed));
    return s;
  }

  // The Augmenter synchronises its stream before its decoder goes: no batch is in flight here.
  ~Backend() {
    for (nvjpegDecodeParams_t p : params) (void)api->nvjpegDecodeParamsDestroy(p);
    if (parsed != nullptr) (void)api->nvjpegJpegStreamDestroy(parsed);
    for (BatchState& b : states) {
      if (b.state != nullptr) (void)api->nvjpegJpegStateDestroy(b.state);
    }
    if (handle != nullptr) (void)api->nvjpegDestroy(handle);
  }

  void ensure_params(size_t n) {
    while (params.size() < n) {
      nvjpegDecodeParams_t p = nullptr;
      STOKER_NVJPEG_CHECK(api->nvjpegDecodeParamsCreate(handle, &p));
      params.push_back(p);
    }
  }

  // The state for the next batch of `batch` images, initialised, its previous batch finished;
  // nullptr where nvJPEG refuses the initialisation.
  BatchState* begin(int batch, nvjpegOutputFormat_t format) {
    BatchState& b = states[next_state];
    next_state ^= 1;
    if (b.used) STOKER_CUDA_CHECK(cudaEventSynchronize(b.done.get()));
    b.used = false;
    if (b.initialized_batch != batch) {
      const nvjpegStatus_t s =
          api->nvjpegDecodeBatchedInitialize(handle, b.state, batch, 1, format);
      b.initialized_batch = s == NVJPEG_STATUS_SUCCESS ? batch : -1;
      if (s != NVJPEG_STATUS_SUCCESS) return nullptr;
    }
    return &b;
  }

  // After the batched call: its success, and the event a later begin() waits for. A failed
  // batch is initialised again before the state's next use, as nvJPEG asks.
  bool finish(BatchState& b, nvjpegStatus_t status, cudaStream_t stream) {
    STOKER_CUDA_CHECK(cudaEventRecord(b.done.get(), stream));
    b.used = true;
    if (status != NVJPEG_STATUS_SUCCESS) b.initialized_batch = -1;
    return status == NVJPEG_STATUS_SUCCESS;
  }

  // Parses the image's header for the support checks below; false where nvJPEG cannot.
  bool parse(const uint8_t* data, size_t size) {
    return api->nvjpegJpegStreamParseHeader(handle, data, size, parsed) == NVJPEG_STATUS_SUCCESS;
  }
  // Whether nvjpegDecodeBatched takes the parsed image (0 from the check: supported).
  bool supports() {
    int unsupported = 1;
    return api->nvjpegDecodeBatchedSupported(handle, parsed, &unsupported) ==
               NVJPEG_STATUS_SUCCESS &&
           unsupported == 0;
  }
  // Whether nvjpegDecodeBatchedEx takes it with `p` (its roi and output format).
  bool supports(nvjpegDecodeParams_t p) {
    int unsupported = 1;
    return api->nvjpegDecodeBatchedSupportedEx(handle, parsed, p, &unsupported) ==
               NVJPEG_STATUS_SUCCESS &&
           unsupported == 0;
  }
};

}  // namespace

JpegBackend parse_jpeg_backend(const std::string& name) {
  if (name == "auto") return JpegBackend::kAuto;
  if (name == "hardware") return JpegBackend::kHardware;
  if (name == "gpu_hybrid") return JpegBackend::kGpuHybrid;
  STOKER_THROW_ARG("JPEG backend must be 'auto', 'hardware' or 'gpu_hybrid' (got '{}')", name);
}

class JpegDecoder::Impl {
 public:
  Impl(int device, int channels, JpegBackend backend) : device_(device), channels_(channels) {
    STOKER_CHECK_ARG(channels == 1 || channels == 3, "GPU JPEG decode: channels {} not 1 or 3",
                     channels);
    std::string why;
    api_ = nvjpeg_api(&why);
    STOKER_CHECK(api_ != nullptr, "GPU JPEG decode: {}", why);
    format_ = channels == 3 ? NVJPEG_OUTPUT_RGBI : NVJPEG_OUTPUT_Y;
    DeviceGuard guard(device_);
    if (backend != JpegBackend::kGpuHybrid) {
      hardware_ = std::make_unique<Backend>(api_);
      const nvjpegStatus_t s = hardware_->create(NVJPEG_BACKEND_HARDWARE);
      if (s != NVJPEG_STATUS_SUCCESS) {
        hardware_.reset();
        STOKER_CHECK(backend != JpegBackend::kHardware,
                     "GPU JPEG decode: no hardware decoder on this GPU (nvjpegCreateEx: {})",
                     nvjpeg_status_name(s));
      }
    }
    if (backend != JpegBackend::kHardware) {
      hybrid_ = std::make_unique<Backend>(api_);
      const nvjpegStatus_t s = hybrid_->create(NVJPEG_BACKEND_GPU_HYBRID);
      STOKER_CHECK(s == NVJPEG_STATUS_SUCCESS,
                   "GPU JPEG decode: nvjpegCreateEx(NVJPEG_BACKEND_GPU_HYBRID): {}",
                   nvjpeg_status_name(s));
    }
  }

  void decode(const image::StagedView& batch, const uint8_t* host_staging,
              std::span<const image::DecodedSlot> decoded, uint8_t* device_memory,
              cudaStream_t stream, const DecodeConfig& options) {
    DeviceGuard guard(device_);
    // Per image: the hardware decoder's roi decode where it takes the roi, else its whole-image
    // decode, else the hybrid backend (the support checks of nvJPEG's guide, as DALI does).
    Slots rois, whole, to_hybrid;
    for (const image::DecodedSlot& d : decoded) {
      const StagedRegion& s = batch.slots[static_cast<size_t>(d.slot)];
      const uint8_t* data = host_staging + s.offset;
      if (hardware_ == nullptr || !hardware_->parse(data, s.encoded_bytes)) {
        to_hybrid.push_back(&d);
        continue;
      }
      hardware_->ensure_params(rois.size() + 1);
      nvjpegDecodeParams_t p = hardware_->params[rois.size()];
      if (api_->nvjpegDecodeParamsSetOutputFormat(p, format_) == NVJPEG_STATUS_SUCCESS &&
          api_->nvjpegDecodeParamsSetROI(p, d.roi.x, d.roi.y, d.roi.width, d.roi.height) ==
              NVJPEG_STATUS_SUCCESS &&
          hardware_->supports(p)) {
        rois.push_back(&d);
      } else if (hardware_->supports()) {
        whole.push_back(&d);
      } else {
        to_hybrid.push_back(&d);
      }
    }
    if (!rois.empty()) {
      if (decode_rois(*hardware_, rois, batch, host_staging, device_memory, stream)) {
        stats_.hardware += static_cast<int64_t>(rois.size());
      } else {
        whole.insert(whole.end(), rois.begin(), rois.end());
      }
    }
    if (!whole.empty()) {
      if (decode_whole(*hardware_, whole, batch, host_staging, device_memory, stream)) {
        stats_.hardware += static_cast<int64_t>(whole.size());
      } else {
        to_hybrid.insert(to_hybrid.end(), whole.begin(), whole.end());
      }
    }
    if (to_hybrid.empty()) return;
    if (hybrid_ != nullptr &&
        decode_whole(*hybrid_, to_hybrid, batch, host_staging, device_memory, stream)) {
      stats_.hybrid += static_cast<int64_t>(to_hybrid.size());
    } else {
      fall_back(to_hybrid, batch, host_staging, device_memory, stream, options);
    }
  }

  bool has_hardware() const { return hardware_ != nullptr; }
  JpegDecodeStats stats() const { return stats_; }

 private:
  using Slots = std::vector<const image::DecodedSlot*>;

  void gather(const Slots& slots, const image::StagedView& batch, const uint8_t* host_staging) {
    data_.clear();
    sizes_.clear();
    for (const image::DecodedSlot* d : slots) {
      const StagedRegion& s = batch.slots[static_cast<size_t>(d->slot)];
      data_.push_back(host_staging + s.offset);
      sizes_.push_back(s.encoded_bytes);
    }
  }

  // The hardware decoder's region-of-interest decode, each roi straight into its place; the
  // images' parameters (roi, output format) were set by decode() in this order.
  bool decode_rois(Backend& b, const Slots& slots, const image::StagedView& batch,
                   const uint8_t* host_staging, uint8_t* device_memory, cudaStream_t stream) {
    gather(slots, batch, host_staging);
    BatchState* state = b.begin(static_cast<int>(slots.size()), format_);
    if (state == nullptr) return false;
    images_.assign(slots.size(), nvjpegImage_t{});
    for (size_t i = 0; i < slots.size(); ++i) {
      images_[i].channel[0] = device_memory + slots[i]->offset;
      images_[i].pitch[0] = static_cast<size_t>(slots[i]->roi.width) * channels_;
    }
    return b.finish(*state,
                    api_->nvjpegDecodeBatchedEx(b.handle, state->state, data_.data(), sizes_.data(),
                                                images_.data(), b.params.data(), stream),
                    stream);
  }

  // Whole images into a scratch buffer, then each roi copied into its place.
  bool decode_whole(Backend& b, const Slots& slots, const image::StagedView& batch,
                    const uint8_t* host_staging, uint8_t* device_memory, cudaStream_t stream) {
    gather(slots, batch, host_staging);
    BatchState* state = b.begin(static_cast<int>(slots.size()), format_);
    if (state == nullptr) return false;
    std::vector<size_t> at(slots.size());
    size_t total = 0;
    for (size_t i = 0; i < slots.size(); ++i) {
      const StagedRegion& s = batch.slots[static_cast<size_t>(slots[i]->slot)];
      at[i] = total;
      total += (static_cast<size_t>(s.width) * s.height * channels_ + 255) / 256 * 256;
    }
    whole_.grow_async(total, stream);
    images_.assign(slots.size(), nvjpegImage_t{});
    for (size_t i = 0; i < slots.size(); ++i) {
      const StagedRegion& s = batch.slots[static_cast<size_t>(slots[i]->slot)];
      images_[i].channel[0] = whole_.get() + at[i];
      images_[i].pitch[0] = static_cast<size_t>(s.width) * channels_;
    }
    if (!b.finish(*state,
                  api_->nvjpegDecodeBatched(b.handle, state->state, data_.data(), sizes_.data(),
                                            images_.data(), stream),
                  stream)) {
      return false;
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      const image::DecodedSlot& d = *slots[i];
      const StagedRegion& s = batch.slots[static_cast<size_t>(d.slot)];
      const size_t pitch = static_cast<size_t>(s.width) * channels_;
      const size_t row = static_cast<size_t>(d.roi.width) * channels_;
      const uint8_t* src = whole_.get() + at[i] + static_cast<size_t>(d.roi.y) * pitch +
                           static_cast<size_t>(d.roi.x) * channels_;
      STOKER_CUDA_CHECK(cudaMemcpy2DAsync(device_memory + d.offset, row, src, pitch, row,
                                          static_cast<size_t>(d.roi.height),
                                          cudaMemcpyDeviceToDevice, stream));
    }
    return true;
  }

  // libjpeg-turbo on the host, then a copy (pageable: the source may go once the call returns).
  void fall_back(const Slots& slots, const image::StagedView& batch, const uint8_t* host_staging,
                 uint8_t* device_memory, cudaStream_t stream, const DecodeConfig& options) {
    std::vector<image::DecodedSlot> local;
    size_t total = 0;
    for (const image::DecodedSlot* d : slots) {
      local.push_back(image::DecodedSlot{d->slot, total, d->roi});
      total += static_cast<size_t>(d->roi.width) * d->roi.height * channels_;
    }
    host_.resize(total);
    image::decode_encoded_on_host(batch, host_staging, local, host_.data(), options);
    for (size_t i = 0; i < slots.size(); ++i) {
      const size_t bytes = static_cast<size_t>(slots[i]->roi.width) * slots[i]->roi.height *
                           static_cast<size_t>(channels_);
      STOKER_CUDA_CHECK(cudaMemcpyAsync(device_memory + slots[i]->offset,
                                        host_.data() + local[i].offset, bytes,
                                        cudaMemcpyHostToDevice, stream));
    }
    stats_.fallback += static_cast<int64_t>(slots.size());
  }

  const int device_;
  const int channels_;
  const NvjpegApi* api_ = nullptr;
  nvjpegOutputFormat_t format_ = NVJPEG_OUTPUT_RGBI;
  std::unique_ptr<Backend> hardware_, hybrid_;
  DeviceBuffer<uint8_t> whole_;
  std::vector<const unsigned char*> data_;
  std::vector<size_t> sizes_;
  std::vector<nvjpegImage_t> images_;
  std::vector<uint8_t> host_;
  JpegDecodeStats stats_;
};

JpegDecoder::JpegDecoder(int device, int channels, JpegBackend backend)
    : impl_(std::make_unique<Impl>(device, channels, backend)) {}
JpegDecoder::~JpegDecoder() = default;
void JpegDecoder::decode(const image::StagedView& batch, const uint8_t* host_staging,
                         std::span<const image::DecodedSlot> decoded, uint8_t* device_memory,
                         cudaStream_t stream, const DecodeConfig& options) {
  impl_->decode(batch, host_staging, decoded, device_memory, stream, options);
}
bool JpegDecoder::has_hardware() const { return impl_->has_hardware(); }
JpegDecodeStats JpegDecoder::stats() const { return impl_->stats(); }

}  // namespace stoker::cuda
