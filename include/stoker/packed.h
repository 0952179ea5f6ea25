// Packed datasets: a source decoded, resized and re-encoded once, offline, into a few large
// indexed shard files that load at memory speed (docs/format.md).
//
//   pack_dataset(source, SRC, OUT, options)   OUT/shard-NNNNN.stk + OUT/manifest.json
//   open_packed(OUT)                     a Dataset; open_dataset(OUT) calls it for packed folders
//   verify_packed(OUT)                   full scan, throws at the first corruption
//   inspect_packed(OUT)                  the manifest, summarised
//
// Failures throw stoker::Error naming the file (manifest or shard), and for record-level
// corruption the record number and byte offset:
//   "OUT/shard-00003.stk: record 17 at byte offset 123456: checksum mismatch".
// Thread-safety: the free functions are independent; a packed Dataset's const methods may be
// called from any thread (no mutable state).
//
// Reading: shards are mapped read-only (the pages read count in RSS as shared file pages);
// IoConfig::packed_io = kPread (STOKER_PACKED_IO=pread) reads records with preadv instead
// (docs/format.md, "Reading"). Opening
// a packed dataset installs a process-wide SIGBUS handler (once) that chains to the one before
// it: a page that cannot be read (the shard shrank while open, an I/O error) throws an I/O
// Error "SHARD: record j at byte offset N: cannot be read ..." instead of ending the process. A
// handler installed later that does not chain to it disables this.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stoker/dataset.h"
#include "stoker/image.h"

namespace stoker {

// original: the source bytes as they are (probed for format and size, not decoded);
// jpeg: decoded, resized (max_side/short_side), re-encoded as baseline JPEG at `quality`;
// raw: decoded, resized, stored as uint8 RGB pixels (raw_image.h), optionally zstd-compressed.
enum class PackMode { kOriginal, kJpeg, kRaw };
PackMode parse_pack_mode(const std::string& name);  // "original" | "jpeg" | "raw"
const char* to_string(PackMode mode);

struct PackProgress {
  int64_t done = 0;       // source samples handled (written or skipped), including reused shards
  int64_t total = 0;      // source samples
  int64_t skipped = 0;    // bad samples left out
  int64_t reused = 0;     // source samples covered by complete shards of an earlier run
  int64_t bytes = 0;      // shard bytes written or reused so far
  int shards = 0;         // complete shards so far
  bool finished = false;  // the last call: the manifest is written
};

struct PackConfig {
  PackMode mode = PackMode::kOriginal;
  // At most one of the two; 0 = keep the size. Target dims are computed from the full-size
  // image: scale = min(1, S / max(w, h)) or min(1, S / min(w, h)); new = round(w * scale),
  // round(h * scale), at least 1. jpeg and raw modes only.
  int max_side = 0;
  int short_side = 0;
  int quality = 90;  // jpeg mode, 1..100
  // jpeg mode: a restart marker every K MCUs (16x16 pixels), K the largest divisor of the
  // image's MCUs per row that is at most this, so that a crop decodes only the segments it
  // touches (decode_region); 0 = no markers.
  int restart_interval = 2;
  int zstd_level = 0;                       // raw mode: 0 = uncompressed, 1..22 = zstd level
  int64_t shard_size = int64_t{256} << 20;  // shards are cut on record boundaries past this
  int threads = 0;                          // 0 = the cores this process may use
  bool skip_bad_samples = false;            // false: the first bad sample stops the pack, named
  // Per-sample fields to keep in each record (Dataset::read_field: WebDataset members such as
  // "txt", "json", "json.KEY"; a list's FileListConfig::field_columns), at most 64. A pack
  // with fields, or of a source without labels, is format version 2 (docs/format.md); a
  // sample without one of them, or whose text field is not UTF-8, is a bad sample.
  std::vector<std::string> fields = {};
  // false: a finished pack in `out` made from another source or with other options is an
  // error (stoker::Error, kArgument) naming both; true: it is replaced.
  bool replace = false;
  DecodeLimits limits = {};  // caps for decoding untrusted sources (all modes probe)
  // Called on the packing thread after each sample and at the end; may throw to abort.
  std::function<void(const PackProgress&)> progress = {};

  // Throws stoker::Error naming the offending option.
  void validate() const;
};

struct PackResult {
  int64_t records = 0;
  int64_t skipped = 0;
  int64_t shards = 0;
  int64_t reused_shards = 0;      // complete shards of an earlier run, kept
  bool already_complete = false;  // a valid pack with these options was there: nothing written
  int64_t bytes = 0;              // all shard bytes
};

// Packs `source` into folder `out` (created if needed). Deterministic: the same source and
// options give identical bytes whatever `threads` is. Crash-safe: each file is written as
// NAME.tmp, fsynced, renamed, and the folder fsynced; the manifest comes last, so an
// interrupted pack never looks complete. Running it again with the same options keeps the
// complete shards and finishes the rest, producing the same bytes as an uninterrupted run.
// Throws stoker::Error for bad options, I/O errors, and (unless skip_bad_samples) the first
// sample that cannot be read or decoded, naming it.
// An http(s):// or s3:// `out` is packed into a local staging folder (the index cache folder's
// pack-staging/<XXH3 of out>, kept so that a re-run resumes), then uploaded with PUTs
// (io/remote.h: S3 signed with SigV4): the shards, then the manifest last, so that the remote
// pack never looks complete before it is.
PackResult pack_dataset(const Dataset& source, const std::string& source_path,
                        const std::filesystem::path& out, const PackConfig& options);

// True when `path` is a packed dataset's folder (holding manifest.json) or its manifest file,
// judged by the manifest's "format" field. Never throws.
bool is_packed_dataset(const std::filesystem::path& path);

// Opens a packed dataset: checks the manifest and every shard's header, footer, size, index
// checksum and agreement with the manifest, then maps the indexes. Memory: the mapped indexes
// plus O(shards + classes); no per-record heap objects. read() verifies the record's checksum
// and bounds; name(i) is "OUT/shard-00003.stk#17". Throws naming the file and reason. `io`
// (validated here): how its shards are read, local (packed_io) or remote.
std::shared_ptr<Dataset> open_packed(const std::filesystem::path& path, const IoConfig& io = {});

struct VerifyReport {
  int64_t shards = 0;
  int64_t records = 0;
  int64_t bytes = 0;
};
// Reads every byte of every shard and checks all checksums, bounds and cross-references.
// Throws stoker::Error naming the shard, record and byte offset of the first corruption.
// `progress` (optional) is called with bytes checked so far and total bytes.
VerifyReport verify_packed(const std::filesystem::path& path,
                           const std::function<void(int64_t, int64_t)>& progress = {});

struct PackedShardInfo {
  std::string file;
  int64_t records = 0;
  int64_t first_record = 0;
  int64_t bytes = 0;
  std::string checksum;
};
struct PackedInfo {
  std::filesystem::path folder;
  int version = 0;
  int64_t records = 0;
  int64_t source_samples = 0;
  std::vector<std::string> classes;   // empty for a label-free pack (version 2)
  std::vector<int64_t> class_counts;  // records per class, from the mapped indexes
  // Version 2: the fields each record keeps, (name, kind: "text" | "json" | "bytes"), and the
  // first record's values of them, as an example.
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::string> first_record_fields;
  std::vector<PackedShardInfo> shards;
  std::string options_json;  // the manifest's "options" object, compact JSON
  std::string source;
  std::string fingerprint;
  int64_t bytes = 0;                                         // all shard bytes
  int64_t payload_bytes = 0;                                 // record payloads only
  std::vector<std::pair<std::string, std::string>> skipped;  // (name, reason)
};
// The manifest's content plus per-class counts (opens the dataset, as open_packed does).
PackedInfo inspect_packed(const std::filesystem::path& path);

}  // namespace stoker
