// The run-time loading of libnvjpeg (nvjpeg_api.cc), which needs no GPU: in a build with the GPU
// decode, the library is found (here: the build's copy, the venv's nvidia-nvjpeg wheel) with
// every entry point the decoder calls.
#include "nvjpeg_api.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker::cuda {
namespace {

TEST(NvjpegApi, LoadsEveryEntryPoint) {
  std::string why;
  const NvjpegApi* api = nvjpeg_api(&why);
  ASSERT_NE(api, nullptr) << why;
  EXPECT_FALSE(api->path.empty());
#define STOKER_EXPECT_LOADED(name) EXPECT_NE(api->name, nullptr) << #name;
  STOKER_NVJPEG_FUNCTIONS(STOKER_EXPECT_LOADED)
#undef STOKER_EXPECT_LOADED
  EXPECT_EQ(nvjpeg_api(nullptr), api);  // loaded once
}

}  // namespace
}  // namespace stoker::cuda
