#include "io/packed_shard.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

#include "io/remote.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {

using namespace packed;  // NOLINT: the format's constants, used throughout this file

namespace {

// Fuzzing builds cannot forge XXH3 values, so they skip the comparisons (and only them) to let
// the fuzzer reach the bounds checks behind them; every other build verifies.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kVerifyChecksums = false;
#else
constexpr bool kVerifyChecksums = true;
#endif

bool checksum_ok(uint64_t stored, uint64_t computed) {
  return !kVerifyChecksums || stored == computed;
}

// Writes everything or throws.
void write_all(int fd, const uint8_t* data, size_t size, const std::string& name) {
  const int error = write_fully(fd, std::string_view(reinterpret_cast<const char*>(data), size));
  if (error != 0) STOKER_THROW_IO(error, name, "{}: write failed: {}", name, errno_message(error));
}

void fsync_or_throw(int fd, const std::string& name) {
  if (::fsync(fd) != 0)
    STOKER_THROW_IO(errno, name, "{}: fsync failed: {}", name, errno_message(errno));
}

}  // namespace

uint64_t record_checksum(const uint8_t* header24, std::span<const uint8_t> payload) {
  const uint64_t seed = XXH3_64bits(header24, record::kChecksum);
  return XXH3_64bits_withSeed(payload.data(), payload.size(), seed);
}

std::string field_block_error(std::span<const uint8_t> payload, size_t field_count,
                              size_t& image_length) {
  if (payload.size() < kFieldTrailerSize) {
    return fmt::format("bad field block (a payload of {} bytes has no room for its {}-byte end)",
                       payload.size(), kFieldTrailerSize);
  }
  const uint8_t* end = payload.data() + payload.size();
  const uint32_t count = load_u32(end - 8);
  const uint32_t length = load_u32(end - 4);
  if (count != field_count) {
    return fmt::format("bad field block (field_count {}, the manifest lists {})", count,
                       field_count);
  }
  if (length > payload.size() - kFieldTrailerSize) {
    return fmt::format("bad field block (fields_length {} in a payload of {} bytes)", length,
                       payload.size());
  }
  image_length = payload.size() - kFieldTrailerSize - length;
  // The entries must tile fields_length exactly.
  uint64_t at = 0;
  for (size_t k = 0; k < field_count; ++k) {
    if (length - at < 4) return fmt::format("bad field block (field {} runs past its end)", k);
    at += 4 + uint64_t{load_u32(payload.data() + image_length + at)};
    if (at > length) return fmt::format("bad field block (field {} runs past its end)", k);
  }
  if (at != length) {
    return fmt::format("bad field block ({} stray bytes after the last field)", length - at);
  }
  return {};
}

std::span<const uint8_t> field_bytes(std::span<const uint8_t> payload, size_t image_length,
                                     size_t k) {
  size_t at = image_length;
  for (size_t i = 0;; ++i) {
    const uint32_t length = load_u32(payload.data() + at);
    if (i == k) return payload.subspan(at + 4, length);
    at += 4 + size_t{length};
  }
}

void append_field_block(std::vector<uint8_t>& payload, std::span<const std::string> values) {
  const size_t start = payload.size();
  for (const std::string& v : values) {
    STOKER_CHECK(v.size() <= kMaxPayloadLength, "a field of {} bytes above the cap", v.size());
    uint8_t length[4];
    store_u32(length, static_cast<uint32_t>(v.size()));
    payload.insert(payload.end(), length, length + 4);
    payload.insert(payload.end(), v.begin(), v.end());
  }
  const uint64_t fields_length = payload.size() - start;
  STOKER_CHECK(fields_length <= kMaxPayloadLength, "fields of {} bytes above the cap",
               fields_length);
  uint8_t trailer[kFieldTrailerSize];
  store_u32(trailer, static_cast<uint32_t>(values.size()));
  store_u32(trailer + 4, static_cast<uint32_t>(fields_length));
  payload.insert(payload.end(), trailer, trailer + kFieldTrailerSize);
}

std::string shard_file_name(uint64_t number) {
  return fmt::format("{}{:05d}{}", kShardPrefix, number, kShardSuffix);
}

// ---------------------------------------------------------------------------------------------
// ShardHeader, ShardFooter

std::array<uint8_t, kShardHeaderSize> ShardHeader::encode() {
  std::array<uint8_t, kShardHeaderSize> bytes{};
  uint8_t* h = bytes.data();
  std::memcpy(h + header::kMagic, kShardMagic, sizeof kShardMagic);
  store_u32(h + header::kVersion, version);
  store_u32(h + header::kHeaderSize, kShardHeaderSize);
  store_u64(h + header::kOptionsHash, options_hash);
  store_u64(h + header::kShardNumber, shard_number);
  store_u64(h + header::kFirstRecord, first_record);
  store_u64(h + header::kFirstSource, first_source);
  checksum = XXH3_64bits(h, header::kChecksum);
  store_u64(h + header::kChecksum, checksum);
  return bytes;
}

ShardHeader ShardHeader::decode(std::span<const uint8_t, kShardHeaderSize> bytes,
                                const std::string& name) {
  const uint8_t* h = bytes.data();
  STOKER_CHECK_DATA(std::memcmp(h + header::kMagic, kShardMagic, sizeof kShardMagic) == 0,
                    "{}: not a stoker shard (bad magic at byte offset 0)", name);
  const uint32_t version = load_u32(h + header::kVersion);
  STOKER_CHECK_DATA(version >= kFormatVersion && version <= kLatestVersion,
                    "{}: unsupported shard format version {} at byte offset {} (this build reads "
                    "versions {} to {})",
                    name, version, header::kVersion, kFormatVersion, kLatestVersion);
  const uint32_t header_size = load_u32(h + header::kHeaderSize);
  STOKER_CHECK_DATA(header_size == kShardHeaderSize,
                    "{}: corrupt header: header size {} at byte offset {} (expected {})", name,
                    header_size, header::kHeaderSize, kShardHeaderSize);
  ShardHeader r;
  r.version = version;
  r.checksum = load_u64(h + header::kChecksum);
  STOKER_CHECK_DATA(checksum_ok(r.checksum, XXH3_64bits(h, header::kChecksum)),
                    "{}: header checksum mismatch (header at byte offset 0)", name);
  r.options_hash = load_u64(h + header::kOptionsHash);
  r.shard_number = load_u64(h + header::kShardNumber);
  r.first_record = load_u64(h + header::kFirstRecord);
  r.first_source = load_u64(h + header::kFirstSource);
  return r;
}

std::array<uint8_t, kShardFooterSize> ShardFooter::encode(uint64_t header_checksum) {
  std::array<uint8_t, kShardFooterSize> bytes{};
  uint8_t* f = bytes.data();
  store_u64(f + footer::kRecordCount, record_count);
  store_u64(f + footer::kSourceCount, source_count);
  store_u64(f + footer::kIndexOffset, index_offset);
  store_u64(f + footer::kSkippedOffset, skipped_offset);
  store_u64(f + footer::kSkippedCount, skipped_count);
  store_u64(f + footer::kTailChecksum, tail_checksum);
  checksum = XXH3_64bits_withSeed(f, footer::kChecksum, header_checksum);
  store_u64(f + footer::kChecksum, checksum);
  std::memcpy(f + footer::kMagic, kFooterMagic, sizeof kFooterMagic);
  return bytes;
}

ShardFooter ShardFooter::decode(std::span<const uint8_t, kShardFooterSize> bytes,
                                uint64_t header_checksum, uint64_t file_size,
                                const std::string& name) {
  const uint8_t* f = bytes.data();
  const uint64_t footer_at = file_size - kShardFooterSize;
  STOKER_CHECK_DATA(std::memcmp(f + footer::kMagic, kFooterMagic, sizeof kFooterMagic) == 0,
                    "{}: no shard footer at byte offset {}: the shard is truncated or was not "
                    "completely written",
                    name, footer_at);
  ShardFooter r;
  r.checksum = load_u64(f + footer::kChecksum);
  STOKER_CHECK_DATA(
      checksum_ok(r.checksum, XXH3_64bits_withSeed(f, footer::kChecksum, header_checksum)),
      "{}: footer checksum mismatch (footer at byte offset {})", name, footer_at);
  r.record_count = load_u64(f + footer::kRecordCount);
  r.source_count = load_u64(f + footer::kSourceCount);
  r.index_offset = load_u64(f + footer::kIndexOffset);
  r.skipped_offset = load_u64(f + footer::kSkippedOffset);
  r.skipped_count = load_u64(f + footer::kSkippedCount);
  r.tail_checksum = load_u64(f + footer::kTailChecksum);

  // Every offset and count against the file: no product below can overflow because each
  // factor is bounded by the file size first.
  const auto corrupt = [&](const char* what) {
    STOKER_BAD_DATA("{}: corrupt footer at byte offset {}: {}", name, footer_at, what);
  };
  if (r.index_offset < kShardHeaderSize || r.index_offset > footer_at) {
    corrupt("index offset outside the file");
  }
  if (r.record_count > (footer_at - r.index_offset) / kIndexEntrySize) {
    corrupt("record count larger than the index");
  }
  if (r.skipped_offset != r.index_offset + r.record_count * kIndexEntrySize) {
    corrupt("skipped-list offset does not follow the index");
  }
  if (r.skipped_count > (footer_at - r.skipped_offset) / kSkippedFixedSize) {
    corrupt("skipped count larger than the skipped list");
  }
  if (r.source_count < r.record_count || r.source_count - r.record_count != r.skipped_count) {
    corrupt("source count is not records + skipped");
  }
  if (r.record_count > (r.index_offset - kShardHeaderSize) / kRecordHeaderSize) {
    corrupt("more records than the record area holds");
  }
  if (r.source_count > (uint64_t{1} << 62)) corrupt("record or source index out of range");
  return r;
}

// ---------------------------------------------------------------------------------------------
// ShardFile

ShardFile ShardFile::open(const std::string& path, const std::string& name, const IoConfig& io) {
  ShardFile s;
  s.name_ = name;
  try {
    if (is_remote_location(path)) {
      s.blob_ = Blob::open(path, io);
      s.size_ = s.blob_->size();
    } else {
      s.file_ = RandomAccessFile::open(path, name);
      s.size_ = s.file_.size();
    }
  } catch (const Error& e) {
    if (e.sys_errno() != ENOENT) throw;
    STOKER_THROW_IO(ENOENT, name, "{}: missing shard (no such file)", name);
  }
  const uint64_t size = s.size_;
  STOKER_CHECK_DATA(size >= kShardHeaderSize + kShardFooterSize,
                    "{}: truncated shard: {} bytes, less than a header and a footer ({} bytes)",
                    name, size, kShardHeaderSize + kShardFooterSize);

  // Header and footer are read with pread (nothing is mapped yet).
  std::array<uint8_t, kShardHeaderSize> h;
  std::array<uint8_t, kShardFooterSize> f;
  const uint64_t footer_at = size - kShardFooterSize;
  s.read_bytes(0, h, "header at byte offset 0");
  s.read_bytes(footer_at, f, fmt::format("footer at byte offset {}", footer_at));
  s.header_ = ShardHeader::decode(h, name);
  s.footer_ = ShardFooter::decode(f, s.header_.checksum, size, name);
  STOKER_CHECK_DATA(s.header_.first_record <= (uint64_t{1} << 62) &&
                        s.header_.first_source <= (uint64_t{1} << 62),
                    "{}: corrupt header: record or source index out of range", name);

  const uint64_t index_at = s.footer_.index_offset;
  const std::string what = fmt::format("index at byte offset {}", index_at);
  uint64_t tail = 0;
  if (s.blob_) {
    // Remote: the index and skipped list are read once (one range read) and kept.
    s.index_.resize(footer_at - index_at);
    s.blob_->read(index_at, s.index_, what);
    tail = XXH3_64bits(s.index_.data(), s.index_.size());
  } else {
    // Map the whole file, so that records are copied out of the page cache without a
    // syscall. With IoConfig::packed_io = kPread, or when the file cannot be mapped (a file
    // system without mmap, an address-space limit), nothing is mapped: index entries and
    // records are read with pread(v).
    if (io.packed_io == PackedIo::kMmap && s.file_.map_from(0)) {
      s.file_.will_need(index_at);  // one read-ahead of the index, not a fault per page
    }
    tail = s.file_.hash_range(index_at, footer_at - index_at, what);
  }
  STOKER_CHECK_DATA(checksum_ok(s.footer_.tail_checksum, tail),
                    "{}: index checksum mismatch (index at byte offset {})", name, index_at);
  return s;
}

void ShardFile::read_bytes(uint64_t offset, std::span<uint8_t> out, const std::string& what,
                           std::span<uint8_t> more) const {
  if (!blob_) {
    file_.read(offset, out, what, more);
    return;
  }
  const uint64_t index_at = footer_.index_offset;
  const uint64_t total = uint64_t{out.size()} + more.size();
  if (!index_.empty() && offset >= index_at && total <= index_.size() &&
      offset - index_at <= index_.size() - total) {
    const uint8_t* at = index_.data() + (offset - index_at);
    std::memcpy(out.data(), at, out.size());
    if (!more.empty()) std::memcpy(more.data(), at + out.size(), more.size());
    return;
  }
  if (more.empty()) {
    blob_->read(offset, out, what);
    return;
  }
  std::vector<uint8_t> both(total);
  blob_->read(offset, both, what);
  std::memcpy(out.data(), both.data(), out.size());
  std::memcpy(more.data(), both.data() + out.size(), more.size());
}

IndexEntry ShardFile::entry(uint64_t j) const {
  std::array<uint8_t, kIndexEntrySize> e;
  const uint64_t at = footer_.index_offset + j * kIndexEntrySize;
  read_bytes(at, e, fmt::format("record {}: index entry at byte offset {}", j, at));
  return IndexEntry{load_u64(e.data() + entry::kOffset), load_u32(e.data() + entry::kPayloadLength),
                    load_u32(e.data() + entry::kLabel), load_u64(e.data() + entry::kChecksum)};
}

uint32_t ShardFile::label(uint64_t j) const { return entry(j).label; }

IndexEntry ShardFile::checked_entry(uint64_t j) const {
  const std::string& name = name_;
  const uint64_t index_offset = footer_.index_offset;
  STOKER_CHECK(j < footer_.record_count, "{}: record {} out of range [0, {})", name, j,
               footer_.record_count);
  const IndexEntry e = entry(j);
  STOKER_CHECK_DATA(
      e.payload_length <= kMaxPayloadLength,
      "{}: record {}: corrupt index entry at byte offset {}: payload length {} above the "
      "cap",
      name, j, index_offset + j * kIndexEntrySize, e.payload_length);
  // Record header + payload must lie inside [header end, index offset).
  STOKER_CHECK_DATA(
      e.offset >= kShardHeaderSize && e.offset <= index_offset &&
          index_offset - e.offset >= kRecordHeaderSize + uint64_t{e.payload_length},
      "{}: record {}: corrupt index entry at byte offset {}: record [{}, +{}) outside the "
      "record area [{}, {})",
      name, j, index_offset + j * kIndexEntrySize, e.offset,
      kRecordHeaderSize + uint64_t{e.payload_length}, kShardHeaderSize, index_offset);
  return e;
}

void ShardFile::read_record(uint64_t j, std::vector<uint8_t>& out, RecordInfo* info) const {
  const IndexEntry e = checked_entry(j);
  std::array<uint8_t, kRecordHeaderSize> header;
  out.resize(e.payload_length);
  read_bytes(e.offset, header, fmt::format("record {} at byte offset {}", j, e.offset), out);
  check_record(j, e, header.data(), out, info);
}

void ShardFile::record_from(uint64_t j, std::span<const uint8_t> bytes, uint64_t bytes_offset,
                            std::vector<uint8_t>& out) const {
  const IndexEntry e = checked_entry(j);
  STOKER_CHECK(e.offset >= bytes_offset &&
                   e.offset - bytes_offset + kRecordHeaderSize + e.payload_length <= bytes.size(),
               "{}: record {} is not inside the bytes read", name_, j);
  const uint8_t* at = bytes.data() + (e.offset - bytes_offset);
  out.assign(at + kRecordHeaderSize, at + kRecordHeaderSize + e.payload_length);
  check_record(j, e, at, out, nullptr);
}

void ShardFile::check_record(uint64_t j, const IndexEntry& e, const uint8_t* h,
                             std::span<const uint8_t> payload, RecordInfo* info) const {
  const std::string& name = name_;
  STOKER_CHECK_DATA(std::memcmp(h + record::kMagic, kRecordMagic, sizeof kRecordMagic) == 0,
                    "{}: record {} at byte offset {}: bad record magic", name, j, e.offset);
  const uint32_t label = load_u32(h + record::kLabel);
  const uint32_t length = load_u32(h + record::kPayloadLength);
  const uint64_t stored = load_u64(h + record::kChecksum);
  STOKER_CHECK_DATA(length == e.payload_length && label == e.label && stored == e.checksum,
                    "{}: record {} at byte offset {}: record header disagrees with its index entry",
                    name, j, e.offset);
  STOKER_CHECK_DATA(checksum_ok(stored, record_checksum(h, payload)),
                    "{}: record {} at byte offset {}: checksum mismatch", name, j, e.offset);
  if (info != nullptr) {
    info->label = label;
    info->encoding = static_cast<Encoding>(h[record::kEncoding]);
    info->channels = h[record::kChannels];
    info->width = load_u32(h + record::kWidth);
    info->height = load_u32(h + record::kHeight);
  }
}

std::vector<SkippedSample> ShardFile::skipped() const {
  const std::string& name = name_;
  std::vector<SkippedSample> result;
  const uint64_t begin = footer_.skipped_offset;
  const uint64_t end = size_ - kShardFooterSize;
  // The list is copied out (of the mapping, under the guard), then parsed from the copy.
  std::vector<uint8_t> list(end - begin);
  read_bytes(begin, list, fmt::format("skipped list at byte offset {}", begin));
  uint64_t at = begin;
  for (uint64_t k = 0; k < footer_.skipped_count; ++k) {
    STOKER_CHECK_DATA(end - at >= kSkippedFixedSize,
                      "{}: skipped entry {} at byte offset {}: runs past the footer", name, k, at);
    const uint8_t* p = list.data() + (at - begin);
    SkippedSample s;
    s.source_index = load_u64(p);
    const uint32_t name_length = load_u32(p + 8);
    const uint32_t reason_length = load_u32(p + 12);
    STOKER_CHECK_DATA(name_length <= kMaxSkippedText && reason_length <= kMaxSkippedText &&
                          end - at - kSkippedFixedSize >= uint64_t{name_length} + reason_length,
                      "{}: skipped entry {} at byte offset {}: lengths run past the footer", name,
                      k, at);
    STOKER_CHECK_DATA(s.source_index >= header_.first_source &&
                          s.source_index - header_.first_source < footer_.source_count,
                      "{}: skipped entry {} at byte offset {}: source index {} outside the "
                      "shard's range",
                      name, k, at, s.source_index);
    const char* text = reinterpret_cast<const char*>(p + kSkippedFixedSize);
    s.name.assign(text, name_length);
    s.reason.assign(text + name_length, reason_length);
    at += kSkippedFixedSize + name_length + reason_length;
    result.push_back(std::move(s));
  }
  STOKER_CHECK_DATA(at == end, "{}: {} stray bytes after the skipped list at byte offset {}", name,
                    end - at, at);
  return result;
}

// ---------------------------------------------------------------------------------------------
// ShardWriter

namespace {
constexpr size_t kWriteBuffer = size_t{1} << 20;
}  // namespace

ShardWriter::ShardWriter(const std::filesystem::path& dir, uint32_t version, uint64_t number,
                         uint64_t options_hash, uint64_t first_record, uint64_t first_source)
    : dir_(dir), first_source_(first_source) {
  final_ = dir / shard_file_name(number);
  temp_ = dir / (shard_file_name(number) + std::string(kTempSuffix));
  // O_TRUNC: a temporary file of an interrupted run is garbage by definition.
  const int raw = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (raw < 0) {
    STOKER_THROW_IO(errno, temp_.string(), "{}: cannot create: {}", temp_.string(),
                    errno_message(errno));
  }
  fd_ = UniqueFd(raw);
  buffer_.reserve(kWriteBuffer);

  ShardHeader header{.version = version,
                     .options_hash = options_hash,
                     .shard_number = number,
                     .first_record = first_record,
                     .first_source = first_source};
  const auto h = header.encode();
  header_checksum_ = header.checksum;
  write(h.data(), h.size());
  data_end_ = kShardHeaderSize;
}

ShardWriter::~ShardWriter() {
  if (!finished_) {
    fd_.reset();
    ::unlink(temp_.c_str());
  }
}

void ShardWriter::write(const uint8_t* data, size_t size) {
  if (buffer_.size() + size > kWriteBuffer) flush();
  if (size >= kWriteBuffer) {
    write_all(fd_.get(), data, size, temp_.string());
  } else {
    buffer_.insert(buffer_.end(), data, data + size);
  }
  file_pos_ += size;
}

void ShardWriter::flush() {
  write_all(fd_.get(), buffer_.data(), buffer_.size(), temp_.string());
  buffer_.clear();
}

void ShardWriter::add_record(const RecordInfo& info, std::span<const uint8_t> payload) {
  STOKER_CHECK(payload.size() <= kMaxPayloadLength, "{}: record payload of {} bytes above the cap",
               temp_.string(), payload.size());
  uint8_t h[kRecordHeaderSize] = {};
  std::memcpy(h + record::kMagic, kRecordMagic, sizeof kRecordMagic);
  store_u32(h + record::kLabel, info.label);
  h[record::kEncoding] = static_cast<uint8_t>(info.encoding);
  h[record::kChannels] = info.channels;
  store_u32(h + record::kWidth, info.width);
  store_u32(h + record::kHeight, info.height);
  store_u32(h + record::kPayloadLength, static_cast<uint32_t>(payload.size()));
  const uint64_t checksum = record_checksum(h, payload);
  store_u64(h + record::kChecksum, checksum);

  uint8_t e[kIndexEntrySize];
  store_u64(e + entry::kOffset, data_end_);
  store_u32(e + entry::kPayloadLength, static_cast<uint32_t>(payload.size()));
  store_u32(e + entry::kLabel, info.label);
  store_u64(e + entry::kChecksum, checksum);
  index_.insert(index_.end(), e, e + sizeof e);

  write(h, sizeof h);
  write(payload.data(), payload.size());
  data_end_ += kRecordHeaderSize + payload.size();
}

void ShardWriter::add_skipped(uint64_t source_index, const std::string& name,
                              const std::string& reason) {
  const uint32_t name_length =
      static_cast<uint32_t>(std::min<size_t>(name.size(), kMaxSkippedText));
  const uint32_t reason_length =
      static_cast<uint32_t>(std::min<size_t>(reason.size(), kMaxSkippedText));
  uint8_t fixed[kSkippedFixedSize];
  store_u64(fixed, source_index);
  store_u32(fixed + 8, name_length);
  store_u32(fixed + 12, reason_length);
  skipped_.insert(skipped_.end(), fixed, fixed + sizeof fixed);
  skipped_.insert(skipped_.end(), name.begin(), name.begin() + name_length);
  skipped_.insert(skipped_.end(), reason.begin(), reason.begin() + reason_length);
  ++skipped_count_;
}

ShardWriter::Result ShardWriter::finish(uint64_t source_end) {
  STOKER_CHECK(!finished_, "{}: finished twice", temp_.string());
  const uint64_t records = record_count();
  const uint64_t index_offset = data_end_;
  write(index_.data(), index_.size());
  write(skipped_.data(), skipped_.size());
  XXH3_state_t* state = XXH3_createState();
  STOKER_CHECK(state != nullptr, "{}: out of memory", temp_.string());
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, index_.data(), index_.size());
  XXH3_64bits_update(state, skipped_.data(), skipped_.size());
  const uint64_t tail = XXH3_64bits_digest(state);
  XXH3_freeState(state);

  ShardFooter footer{.record_count = records,
                     .source_count = source_end - first_source_,
                     .index_offset = index_offset,
                     .skipped_offset = index_offset + index_.size(),
                     .skipped_count = skipped_count_,
                     .tail_checksum = tail};
  const auto f = footer.encode(header_checksum_);
  const uint64_t checksum = footer.checksum;
  write(f.data(), f.size());
  flush();
  STOKER_CHECK(source_end - first_source_ == records + skipped_count_,
               "{}: internal error: source range does not match records + skipped", temp_.string());

  fsync_or_throw(fd_.get(), temp_.string());
  fd_.reset();
  if (::rename(temp_.c_str(), final_.c_str()) != 0) {
    STOKER_THROW_IO(errno, final_.string(), "{}: cannot rename to {}: {}", temp_.string(),
                    final_.string(), errno_message(errno));
  }
  finished_ = true;
  fsync_directory(dir_);
  return Result{records, source_end - first_source_, file_pos_, checksum};
}

void write_file_atomically(const std::filesystem::path& dir, const std::string& name,
                           std::span<const uint8_t> bytes) {
  const std::filesystem::path final_path = dir / name;
  const std::filesystem::path temp = dir / (name + std::string(kTempSuffix));
  {
    const int raw = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (raw < 0) {
      STOKER_THROW_IO(errno, temp.string(), "{}: cannot create: {}", temp.string(),
                      errno_message(errno));
    }
    UniqueFd fd(raw);
    write_all(fd.get(), bytes.data(), bytes.size(), temp.string());
    fsync_or_throw(fd.get(), temp.string());
  }
  if (::rename(temp.c_str(), final_path.c_str()) != 0) {
    STOKER_THROW_IO(errno, final_path.string(), "{}: cannot rename to {}: {}", temp.string(),
                    final_path.string(), errno_message(errno));
  }
  fsync_directory(dir);
}

void fsync_directory(const std::filesystem::path& dir) {
  const int raw = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (raw < 0) {
    STOKER_THROW_IO(errno, dir.string(), "{}: cannot open folder: {}", dir.string(),
                    errno_message(errno));
  }
  UniqueFd fd(raw);
  fsync_or_throw(fd.get(), dir.string());
}

}  // namespace stoker::io
