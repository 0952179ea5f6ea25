// Run-time loading of libnvjpeg. See nvjpeg_api.h.

#include "nvjpeg_api.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <vector>

#include "stoker/error.h"

namespace stoker::cuda {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLibrary = "libnvjpeg.so.13";

// Where to look after the dynamic linker's own search, from the file this code is in (the
// Python module in site-packages/stoker/, or the stoker command in a venv's bin/).
std::vector<fs::path> candidates() {
  std::vector<fs::path> out;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvjpeg_api), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const fs::path self = fs::weakly_canonical(info.dli_fname, ec);
    const fs::path dir = self.parent_path();
    // site-packages/stoker/_stoker*.so -> site-packages/nvidia/cu13/lib
    out.push_back(dir.parent_path() / "nvidia" / "cu13" / "lib" / kLibrary);
    // <venv>/bin/stoker -> <venv>/lib/python3.*/site-packages/nvidia/cu13/lib
    const fs::path lib = dir.parent_path() / "lib";
    for (const auto& entry : fs::directory_iterator(lib, ec)) {
      if (entry.path().filename().string().rfind("python3", 0) == 0) {
        out.push_back(entry.path() / "site-packages" / "nvidia" / "cu13" / "lib" / kLibrary);
      }
    }
  }
#ifdef STOKER_NVJPEG_BUILD_LIBRARY
  out.emplace_back(STOKER_NVJPEG_BUILD_LIBRARY);  // the build tree's
#endif
  return out;
}

struct Loaded {
  NvjpegApi api;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  std::string tried = kLibrary;
  if (handle != nullptr) l.api.path = kLibrary;
  for (const fs::path& p : handle == nullptr ? candidates() : std::vector<fs::path>{}) {
    std::error_code ec;
    tried += ", " + p.string();
    if (!fs::exists(p, ec)) continue;
    handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      l.api.path = p.string();
      break;
    }
  }
  if (handle == nullptr) {
    l.why = fmt::format(
        "{} not found (tried {}): pip install nvidia-nvjpeg, or put a CUDA "
        "toolkit's lib64 on LD_LIBRARY_PATH",
        kLibrary, tried);
    return l;
  }
  std::string missing;
#define STOKER_NVJPEG_LOAD(name)                                             \
  l.api.name = reinterpret_cast<decltype(l.api.name)>(dlsym(handle, #name)); \
  if (l.api.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
  STOKER_NVJPEG_FUNCTIONS(STOKER_NVJPEG_LOAD)
#undef STOKER_NVJPEG_LOAD
  if (!missing.empty()) {
    l.why = fmt::format("{} lacks {} (too old an nvJPEG)", l.api.path, missing);
    return l;  // the handle stays open: harmless, and its symbols may be in use elsewhere
  }
  l.ok = true;
  return l;
}

}  // namespace

const NvjpegApi* nvjpeg_api(std::string* why) {
  static const Loaded loaded = load();  // thread-safe initialisation, once
  if (!loaded.ok) {
    if (why != nullptr) *why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace stoker::cuda
