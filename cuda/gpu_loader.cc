// Pinned memory, the Augmenter (copy + kernels on stoker's stream, event-ordered hand-off and
// buffer reuse) and the GpuLoader. See include/stoker/cuda.h for the contract.

#include <cuda_runtime_api.h>

#include <deque>
#include <mutex>

#include "augment_launch.h"
#include "cuda_check.h"
#include "pipeline/staging.h"
#include "stoker/clock.h"
#include "stoker/cuda.h"
#include "stoker/log.h"

namespace stoker::cuda {
namespace {

cudaEvent_t make_event() {
  cudaEvent_t e = nullptr;
  // Blocking sync: a host wait sleeps instead of spinning; no timing: cheaper record/wait.
  STOKER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventBlockingSync | cudaEventDisableTiming));
  return e;
}

// For destructors and deleters, which must not throw: logs instead.
void warn_on_error(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    log(LogLevel::kWarning, "{}: {} ({})", what, cudaGetErrorString(status),
        cudaGetErrorName(status));
  }
}

class PinnedMemory : public HostMemory {
 public:
  uint8_t* allocate(size_t bytes) override {
    void* p = nullptr;
    // Portable: pinned for every device's context. cudaHostAlloc returns page-aligned memory.
    STOKER_CUDA_CHECK(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable));
    return static_cast<uint8_t*>(p);
  }
  void deallocate(uint8_t* p, size_t) noexcept override {
    warn_on_error(cudaFreeHost(p), "cudaFreeHost");
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

std::vector<uint8_t> copy_to_host(const DeviceBatch& batch) {
  DeviceGuard guard(batch.device);
  std::vector<uint8_t> out(batch.image_bytes);
  const auto stream = reinterpret_cast<cudaStream_t>(batch.stream);
  // Pageable destination: cudaMemcpyAsync returns once the copy is staged; the event wait
  // covers the rest.
  STOKER_CUDA_CHECK(
      cudaMemcpyAsync(out.data(), batch.images, batch.image_bytes, cudaMemcpyDeviceToHost, stream));
  cudaEvent_t done = make_event();
  cudaError_t status = cudaEventRecord(done, stream);
  if (status == cudaSuccess) status = cudaEventSynchronize(done);
  warn_on_error(cudaEventDestroy(done), "cudaEventDestroy");
  STOKER_CUDA_CHECK(status);
  return out;
}

// One device output buffer with the inputs of the batch last written into it.
struct Slot {
  void* out = nullptr;
  uint8_t* staging = nullptr;
  size_t staging_capacity = 0;
  int32_t* tables = nullptr;
  size_t tables_capacity = 0;                  // int32s
  augment::Geometry* geometry = nullptr;       // device, batch entries
  augment::Geometry* geometry_host = nullptr;  // pinned, batch entries: the copy's source
  cudaEvent_t copied = nullptr;                // after the copies from geometry_host
  cudaEvent_t ready = nullptr;                 // after the kernels
  cudaEvent_t released = nullptr;              // recorded on the consumer stream at release
  bool copy_pending = false, release_recorded = false;
};

class Augmenter::Impl : public std::enable_shared_from_this<Augmenter::Impl> {
 public:
  Impl(const TransformConfig& transform, int batch_size, int device)
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
    STOKER_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }

  ~Impl() {
    // Every device batch holds a shared_ptr to this Impl: none is alive here.
    int previous = device_;
    warn_on_error(cudaGetDevice(&previous), "cudaGetDevice");
    warn_on_error(cudaSetDevice(device_), "cudaSetDevice");
    warn_on_error(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    pending_.clear();
    for (auto& slot : slots_) {
      warn_on_error(cudaFree(slot->out), "cudaFree");
      warn_on_error(cudaFree(slot->staging), "cudaFree");
      warn_on_error(cudaFree(slot->tables), "cudaFree");
      warn_on_error(cudaFree(slot->geometry), "cudaFree");
      warn_on_error(cudaFreeHost(slot->geometry_host), "cudaFreeHost");
      for (cudaEvent_t e : {slot->copied, slot->ready, slot->released}) {
        warn_on_error(cudaEventDestroy(e), "cudaEventDestroy");
      }
    }
    for (cudaEvent_t e : spare_events_) warn_on_error(cudaEventDestroy(e), "cudaEventDestroy");
    warn_on_error(cudaStreamDestroy(stream_), "cudaStreamDestroy");
    warn_on_error(cudaSetDevice(previous), "cudaSetDevice");
  }

  std::shared_ptr<const DeviceBatch> submit(std::shared_ptr<const Batch> host, uintptr_t stream) {
    std::lock_guard consumer(consumer_mu_);
    const double cpu0 = thread_cpu_seconds();
    STOKER_CHECK(host != nullptr, "submit: no batch");
    STOKER_CHECK(host->batch_size == batch_size_, "submit: batch of {} slots, expected {}",
                 host->batch_size, batch_size_);
    STOKER_CHECK(host->channels == transform_.channels && host->width == transform_.size &&
                     host->output == transform_.output,
                 "submit: the batch was staged for another transform");
    DeviceGuard guard(device_);
    const auto consumer_stream = reinterpret_cast<cudaStream_t>(stream);
    Slot* slot = acquire_slot();
    try {
      // The previous copy out of this slot's pinned geometry must be over before it is
      // rewritten (long over in steady state).
      if (slot->copy_pending) STOKER_CUDA_CHECK(cudaEventSynchronize(slot->copied));
      slot->copy_pending = false;
      const int64_t ints = staged_geometry(*host, transform_.size, slot->geometry_host);
      reserve(slot->staging, slot->staging_capacity, host->staged_bytes);
      reserve(slot->tables, slot->tables_capacity, static_cast<size_t>(ints));
      STOKER_CUDA_CHECK(cudaMemcpyAsync(slot->geometry, slot->geometry_host,
                                        sizeof(augment::Geometry) * batch_size_,
                                        cudaMemcpyHostToDevice, stream_));
      if (host->staged_bytes > 0) {
        STOKER_CUDA_CHECK(cudaMemcpyAsync(slot->staging, host->images.data(), host->staged_bytes,
                                          cudaMemcpyHostToDevice, stream_));
      }
      STOKER_CUDA_CHECK(cudaEventRecord(slot->copied, stream_));
      slot->copy_pending = true;
      // The host batch goes back to the loader once its copy is done.
      cudaEvent_t copied = spare_event();
      STOKER_CUDA_CHECK(cudaEventRecord(copied, stream_));
      pending_.push_back(Pending{host, copied});
      // The consumer's last use of the output buffer comes before the kernels overwrite it.
      if (slot->release_recorded) STOKER_CUDA_CHECK(cudaStreamWaitEvent(stream_, slot->released));
      STOKER_CUDA_CHECK(launch_augment(stream_, slot->out, slot->staging, slot->tables,
                                       slot->geometry, batch_size_, spec_));
      STOKER_CUDA_CHECK(cudaEventRecord(slot->ready, stream_));
      STOKER_CUDA_CHECK(cudaStreamWaitEvent(consumer_stream, slot->ready));
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
    batch->images = slot->out;
    batch->image_bytes = out_bytes_;
    batch->stream = stream;
    batch->labels = host->labels;
    batch->indices = host->indices;
    batch->valid = host->valid;
    batch->skipped = host->skipped;
    {
      std::lock_guard lock(mu_);
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
    std::lock_guard consumer(consumer_mu_);
    DeviceGuard guard(device_);
    for (auto& p : pending_) STOKER_CUDA_CHECK(cudaEventSynchronize(p.copied));
    release_copied();
    // Blocks on an event rather than cudaStreamSynchronize, whose wait may spin.
    cudaEvent_t done = spare_event();
    STOKER_CUDA_CHECK(cudaEventRecord(done, stream_));
    const cudaError_t status = cudaEventSynchronize(done);
    spare_events_.push_back(done);
    STOKER_CUDA_CHECK(status);
  }

  int device() const { return device_; }

  AugmenterStats stats() const {
    std::lock_guard lock(mu_);
    AugmenterStats s = stats_;
    s.device_buffers = static_cast<int64_t>(slots_.size());
    return s;
  }

 private:
  struct Pending {
    std::shared_ptr<const Batch> host;
    cudaEvent_t copied;
  };

  Slot* acquire_slot() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        Slot* s = free_.back();
        free_.pop_back();
        return s;
      }
    }
    auto slot = std::make_unique<Slot>();
    slot->copied = make_event();
    slot->ready = make_event();
    slot->released = make_event();
    STOKER_CUDA_CHECK(cudaMalloc(&slot->out, out_bytes_));
    void* geometry = nullptr;
    STOKER_CUDA_CHECK(cudaMalloc(&geometry, sizeof(augment::Geometry) * batch_size_));
    slot->geometry = static_cast<augment::Geometry*>(geometry);
    void* host = nullptr;
    STOKER_CUDA_CHECK(
        cudaHostAlloc(&host, sizeof(augment::Geometry) * batch_size_, cudaHostAllocPortable));
    slot->geometry_host = static_cast<augment::Geometry*>(host);
    std::lock_guard lock(mu_);
    slots_.push_back(std::move(slot));
    return slots_.back().get();
  }

  void return_slot(Slot* slot) {
    std::lock_guard lock(mu_);
    free_.push_back(slot);
  }

  // From a deleter, on any thread: must not throw.
  void release(Slot* slot, cudaStream_t consumer) {
    int previous = device_;
    warn_on_error(cudaGetDevice(&previous), "cudaGetDevice");
    const bool switched = previous != device_;
    if (switched) warn_on_error(cudaSetDevice(device_), "cudaSetDevice");
    const cudaError_t status = cudaEventRecord(slot->released, consumer);
    warn_on_error(status, "cudaEventRecord (batch release)");
    if (status != cudaSuccess) {
      // Without the event the buffer's last reader is unknown: wait for the device instead.
      warn_on_error(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    if (switched) warn_on_error(cudaSetDevice(previous), "cudaSetDevice");
    std::lock_guard lock(mu_);
    slot->release_recorded = status == cudaSuccess;
    free_.push_back(slot);
  }

  // Grows a device buffer, stream-ordered: the old one is freed after the kernels that read it.
  template <typename T>
  void reserve(T*& buffer, size_t& capacity, size_t count) {
    if (count <= capacity) return;
    const size_t grown = std::max(count + count / 4, size_t{1});
    if (buffer != nullptr) STOKER_CUDA_CHECK(cudaFreeAsync(buffer, stream_));
    buffer = nullptr;
    capacity = 0;
    void* p = nullptr;
    STOKER_CUDA_CHECK(cudaMallocAsync(&p, grown * sizeof(T), stream_));
    buffer = static_cast<T*>(p);
    capacity = grown;
  }

  cudaEvent_t spare_event() {
    if (spare_events_.empty()) return make_event();
    cudaEvent_t e = spare_events_.back();
    spare_events_.pop_back();
    return e;
  }

  // Lets go of the host batches whose copy has finished; at most kMaxPending wait, beyond
  // that the oldest is waited for (blocking, not spinning).
  void release_copied() {
    constexpr size_t kMaxPending = 2;
    while (!pending_.empty()) {
      const cudaError_t status = cudaEventQuery(pending_.front().copied);
      if (status == cudaErrorNotReady && pending_.size() <= kMaxPending) break;
      if (status == cudaErrorNotReady) {
        STOKER_CUDA_CHECK(cudaEventSynchronize(pending_.front().copied));
      } else {
        STOKER_CUDA_CHECK(status);
      }
      spare_events_.push_back(pending_.front().copied);
      pending_.pop_front();
    }
  }

  TransformConfig transform_;
  const int batch_size_;
  const int device_;
  augment::OutputSpec spec_;
  size_t out_bytes_ = 0;
  cudaStream_t stream_ = nullptr;

  std::mutex consumer_mu_;  // one submit/synchronize at a time
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> spare_events_;

  mutable std::mutex mu_;  // slots: taken by submit, returned by deleters on any thread
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_;
  AugmenterStats stats_;
};

Augmenter::Augmenter(const TransformConfig& transform, int batch_size, int device)
    : impl_(std::make_shared<Impl>(transform, batch_size, device)) {}
Augmenter::~Augmenter() = default;
std::shared_ptr<const DeviceBatch> Augmenter::submit(std::shared_ptr<const Batch> host,
                                                     uintptr_t stream) {
  return impl_->submit(std::move(host), stream);
}
void Augmenter::synchronize() { impl_->synchronize(); }
int Augmenter::device() const { return impl_->device(); }
AugmenterStats Augmenter::stats() const { return impl_->stats(); }

namespace {

LoaderConfig deferred(LoaderConfig config) {
  config.augment = AugmentMode::kDeferred;
  config.memory = pinned_memory();
  return config;
}

}  // namespace

GpuLoader::GpuLoader(std::shared_ptr<const Dataset> dataset, LoaderConfig config, int device) {
  // The augmenter first: it checks the device before any worker starts.
  augmenter_ = std::make_unique<Augmenter>(config.transform, config.batch_size, device);
  loader_ = std::make_unique<Loader>(std::move(dataset), deferred(std::move(config)));
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
