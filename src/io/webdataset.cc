// WebDataset shard index cache, version 2: a frame (io/cache_file.h) with magic "STKWDS02"
// around this payload (little-endian):
//
//   str  the shard's location      str  its stamp (Blob::stamp)     str  the label column
//   u64  sample count N, then N x {
//          str key   str image extension ("" when none)   u64 image offset   i64 image size (-1)
//          str the sample's extensions, comma-separated
//          u32 member count M, then M x { str extension  u64 offset  u64 size }
//          u32 label token count T (0xffffffff: no label member), then T x str token }
//   str = u32 length + bytes.
// (Version 1 had no member list; its files are a cache miss, rebuilt.)
#include "io/webdataset.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <unordered_map>

#include "io/blob.h"
#include "io/cache_file.h"
#include "io/field_json.h"
#include "io/file_util.h"
#include "io/index_cache.h"
#include "io/json_limits.h"
#include "io/list_labels.h"
#include "io/list_rows.h"
#include "io/open_all.h"
#include "io/read_ahead.h"
#include "io/remote.h"
#include "io/sample_table.h"
#include "io/tar.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/logging.h"
#include "util/redact.h"
#include "util/text.h"

namespace stoker::io {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'K', 'W', 'D', 'S', '0', '2'};
constexpr uint32_t kVersion = 2;
constexpr uint32_t kNoLabel = 0xffffffff;
constexpr size_t kMaxShards = 10'000'000;
// The image extensions of a sample, in the order one is chosen when a sample has several.
constexpr std::array<std::string_view, 10> kImageExtensions = {
    "jpg", "jpeg", "png", "webp", "ppm", "pgm", "pbm", "bmp", "tif", "tiff"};

// WebDataset's split of a member name: the key is the folders and the base name up to its
// first dot, the extension the rest, lowercased. A base name without a dot, or starting with
// one, is not part of any sample (webdataset skips it too).
bool split_member(std::string_view name, std::string_view& key, std::string& ext) {
  const size_t slash = name.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const size_t dot = name.find('.', base);
  if (dot == std::string_view::npos || dot == base || dot + 1 == name.size()) return false;
  key = name.substr(0, dot);
  ext = util::lower(name.substr(dot + 1));
  return true;
}

// The rank of an extension as the sample's image (lower is preferred), or -1.
int image_rank(std::string_view ext) {
  for (size_t i = 0; i < kImageExtensions.size(); ++i) {
    if (ext == kImageExtensions[i]) return static_cast<int>(i);
  }
  // "seg.png", "input.jpg": a multi-part extension ending in an image one, after the plain ones.
  const size_t dot = ext.rfind('.');
  if (dot != std::string_view::npos) {
    const int last = image_rank(ext.substr(dot + 1));
    if (last >= 0) return static_cast<int>(kImageExtensions.size()) + last;
  }
  return -1;
}

// A member of a sample, for its fields (Dataset::read_field).
struct ShardMember {
  std::string ext;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct ShardSample {
  std::string key;
  std::string image_ext;  // "" when the sample has no image member
  uint64_t offset = 0;
  int64_t size = -1;
  std::string extensions;  // all of the sample's, comma-separated
  std::vector<ShardMember> members;
  bool has_label = false;
  std::vector<std::string> label;
};

struct ShardIndex {
  std::string stamp;
  std::vector<ShardSample> samples;
};

bool is_label_extension(std::string_view ext, const std::string& column) {
  if (!column.empty() && ext == column) return true;
  return ext == "cls" || ext == "json" || ext == "txt";
}

// The label tokens one member gives, or nullopt when it gives none.
std::optional<std::vector<std::string>> label_from(std::string_view ext, const std::string& text,
                                                   const std::string& column,
                                                   const std::string& where) {
  if (ext == "json") {
    if (json_nested_too_deep(text)) return std::nullopt;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    const std::string wanted = column == "json" ? "" : column;
    const std::string* member = json_label_member(j, wanted);
    if (member == nullptr) return std::nullopt;
    try {
      return json_label_tokens(j.at(*member), where);
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  std::string token(util::trim(text));
  if (token.empty()) return std::nullopt;
  return std::vector<std::string>{std::move(token)};
}

// Which of a sample's label members is its label: the column's extension, else (for a JSON
// member name, or no column) cls, then json, then txt.
void choose_label(ShardSample& sample, std::vector<std::pair<std::string, std::string>>& found,
                  const std::string& column, const std::string& where) {
  std::vector<std::string_view> order;
  bool column_is_extension = false;
  if (!column.empty()) {
    for (const auto& [ext, text] : found)
      column_is_extension = column_is_extension || ext == column;
  }
  if (column_is_extension) {
    order = {column};
  } else if (!column.empty()) {
    order = {"json"};
  } else {
    order = {"cls", "json", "txt"};
  }
  for (const std::string_view want : order) {
    for (const auto& [ext, text] : found) {
      if (ext != want) continue;
      if (auto tokens = label_from(ext, text, column_is_extension ? "" : column, where)) {
        sample.has_label = true;
        sample.label = std::move(*tokens);
        return;
      }
    }
  }
}

ShardIndex scan_shard(const Blob& blob, const std::string& column) {
  // A chunk smaller than a typical member lets the scan skip most image bytes locally; remote,
  // fewer larger requests cost fewer round trips.
  BlobStream stream(blob, blob.remote() ? (uint64_t{8} << 20) : (uint64_t{256} << 10));
  ShardIndex index;
  index.stamp = blob.stamp();
  std::string current_key;
  bool open = false;
  int image_rank_found = -1;
  std::vector<std::pair<std::string, std::string>> labels_found;
  const auto close = [&] {
    if (!open) return;
    ShardSample& s = index.samples.back();
    choose_label(s, labels_found, column, blob.location() + ":" + s.key);
    labels_found.clear();
    open = false;
  };
  scan_tar(
      stream, blob.location(),
      [&](std::string_view name, uint64_t) {
        std::string_view key;
        std::string ext;
        return split_member(name, key, ext) && is_label_extension(ext, column);
      },
      [&](TarMember&& member, std::string&& content) {
        std::string_view key;
        std::string ext;
        if (!split_member(member.name, key, ext)) return;
        if (!open || key != current_key) {
          close();
          index.samples.emplace_back();
          index.samples.back().key = std::string(key);
          current_key = std::string(key);
          image_rank_found = -1;
          open = true;
        }
        ShardSample& s = index.samples.back();
        if (!s.extensions.empty()) s.extensions.push_back(',');
        s.extensions.append(ext);
        s.members.push_back({ext, member.offset, member.size});
        const int rank = image_rank(ext);
        if (rank >= 0 && (image_rank_found < 0 || rank < image_rank_found)) {
          image_rank_found = rank;
          s.image_ext = ext;
          s.offset = member.offset;
          s.size = static_cast<int64_t>(member.size);
        }
        if (is_label_extension(ext, column)) labels_found.emplace_back(ext, std::move(content));
      });
  close();
  return index;
}

std::string encode_shard(const std::string& location, const std::string& column,
                         const ShardIndex& index) {
  std::string p;
  put_str(p, location);
  put_str(p, index.stamp);
  put_str(p, column);
  put<uint64_t>(p, index.samples.size());
  for (const ShardSample& s : index.samples) {
    put_str(p, s.key);
    put_str(p, s.image_ext);
    put<uint64_t>(p, s.offset);
    put<int64_t>(p, s.size);
    put_str(p, s.extensions);
    put<uint32_t>(p, static_cast<uint32_t>(s.members.size()));
    for (const ShardMember& m : s.members) {
      put_str(p, m.ext);
      put<uint64_t>(p, m.offset);
      put<uint64_t>(p, m.size);
    }
    put<uint32_t>(p, s.has_label ? static_cast<uint32_t>(s.label.size()) : kNoLabel);
    if (s.has_label) {
      for (const std::string& t : s.label) put_str(p, t);
    }
  }
  return frame_cache(kMagic, kVersion, p);
}

std::optional<ShardIndex> decode_shard(std::string_view bytes, const std::string& location,
                                       const std::string& column, uint64_t shard_size,
                                       std::string& why) {
  const std::optional<std::string_view> payload = unframe_cache(bytes, kMagic, kVersion, why);
  if (!payload) return std::nullopt;
  try {
    Reader in(*payload);
    if (in.str("truncated location") != location) throw Malformed{"written for another shard"};
    ShardIndex index;
    index.stamp = std::string(in.str("truncated stamp"));
    if (in.str("truncated label column") != column) throw Malformed{"another label column"};
    const uint64_t n = in.count(32, "sample");
    index.samples.resize(n);
    for (ShardSample& s : index.samples) {
      s.key = std::string(in.str("truncated key"));
      s.image_ext = std::string(in.str("truncated extension"));
      s.offset = in.get<uint64_t>();
      s.size = in.get<int64_t>();
      if (s.size < -1 || (s.size >= 0 && (s.offset > shard_size ||
                                          static_cast<uint64_t>(s.size) > shard_size - s.offset))) {
        throw Malformed{"a member outside the shard"};
      }
      s.extensions = std::string(in.str("truncated extensions"));
      const uint32_t members = in.get<uint32_t>();
      if (members > in.left() / 20) throw Malformed{"member count too large"};
      s.members.resize(members);
      for (ShardMember& m : s.members) {
        m.ext = std::string(in.str("truncated member extension"));
        m.offset = in.get<uint64_t>();
        m.size = in.get<uint64_t>();
        if (m.offset > shard_size || m.size > shard_size - m.offset) {
          throw Malformed{"a member outside the shard"};
        }
      }
      const uint32_t tokens = in.get<uint32_t>();
      s.has_label = tokens != kNoLabel;
      if (s.has_label) {
        if (tokens > in.left() / 4) throw Malformed{"label count too large"};
        for (uint32_t t = 0; t < tokens; ++t) s.label.emplace_back(in.str("truncated label"));
      }
    }
    if (in.left() != 0) throw Malformed{"trailing bytes"};
    return index;
  } catch (const Malformed& e) {
    why = e.why;
    return std::nullopt;
  }
}

// The shard's index from the cache when it is of this very version of the shard, else by
// reading the shard (and caching what was read).
ShardIndex index_shard(const Blob& blob, const std::string& column,
                       const std::filesystem::path& cache_dir) {
  std::filesystem::path file;
  // A remote shard with neither ETag nor Last-Modified could be replaced by one of the same
  // size unnoticed: its index is built anew at each open, never cached.
  if (!cache_dir.empty() && !blob.stamp().empty()) {
    const std::string id = blob.location() + '\0' + column;
    file = cache_dir / fmt::format("wds-{:016x}.stkidx", XXH3_64bits(id.data(), id.size()));
    if (const std::optional<std::string> bytes = read_cache_file(file)) {
      std::string why;
      std::optional<ShardIndex> cached =
          decode_shard(*bytes, blob.location(), column, blob.size(), why);
      if (cached && cached->stamp == blob.stamp()) return std::move(*cached);
      log(LogLevel::kDebug, "index cache {} of {} not used: {}", file.string(), blob.location(),
          cached ? "the shard changed" : why);
    }
  }
  ShardIndex index = scan_shard(blob, column);
  if (!file.empty()) {
    write_cache_file(file, encode_shard(blob.location(), column, index), "shard index cache",
                     "the shard will be read again next time");
  }
  return index;
}

std::string base_name(std::string_view location) {
  const size_t slash = location.rfind('/');
  return std::string(slash == std::string_view::npos ? location : location.substr(slash + 1));
}

class WebDataset final : public Dataset {
 public:
  WebDataset(std::string pattern, std::vector<std::unique_ptr<Blob>> shards,
             std::vector<ShardIndex> indexes, const IoConfig& io)
      : pattern_(std::move(pattern)), shards_(std::move(shards)) {
    std::vector<std::vector<std::string>> tokens;
    bool labelled = false;
    for (const ShardIndex& index : indexes) {
      for (const ShardSample& s : index.samples) labelled = labelled || s.has_label;
    }
    for (size_t shard = 0; shard < indexes.size(); ++shard) {
      const std::string base = base_name(shards_[shard]->location());
      for (ShardSample& s : indexes[shard].samples) {
        const int64_t i = table_.size();
        table_.add(base + "/" + s.key + (s.image_ext.empty() ? "" : "." + s.image_ext), s.size, -1);
        shard_of_.push_back(static_cast<uint32_t>(shard));
        offsets_.push_back(s.offset);
        for (const ShardMember& m : s.members) {
          const auto it = member_ext_ids_.emplace(m.ext, member_ext_ids_.size()).first;
          member_ext_.push_back(static_cast<uint32_t>(it->second));
          member_offset_.push_back(m.offset);
          member_size_.push_back(m.size);
        }
        member_end_.push_back(member_ext_.size());
        if (s.size < 0 || (labelled && !s.has_label)) {
          incomplete_.emplace(i, std::move(s.extensions));
        }
        if (labelled) tokens.push_back(std::move(s.label));
      }
    }
    STOKER_CHECK_ARG(table_.size() > 0, "{}: no samples in {} shard{}", pattern_, shards_.size(),
                     shards_.size() == 1 ? "" : "s");
    if (labelled) {
      ResolvedLabels labels = resolve_labels(
          tokens, pattern_, [&](int64_t i) { return fmt::format("sample {}", table_.path(i)); });
      table_.labels = std::move(labels.first);
      if (labels.multi) {
        table_.label_ends = std::move(labels.ends);
        table_.label_values = std::move(labels.values);
      }
      classes_ = std::move(labels.classes);
    }
    fingerprint_ = io::fingerprint(SampleView::of(table_));
    const bool remote = std::any_of(shards_.begin(), shards_.end(),
                                    [](const auto& blob) { return blob->remote(); });
    remote_ = remote;
    if (remote) {
      if (io.read_ahead_connections > 0) {
        read_ahead_ = std::make_unique<ReadAhead>(
            [this](std::span<const int64_t> unit, std::vector<std::vector<uint8_t>>& out) {
              fetch_run(unit, out);
            },
            [this](int64_t index) { return static_cast<uint64_t>(table_.sizes[index]); },
            [this](std::vector<int64_t> indices) { return runs(std::move(indices)); },
            io.read_ahead_connections, io.read_ahead_bytes);
      }
    }
  }

  int64_t size() const override { return table_.size(); }
  int64_t label(int64_t index) const override {
    check(index);
    const int64_t label = table_.labels[index];
    STOKER_CHECK_DATA(label != kMissingLabel,
                      "{}: no label (the other samples have one; this one has no .cls, .json "
                      "label or .txt member: {})",
                      name(index), extensions(index));
    return label;
  }
  bool multi_label() const override { return table_.multi_label(); }
  std::span<const int32_t> label_set(int64_t index) const override {
    check(index);
    return table_.multi_label() ? table_.label_set(index) : std::span<const int32_t>();
  }
  std::string name(int64_t index) const override {
    check(index);
    const std::string_view path = table_.path(index);
    return shards_[shard_of_[index]]->location() + ":" +
           std::string(path.substr(path.find('/') + 1));
  }
  void read(int64_t index, std::vector<uint8_t>& out) const override {
    check(index);
    const int64_t size = table_.sizes[index];
    STOKER_CHECK_DATA(size >= 0, "{}: no image member (the sample has: {})", name(index),
                      extensions(index));
    STOKER_CHECK_DATA(size <= kMaxSampleBytes, "{}: member too large ({} bytes; the limit is {})",
                      name(index), size, kMaxSampleBytes);
    if (read_ahead_ && read_ahead_->take(index, out)) return;
    fetch(index, out);
  }
  void read_ahead(std::span<const int64_t> indices) const override {
    if (!read_ahead_) return;
    // Only what read() would fetch: the others are errors before any read.
    std::vector<int64_t> readable;
    readable.reserve(indices.size());
    for (const int64_t i : indices) {
      if (i >= 0 && i < table_.size() && table_.sizes[i] >= 0 && table_.sizes[i] <= kMaxSampleBytes)
        readable.push_back(i);
    }
    read_ahead_->hint(readable);
  }
  std::vector<int64_t> shard_ends() const override {
    std::vector<int64_t> ends(shards_.size(), 0);
    for (const uint32_t s : shard_of_) ++ends[s];
    for (size_t s = 1; s < ends.size(); ++s) ends[s] += ends[s - 1];
    return ends;
  }
  bool prefers_shard_order() const override { return remote_; }
  void cancel_read_ahead() const override {
    if (read_ahead_) read_ahead_->clear();
  }
  const std::vector<std::string>& classes() const override { return classes_; }
  bool has_field(const std::string& field) const override {
    return member_ext_ids_.contains(field.starts_with("json.") ? "json" : field);
  }
  void read_field(int64_t index, const std::string& field, std::string& out) const override {
    check(index);
    const bool json_key = field.starts_with("json.");
    const std::string ext = json_key ? "json" : field;
    const auto id = member_ext_ids_.find(ext);
    const size_t begin = index == 0 ? 0 : member_end_[index - 1], end = member_end_[index];
    size_t m = begin;
    while (m < end && (id == member_ext_ids_.end() || member_ext_[m] != id->second)) ++m;
    STOKER_CHECK_DATA(m < end, "{}: no .{} member for the field '{}' (the sample has: {})",
                      name(index), ext, field, extensions(index));
    STOKER_CHECK_DATA(member_size_[m] <= static_cast<uint64_t>(kMaxSampleBytes),
                      "{}: .{} member too large ({} bytes; the limit is {})", name(index), ext,
                      member_size_[m], kMaxSampleBytes);
    out.resize(member_size_[m]);  // read in place: a field is read per sample on the hot path
    const std::string_view path = table_.path(index);
    shards_[shard_of_[index]]->read(
        member_offset_[m], std::span(reinterpret_cast<uint8_t*>(out.data()), out.size()),
        fmt::format("the .{} member of {}", ext, path.substr(path.find('/') + 1)));
    if (json_key) select_json_key(out, field.substr(5), name(index), field);
  }
  std::string fingerprint() const override { return fingerprint_; }
  std::string describe() const override {
    return fmt::format("webdataset {} ({} shard{}, {} samples, {} classes)",
                       util::redact_urls(pattern_), shards_.size(), shards_.size() == 1 ? "" : "s",
                       table_.size(), classes_.size());
  }

 private:
  void check(int64_t index) const {
    STOKER_CHECK_ARG(index >= 0 && index < table_.size(), "sample index {} out of range [0, {})",
                     index, table_.size());
  }
  std::string extensions(int64_t index) const {
    const auto it = incomplete_.find(index);
    if (it != incomplete_.end()) return it->second;
    const std::string_view path = table_.path(index);
    return std::string(path.substr(path.rfind('.') + 1));
  }
  // Samples as runs of neighbouring members (group_into_runs), one range read each.
  std::vector<std::vector<int64_t>> runs(std::vector<int64_t> indices) const {
    return group_into_runs(std::move(indices), [this](int64_t i) {
      return StoredRange{shard_of_[i], offsets_[i],
                         offsets_[i] + static_cast<uint64_t>(table_.sizes[i])};
    });
  }

  // Reads a run of members (runs()) with one range read and cuts it into the samples.
  void fetch_run(std::span<const int64_t> run, std::vector<std::vector<uint8_t>>& out) const {
    out.resize(run.size());
    if (run.size() == 1) {
      fetch(run[0], out[0]);
      return;
    }
    const uint64_t begin = offsets_[run.front()];
    const uint64_t end = offsets_[run.back()] + static_cast<uint64_t>(table_.sizes[run.back()]);
    std::vector<uint8_t> span(end - begin);
    const std::string_view first = table_.path(run.front()), last = table_.path(run.back());
    shards_[shard_of_[run.front()]]->read(
        begin, span,
        fmt::format("members {} to {}", first.substr(first.find('/') + 1),
                    last.substr(last.find('/') + 1)));
    for (size_t k = 0; k < run.size(); ++k) {
      const uint64_t at = offsets_[run[k]] - begin;
      out[k].assign(span.begin() + static_cast<ptrdiff_t>(at),
                    span.begin() + static_cast<ptrdiff_t>(at + table_.sizes[run[k]]));
    }
  }

  void fetch(int64_t index, std::vector<uint8_t>& out) const {
    const int64_t size = table_.sizes[index];
    out.resize(static_cast<size_t>(size));
    const std::string_view path = table_.path(index);
    shards_[shard_of_[index]]->read(offsets_[index], out,
                                    fmt::format("member {}", path.substr(path.find('/') + 1)));
  }

  std::string pattern_;
  std::vector<std::unique_ptr<Blob>> shards_;
  SampleTable table_;
  std::vector<uint32_t> shard_of_;
  std::vector<uint64_t> offsets_;
  // Every member of every sample (fields): sample i's are [member_end_[i - 1], member_end_[i]),
  // their extensions as ids (member_ext_ids_: an extension's id is its order of appearance).
  std::unordered_map<std::string, size_t> member_ext_ids_;
  std::vector<uint32_t> member_ext_;
  std::vector<uint64_t> member_offset_, member_size_;
  std::vector<size_t> member_end_;
  // The extensions of the samples without an image or a label, for their messages.
  std::unordered_map<int64_t, std::string> incomplete_;
  std::vector<std::string> classes_;
  std::string fingerprint_;
  bool remote_ = false;
  std::unique_ptr<ReadAhead> read_ahead_;
};

}  // namespace

bool is_webdataset_location(std::string_view location) {
  // A URL's query is no part of its name (a presigned "x.tar?X-Amz-Signature=..." is a shard).
  const std::string_view name = location_path(location);
  return name.find('{') != std::string_view::npos || name.find("::") != std::string_view::npos ||
         name.ends_with(".tar") || name.ends_with(".tar.gz") || name.ends_with(".tgz");
}

std::vector<std::string> expand_shard_pattern(std::string_view pattern) {
  std::vector<std::string> out;
  // "::" separates whole patterns.
  if (const size_t sep = pattern.find("::"); sep != std::string_view::npos) {
    out = expand_shard_pattern(pattern.substr(0, sep));
    for (std::string& s : expand_shard_pattern(pattern.substr(sep + 2)))
      out.push_back(std::move(s));
    STOKER_CHECK_ARG(out.size() <= kMaxShards, "{}: more than {} shards", pattern, kMaxShards);
    return out;
  }
  const size_t open = pattern.find('{');
  if (open == std::string_view::npos) {
    STOKER_CHECK_ARG(pattern.find('}') == std::string_view::npos, "{}: a '}}' without '{{'",
                     pattern);
    STOKER_CHECK_ARG(!pattern.empty(), "empty shard pattern");
    return {std::string(pattern)};
  }
  const size_t close = pattern.find('}', open);
  STOKER_CHECK_ARG(close != std::string_view::npos, "{}: a '{{' without '}}'", pattern);
  const std::string_view inside = pattern.substr(open + 1, close - open - 1);
  STOKER_CHECK_ARG(inside.find('{') == std::string_view::npos, "{}: nested braces", pattern);
  std::vector<std::string> choices;
  if (const size_t dots = inside.find(".."); dots != std::string_view::npos) {
    const std::string_view first = inside.substr(0, dots), last = inside.substr(dots + 2);
    uint64_t a = 0, b = 0;
    const auto pa = std::from_chars(first.data(), first.data() + first.size(), a);
    const auto pb = std::from_chars(last.data(), last.data() + last.size(), b);
    STOKER_CHECK_ARG(!first.empty() && !last.empty() && pa.ec == std::errc() &&
                         pb.ec == std::errc() && pa.ptr == first.data() + first.size() &&
                         pb.ptr == last.data() + last.size(),
                     "{}: {{{}}}: expected {{FIRST..LAST}} with decimal numbers", pattern, inside);
    STOKER_CHECK_ARG(a <= b, "{}: {{{}}}: the range runs backwards", pattern, inside);
    STOKER_CHECK_ARG(b - a < kMaxShards, "{}: more than {} shards", pattern, kMaxShards);
    for (uint64_t v = a; v <= b; ++v) {
      choices.push_back(fmt::format("{:0{}}", v, first.size()));
    }
  } else {
    size_t begin = 0;
    while (true) {
      const size_t comma = std::min(inside.find(',', begin), inside.size());
      choices.emplace_back(inside.substr(begin, comma - begin));
      if (comma == inside.size()) break;
      begin = comma + 1;
    }
  }
  const std::string head(pattern.substr(0, open));
  const std::vector<std::string> tails = expand_shard_pattern(
      pattern.size() > close + 1 ? pattern.substr(close + 1) : std::string_view("\x01"));
  for (const std::string& choice : choices) {
    for (const std::string& tail : tails) {
      out.push_back(head + choice + (tail == "\x01" ? "" : tail));
      STOKER_CHECK_ARG(out.size() <= kMaxShards, "{}: more than {} shards", pattern, kMaxShards);
    }
  }
  return out;
}

std::shared_ptr<Dataset> open_webdataset(const std::string& pattern, const FileListConfig& config,
                                         const ImageFolderConfig& cache, const IoConfig& io) {
  const std::vector<std::string> locations = expand_shard_pattern(pattern);
  const std::filesystem::path cache_dir = cache_dir_from_option(cache.cache);
  const std::string column = config.label_column;
  std::vector<std::unique_ptr<Blob>> blobs(locations.size());
  std::vector<ShardIndex> indexes(locations.size());
  // Shards open in parallel: a remote one costs a round trip (HEAD), an uncached one a read.
  open_all(locations.size(), [&](size_t s) {
    blobs[s] = Blob::open(locations[s], io);
    indexes[s] = index_shard(*blobs[s], column, cache_dir);
  });
  return std::make_shared<WebDataset>(pattern, std::move(blobs), std::move(indexes), io);
}

}  // namespace stoker::io
