// open_image_folder with a report of how the index was obtained, for tests and tools that
// need to tell a cache hit from a walk (private to src/io).
#pragma once

#include <filesystem>
#include <memory>

#include "stoker/dataset.h"

namespace stoker::io {

struct ImageFolderOpening {
  std::shared_ptr<Dataset> dataset;
  bool from_cache = false;           // the index came from the cache file, no walk
  bool cache_written = false;        // the walk's index was written to the cache file
  std::filesystem::path cache_file;  // empty when the cache is disabled
};

ImageFolderOpening open_image_folder_traced(const std::filesystem::path& root,
                                            const ImageFolderConfig& options);

}  // namespace stoker::io
