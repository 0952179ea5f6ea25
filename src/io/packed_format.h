// The constants of the packed-shard format (docs/format.md is the specification; this header
// is the single place the numbers live).
//
// A packed dataset is a folder:  OUT/manifest.json + OUT/shard-00000.stk, shard-00001.stk, ...
// Shard file, all integers little-endian, no padding, no alignment assumed by readers:
//
//   header   kShardHeaderSize bytes at offset 0
//   records  record header (kRecordHeaderSize) + payload, back to back, in index order
//   index    record_count entries of kIndexEntrySize bytes
//   skipped  skipped_count variable-size entries (the bad samples this shard's range left out)
//   footer   kShardFooterSize bytes, the last bytes of the file
//
// The footer is written last, so a file cut short anywhere has no valid footer.
// Thread-safety: constants and pure functions only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace stoker::packed {

// Version 1, and version 2 (docs/format.md, "Version 2"): a pack with per-sample fields or
// without labels. A writer writes 1 unless it needs 2; a reader reads both.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kFieldsVersion = 2;
inline constexpr uint32_t kLatestVersion = kFieldsVersion;
// The manifest's "format" value; open_dataset() recognises a packed dataset by it.
inline constexpr std::string_view kManifestFormat = "stoker-packed";
inline constexpr std::string_view kManifestName = "manifest.json";
inline constexpr std::string_view kShardPrefix = "shard-";
inline constexpr std::string_view kShardSuffix = ".stk";
inline constexpr std::string_view kTempSuffix = ".tmp";  // shard-00000.stk.tmp, manifest.json.tmp

// ---- shard header (64 bytes) ----
inline constexpr char kShardMagic[8] = {'S', 'T', 'K', 'S', 'H', 'A', 'R', 'D'};
inline constexpr size_t kShardHeaderSize = 64;
namespace header {
inline constexpr size_t kMagic = 0;         // char[8] kShardMagic
inline constexpr size_t kVersion = 8;       // u32 kFormatVersion
inline constexpr size_t kHeaderSize = 12;   // u32 kShardHeaderSize
inline constexpr size_t kOptionsHash = 16;  // u64 XXH3-64 of the canonical pack options + source
inline constexpr size_t kShardNumber = 24;  // u64 NNNNN of the file name
inline constexpr size_t kFirstRecord = 32;  // u64 dataset index of this shard's record 0
inline constexpr size_t kFirstSource = 40;  // u64 source index where this shard's range begins
inline constexpr size_t kReserved = 48;     // u64 0
inline constexpr size_t kChecksum = 56;     // u64 XXH3-64 of bytes [0, 56)
}  // namespace header

// ---- record header (32 bytes), followed by payload_length payload bytes ----
inline constexpr char kRecordMagic[4] = {'S', 'T', 'K', 'R'};
inline constexpr size_t kRecordHeaderSize = 32;
namespace record {
inline constexpr size_t kMagic = 0;           // char[4] kRecordMagic
inline constexpr size_t kLabel = 4;           // u32
inline constexpr size_t kEncoding = 8;        // u8 Encoding
inline constexpr size_t kChannels = 9;        // u8 channels of the stored image (0: unknown)
inline constexpr size_t kReserved = 10;       // u16 0
inline constexpr size_t kWidth = 12;          // u32
inline constexpr size_t kHeight = 16;         // u32
inline constexpr size_t kPayloadLength = 20;  // u32
inline constexpr size_t kChecksum = 24;       // u64 record_checksum(header bytes [0, 24), payload)
}  // namespace record

// Version 2, label-free packs: the label of every record (header and index entry).
inline constexpr uint32_t kNoLabel = 0xFFFFFFFF;

// ---- version 2: a record's payload = image bytes + field block (docs/format.md) ----
//   per manifest field, in order: u32 length, length bytes; then u32 field_count, u32
//   fields_length (the bytes of the entries before it). Read from the end.
inline constexpr size_t kFieldTrailerSize = 8;
inline constexpr size_t kMaxFields = 64;  // fields per pack
inline constexpr size_t kMaxFieldNameBytes = 256;

// What a payload holds. Original-mode records keep the source's format.
enum class Encoding : uint8_t { kUnknown = 0, kJpeg = 1, kPng = 2, kWebp = 3, kRaw = 4 };
inline constexpr uint8_t kMaxEncoding = 4;

// Payloads are capped like source files (1 GiB, Dataset::read's limit): a reader never
// allocates more.
inline constexpr uint64_t kMaxPayloadLength = uint64_t{1} << 30;

// ---- index entry (24 bytes), one per record, in record order ----
inline constexpr size_t kIndexEntrySize = 24;
namespace entry {
inline constexpr size_t kOffset = 0;         // u64 file offset of the record header
inline constexpr size_t kPayloadLength = 8;  // u32 (equals the record header's)
inline constexpr size_t kLabel = 12;         // u32 (equals the record header's)
inline constexpr size_t kChecksum = 16;      // u64 (equals the record header's)
}  // namespace entry

// ---- skipped entry: u64 source index, u32 name length, u32 reason length, name, reason ----
inline constexpr size_t kSkippedFixedSize = 16;
inline constexpr uint32_t kMaxSkippedText = 1 << 16;  // bytes of a name or a reason

// ---- footer (64 bytes), the last bytes of the file ----
inline constexpr char kFooterMagic[8] = {'S', 'T', 'K', 'S', 'H', 'E', 'N', 'D'};
inline constexpr size_t kShardFooterSize = 64;
namespace footer {
inline constexpr size_t kRecordCount = 0;     // u64
inline constexpr size_t kSourceCount = 8;     // u64 source indices covered (records + skipped)
inline constexpr size_t kIndexOffset = 16;    // u64 = end of the last record
inline constexpr size_t kSkippedOffset = 24;  // u64 = index_offset + record_count * 24
inline constexpr size_t kSkippedCount = 32;   // u64
inline constexpr size_t kTailChecksum = 40;   // u64 XXH3-64 of [index_offset, file_size - 64)
inline constexpr size_t kChecksum = 48;  // u64 XXH3-64 of footer [0, 48), seed = header checksum
inline constexpr size_t kMagic = 56;     // char[8] kFooterMagic
}  // namespace footer
// The footer checksum commits to the header (seed), the index (tail checksum) and through the
// index to every record checksum: the manifest lists it as the shard's "checksum".

// ---- raw-pixel payload ("raw" mode): self-describing, recognised by its magic ----
inline constexpr char kRawMagic[8] = {'S', 'T', 'K', 'R', 'A', 'W', '0', '1'};
inline constexpr size_t kRawHeaderSize = 24;
namespace raw {
inline constexpr size_t kMagic = 0;         // char[8] kRawMagic
inline constexpr size_t kWidth = 8;         // u32
inline constexpr size_t kHeight = 12;       // u32
inline constexpr size_t kChannels = 16;     // u8 1 or 3
inline constexpr size_t kCompression = 17;  // u8 RawCompression
inline constexpr size_t kReserved = 18;     // u16 0
inline constexpr size_t kDataLength = 20;   // u32 bytes after the header (pixels or zstd frame)
}  // namespace raw
enum class RawCompression : uint8_t { kNone = 0, kZstd = 1 };

// Little-endian loads and stores that assume no alignment.
inline uint64_t load_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline void store_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace stoker::packed
