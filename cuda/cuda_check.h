// STOKER_CUDA_CHECK: every CUDA runtime call's status is checked; a failure throws
// stoker::Error with the call's text and cudaGetErrorString, e.g.
//   STOKER_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream));
//   -> "cudaMemcpyAsync(dst, src, n, ...): invalid argument (cudaErrorInvalidValue)"
// Private to the cuda layer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>

#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/logging.h"

#define STOKER_CUDA_CHECK(call)                                                   \
  do {                                                                            \
    const cudaError_t stoker_cuda_status_ = (call);                               \
    if (stoker_cuda_status_ != cudaSuccess) {                                     \
      STOKER_THROW("{}: {} ({})", #call, cudaGetErrorString(stoker_cuda_status_), \
                   cudaGetErrorName(stoker_cuda_status_));                        \
    }                                                                             \
  } while (0)

namespace stoker::cuda {

// For destructors and deleters, which must not throw: logs a failed call instead.
inline void warn_on_cuda_error(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    log(LogLevel::kWarning, "{}: {} ({})", what, cudaGetErrorString(status),
        cudaGetErrorName(status));
  }
}

// Makes `device` current for the scope, restoring the caller's device after (the consumer's
// thread may be using another one, e.g. torch's current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    STOKER_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) STOKER_CUDA_CHECK(cudaSetDevice(device));
  }
  // Restores the caller's device; a failure here cannot be thrown from a destructor, and the
  // call that failed is reported by the next checked call on this thread.
  ~DeviceGuard() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) {
      const cudaError_t status = cudaSetDevice(previous_);
      if (status != cudaSuccess)
        std::fprintf(stderr, "stoker: cudaSetDevice(%d): %s\n", previous_,
                     cudaGetErrorString(status));
    }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace stoker::cuda
