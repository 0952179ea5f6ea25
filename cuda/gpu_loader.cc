// Pinned memory, the Augmenter (copy + kernels on stoker's stream, event-ordered hand-off and
// buffer reuse) and the GpuLoader. See include/stoker/cuda.h for the contract.

#include <cuda_runtime_api.h>

#include <deque>

#include "augment_launch.h"
#include "cuda_check.h"
#include "cuda_resources.h"
#include "image/staged_geometry.h"
#include "stoker/clock.h"
#include "stoker/cuda.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/logging.h"
#include "util/mutex.h"
#if STOKER_HAVE_NVJPEG
#include "jpeg_decoder.h"
#include "nvjpeg_api.h"
#endif

namespace stoker::cuda {
namespace {

using image::DecodedSlot;
using image::encoded_layout;
using image::output_spec;
using image::staged_geometry;
using image::StagedView;
using util::Mutex;
using util::MutexLock;

class PinnedMemory : public HostMemory {
 public:
  uint8_t* allocate(size_t bytes) override {
    void* p = nullptr;
    // Portable: pinned for every device's context. cudaHostAlloc returns page-aligned memory.
    STOKER_CUDA_CHECK(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable));
    return static_cast<uint8_t*>(p);
  }
  void deallocate(uint8_t* p, size_t) noexcept override {
    warn_on_cuda_error(cudaFreeHost(p), "cudaFreeHost");
  }
};

}  // namespace

int device_count() {
  int n = 0;
  STOKER_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

bool available(std::string* why) {
  int n = 0;
  cudaError_t status = cudaGetDeviceCount(&n);
  if (status == cudaSuccess && n == 0) {
    if (why != nullptr) *why = "no CUDA device";
    return false;
  }
  if (status == cudaSuccess) {
    int runtime = 0, driver = 0;
    status = cudaRuntimeGetVersion(&runtime);
    if (status == cudaSuccess) status = cudaDriverGetVersion(&driver);
    if (status == cudaSuccess && driver < runtime) {
      if (why != nullptr) {
        *why = fmt::format("the CUDA driver supports CUDA {}.{}, this build needs {}.{}",
                           driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
      }
      return false;
    }
    if (status == cudaSuccess) status = probe_kernel_image();
  }
  if (status != cudaSuccess) {
    if (why != nullptr) {
      *why = fmt::format("{} ({})", cudaGetErrorString(status), cudaGetErrorName(status));
    }
    // Clears the (non-sticky) error so that later calls start clean; its status is the error.
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

std::string device_name(int device) {
  cudaDeviceProp p;
  STOKER_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return fmt::format("{} (sm_{}{}, {} GiB, {} SMs)", p.name, p.major, p.minor,
                     p.totalGlobalMem >> 30, p.multiProcessorCount);
}

std::shared_ptr<HostMemory> pinned_memory() { return std::make_shared<PinnedMemory>(); }

DecodeOn parse_decode_on(const std::string& name) {
  if (name == "cpu") return DecodeOn::kCpu;
  if (name == "gpu") return DecodeOn::kGpu;
  if (name == "auto") return DecodeOn::kAuto;
  STOKER_THROW_ARG("decode must be 'cpu', 'gpu' or 'auto' (got '{}')", name);
}

bool gpu_decode_built() { return STOKER_HAVE_NVJPEG != 0; }

bool gpu_decode_library(std::string* path_or_why) {
#if STOKER_HAVE_NVJPEG
  std::string why;
  const NvjpegApi* api = nvjpeg_api(&why);
  if (path_or_why != nullptr) *path_or_why = api != nullptr ? api->path : why;
  return api != nullptr;
#else
  if (path_or_why != nullptr) *path_or_why = "this stoker was built without nvJPEG";
  return false;
#endif
}

#if STOKER_HAVE_NVJPEG
using GpuJpegDecoder = JpegDecoder;
#else
// Stands in where nvJPEG was not found: never constructed (the Augmenter refuses kGpu first).
class GpuJpegDecoder {
 public:
  void decode(const StagedView&, const uint8_t*, std::span<const DecodedSlot>, uint8_t*,
              cudaStream_t, const DecodeConfig&) {}
  bool has_hardware() const { return false; }
};
#endif

namespace {

// The decoder the configuration asks for: nullptr for kCpu, and for kAuto where it cannot start.
std::unique_ptr<GpuJpegDecoder> make_decoder(const GpuDecodeConfig& decode, int device,
                                             int channels) {
  if (decode.where == DecodeOn::kCpu) return nullptr;
  if (!gpu_decode_built()) {
    STOKER_CHECK_ARG(decode.where != DecodeOn::kGpu,
                     "decode='gpu': this stoker was built without nvJPEG (pip install "
                     "nvidia-nvjpeg, or a CUDA toolkit with it, then rebuild)");
    return nullptr;
  }
#if STOKER_HAVE_NVJPEG
  const JpegBackend backend = parse_jpeg_backend(decode.jpeg_backend);
  if (decode.where == DecodeOn::kGpu)
    return std::make_unique<JpegDecoder>(device, channels, backend);
  try {
    return std::make_unique<JpegDecoder>(device, channels, backend);
  } catch (const Error& e) {
    log(LogLevel::kWarning, "decode='auto': JPEGs are decoded on the CPU: {}", e.what());
    return nullptr;
  }
#else
  (void)device;
  (void)channels;
  return nullptr;
#endif
}

}  // namespace

std::vector<uint8_t> copy_to_host(const DeviceBatch& batch) {
  DeviceGuard guard(batch.device);
  std::vector<uint8_t> out(batch.image_bytes);
  const auto stream = reinterpret_cast<cudaStream_t>(batch.stream);
  // Pageable destination: cudaMemcpyAsync returns once the copy is staged; the event wait
  // covers the rest.
  STOKER_CUDA_CHECK(
      cudaMemcpyAsync(out.data(), batch.images, batch.image_bytes, cudaMemcpyDeviceToHost, stream));
  const Event done = Event::create();
  STOKER_CUDA_CHECK(cudaEventRecord(done.get(), stream));
  STOKER_CUDA_CHECK(cudaEventSynchronize(done.get()));
  return out;
}

// One device output buffer with the inputs of the batch last written into it. Every member
// owns its resource: a constructor that throws half-way frees what it already made.
struct Slot {
  Slot(size_t out_bytes, int batch_size)
      : out(out_bytes),
        geometry(static_cast<size_t>(batch_size)),
        geometry_host(static_cast<size_t>(batch_size)),
        copied(Event::create()),
        ready(Event::create()),
        released(Event::create()) {}

  DeviceBuffer<uint8_t> out;
  DeviceBuffer<uint8_t> staging;                  // grown stream-ordered
  DeviceBuffer<int32_t> tables;                   // grown stream-ordered
  DeviceBuffer<augment::Geometry> geometry;       // batch entries
  PinnedBuffer<augment::Geometry> geometry_host;  // batch entries: the copy's source
  Event copied;                                   // after the copies from geometry_host
  Event ready;                                    // after the kernels
  Event released;                                 // recorded on the consumer stream at release
  bool copy_pending = false, release_recorded = false;
};

class Augmenter::Impl : public std::enable_shared_from_this<Augmenter::Impl> {
 public:
  Impl(const TransformConfig& transform, int batch_size, int device, const GpuDecodeConfig& decode)
      : transform_(transform), batch_size_(batch_size), device_(device) {
    transform_.validate();
    STOKER_CHECK(batch_size >= 1 && batch_size <= 65535, "GPU batch size {} not in [1, 65535]",
                 batch_size);
    std::string why;
    STOKER_CHECK(available(&why), "no usable CUDA device: {}", why);
    STOKER_CHECK(device >= 0 && device < device_count(), "CUDA device {} does not exist ({} found)",
                 device, device_count());
    spec_ = output_spec(transform_);
    out_bytes_ = transform_.sample_bytes() * static_cast<size_t>(batch_size);
    DeviceGuard guard(device_);
    stream_ = Stream::create();
    decoder_ = make_decoder(decode, device_, transform_.channels);
  }

  ~Impl() {
    // Every device batch holds a shared_ptr to this Impl: none is alive here. Once the stream's
    // work is over, the owners free their resources, with this device current.
    int previous = device_;
    warn_on_cuda_error(cudaGetDevice(&previous), "cudaGetDevice");
    warn_on_cuda_error(cudaSetDevice(device_), "cudaSetDevice");
    warn_on_cuda_error(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize");
    {
      MutexLock consumer(consumer_mu_);
      pending_.clear();
      spare_events_.clear();
      decoder_.reset();  // nvJPEG's handles go with this device current
    }
    {
      MutexLock lock(mu_);
      free_.clear();
      slots_.clear();
    }
    stream_.reset();
    warn_on_cuda_error(cudaSetDevice(previous), "cudaSetDevice");
  }

  std::shared_ptr<const DeviceBatch> submit(std::shared_ptr<const Batch> host, uintptr_t stream)
      STOKER_EXCLUDES(consumer_mu_, mu_) {
    MutexLock consumer(consumer_mu_);
    const double cpu0 = thread_cpu_seconds();
    STOKER_CHECK(host != nullptr, "submit: no batch");
    // A short batch (modes short, pad, even: the last one of an epoch, possibly empty) has fewer
    // slots than the buffers were sized for.
    STOKER_CHECK(host->batch_size >= 0 && host->batch_size <= batch_size_,
                 "submit: batch of {} slots, expected at most {}", host->batch_size, batch_size_);
    const int slots = host->batch_size;
    STOKER_CHECK(host->channels == transform_.channels && host->width == transform_.size &&
                     host->output == transform_.output,
                 "submit: the batch was staged for another transform");
    DeviceGuard guard(device_);
    const auto consumer_stream = reinterpret_cast<cudaStream_t>(stream);
    Slot* slot = acquire_slot();
    try {
      // The previous copy out of this slot's pinned geometry must be over before it is
      // rewritten (long over in steady state).
      if (slot->copy_pending) STOKER_CUDA_CHECK(cudaEventSynchronize(slot->copied.get()));
      slot->copy_pending = false;
      const StagedView view{host->staged, host->batch_size, host->channels, host->staged_bytes,
                            host->index};
      // Encoded JPEGs are decoded into the device staging buffer, after the staged bytes
      // (device_bytes: both, >= staged_bytes).
      size_t device_bytes = 0;
      const std::vector<DecodedSlot> decoded =
          encoded_layout(view, host->staged_bytes, &device_bytes);
      STOKER_CHECK(decoded.empty() || decoder_ != nullptr,
                   "submit: batch {} has JPEGs staged encoded, but this augmenter decodes none",
                   host->index);
      const int64_t ints =
          staged_geometry(view, transform_.size, slot->geometry_host.get(), decoded);
      slot->staging.grow_async(device_bytes, stream_.get());
      slot->tables.grow_async(static_cast<size_t>(ints), stream_.get());
      STOKER_CUDA_CHECK(cudaMemcpyAsync(slot->geometry.get(), slot->geometry_host.get(),
                                        sizeof(augment::Geometry) * slots, cudaMemcpyHostToDevice,
                                        stream_.get()));
      if (host->staged_bytes > 0) {
        STOKER_CUDA_CHECK(cudaMemcpyAsync(slot->staging.get(), host->images.data(),
                                          host->staged_bytes, cudaMemcpyHostToDevice,
                                          stream_.get()));
      }
      // nvJPEG reads the JPEG bytes from the pinned host batch, possibly after this call returns:
      // the batch goes back to the loader only after the decoder's work too (the events below).
      if (!decoded.empty()) {
        decoder_->decode(view, host->images.data(), decoded, slot->staging.get(), stream_.get(),
                         transform_.decode);
      }
      STOKER_CUDA_CHECK(cudaEventRecord(slot->copied.get(), stream_.get()));
      slot->copy_pending = true;
      // The host batch goes back to the loader once its copy is done.
      Event copied = spare_event();
      STOKER_CUDA_CHECK(cudaEventRecord(copied.get(), stream_.get()));
      pending_.push_back(Pending{host, std::move(copied)});
      // The consumer's last use of the output buffer comes before the kernels overwrite it.
      if (slot->release_recorded) {
        STOKER_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), slot->released.get()));
      }
      if (slots > 0) {  // a grid with no blocks is a launch error
        STOKER_CUDA_CHECK(launch_augment(stream_.get(), slot->out.get(), slot->staging.get(),
                                         slot->tables.get(), slot->geometry.get(), slots, spec_));
      }
      STOKER_CUDA_CHECK(cudaEventRecord(slot->ready.get(), stream_.get()));
      STOKER_CUDA_CHECK(cudaStreamWaitEvent(consumer_stream, slot->ready.get()));
      release_copied();
    } catch (...) {
      return_slot(slot);
      throw;
    }

    auto batch = std::make_shared<DeviceBatch>();
    batch->epoch = host->epoch;
    batch->index = host->index;
    batch->global_valid = host->global_valid;
    batch->batch_size = host->batch_size;
    batch->output = host->output;
    batch->channels = host->channels;
    batch->height = host->height;
    batch->width = host->width;
    batch->device = device_;
    batch->images = slot->out.get();
    batch->image_bytes = transform_.sample_bytes() * static_cast<size_t>(slots);
    batch->stream = stream;
    batch->labels = host->labels;
    batch->indices = host->indices;
    batch->valid = host->valid;
    batch->skipped = host->skipped;
    {
      MutexLock lock(mu_);
      ++stats_.batches;
      stats_.staged_bytes += static_cast<int64_t>(host->staged_bytes);
      stats_.submit_seconds += thread_cpu_seconds() - cpu0;
    }
    // Release: record on the consumer stream, then the slot may be taken again (its next
    // kernels wait for that event on stoker's stream).
    auto self = shared_from_this();
    DeviceBatch* raw = batch.get();
    return std::shared_ptr<const DeviceBatch>(
        raw, [self, slot, owner = std::move(batch)](const DeviceBatch* b) mutable {
          self->release(slot, reinterpret_cast<cudaStream_t>(b->stream));
          owner.reset();
        });
  }

  void synchronize() {
    MutexLock consumer(consumer_mu_);
    DeviceGuard guard(device_);
    for (auto& p : pending_) STOKER_CUDA_CHECK(cudaEventSynchronize(p.copied.get()));
    release_copied();
    // Blocks on an event rather than cudaStreamSynchronize, whose wait may spin.
    Event done = spare_event();
    STOKER_CUDA_CHECK(cudaEventRecord(done.get(), stream_.get()));
    const cudaError_t status = cudaEventSynchronize(done.get());
    spare_events_.push_back(std::move(done));
    STOKER_CUDA_CHECK(status);
  }

  int device() const { return device_; }

  AugmenterStats stats() const {
    AugmenterStats s;
    {
      MutexLock lock(mu_);
      s = stats_;
      s.device_buffers = static_cast<int64_t>(slots_.size());
    }
    s.gpu_decode = decoder_ != nullptr;
#if STOKER_HAVE_NVJPEG
    if (decoder_ != nullptr) {
      // The decoder's counters belong to the consumer: read them under its lock.
      MutexLock consumer(consumer_mu_);
      const JpegDecodeStats d = decoder_->stats();
      s.decoded_hardware = d.hardware;
      s.decoded_hybrid = d.hybrid;
      s.decoded_fallback = d.fallback;
      s.hardware_decoder = decoder_->has_hardware();
    }
#endif
    return s;
  }

 private:
  struct Pending {
    std::shared_ptr<const Batch> host;
    Event copied;
  };

  Slot* acquire_slot() STOKER_EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (!free_.empty()) {
        Slot* s = free_.back();
        free_.pop_back();
        return s;
      }
    }
    auto slot = std::make_unique<Slot>(out_bytes_, batch_size_);
    MutexLock lock(mu_);
    slots_.push_back(std::move(slot));
    return slots_.back().get();
  }

  void return_slot(Slot* slot) STOKER_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    free_.push_back(slot);
  }

  // From a deleter, on any thread: must not throw.
  void release(Slot* slot, cudaStream_t consumer) STOKER_EXCLUDES(mu_) {
    int previous = device_;
    warn_on_cuda_error(cudaGetDevice(&previous), "cudaGetDevice");
    const bool switched = previous != device_;
    if (switched) warn_on_cuda_error(cudaSetDevice(device_), "cudaSetDevice");
    const cudaError_t status = cudaEventRecord(slot->released.get(), consumer);
    warn_on_cuda_error(status, "cudaEventRecord (batch release)");
    if (status != cudaSuccess) {
      // Without the event the buffer's last reader is unknown: wait for the device instead.
      warn_on_cuda_error(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    if (switched) warn_on_cuda_error(cudaSetDevice(previous), "cudaSetDevice");
    MutexLock lock(mu_);
    slot->release_recorded = status == cudaSuccess;
    free_.push_back(slot);
  }

  Event spare_event() STOKER_REQUIRES(consumer_mu_) {
    if (spare_events_.empty()) return Event::create();
    Event e = std::move(spare_events_.back());
    spare_events_.pop_back();
    return e;
  }

  // Lets go of the host batches whose copy has finished; at most kMaxPending wait, beyond
  // that the oldest is waited for (blocking, not spinning).
  void release_copied() STOKER_REQUIRES(consumer_mu_) {
    constexpr size_t kMaxPending = 2;
    while (!pending_.empty()) {
      const cudaError_t status = cudaEventQuery(pending_.front().copied.get());
      if (status == cudaErrorNotReady && pending_.size() <= kMaxPending) break;
      if (status == cudaErrorNotReady) {
        STOKER_CUDA_CHECK(cudaEventSynchronize(pending_.front().copied.get()));
      } else {
        STOKER_CUDA_CHECK(status);
      }
      spare_events_.push_back(std::move(pending_.front().copied));
      pending_.pop_front();
    }
  }

  TransformConfig transform_;
  const int batch_size_;
  const int device_;
  augment::OutputSpec spec_;
  size_t out_bytes_ = 0;
  Stream stream_;

  std::unique_ptr<GpuJpegDecoder> decoder_;  // set once by the constructor; used under consumer_mu_
  mutable Mutex consumer_mu_;                // one submit/synchronize at a time
  std::deque<Pending> pending_ STOKER_GUARDED_BY(consumer_mu_);
  std::vector<Event> spare_events_ STOKER_GUARDED_BY(consumer_mu_);

  mutable Mutex mu_;  // slots: taken by submit, returned by deleters on any thread
  std::vector<std::unique_ptr<Slot>> slots_ STOKER_GUARDED_BY(mu_);
  std::vector<Slot*> free_ STOKER_GUARDED_BY(mu_);
  AugmenterStats stats_ STOKER_GUARDED_BY(mu_);
};

Augmenter::Augmenter(const TransformConfig& transform, int batch_size, int device,
                     const GpuDecodeConfig& decode)
    : impl_(std::make_shared<Impl>(transform, batch_size, device, decode)) {}
Augmenter::~Augmenter() = default;
std::shared_ptr<const DeviceBatch> Augmenter::submit(std::shared_ptr<const Batch> host,
                                                     uintptr_t stream) {
  return impl_->submit(std::move(host), stream);
}
void Augmenter::synchronize() { impl_->synchronize(); }
int Augmenter::device() const { return impl_->device(); }
AugmenterStats Augmenter::stats() const { return impl_->stats(); }

namespace {

LoaderConfig deferred(LoaderConfig config, bool encoded_jpegs) {
  config.augment = AugmentMode::kDeferred;
  config.memory = pinned_memory();
  config.stage_encoded_jpegs = encoded_jpegs;
  // The GPU decodes at scale 1: the images the workers still decode (PNG, progressive, ...) are
  // decoded at scale 1 too, so that every slot of a batch is the exact_decode image.
  if (encoded_jpegs) config.transform.decode.dct_scaling = false;
  return config;
}

}  // namespace

GpuLoader::GpuLoader(std::shared_ptr<const Dataset> dataset, LoaderConfig config, int device,
                     const GpuDecodeConfig& decode) {
  // The augmenter first: it checks the device (and starts the decoder) before any worker starts.
  augmenter_ = std::make_unique<Augmenter>(config.transform, config.batch_size, device, decode);
  const bool encoded = augmenter_->stats().gpu_decode;
  loader_ = std::make_unique<Loader>(std::move(dataset), deferred(std::move(config), encoded));
}

GpuLoader::~GpuLoader() {
  // GPU work first (host batches it holds go back to the loader's pool), then the workers.
  augmenter_.reset();
  loader_.reset();
}

void GpuLoader::set_epoch(int64_t epoch) { loader_->set_epoch(epoch); }

std::shared_ptr<const DeviceBatch> GpuLoader::next(uintptr_t stream) {
  std::shared_ptr<const Batch> host = loader_->next();
  if (!host) return nullptr;
  return augmenter_->submit(std::move(host), stream);
}

Loader& GpuLoader::host() { return *loader_; }
const Loader& GpuLoader::host() const { return *loader_; }
AugmenterStats GpuLoader::augmenter_stats() const { return augmenter_->stats(); }
int GpuLoader::device() const { return augmenter_->device(); }

}  // namespace stoker::cuda
