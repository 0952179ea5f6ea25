#include "io/table_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

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

}  // namespace stoker::io
