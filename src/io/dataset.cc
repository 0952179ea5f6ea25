#include "stoker/dataset.h"

#include <sys/stat.h>

#include <cerrno>

#include "io/file_util.h"
#include "stoker/error.h"
#include "stoker/packed.h"

namespace stoker {

std::shared_ptr<Dataset> open_dataset(const std::filesystem::path& path) {
  const std::string name = path.string();
  STOKER_CHECK(!name.empty(), "dataset: empty path");
  struct stat st;
  if (::stat(name.c_str(), &st) != 0) {
    const int error = errno;
    STOKER_CHECK(error != ENOENT, "{}: no such file or directory", name);
    STOKER_THROW("{}: {}", name, io::errno_message(error));
  }
  // A packed dataset is a folder (or a manifest file) whose manifest says so; checked first
  // because its folder holds no class sub-folders and its manifest is not a file list.
  if ((S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) && is_packed_dataset(path)) {
    return open_packed(path);
  }
  if (S_ISDIR(st.st_mode)) return open_image_folder(path);
  if (S_ISREG(st.st_mode)) return open_file_list(path);
  STOKER_THROW("{}: not a folder or a regular file", name);
}

}  // namespace stoker
