// The packed dataset reader: open_packed, verify_packed, inspect_packed (stoker/packed.h).
//
// Memory at open is O(shards + classes): labels, offsets and checksums stay in the mapped
// shard indexes, and a sample's name is formatted on demand. A shard is opened on first use:
// its header and footer read, its index read once (its checksum checked, so that labels read
// from it later are trustworthy) and the shard checked against its manifest entry. open()
// itself opens every shard at once while the indexes total at most kEagerIndexBytes
// (packed_dataset.h: a damaged shard is then an error at open); past that it reads only the
// manifest, so that a 10^9-sample pack opens in a fraction of a second (docs/perf.md).
#include "io/packed_dataset.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/field_json.h"
#include "io/json_limits.h"
#include "io/open_all.h"
#include "io/packed_manifest.h"
#include "io/packed_shard.h"
#include "io/read_ahead.h"
#include "io/remote.h"
#include "stoker/error.h"
#include "stoker/packed.h"
#include "util/check.h"
#include "util/mutex.h"
#include "util/redact.h"
#include "util/text.h"

namespace stoker {
namespace io {
namespace {

// The pack-wide checks that need every shard: source ranges that follow each other and cover
// the manifest's source samples. `shard(i)` gives shard i, opened; `name` names the pack.
template <typename ShardAt>
void check_source_ranges(const Manifest& m, const std::string& name, const ShardAt& shard) {
  uint64_t next_source = 0;
  for (size_t i = 0; i < m.shards.size(); ++i) {
    const ShardFile& f = shard(i);
    STOKER_CHECK(f.first_source() == next_source, "{}: covers source samples from {}, expected {}",
                 f.name(), f.first_source(), next_source);
    next_source = f.first_source() + f.source_count();
  }
  STOKER_CHECK(next_source == m.source_samples,
               "{}: shards cover {} source samples, the manifest says {}", name, next_source,
               m.source_samples);
}

// A record's label: a class of the pack's, or kNoLabel in a label-free (version-2) pack.
bool label_ok(uint32_t label, size_t classes) {
  return classes == 0 ? label == packed::kNoLabel : label < classes;
}

// verify: record j's field block and its values (text is UTF-8, json parses).
void check_fields(const Manifest& m, std::span<const uint8_t> payload, const std::string& name,
                  uint64_t j, uint64_t offset) {
  size_t image_length = 0;
  const std::string error = field_block_error(payload, m.fields.size(), image_length);
  STOKER_CHECK(error.empty(), "{}: record {} at byte offset {}: {}", name, j, offset, error);
  for (size_t k = 0; k < m.fields.size(); ++k) {
    const auto bytes = field_bytes(payload, image_length, k);
    const std::string_view value(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    size_t bad_at = 0;
    if (m.fields[k].kind == FieldKind::kText) {
      STOKER_CHECK(util::is_utf8(value, &bad_at),
                   "{}: record {} at byte offset {}: field '{}' is not UTF-8 text (byte {})", name,
                   j, offset, m.fields[k].name, bad_at);
    } else if (m.fields[k].kind == FieldKind::kJson) {
      STOKER_CHECK(!json_nested_too_deep(value) && nlohmann::json::accept(value),
                   "{}: record {} at byte offset {}: field '{}' is not JSON", name, j, offset,
                   m.fields[k].name);
    }
  }
}

// Checks a shard against its manifest entry (the source ranges across shards are checked by
// check_source_ranges once all are open).
void check_against_manifest(const ShardFile& shard, const Manifest& m, size_t i) {
  const ManifestShard& s = m.shards[i];
  const std::string& name = shard.name();
  STOKER_CHECK(shard.version() == m.version, "{}: format version {}, the manifest's is {}", name,
               shard.version(), m.version);
  STOKER_CHECK(shard.file_size() == s.bytes,
               "{}: {} bytes, the manifest says {} (truncated or replaced shard)", name,
               shard.file_size(), s.bytes);
  STOKER_CHECK(shard.options_hash() == m.options_hash,
               "{}: written with other pack options than the manifest's (options hash {} vs {})",
               name, hex64(shard.options_hash()), hex64(m.options_hash));
  STOKER_CHECK(shard.shard_number() == i, "{}: header says it is shard {}, not {}", name,
               shard.shard_number(), i);
  STOKER_CHECK(shard.record_count() == s.records && shard.first_record() == s.first_record,
               "{}: holds records [{}, +{}), the manifest says [{}, +{})", name,
               shard.first_record(), shard.record_count(), s.first_record, s.records);
  STOKER_CHECK(shard.checksum() == s.checksum, "{}: checksum {} differs from the manifest's {}",
               name, hex64(shard.checksum()), hex64(s.checksum));
}

struct OpenedPack {
  std::filesystem::path folder;
  std::string manifest_name;
  Manifest manifest;
  std::vector<ShardFile> shards;
};

OpenedPack open_pack(const std::filesystem::path& path, const IoConfig& io) {
  OpenedPack p;
  p.manifest = read_manifest(path, p.folder, p.manifest_name, io);
  const Manifest& m = p.manifest;
  p.shards.reserve(m.shards.size());
  for (size_t i = 0; i < m.shards.size(); ++i) {
    const std::string file = (p.folder / m.shards[i].file).string();
    p.shards.push_back(ShardFile::open(file, file, io));
    check_against_manifest(p.shards.back(), m, i);
  }
  check_source_ranges(m, p.manifest_name,
                      [&](size_t i) -> const ShardFile& { return p.shards[i]; });
  return p;
}

class PackedDataset final : public Dataset {
 public:
  PackedDataset(std::filesystem::path folder, Manifest manifest, uint64_t eager_index_bytes,
                const IoConfig& io)
      : io_(io),
        folder_(folder.string()),
        manifest_(std::move(manifest)),
        slots_(manifest_.shards.size()),
        records_(static_cast<int64_t>(manifest_.records)),
        fingerprint_(hex64(manifest_.fingerprint)),
        remote_(is_remote_location(folder_)) {
    starts_.reserve(manifest_.shards.size());
    for (const ManifestShard& s : manifest_.shards) starts_.push_back(s.first_record);
    if (manifest_.records * packed::kIndexEntrySize <= eager_index_bytes) {
      // Every shard now, with the pack-wide checks that need them all; remote ones in
      // parallel (a HEAD and an index read each).
      if (remote_) open_all(manifest_.shards.size(), [this](size_t i) { shard(i); });
      check_source_ranges(manifest_, folder_,
                          [this](size_t i) -> const ShardFile& { return shard(i); });
    }
    if (remote_) {
      // Remote shards: the records the loader announces are fetched ahead, neighbours together
      // (the same read-ahead as remote WebDataset shards; its settings in docs/format.md).
      if (io_.read_ahead_connections > 0) {
        read_ahead_ = std::make_unique<ReadAhead>(
            [this](std::span<const int64_t> run, std::vector<std::vector<uint8_t>>& out) {
              fetch_run(run, out);
            },
            [this](int64_t index) { return stored(index).end - stored(index).begin; },
            [this](std::vector<int64_t> indices) {
              return group_into_runs(std::move(indices), [this](int64_t i) { return stored(i); });
            },
            io_.read_ahead_connections, io_.read_ahead_bytes);
      }
    }
  }

  ~PackedDataset() override {
    read_ahead_.reset();  // its threads read shards: stopped before they go
  }

  int64_t size() const override { return records_; }

  int64_t label(int64_t index) const override {
    const auto [s, j] = locate(index);
    const uint32_t label = shard(s).label(j);
    // The index checksum vouches for the bytes, not for the writer: check the range too.
    STOKER_CHECK_DATA(label_ok(label, classes().size()), "{}#{}: label {} out of range [0, {})",
                      shard_name(s), j, label, classes().size());
    return label == packed::kNoLabel ? int64_t{-1} : int64_t{label};
  }

  std::string name(int64_t index) const override {
    const auto [s, j] = locate(index);
    return fmt::format("{}#{}", shard_name(s), j);
  }

  void read(int64_t index, std::vector<uint8_t>& out) const override {
    if (!read_ahead_ || !read_ahead_->take(index, out)) {
      const auto [s, j] = locate(index);
      shard(s).read_record(j, out);
    }
    if (manifest_.version < packed::kFieldsVersion) return;
    const size_t image = image_length(index, out);
    if (!manifest_.fields.empty()) {
      // The field block, checked with the record, kept for this thread's read_field calls of
      // the same sample (a loader worker reads the image, then its fields): one read, not 1+F.
      LastFields& last = last_fields();
      last.dataset = 0;
      last.payload.assign(out.begin() + static_cast<std::ptrdiff_t>(image), out.end());
      last.image_length = 0;
      last.dataset = id_;
      last.index = index;
    }
    out.resize(image);
  }
  bool has_field(const std::string& field) const override { return field_slot(field).has_value(); }
  FieldKind field_kind(const std::string& field) const override {
    const auto slot = field_slot(field);
    if (!slot) return Dataset::field_kind(field);
    return slot->second.empty() ? manifest_.fields[slot->first].kind : FieldKind::kJson;
  }
  // Reads the record (one read, one checksum, as read()) and copies the field out of it.
  void read_field(int64_t index, const std::string& field, std::string& out) const override {
    const auto slot = field_slot(field);
    if (!slot) return Dataset::read_field(index, field, out);
    LastFields& last = last_fields();
    if (last.dataset != id_ || last.index != index) {
      // Forgotten first: a read that throws half-way leaves no block claiming to be another's.
      last.dataset = 0;
      const auto [s, j] = locate(index);
      shard(s).read_record(j, last.payload);
      last.image_length = image_length(index, last.payload);
      last.dataset = id_;
      last.index = index;
    }
    const std::span<const uint8_t> bytes =
        field_bytes(last.payload, last.image_length, slot->first);
    out.assign(bytes.begin(), bytes.end());
    if (!slot->second.empty()) {
      select_json_key(out, slot->second, name(index), field);
    }
  }
  void read_ahead(std::span<const int64_t> indices) const override {
    if (!read_ahead_) return;
    // Only records whose shard opens and whose entry is sound are fetched ahead: opening a
    // shard (a HEAD and its index) happens here, not under the read-ahead's lock, and a
    // record that cannot be located is left to read(), which reports it to its own reader.
    std::vector<int64_t> valid;
    for (const int64_t i : indices) {
      if (i < 0 || i >= records_) continue;
      try {
        shard(locate(i).first);
      } catch (const Error&) {
        continue;
      }
      if (stored(i).end != 0) valid.push_back(i);
    }
    read_ahead_->hint(valid);
  }
  void cancel_read_ahead() const override {
    if (read_ahead_) read_ahead_->clear();
  }
  std::vector<int64_t> shard_ends() const override {
    std::vector<int64_t> ends;
    for (const ManifestShard& s : manifest_.shards) {
      ends.push_back(static_cast<int64_t>(s.first_record + s.records));
    }
    return ends;
  }
  bool prefers_shard_order() const override { return remote_; }

  const std::vector<std::string>& classes() const override { return manifest_.classes; }
  std::string fingerprint() const override { return fingerprint_; }
  std::string describe() const override {
    return fmt::format("packed {} ({} samples, {} classes, {} shards)", util::redact_urls(folder_),
                       records_, manifest_.classes.size(), manifest_.shards.size());
  }

 private:
  // (shard, record within shard) of dataset index `index`: a binary search over the shard
  // starts, O(log shards).
  std::pair<size_t, uint64_t> locate(int64_t index) const {
    STOKER_CHECK(index >= 0 && index < records_, "{}: sample index {} out of range [0, {})",
                 folder_, index, records_);
    const auto u = static_cast<uint64_t>(index);
    const size_t s =
        static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), u) - starts_.begin()) -
        1;
    return {s, u - starts_[s]};
  }

  // Where field `field` lies in a record: (its position among the manifest's fields, "") for
  // a kept field; for "json.KEY" when only "json" was kept, (json's position, "KEY").
  std::optional<std::pair<size_t, std::string>> field_slot(const std::string& field) const {
    const auto position = [this](std::string_view name) -> std::optional<size_t> {
      for (size_t k = 0; k < manifest_.fields.size(); ++k) {
        if (manifest_.fields[k].name == name) return k;
      }
      return std::nullopt;
    };
    if (const auto k = position(field)) return std::pair{*k, std::string()};
    if (field.starts_with("json.") && field.size() > 5) {
      if (const auto k = position("json")) return std::pair{*k, field.substr(5)};
    }
    return std::nullopt;
  }

  // The image's length in record `index`'s payload after its field block is checked.
  size_t image_length(int64_t index, std::span<const uint8_t> payload) const {
    size_t length = 0;
    const std::string error = field_block_error(payload, manifest_.fields.size(), length);
    if (!error.empty()) {
      const auto [s, j] = locate(index);
      STOKER_BAD_DATA("{}: record {} at byte offset {}: {}", shard_name(s), j,
                      shard(s).entry(j).offset, error);
    }
    return length;
  }

  // A thread's last record fields: the field block (payload from image_length on) of sample
  // `index` of the dataset whose id_ is `dataset`. Ids, not addresses: a dataset made at a
  // freed one's address must not find its block.
  struct LastFields {
    uint64_t dataset = 0;
    int64_t index = -1;
    size_t image_length = 0;
    std::vector<uint8_t> payload;
  };
  static LastFields& last_fields() {
    thread_local LastFields last;
    return last;
  }
  static uint64_t next_id() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  std::string shard_name(size_t s) const {
    return (std::filesystem::path(folder_) / manifest_.shards[s].file).string();
  }

  // Shard s, opened and checked against the manifest on first use. A failure (a missing or
  // damaged shard, an I/O error) is thrown to this caller and tried again by the next one.
  const ShardFile& shard(size_t s) const {
    if (const ShardFile* f = slots_[s].load(std::memory_order_acquire)) return *f;
    util::MutexLock lock(opening_[s % kOpeningStripes]);
    if (const ShardFile* f = slots_[s].load(std::memory_order_acquire)) return *f;
    const std::string file = shard_name(s);
    auto opened = std::make_unique<ShardFile>(ShardFile::open(file, file, io_));
    check_against_manifest(*opened, manifest_, s);
    slots_[s].store(opened.get(), std::memory_order_release);
    return *opened.release();
  }

  // Where record `index` lies: its shard and the bytes of its header and payload. An entry
  // that cannot be read or is corrupt gives an empty range (read() then reports it).
  StoredRange stored(int64_t index) const {
    const auto [s, j] = locate(index);
    try {
      const IndexEntry e = shard(s).checked_entry(j);
      return StoredRange{s, e.offset, e.offset + packed::kRecordHeaderSize + e.payload_length};
    } catch (const Error&) {
      return StoredRange{s, 0, 0};
    }
  }

  // Reads a run of records (group_into_runs) with one range read and checks each.
  void fetch_run(std::span<const int64_t> run, std::vector<std::vector<uint8_t>>& out) const {
    out.resize(run.size());
    if (run.size() == 1) {
      const auto [s, j] = locate(run[0]);
      shard(s).read_record(j, out[0]);
      return;
    }
    // The bytes from the lowest record start to the highest end (group_into_runs sorts a
    // run, but the ranges are looked up again here).
    uint64_t begin = UINT64_MAX, end = 0;
    const size_t object = locate(run.front()).first;
    for (const int64_t i : run) {
      const StoredRange r = stored(i);
      STOKER_CHECK(r.object == object && r.end > r.begin, "{}: record {} is not in its run",
                   shard_name(object), i);
      begin = std::min(begin, r.begin);
      end = std::max(end, r.end);
    }
    const ShardFile& file = shard(object);
    std::vector<uint8_t> bytes(end - begin);
    file.read_bytes(begin, bytes, fmt::format("records at byte offsets {} to {}", begin, end));
    for (size_t k = 0; k < run.size(); ++k) {
      file.record_from(locate(run[k]).second, bytes, begin, out[k]);
    }
  }

  static constexpr size_t kOpeningStripes = 64;

  IoConfig io_;  // for the shards opened on first use
  std::string folder_;
  Manifest manifest_;
  // Shard i once opened, else null; owns what it points to (also when the constructor's
  // eager opening throws part-way).
  class OpenedShards {
   public:
    explicit OpenedShards(size_t n) : n_(n), slots_(new std::atomic<const ShardFile*>[n]) {
      for (size_t i = 0; i < n_; ++i) slots_[i].store(nullptr);
    }
    ~OpenedShards() {
      for (size_t i = 0; i < n_; ++i) delete slots_[i].load();
    }
    OpenedShards(const OpenedShards&) = delete;
    OpenedShards& operator=(const OpenedShards&) = delete;
    std::atomic<const ShardFile*>& operator[](size_t i) const { return slots_[i]; }

   private:
    size_t n_;
    std::unique_ptr<std::atomic<const ShardFile*>[]> slots_;
  };
  OpenedShards slots_;
  mutable util::Mutex opening_[kOpeningStripes];  // serialise the opening of a shard
  std::vector<uint64_t> starts_;
  int64_t records_ = 0;
  std::string fingerprint_;
  bool remote_ = false;
  const uint64_t id_ = next_id();  // for the threads' LastFields
  std::unique_ptr<ReadAhead> read_ahead_;
};

// The first 4 KiB of a file, or "" when it cannot be read.
std::string head_of(const std::filesystem::path& file) {
  const int raw = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (raw < 0) return "";
  UniqueFd fd(raw);
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd.get(), text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

bool looks_like_manifest(const std::filesystem::path& file) {
  // serialize_manifest writes "format" first; a quick look spares parsing a file list.
  const std::string head = head_of(file);
  return head.find(fmt::format("\"format\": \"{}\"", packed::kManifestFormat)) !=
             std::string::npos ||
         head.find(fmt::format("\"format\":\"{}\"", packed::kManifestFormat)) != std::string::npos;
}

}  // namespace

std::shared_ptr<Dataset> open_packed_dataset(const std::filesystem::path& path,
                                             uint64_t eager_index_bytes, const IoConfig& io) {
  io.validate();
  std::filesystem::path folder;
  std::string manifest_name;
  Manifest manifest = read_manifest(path, folder, manifest_name, io);
  return std::make_shared<PackedDataset>(std::move(folder), std::move(manifest), eager_index_bytes,
                                         io);
}

}  // namespace io

bool is_packed_dataset(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return false;
  if (std::filesystem::is_directory(status)) {
    const auto manifest = path / packed::kManifestName;
    return std::filesystem::is_regular_file(manifest, ec) && io::looks_like_manifest(manifest);
  }
  return std::filesystem::is_regular_file(status) && io::looks_like_manifest(path);
}

std::shared_ptr<Dataset> open_packed(const std::filesystem::path& path, const IoConfig& io) {
  return io::open_packed_dataset(path, io::kEagerIndexBytes, io);
}

VerifyReport verify_packed(const std::filesystem::path& path,
                           const std::function<void(int64_t, int64_t)>& progress) {
  io::OpenedPack p = io::open_pack(path, IoConfig{});
  const io::Manifest& m = p.manifest;
  int64_t total = 0;
  for (const io::ShardFile& s : p.shards) total += static_cast<int64_t>(s.file_size());
  VerifyReport report;
  uint64_t payload = 0;
  size_t skipped_at = 0;
  std::vector<uint8_t> buffer;
  for (const io::ShardFile& shard : p.shards) {
    const std::string& name = shard.name();
    // Records must tile [header end, index offset) exactly: then every byte of the file is
    // covered by some checksum (header, record, index, footer).
    uint64_t expected = packed::kShardHeaderSize;
    for (uint64_t j = 0; j < shard.record_count(); ++j) {
      const io::IndexEntry e = shard.entry(j);
      STOKER_CHECK(e.offset == expected,
                   "{}: record {} at byte offset {}: the index places it at byte offset {} (gap "
                   "or overlap)",
                   name, j, expected, e.offset);
      io::RecordInfo info;
      shard.read_record(j, buffer, &info);
      STOKER_CHECK(static_cast<uint8_t>(info.encoding) <= packed::kMaxEncoding,
                   "{}: record {} at byte offset {}: unknown encoding {}", name, j, e.offset,
                   static_cast<int>(info.encoding));
      STOKER_CHECK(io::label_ok(info.label, m.classes.size()),
                   "{}: record {} at byte offset {}: label {} out of range [0, {})", name, j,
                   e.offset, info.label, m.classes.size());
      if (m.version >= packed::kFieldsVersion) io::check_fields(m, buffer, name, j, e.offset);
      expected += packed::kRecordHeaderSize + e.payload_length;
      payload += e.payload_length;
      if (progress && (j & 1023) == 0) {
        progress(report.bytes + static_cast<int64_t>(expected), total);
      }
    }
    STOKER_CHECK(expected == shard.index_offset(),
                 "{}: {} stray bytes at byte offset {} before the index", name,
                 shard.index_offset() - expected, expected);
    for (const io::SkippedSample& s : shard.skipped()) {
      STOKER_CHECK(skipped_at < m.skipped.size() && m.skipped[skipped_at].first == s.name,
                   "{}: skipped sample \"{}\" is not the manifest's skipped entry {}", name, s.name,
                   skipped_at);
      ++skipped_at;
    }
    report.records += static_cast<int64_t>(shard.record_count());
    report.bytes += static_cast<int64_t>(shard.file_size());
    ++report.shards;
    if (progress) progress(report.bytes, total);
  }
  STOKER_CHECK(skipped_at == m.skipped.size(), "{}: lists {} skipped samples, the shards {}",
               p.manifest_name, m.skipped.size(), skipped_at);
  STOKER_CHECK(payload == m.payload_bytes, "{}: payload_bytes is {}, the shards hold {}",
               p.manifest_name, m.payload_bytes, payload);
  return report;
}

PackedInfo inspect_packed(const std::filesystem::path& path) {
  io::OpenedPack p = io::open_pack(path, IoConfig{});
  const io::Manifest& m = p.manifest;
  PackedInfo info;
  info.folder = p.folder;
  info.version = static_cast<int>(m.version);
  info.records = static_cast<int64_t>(m.records);
  info.source_samples = static_cast<int64_t>(m.source_samples);
  info.classes = m.classes;
  info.class_counts.assign(m.classes.size(), 0);
  for (const io::ShardFile& s : p.shards) {
    for (uint64_t j = 0; j < s.record_count(); ++j) {
      const uint32_t label = s.label(j);
      STOKER_CHECK_DATA(io::label_ok(label, m.classes.size()),
                        "{}#{}: label {} out of range [0, {})", s.name(), j, label,
                        m.classes.size());
      if (label != packed::kNoLabel) ++info.class_counts[label];
    }
    info.bytes += static_cast<int64_t>(s.file_size());
  }
  for (const io::ManifestShard& s : m.shards) {
    info.shards.push_back(PackedShardInfo{s.file, static_cast<int64_t>(s.records),
                                          static_cast<int64_t>(s.first_record),
                                          static_cast<int64_t>(s.bytes), io::hex64(s.checksum)});
  }
  for (const io::ManifestField& f : m.fields) info.fields.emplace_back(f.name, to_string(f.kind));
  if (!m.fields.empty()) {
    // The first record's values: what `inspect` shows as an example.
    std::vector<uint8_t> record;
    p.shards[0].read_record(0, record);
    size_t image_length = 0;
    const std::string error = io::field_block_error(record, m.fields.size(), image_length);
    STOKER_CHECK_DATA(error.empty(), "{}: record 0: {}", p.shards[0].name(), error);
    for (size_t k = 0; k < m.fields.size(); ++k) {
      const auto bytes = io::field_bytes(record, image_length, k);
      info.first_record_fields.emplace_back(bytes.begin(), bytes.end());
    }
  }
  info.options_json = m.options_json;
  info.source = m.source;
  info.fingerprint = io::hex64(m.fingerprint);
  info.payload_bytes = static_cast<int64_t>(m.payload_bytes);
  info.skipped = m.skipped;
  return info;
}

}  // namespace stoker
