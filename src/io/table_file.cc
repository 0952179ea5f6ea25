#include "io/table_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include "io/cache_file.h"
#include "io/file_util.h"
#include "stoker/log.h"
#include "util/logging.h"

namespace stoker::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "table files are used in place: little-endian hosts only");

constexpr char kMagic[8] = {'S', 'T', 'K', 'T', 'A', 'B', '0', '1'};
constexpr size_t kHeaderBytes = 32;

void pad8(std::string& out) {
  while (out.size() % 8 != 0) out.push_back('\0');
}

template <typename T>
void put_array(std::string& out, std::span<const T> values) {
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

struct Mapping {
  void* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data != nullptr) ::munmap(data, size);
  }
};

// XXH3-64 of [from, size) of `fd`, read in 1 MiB preads (no mapping, so no resident pages).
std::optional<uint64_t> hash_by_reads(int fd, uint64_t from, uint64_t size) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) return std::nullopt;
  std::vector<char> buffer(1 << 20);
  for (uint64_t at = from; at < size;) {
    const ssize_t n = ::pread(fd, buffer.data(), std::min<uint64_t>(buffer.size(), size - at),
                              static_cast<off_t>(at));
    if (n <= 0) return std::nullopt;
    XXH3_64bits_update(state.get(), buffer.data(), static_cast<size_t>(n));
    at += static_cast<uint64_t>(n);
  }
  return XXH3_64bits_digest(state.get());
}

// The arrays of a checked file, or Malformed.
MappedTable decode(const char* base, uint64_t size, std::string_view key,
                   std::shared_ptr<const void> storage, const std::string& source) {
  Reader in(std::string_view(base + kHeaderBytes, size - kHeaderBytes));
  if (in.str("truncated key") != key) throw Malformed{"built from another list or version"};
  MappedTable out;
  out.fingerprint = std::string(in.str("truncated fingerprint"));
  const uint64_t classes = in.count(4, "class");
  for (uint64_t c = 0; c < classes; ++c) out.classes.emplace_back(in.str("truncated class"));
  in.take((8 - (size - in.left()) % 8) % 8, "truncated padding");
  const uint64_t n = in.get<uint64_t>();
  const uint64_t path_bytes = in.get<uint64_t>();
  const uint64_t values = in.get<uint64_t>();
  const uint64_t multi = in.get<uint64_t>();
  if (multi > 1 || (multi == 0 && values != 0)) throw Malformed{"bad multi-label flag"};
  const uint64_t columns = 3 + multi;  // ends, sizes, labels [, label_ends]
  if (n > in.left() / (8 * columns)) throw Malformed{"sample count too large"};
  const auto array = [&](uint64_t count, uint64_t width, const char* what) {
    return in.take(count * width, what);
  };
  SampleView::Arrays a;
  a.ends = {reinterpret_cast<const uint64_t*>(array(n, 8, "truncated ends")), n};
  a.sizes = {reinterpret_cast<const int64_t*>(array(n, 8, "truncated sizes")), n};
  a.labels = {reinterpret_cast<const int64_t*>(array(n, 8, "truncated labels")), n};
  if (multi) {
    a.label_ends = {reinterpret_cast<const uint64_t*>(array(n, 8, "truncated label ends")), n};
    if (values > in.left() / 4) throw Malformed{"label value count too large"};
    a.label_values = {reinterpret_cast<const int32_t*>(array(values, 4, "truncated values")),
                      values};
    in.take((8 - (values * 4) % 8) % 8, "truncated padding");
  }
  a.paths = std::string_view(in.take(path_bytes, "truncated paths"), path_bytes);
  if (in.left() != 0) throw Malformed{"trailing bytes"};
  out.samples = SampleView(a, std::move(storage), source);
  return out;
}

}  // namespace

bool store_table_file(const std::filesystem::path& file, std::string_view key,
                      const SampleView& view, const std::vector<std::string>& classes,
                      const std::string& fingerprint) {
  const SampleView::Arrays& table = view.arrays();
  std::string out(kHeaderBytes, '\0');
  put_str(out, key);
  put_str(out, fingerprint);
  put<uint64_t>(out, classes.size());
  for (const std::string& c : classes) put_str(out, c);
  pad8(out);
  const bool multi = view.multi_label();
  put<uint64_t>(out, table.ends.size());
  put<uint64_t>(out, table.paths.size());
  put<uint64_t>(out, multi ? table.label_values.size() : 0);
  put<uint64_t>(out, multi ? 1 : 0);
  put_array(out, table.ends);
  put_array(out, table.sizes);
  put_array(out, table.labels);
  if (multi) {
    put_array(out, table.label_ends);
    put_array(out, table.label_values);
    pad8(out);
  }
  out.append(table.paths);
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  const auto header = [&](size_t at, uint64_t value) {
    std::string field;
    put<uint64_t>(field, value);
    std::memcpy(out.data() + at, field.data(), 8);
  };
  header(8, out.size());
  header(16, XXH3_64bits(out.data() + kHeaderBytes, out.size() - kHeaderBytes));
  return write_cache_file(file, out, "table cache", "the next open parses the list again");
}

std::optional<MappedTable> load_table_file(const std::filesystem::path& file,
                                           std::string_view key) {
  // O_NONBLOCK: a FIFO planted at the name must not hang the open (it is no table file).
  const int raw = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (raw < 0) return std::nullopt;
  UniqueFd fd(raw);
  const auto miss = [&](std::string_view why) {
    log(LogLevel::kDebug, "table cache {}: {} (rebuilding it)", file.string(), why);
    return std::nullopt;
  };
  struct stat st {};
  char header[kHeaderBytes];
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < static_cast<off_t>(kHeaderBytes) ||
      ::pread(fd.get(), header, kHeaderBytes, 0) != static_cast<ssize_t>(kHeaderBytes) ||
      std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return miss("not a table file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (get_le<uint64_t>(header + 8) != size) return miss("truncated or padded");
  if (get_le<uint64_t>(header + 24) != 0) return miss("unknown flags");
  if (hash_by_reads(fd.get(), kHeaderBytes, size) != get_le<uint64_t>(header + 16)) {
    return miss("checksum mismatch");
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->data = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (mapping->data == MAP_FAILED) {
    mapping->data = nullptr;
    return miss(fmt::format("cannot be mapped ({})", std::strerror(errno)));
  }
  mapping->size = size;
  // Samples are looked up at random: no read-ahead (nor, where the kernel honours it, mapping
  // the neighbours of each page touched), so that only the pages used become resident.
  ::madvise(mapping->data, size, MADV_RANDOM);
  const char* base = static_cast<const char*>(mapping->data);
  try {
    return decode(base, size, key, mapping, file.string());
  } catch (const Malformed& m) {
    return miss(m.why);
  }
}

// ---- TableFileWriter -----------------------------------------------------------------------

// One column of the table, appended to a temporary file through a 1 MiB buffer, then read
// back in order.
struct TableFileWriter::Column {
  std::string path;
  UniqueFd fd;
  std::string buffer;
  uint64_t bytes = 0;  // appended so far
  uint64_t read = 0;   // read back so far

  int append(const void* data, size_t n) {
    buffer.append(static_cast<const char*>(data), n);
    bytes += n;
    return buffer.size() < kBufferBytes ? 0 : flush();
  }
  int flush() {
    const int error = write_fully(fd.get(), buffer);
    buffer.clear();
    return error;
  }
  // The next `out.size()` bytes; false past the end or on a read error.
  bool next(std::span<uint8_t> out) {
    if (out.size() > bytes - read || pread_fully(fd.get(), read, out) != 0) return false;
    read += out.size();
    return true;
  }

  static constexpr size_t kBufferBytes = size_t{1} << 20;
};

TableFileWriter::TableFileWriter(const std::filesystem::path& folder, bool multi_label)
    : multi_(multi_label), fingerprint_(std::make_unique<FingerprintBuilder>()) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  const std::string prefix = (folder / "table").string() + temporary_suffix();
  for (int c = 0; c < kColumns; ++c) {
    auto column = std::make_unique<Column>();
    column->path = fmt::format("{}.column{}", prefix, c);
    column->fd.reset(
        ::open(column->path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!column->fd.valid() && error_ == 0) error_ = errno;
    columns_.push_back(std::move(column));
  }
}

TableFileWriter::~TableFileWriter() {
  for (const auto& c : columns_) {
    if (c->fd.valid()) ::unlink(c->path.c_str());
  }
}

void TableFileWriter::add(std::string_view path, int64_t size, int64_t label,
                          std::span<const int32_t> set) {
  if (error_ != 0) return;
  path_bytes_ += path.size();
  ++n_;
  fingerprint_->sample(path, size, label);
  const auto append = [&](Part part, const void* data, size_t n) {
    if (error_ == 0) error_ = columns_[part]->append(data, n);
  };
  append(kEnds, &path_bytes_, 8);
  append(kSizes, &size, 8);
  append(kLabels, &label, 8);
  append(kPaths, path.data(), path.size());
  if (multi_) {
    values_ += set.size();
    append(kLabelEnds, &values_, 8);
    append(kLabelValues, set.data(), set.size() * sizeof(int32_t));
  }
}

bool TableFileWriter::finish(const std::filesystem::path& file, std::string_view key,
                             const std::vector<std::string>& classes, std::string& fingerprint) {
  const auto fail = [&](const std::string& why) {
    log(LogLevel::kWarning, "cannot write the table cache {}: {} (the list is read again)",
        file.string(), why);
    return false;
  };
  for (const auto& c : columns_) {
    if (error_ == 0 && c->fd.valid()) error_ = c->flush();
  }
  if (error_ != 0) return fail(errno_message(error_));
  // The label sets' part of the fingerprint comes after every sample's.
  if (multi_) {
    std::vector<int32_t> set;
    uint64_t begin = 0;
    for (uint64_t i = 0; i < n_; ++i) {
      uint64_t end = 0;
      if (!columns_[kLabelEnds]->next({reinterpret_cast<uint8_t*>(&end), 8}) || end < begin) {
        return fail("its label columns cannot be read back");
      }
      set.resize(end - begin);
      if (!columns_[kLabelValues]->next({reinterpret_cast<uint8_t*>(set.data()), set.size() * 4})) {
        return fail("its label columns cannot be read back");
      }
      fingerprint_->label_set(set);
      begin = end;
    }
  }
  fingerprint = fingerprint_->digest();

  // The file store_table_file writes: header, key, fingerprint, classes, counts, then the
  // columns copied back in order.
  const std::string temporary = file.string() + temporary_suffix();
  UniqueFd out(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!out.valid()) return fail(errno_message(errno));
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) return fail("out of memory");
  uint64_t size = kHeaderBytes;
  int error = write_fully(out.get(), std::string(kHeaderBytes, '\0'));
  const auto emit = [&](std::string_view bytes) {
    XXH3_64bits_update(state.get(), bytes.data(), bytes.size());
    size += bytes.size();
    if (error == 0) error = write_fully(out.get(), bytes);
  };
  std::string head(kHeaderBytes, '\0');  // so that pad8 aligns as in store_table_file
  put_str(head, key);
  put_str(head, fingerprint);
  put<uint64_t>(head, classes.size());
  for (const std::string& c : classes) put_str(head, c);
  pad8(head);
  put<uint64_t>(head, n_);
  put<uint64_t>(head, path_bytes_);
  put<uint64_t>(head, multi_ ? values_ : 0);
  put<uint64_t>(head, multi_ ? 1 : 0);
  emit(std::string_view(head).substr(kHeaderBytes));
  std::vector<uint8_t> chunk(Column::kBufferBytes);
  const auto copy = [&](Column& c) {
    c.read = 0;
    while (error == 0 && c.read < c.bytes) {
      const auto n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), c.bytes - c.read));
      if (!c.next(std::span(chunk).first(n))) {
        error = EIO;
        break;
      }
      emit(std::string_view(reinterpret_cast<const char*>(chunk.data()), n));
    }
  };
  copy(*columns_[kEnds]);
  copy(*columns_[kSizes]);
  copy(*columns_[kLabels]);
  if (multi_) {
    copy(*columns_[kLabelEnds]);
    copy(*columns_[kLabelValues]);
    emit(std::string_view("\0\0\0\0\0\0\0\0", (8 - (values_ * 4) % 8) % 8));
  }
  copy(*columns_[kPaths]);
  std::string header(kMagic, sizeof(kMagic));
  put<uint64_t>(header, size);
  put<uint64_t>(header, XXH3_64bits_digest(state.get()));
  put<uint64_t>(header, 0);
  if (error == 0) error = write_fully(out.get(), header, 0);
  // close() reports deferred write errors on network file systems.
  if (error == 0 && ::close(out.release()) != 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), file.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    return fail(errno_message(error));
  }
  return true;
}

}  // namespace stoker::io
