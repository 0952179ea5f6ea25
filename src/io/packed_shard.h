// Shard files of a packed dataset (private to src/io; the format is docs/format.md, the
// constants stoker/packed_format.h). The bytes come from storage (io/random_access_file.h):
// this file only encodes and checks them.
//
// ShardHeader and ShardFooter encode and decode the fixed 64-byte ends of a shard. ShardFile
// reads one shard: open() checks its structure (sizes, magics, version, header and footer
// checksums, the index checksum) and maps the file (or, with IoConfig::packed_io = kPread or
// when that fails, its index); read_record() bounds-checks one index entry, reads the record and
// verifies its checksum. ShardWriter writes one shard as NAME.tmp and publishes it with fsync +
// rename + directory fsync.
//
// Errors: a shard whose bytes are wrong (magic, version, checksum, an offset out of range) is
// ErrorKind::kBadData, naming the shard and the byte offset; bytes that cannot be read are kIo.
// Thread-safety: a ShardFile's const methods may be called from any thread; a ShardWriter
// belongs to one thread.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "io/blob.h"
#include "io/file_util.h"
#include "io/packed_format.h"
#include "io/random_access_file.h"
#include "stoker/io_config.h"

namespace stoker::io {

// XXH3-64 of a record: the payload hashed with the hash of the record header's first 24 bytes
// as seed, so that label, encoding and dimensions are covered too.
uint64_t record_checksum(const uint8_t* header24, std::span<const uint8_t> payload);

// "shard-00003.stk"
std::string shard_file_name(uint64_t number);

// Version 2 (docs/format.md): a record payload is the image followed by a field block.
// field_block_error checks the block of `payload` (its end, a count of `field_count`, entries
// tiling fields_length): "" and `image_length` set when it is sound, else the reason
// ("bad field block (...)"). Bounds-safe on any bytes.
std::string field_block_error(std::span<const uint8_t> payload, size_t field_count,
                              size_t& image_length);
// Field k of a payload that field_block_error passed with `image_length`.
std::span<const uint8_t> field_bytes(std::span<const uint8_t> payload, size_t image_length,
                                     size_t k);
// Appends the field block of `values` (one per manifest field, in order) to an image payload.
void append_field_block(std::vector<uint8_t>& payload, std::span<const std::string> values);

// The fields of a record header (packed_format.h, namespace record).
struct RecordInfo {
  uint32_t label = 0;
  packed::Encoding encoding = packed::Encoding::kUnknown;
  uint8_t channels = 0;
  uint32_t width = 0;
  uint32_t height = 0;
};

// One index entry, as read from the mapped index (not yet bounds-checked).
struct IndexEntry {
  uint64_t offset = 0;
  uint32_t payload_length = 0;
  uint32_t label = 0;
  uint64_t checksum = 0;
};

struct SkippedSample {
  uint64_t source_index = 0;
  std::string name;
  std::string reason;
};

// The shard header: magic, format version, header size and these fields.
struct ShardHeader {
  uint32_t version = packed::kFormatVersion;  // 1 or 2 (packed_format.h)
  uint64_t options_hash = 0;
  uint64_t shard_number = 0;
  uint64_t first_record = 0;
  uint64_t first_source = 0;
  uint64_t checksum = 0;  // XXH3-64 of bytes [0, 56): computed by encode, checked by decode

  // The 64 bytes, with `checksum` set to theirs.
  std::array<uint8_t, packed::kShardHeaderSize> encode();
  // Checks magic, then version (a newer format says so rather than failing a checksum it
  // defines differently), header size and checksum. Throws "NAME: <reason>".
  static ShardHeader decode(std::span<const uint8_t, packed::kShardHeaderSize> bytes,
                            const std::string& name);
};

// The shard footer: these fields and the magic.
struct ShardFooter {
  uint64_t record_count = 0;
  uint64_t source_count = 0;    // records + skipped
  uint64_t index_offset = 0;    // = end of the last record
  uint64_t skipped_offset = 0;  // = index_offset + record_count * index entry size
  uint64_t skipped_count = 0;
  uint64_t tail_checksum = 0;  // XXH3-64 of [index_offset, file size - 64)
  uint64_t checksum = 0;       // XXH3-64 of bytes [0, 48) seeded with the header's checksum

  std::array<uint8_t, packed::kShardFooterSize> encode(uint64_t header_checksum);
  // Checks magic and checksum, then every offset and count against a file of `file_size`
  // bytes (so no product of them can overflow later). Throws "NAME: <reason> at byte offset N".
  static ShardFooter decode(std::span<const uint8_t, packed::kShardFooterSize> bytes,
                            uint64_t header_checksum, uint64_t file_size, const std::string& name);
};

class ShardFile {
 public:
  // Opens and checks the shard at `path`; `name` is how messages call it. Throws
  // "NAME: <reason>" (at byte offset N where one applies). An http(s):// or s3:// path is
  // read by range (io/remote.h): header and footer, then the whole index (kept in memory,
  // 24 bytes a record), then each record with one range read. `io`: how (packed_io for a
  // local shard; retries, timeouts and the object cache for a remote one).
  static ShardFile open(const std::string& path, const std::string& name, const IoConfig& io = {});

  const std::string& name() const { return name_; }
  uint64_t file_size() const { return size_; }
  bool remote() const { return blob_ != nullptr; }
  uint32_t version() const { return header_.version; }
  uint64_t options_hash() const { return header_.options_hash; }
  uint64_t shard_number() const { return header_.shard_number; }
  uint64_t first_record() const { return header_.first_record; }
  uint64_t first_source() const { return header_.first_source; }
  uint64_t record_count() const { return footer_.record_count; }
  uint64_t source_count() const { return footer_.source_count; }
  uint64_t index_offset() const { return footer_.index_offset; }
  uint64_t skipped_count() const { return footer_.skipped_count; }
  uint64_t checksum() const { return footer_.checksum; }

  // Entry `j` < record_count() of the mapped index. Throws an I/O Error "NAME: record j: index
  // entry at byte offset N: cannot be read (...)" when its page cannot be read.
  IndexEntry entry(uint64_t j) const;
  uint32_t label(uint64_t j) const;

  // Reads record j's payload into `out` after checking that its entry lies inside the record
  // area, that the record header agrees with the entry, and the checksum. `info` (optional)
  // receives the record header. Throws "NAME: record j at byte offset N: <reason>", also when
  // the bytes cannot be read (the file shrank after open(), an I/O error).
  void read_record(uint64_t j, std::vector<uint8_t>& out, RecordInfo* info = nullptr) const;

  // Record j's payload, checked as read_record does, from `bytes` already read from the
  // shard starting at byte `bytes_offset` (one range read of several records).
  void record_from(uint64_t j, std::span<const uint8_t> bytes, uint64_t bytes_offset,
                   std::vector<uint8_t>& out) const;
  // Reads [offset, offset + out.size()) then `more` from the file or the remote object (any
  // range: for record_from).
  void read_bytes(uint64_t offset, std::span<uint8_t> out, const std::string& what,
                  std::span<uint8_t> more = {}) const;
  // Entry j < record_count(), checked to lie inside the record area.
  IndexEntry checked_entry(uint64_t j) const;

  // Parses the skipped list. Throws "NAME: skipped entry k at byte offset N: <reason>".
  std::vector<SkippedSample> skipped() const;

 private:
  void check_record(uint64_t j, const IndexEntry& e, const uint8_t* header,
                    std::span<const uint8_t> payload, RecordInfo* info) const;
  std::string name_;
  uint64_t size_ = 0;
  RandomAccessFile file_;       // local: mapped whole, or read with pread
  std::unique_ptr<Blob> blob_;  // remote
  std::vector<uint8_t> index_;  // remote: the index, read once
  ShardHeader header_;
  ShardFooter footer_;
};

// Writes shard `number` of folder `dir`, format `version`, as shard-NNNNN.stk.tmp; finish()
// publishes it. Destroying an unfinished writer removes the temporary file. The records'
// payloads are given whole (a version-2 payload with its field block).
class ShardWriter {
 public:
  ShardWriter(const std::filesystem::path& dir, uint32_t version, uint64_t number,
              uint64_t options_hash, uint64_t first_record, uint64_t first_source);
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;
  ~ShardWriter();

  // Bytes the shard would have if a record of `payload_length` were added now (footer and
  // skipped list excluded): the cut rule compares this with --shard-size.
  uint64_t size_with(uint64_t payload_length) const {
    return data_end_ + index_.size() + packed::kIndexEntrySize + packed::kRecordHeaderSize +
           payload_length;
  }
  uint64_t record_count() const { return index_.size() / packed::kIndexEntrySize; }

  void add_record(const RecordInfo& info, std::span<const uint8_t> payload);
  void add_skipped(uint64_t source_index, const std::string& name, const std::string& reason);

  struct Result {
    uint64_t records = 0, source_count = 0, bytes = 0, checksum = 0;
  };
  // Writes index, skipped list and footer; fsync, rename, directory fsync.
  // `source_end`: one past the last source index this shard covers.
  Result finish(uint64_t source_end);

 private:
  void write(const uint8_t* data, size_t size);
  void flush();

  std::filesystem::path dir_, temp_, final_;
  UniqueFd fd_;
  uint64_t first_source_ = 0;
  uint64_t header_checksum_ = 0;
  uint64_t data_end_ = 0;  // bytes of header + records so far
  uint64_t file_pos_ = 0;  // bytes handed to write() so far
  std::vector<uint8_t> buffer_;
  std::vector<uint8_t> index_;
  std::vector<uint8_t> skipped_;
  uint64_t skipped_count_ = 0;
  bool finished_ = false;
};

// Writes `bytes` to dir/name through dir/name.tmp, fsync, rename, directory fsync.
void write_file_atomically(const std::filesystem::path& dir, const std::string& name,
                           std::span<const uint8_t> bytes);
// fsync of a folder, so that a rename in it is durable.
void fsync_directory(const std::filesystem::path& dir);

}  // namespace stoker::io
