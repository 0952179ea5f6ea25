#include "io/packed_manifest.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "io/blob.h"
#include "io/file_util.h"
#include "io/json_limits.h"
#include "io/packed_format.h"
#include "io/packed_shard.h"
#include "io/remote.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {
namespace {

// The manifest lists the skipped samples, so it may be large, but not absurd.
constexpr int64_t kMaxManifestBytes = int64_t{1} << 30;
// Cap on records per dataset and per shard: keeps every sum below 2^63.
constexpr uint64_t kMaxRecords = uint64_t{1} << 40;

// Fuzzing builds cannot forge the XXH3 fingerprint, so they skip that comparison (and only
// it) to let the fuzzer past the parser into the reader; every other build checks it.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kVerifyFingerprint = false;
#else
constexpr bool kVerifyFingerprint = true;
#endif

using Json = nlohmann::json;

const Json& field(const Json& object, const char* key, const std::string& name) {
  const auto it = object.find(key);
  STOKER_CHECK(it != object.end(), "{}: missing field \"{}\"", name, key);
  return *it;
}

uint64_t get_u64(const Json& object, const char* key, const std::string& name,
                 uint64_t max = kMaxRecords * 1024) {
  const Json& v = field(object, key, name);
  STOKER_CHECK(v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0),
               "{}: field \"{}\" is not a non-negative integer", name, key);
  const uint64_t value = v.get<uint64_t>();
  STOKER_CHECK(value <= max, "{}: field \"{}\" = {} is out of range (at most {})", name, key, value,
               max);
  return value;
}

std::string get_string(const Json& object, const char* key, const std::string& name) {
  const Json& v = field(object, key, name);
  STOKER_CHECK(v.is_string(), "{}: field \"{}\" is not a string", name, key);
  return v.get<std::string>();
}

uint64_t parse_hex64(const std::string& text, const char* key, const std::string& name) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  STOKER_CHECK(text.size() == 16 && ec == std::errc() && end == text.data() + text.size(),
               "{}: field \"{}\" = \"{}\" is not 16 hex digits", name, key, text);
  return value;
}

}  // namespace

std::string hex64(uint64_t value) { return fmt::format("{:016x}", value); }

uint64_t manifest_fingerprint(const Manifest& m) {
  std::vector<uint8_t> bytes(24 + 16 * m.shards.size());
  packed::store_u64(bytes.data(), m.options_hash);
  packed::store_u64(bytes.data() + 8, m.records);
  packed::store_u64(bytes.data() + 16, m.shards.size());
  for (size_t i = 0; i < m.shards.size(); ++i) {
    packed::store_u64(bytes.data() + 24 + 16 * i, m.shards[i].records);
    packed::store_u64(bytes.data() + 32 + 16 * i, m.shards[i].checksum);
  }
  return XXH3_64bits(bytes.data(), bytes.size());
}

std::string serialize_manifest(const Manifest& m) {
  nlohmann::ordered_json j;
  j["format"] = std::string(packed::kManifestFormat);
  j["version"] = m.version;
  j["records"] = m.records;
  j["source_samples"] = m.source_samples;
  j["fingerprint"] = hex64(m.fingerprint);
  j["options_hash"] = hex64(m.options_hash);
  j["options"] = nlohmann::ordered_json::parse(m.options_json);
  j["source"] = {{"path", m.source}, {"fingerprint", m.source_fingerprint}};
  j["payload_bytes"] = m.payload_bytes;
  j["classes"] = m.classes;
  if (m.version >= packed::kFieldsVersion) {
    auto fields = nlohmann::ordered_json::array();
    for (const ManifestField& f : m.fields) {
      fields.push_back({{"name", f.name}, {"kind", to_string(f.kind)}});
    }
    j["fields"] = std::move(fields);
  }
  auto shards = nlohmann::ordered_json::array();
  for (const ManifestShard& s : m.shards) {
    shards.push_back({{"file", s.file},
                      {"records", s.records},
                      {"first_record", s.first_record},
                      {"bytes", s.bytes},
                      {"checksum", hex64(s.checksum)}});
  }
  j["shards"] = std::move(shards);
  auto skipped = nlohmann::ordered_json::array();
  for (const auto& [sample, reason] : m.skipped) {
    skipped.push_back({{"name", sample}, {"reason", reason}});
  }
  j["skipped"] = std::move(skipped);
  // Invalid UTF-8 in a file name is replaced rather than failing the whole pack.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Manifest parse_manifest(std::string_view text, const std::string& name) {
  STOKER_CHECK(!json_nested_too_deep(text), "{}: JSON nested deeper than {} levels", name,
               kMaxJsonDepth);
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    STOKER_THROW("{}: not valid JSON ({})", name, e.what());
  }
  STOKER_CHECK(j.is_object(), "{}: not a JSON object", name);
  const std::string format = get_string(j, "format", name);
  STOKER_CHECK(format == packed::kManifestFormat, "{}: \"format\" is \"{}\", not \"{}\"", name,
               format, packed::kManifestFormat);
  Manifest m;
  m.version = static_cast<uint32_t>(get_u64(j, "version", name, UINT32_MAX));
  STOKER_CHECK(m.version >= packed::kFormatVersion && m.version <= packed::kLatestVersion,
               "{}: unsupported format version {} (this build reads versions {} to {})", name,
               m.version, packed::kFormatVersion, packed::kLatestVersion);
  m.records = get_u64(j, "records", name, kMaxRecords);
  m.source_samples = get_u64(j, "source_samples", name, kMaxRecords);
  m.fingerprint = parse_hex64(get_string(j, "fingerprint", name), "fingerprint", name);
  m.options_hash = parse_hex64(get_string(j, "options_hash", name), "options_hash", name);
  const Json& options = field(j, "options", name);
  STOKER_CHECK(options.is_object(), "{}: field \"options\" is not an object", name);
  m.options_json = options.dump(-1, ' ', false, Json::error_handler_t::replace);
  const Json& source = field(j, "source", name);
  STOKER_CHECK(source.is_object(), "{}: field \"source\" is not an object", name);
  m.source = get_string(source, "path", name);
  m.source_fingerprint = get_string(source, "fingerprint", name);
  m.payload_bytes = get_u64(j, "payload_bytes", name, uint64_t{1} << 62);

  const bool v2 = m.version >= packed::kFieldsVersion;
  const Json& classes = field(j, "classes", name);
  // Version 2 may be label-free (no classes); version 1 always has classes.
  STOKER_CHECK(classes.is_array() && (v2 || !classes.empty()),
               "{}: field \"classes\" is not a non-empty array", name);
  STOKER_CHECK(classes.size() <= (uint64_t{1} << 24), "{}: more than 2^24 classes", name);
  m.classes.reserve(classes.size());
  for (const Json& c : classes) {
    STOKER_CHECK(c.is_string(), "{}: field \"classes\" holds a non-string", name);
    m.classes.push_back(c.get<std::string>());
  }

  STOKER_CHECK(v2 == j.contains("fields"), "{}: a version {} manifest {} a field \"fields\"", name,
               m.version, v2 ? "must have" : "cannot have");
  if (v2) {
    const Json& fields = j["fields"];
    STOKER_CHECK(fields.is_array() && fields.size() <= packed::kMaxFields,
                 "{}: field \"fields\" is not an array of at most {}", name, packed::kMaxFields);
    for (const Json& f : fields) {
      STOKER_CHECK(f.is_object(), "{}: field \"fields\" holds a non-object", name);
      ManifestField mf;
      mf.name = get_string(f, "name", name);
      STOKER_CHECK(!mf.name.empty() && mf.name.size() <= packed::kMaxFieldNameBytes,
                   "{}: a field name is empty or longer than {} bytes", name,
                   packed::kMaxFieldNameBytes);
      const std::string kind = get_string(f, "kind", name);
      try {
        mf.kind = parse_field_kind(kind);
      } catch (const Error&) {
        STOKER_THROW("{}: field '{}' has kind \"{}\" (expected text, json or bytes)", name, mf.name,
                     kind);
      }
      for (const ManifestField& seen : m.fields) {
        STOKER_CHECK(seen.name != mf.name, "{}: field '{}' listed twice", name, mf.name);
      }
      m.fields.push_back(std::move(mf));
    }
  }

  const Json& shards = field(j, "shards", name);
  STOKER_CHECK(shards.is_array() && !shards.empty(),
               "{}: field \"shards\" is not a non-empty array", name);
  STOKER_CHECK(shards.size() <= 100'000, "{}: more than 100000 shards", name);
  uint64_t next = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    const Json& s = shards[i];
    const std::string where = fmt::format("{}: shards[{}]", name, i);
    STOKER_CHECK(s.is_object(), "{}: not an object", where);
    ManifestShard shard;
    shard.file = get_string(s, "file", where);
    // The name is fixed by the position: a manifest can never point outside the folder.
    STOKER_CHECK(shard.file == shard_file_name(i), "{}: file \"{}\" should be \"{}\"", where,
                 shard.file, shard_file_name(i));
    shard.records = get_u64(s, "records", where, kMaxRecords);
    shard.first_record = get_u64(s, "first_record", where, kMaxRecords);
    shard.bytes = get_u64(s, "bytes", where, uint64_t{1} << 62);
    shard.checksum = parse_hex64(get_string(s, "checksum", where), "checksum", where);
    STOKER_CHECK(shard.first_record == next, "{}: first_record {} should be {}", where,
                 shard.first_record, next);
    next += shard.records;
    m.shards.push_back(std::move(shard));
  }
  STOKER_CHECK(next == m.records, "{}: shards hold {} records, \"records\" says {}", name, next,
               m.records);
  STOKER_CHECK(m.records > 0, "{}: no records", name);

  const Json& skipped = field(j, "skipped", name);
  STOKER_CHECK(skipped.is_array(), "{}: field \"skipped\" is not an array", name);
  for (const Json& s : skipped) {
    STOKER_CHECK(s.is_object(), "{}: field \"skipped\" holds a non-object", name);
    m.skipped.emplace_back(get_string(s, "name", name), get_string(s, "reason", name));
  }
  STOKER_CHECK(m.records + m.skipped.size() == m.source_samples,
               "{}: records ({}) + skipped ({}) != source_samples ({})", name, m.records,
               m.skipped.size(), m.source_samples);
  STOKER_CHECK(!kVerifyFingerprint || manifest_fingerprint(m) == m.fingerprint,
               "{}: \"fingerprint\" does not match the shards listed (edited manifest?)", name);
  return m;
}

Manifest read_manifest(const std::filesystem::path& path, std::filesystem::path& folder,
                       std::string& name, const IoConfig& io) {
  if (is_remote_location(path.string())) {
    // A remote pack: LOCATION (its folder) or LOCATION/manifest.json.
    // A query ("?X-Amz-Signature=...") is no part of the name: kept apart, then put back.
    const std::string whole = path.string();
    std::string location(location_path(whole));
    const std::string query = whole.substr(location.size());
    while (location.size() > 1 && location.back() == '/') location.pop_back();
    std::string suffix = "/";  // built in two steps: GCC 12's -Wrestrict misfires on "/" + s
    suffix += packed::kManifestName;
    const bool is_manifest =
        location.size() > suffix.size() &&
        location.compare(location.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string manifest = is_manifest ? location : location + suffix;
    name = manifest + query;
    folder = manifest.substr(0, manifest.size() - suffix.size());
    std::vector<uint8_t> bytes;
    try {
      const std::unique_ptr<Blob> blob = Blob::open(name, io);
      STOKER_CHECK_DATA(blob->size() <= static_cast<uint64_t>(kMaxManifestBytes),
                        "{}: {} bytes, more than a manifest may have", name, blob->size());
      bytes.resize(blob->size());
      blob->read(0, bytes, "the manifest");
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) throw;
      throw Error(ErrorKind::kIo,
                  fmt::format("{} (not a packed dataset, or its manifest is missing)", e.message()),
                  e.sys_errno(), e.path(), e.where());
    }
    return parse_manifest(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), name);
  }
  struct stat st;
  const bool is_dir = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const std::filesystem::path file = is_dir ? path / packed::kManifestName : path;
  folder = is_dir ? path : path.parent_path();
  if (folder.empty()) folder = ".";
  name = file.string();
  std::vector<uint8_t> bytes;
  try {
    read_file(name, bytes, kMaxManifestBytes);
  } catch (const Error& e) {
    STOKER_THROW("{} (not a packed dataset, or its manifest is missing)", e.message());
  }
  return parse_manifest(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        name);
}

}  // namespace stoker::io
