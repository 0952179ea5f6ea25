// nvJPEG's entry points, loaded at run time (dlopen) rather than linked: a stoker built with the
// GPU decode imports, runs and decodes on the CPU where libnvjpeg is missing, and decode='gpu'
// then says how to get it. Only jpeg_decoder.cc uses this.
#pragma once

#include <nvjpeg.h>

#include <string>

namespace stoker::cuda {

// X(name): every nvJPEG function the decoder calls.
#define STOKER_NVJPEG_FUNCTIONS(X)     \
  X(nvjpegCreateEx)                    \
  X(nvjpegDestroy)                     \
  X(nvjpegJpegStateCreate)             \
  X(nvjpegJpegStateDestroy)            \
  X(nvjpegJpegStreamCreate)            \
  X(nvjpegJpegStreamDestroy)           \
  X(nvjpegJpegStreamParseHeader)       \
  X(nvjpegDecodeBatchedSupported)      \
  X(nvjpegDecodeBatchedSupportedEx)    \
  X(nvjpegDecodeParamsCreate)          \
  X(nvjpegDecodeParamsDestroy)         \
  X(nvjpegDecodeParamsSetOutputFormat) \
  X(nvjpegDecodeParamsSetROI)          \
  X(nvjpegDecodeBatchedInitialize)     \
  X(nvjpegDecodeBatched)               \
  X(nvjpegDecodeBatchedEx)

struct NvjpegApi {
#define STOKER_NVJPEG_MEMBER(name) decltype(&::name) name = nullptr;
  STOKER_NVJPEG_FUNCTIONS(STOKER_NVJPEG_MEMBER)
#undef STOKER_NVJPEG_MEMBER
  std::string path;  // the library that was loaded
};

// The loaded API, or nullptr with the reason in *why (every place tried). Looks, in order, for
// libnvjpeg.so.13 where the dynamic linker finds it (LD_LIBRARY_PATH, the linker cache: a CUDA
// toolkit's), beside this stoker in site-packages (the nvidia-nvjpeg wheel:
// site-packages/nvidia/cu13/lib, also from a venv's bin/), and where the build found it.
// Loaded once per process; thread-safe.
const NvjpegApi* nvjpeg_api(std::string* why);

}  // namespace stoker::cuda
