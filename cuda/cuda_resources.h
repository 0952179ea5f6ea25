// Owning handles for the CUDA resources of the cuda layer (private to it): a stream, an event,
// a device buffer and a pinned host buffer. Each creates its resource in its constructor
// (throwing stoker::Error through STOKER_CUDA_CHECK on failure, so that a half-built owner frees
// what it already holds), frees it in its destructor, logging instead of throwing, and moves but
// does not copy. The owner of a device's resources destroys them with that device current.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "cuda_check.h"

namespace stoker::cuda {

// A resource handle: `Free` releases a non-null value and returns its status.
template <typename Handle, cudaError_t (*Free)(Handle), const char* kWhat>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle h) : h_(h) {}
  ~Owned() { reset(); }
  Owned(Owned&& other) noexcept : h_(std::exchange(other.h_, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  Handle get() const { return h_; }
  // Gives the resource up without freeing it.
  Handle release() { return std::exchange(h_, Handle{}); }
  void reset() noexcept {
    if (h_ != Handle{}) warn_on_cuda_error(Free(h_), kWhat);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

inline constexpr char kStreamDestroy[] = "cudaStreamDestroy";
inline constexpr char kEventDestroy[] = "cudaEventDestroy";
inline constexpr char kFree[] = "cudaFree";
inline constexpr char kFreeHost[] = "cudaFreeHost";

// A non-blocking stream (no implicit ordering with the legacy default stream).
class Stream : public Owned<cudaStream_t, cudaStreamDestroy, kStreamDestroy> {
 public:
  static Stream create() {
    cudaStream_t s = nullptr;
    STOKER_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return Stream(s);
  }
  using Owned::Owned;
};

// An event for ordering and host waits: blocking sync (a host wait sleeps instead of spinning),
// no timing (cheaper record/wait).
class Event : public Owned<cudaEvent_t, cudaEventDestroy, kEventDestroy> {
 public:
  static Event create() {
    cudaEvent_t e = nullptr;
    STOKER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventBlockingSync | cudaEventDisableTiming));
    return Event(e);
  }
  using Owned::Owned;
};

// `count` elements of T in device memory (cudaMalloc, or stream-ordered with grow_async).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) {
    void* p = nullptr;
    STOKER_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)));
    memory_ = Memory(p);
    count_ = count;
  }

  T* get() const { return static_cast<T*>(memory_.get()); }
  size_t size() const { return count_; }

  // At least `count` elements (a quarter more than asked, to grow rarely), stream-ordered: the
  // old buffer is freed after the work already queued on `stream`, which may still read it.
  void grow_async(size_t count, cudaStream_t stream) {
    if (count <= count_) return;
    const size_t grown = std::max(count + count / 4, size_t{1});
    if (memory_.get() != nullptr) {
      count_ = 0;
      STOKER_CUDA_CHECK(cudaFreeAsync(memory_.release(), stream));
    }
    void* p = nullptr;
    STOKER_CUDA_CHECK(cudaMallocAsync(&p, grown * sizeof(T), stream));
    memory_ = Memory(p);
    count_ = grown;
  }

 private:
  using Memory = Owned<void*, cudaFree, kFree>;
  Memory memory_;
  size_t count_ = 0;
};

// `count` elements of T in page-locked host memory, pinned for every device's context.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t count) {
    void* p = nullptr;
    STOKER_CUDA_CHECK(
        cudaHostAlloc(&p, std::max<size_t>(count, 1) * sizeof(T), cudaHostAllocPortable));
    memory_ = Memory(p);
  }
  T* get() const { return static_cast<T*>(memory_.get()); }

 private:
  using Memory = Owned<void*, cudaFreeHost, kFreeHost>;
  Memory memory_;
};

}  // namespace stoker::cuda
