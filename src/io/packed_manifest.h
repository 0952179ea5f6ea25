// The manifest of a packed dataset, OUT/manifest.json (private to src/io; docs/format.md).
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "stoker/dataset.h"
#include "stoker/io_config.h"

namespace stoker::io {

struct ManifestShard {
  std::string file;  // "shard-00003.stk", always shard_file_name(position)
  uint64_t records = 0;
  uint64_t first_record = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;  // the shard footer's checksum
};

// A per-sample field a version-2 pack keeps (docs/format.md, "Version 2").
struct ManifestField {
  std::string name;
  FieldKind kind = FieldKind::kBytes;
};

struct Manifest {
  uint32_t version = 0;
  uint64_t records = 0;
  uint64_t source_samples = 0;
  std::vector<std::string> classes;   // version 2: may be empty (every label kNoLabel)
  std::vector<ManifestField> fields;  // version 2 only, in the order records store them
  std::string options_json;           // the "options" object, compact
  uint64_t options_hash = 0;
  std::string source;              // the source path as given to pack
  std::string source_fingerprint;  // the source Dataset's fingerprint()
  std::vector<ManifestShard> shards;
  std::vector<std::pair<std::string, std::string>> skipped;  // (name, reason), source order
  uint64_t payload_bytes = 0;
  uint64_t fingerprint = 0;
};

// The dataset fingerprint: XXH3-64 over the options hash, the record count and every shard's
// (records, checksum); it commits to every record through the shard checksums.
uint64_t manifest_fingerprint(const Manifest& manifest);

// The manifest as JSON text (keys in a fixed order, 2-space indent, trailing newline):
// the same manifest always gives the same bytes.
std::string serialize_manifest(const Manifest& manifest);

// Parses and checks manifest text: types, ranges, shard names and contiguity, the record sum,
// the fingerprint. Throws "NAME: <reason>" (NAME = how messages call the file).
Manifest parse_manifest(std::string_view text, const std::string& name);

// Reads and parses OUT/manifest.json, or `path` itself when it is a file. Sets `folder` to
// the folder holding the shards and `name` to the manifest's display name. `io`: how a
// remote manifest is read.
Manifest read_manifest(const std::filesystem::path& path, std::filesystem::path& folder,
                       std::string& name, const IoConfig& io = {});

std::string hex64(uint64_t value);

}  // namespace stoker::io
