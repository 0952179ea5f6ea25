#include "stoker/dataset.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "io/file_util.h"
#include "io/remote.h"
#include "io/webdataset.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "stoker/packed.h"
#include "util/check.h"
#include "util/logging.h"
#include "util/stop.h"

namespace stoker {

const char* to_string(FieldKind kind) {
  switch (kind) {
    case FieldKind::kText:
      return "text";
    case FieldKind::kJson:
      return "json";
    case FieldKind::kBytes:
      return "bytes";
  }
  return "bytes";
}

FieldKind parse_field_kind(const std::string& name) {
  for (const FieldKind k : {FieldKind::kText, FieldKind::kJson, FieldKind::kBytes}) {
    if (name == to_string(k)) return k;
  }
  STOKER_THROW_ARG("unknown field kind '{}' (expected text, json or bytes)", name);
}

FieldKind member_field_kind(const std::string& field) {
  if (field == "json" || field.starts_with("json.")) return FieldKind::kJson;
  if (field == "txt" || field == "text" || field == "caption" || field == "cls" ||
      field.ends_with(".txt")) {
    return FieldKind::kText;
  }
  return FieldKind::kBytes;
}

void Dataset::read_field(int64_t /*index*/, const std::string& field, std::string& /*out*/) const {
  STOKER_THROW_ARG(
      "{}: has no per-sample fields (asked for '{}'): fields come from WebDataset "
      "members, list columns and packs made with --fields",
      describe(), field);
}

std::shared_ptr<Dataset> open_dataset(const std::filesystem::path& path,
                                      const FileListConfig& lists, const IoConfig& io) {
  const std::string name = path.string();
  STOKER_CHECK_ARG(!name.empty(), "dataset: empty path");
  io.validate();
  // One deadline for the whole open, every shard's requests and retries (io_config.h).
  const util::StopScope deadline(
      nullptr, io.open_timeout_s,
      fmt::format("not opened within {:g} s (IoConfig::open_timeout_s, STOKER_OPEN_TIMEOUT; a "
                  "dataset whose shard indexes are not cached yet may need more)",
                  io.open_timeout_s));
  // WebDataset shards: a pattern or a .tar path or URL (not a file system entry); another
  // remote location is a packed dataset's folder or manifest.
  if (io::is_webdataset_location(name)) return io::open_webdataset(name, lists, {}, io);
  if (io::is_remote_location(name)) return open_packed(path, io);
  struct stat st;
  if (::stat(name.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ENOENT) STOKER_THROW_IO(error, name, "{}: no such file or directory", name);
    STOKER_THROW_IO(error, name, "{}: {}", name, io::errno_message(error));
  }
  // A packed dataset is a folder (or a manifest file) whose manifest says so; checked first
  // because its folder holds no class sub-folders and its manifest is not a file list.
  if ((S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) && is_packed_dataset(path)) {
    return open_packed(path, io);
  }
  if (S_ISDIR(st.st_mode)) return open_image_folder(path);
  if (S_ISREG(st.st_mode)) return open_file_list(path, lists);
  STOKER_THROW_ARG("{}: not a folder or a regular file", name);
}

namespace {

// A read of sample `index` tried again after an I/O error as `policy` says.
template <typename Read>
void with_retries(const Dataset& data, int64_t index, const IoRetryPolicy& policy, Read&& read) {
  // The sample's only retries: below, each request is sent once (io/remote.h).
  const io::RetriedByCaller retried;
  for (int attempt = 1;; ++attempt) {
    try {
      read();
      return;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo || util::stop_reason()) throw;  // stopped: not tried again
      if (attempt >= policy.attempts) {
        throw Error(
            ErrorKind::kIo,
            fmt::format("{} (tried {} time{})", e.message(), attempt, attempt == 1 ? "" : "s"),
            e.sys_errno(), e.path(), e.where());
      }
      log(LogLevel::kWarning, "{}: I/O error, trying again in {:.2f} s ({} of {}): {}",
          data.name(index), policy.wait_before(attempt + 1), attempt, policy.attempts, e.message());
    }
    if (!util::sleep_unless_stopped(policy.wait_before(attempt + 1))) {
      util::throw_if_stopped(data.name(index));  // a cancelled loader: no more tries
    }
  }
}

}  // namespace

void read_with_retries(const Dataset& data, int64_t index, std::vector<uint8_t>& out,
                       const IoRetryPolicy& policy) {
  with_retries(data, index, policy, [&] { data.read(index, out); });
}

void read_field_with_retries(const Dataset& data, int64_t index, const std::string& field,
                             std::string& out, const IoRetryPolicy& policy) {
  with_retries(data, index, policy, [&] { data.read_field(index, field, out); });
}

}  // namespace stoker
