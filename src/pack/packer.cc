// pack_dataset: source -> shards + manifest (stoker/packed.h, docs/format.md).
//
// Workers read and transcode samples in parallel; one writer (the calling thread) appends
// them in source order, taking each from a ring of `window` slots, so the bytes never depend
// on the thread count and memory is bounded by the window. Shards are cut before the record
// that would push a shard past shard_size, a rule that depends only on the records, so a
// resumed run cuts where an uninterrupted one does.
//
// This file is the only part of the packed format that uses the image layer (decode, resize,
// encode); it builds as its own target, stoker_pack, so that stoker_io stays util-only.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/file_util.h"
#include "io/index_cache.h"
#include "io/packed_manifest.h"
#include "io/packed_shard.h"
#include "io/remote.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "stoker/packed.h"
#include "stoker/raw_image.h"
#include "util/check.h"
#include "util/logging.h"
#include "util/task_pool.h"
#include "util/text.h"

namespace stoker {

PackMode parse_pack_mode(const std::string& name) {
  if (name == "original") return PackMode::kOriginal;
  if (name == "jpeg") return PackMode::kJpeg;
  if (name == "raw") return PackMode::kRaw;
  STOKER_THROW_ARG("unknown pack mode '{}' (expected one of: original, jpeg, raw)", name);
}

const char* to_string(PackMode mode) {
  switch (mode) {
    case PackMode::kOriginal:
      return "original";
    case PackMode::kJpeg:
      return "jpeg";
    case PackMode::kRaw:
      return "raw";
  }
  return "unknown";
}

void PackConfig::validate() const {
  STOKER_CHECK_ARG(max_side >= 0 && short_side >= 0, "pack: --max-side/--short-side must be >= 0");
  STOKER_CHECK_ARG(max_side == 0 || short_side == 0,
                   "pack: give --max-side or --short-side, not both");
  STOKER_CHECK_ARG(mode != PackMode::kOriginal || (max_side == 0 && short_side == 0),
                   "pack: mode original keeps the bytes; --max-side/--short-side need mode jpeg or "
                   "raw");
  STOKER_CHECK_ARG(quality >= 1 && quality <= 100, "pack: --quality {} out of range [1, 100]",
                   quality);
  STOKER_CHECK_ARG(restart_interval >= 0 && restart_interval <= 4096,
                   "pack: --restart-interval {} out of range [0, 4096]", restart_interval);
  STOKER_CHECK_ARG(zstd_level >= 0 && zstd_level <= 22, "pack: --zstd {} out of range [0, 22]",
                   zstd_level);
  STOKER_CHECK_ARG(zstd_level == 0 || mode == PackMode::kRaw,
                   "pack: --zstd applies to mode raw only");
  STOKER_CHECK_ARG(shard_size >= 4096, "pack: --shard-size {} below 4096 bytes", shard_size);
  STOKER_CHECK_ARG(threads >= 0, "pack: --threads must be >= 0");
  STOKER_CHECK_ARG(limits.max_pixels > 0 && limits.max_memory_bytes > 0,
                   "pack: decode limits must be positive");
  STOKER_CHECK_ARG(fields.size() <= packed::kMaxFields, "pack: {} fields, more than {}",
                   fields.size(), packed::kMaxFields);
  for (size_t k = 0; k < fields.size(); ++k) {
    STOKER_CHECK_ARG(!fields[k].empty() && fields[k].size() <= packed::kMaxFieldNameBytes,
                     "pack: a field name is empty or longer than {} bytes",
                     packed::kMaxFieldNameBytes);
    for (size_t i = 0; i < k; ++i) {
      STOKER_CHECK_ARG(fields[i] != fields[k], "pack: field '{}' given twice", fields[k]);
    }
  }
}

namespace io {
namespace {

using util::TaskPool;

// The options that shape the bytes, with the irrelevant ones normalised away (threads never
// matter; quality only for jpeg; zstd only for raw), as compact canonical JSON.
std::string options_json(const PackConfig& o) {
  nlohmann::ordered_json j;
  j["mode"] = to_string(o.mode);
  j["max_side"] = o.max_side;
  j["short_side"] = o.short_side;
  j["quality"] = o.mode == PackMode::kJpeg ? o.quality : 0;
  j["restart_interval"] = o.mode == PackMode::kJpeg ? o.restart_interval : 0;
  j["zstd_level"] = o.mode == PackMode::kRaw ? o.zstd_level : 0;
  j["channels"] = o.mode == PackMode::kOriginal ? 0 : 3;
  j["shard_size"] = o.shard_size;
  j["bad_samples"] = o.skip_bad_samples ? "skip" : "error";
  j["max_pixels"] = o.limits.max_pixels;
  if (!o.fields.empty()) j["fields"] = o.fields;  // absent otherwise: version-1 bytes unchanged
  return j.dump();
}

uint64_t options_hash(uint32_t version, const std::string& options, const Dataset& source) {
  const std::string canonical = fmt::format("stoker-packed v{}\noptions {}\nsource {} {}\n",
                                            version, options, source.fingerprint(), source.size());
  return XXH3_64bits(canonical.data(), canonical.size());
}

int64_t py_round(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

// Segments must line up with MCU rows to be cut out (decode_region): the largest divisor of
// the 4:2:0 MCUs per row that is at most `at_most` (0 = no restart markers).
int restart_interval_for(int width, int at_most) {
  const int per_row = (width + 15) / 16;
  for (int k = std::min(at_most, per_row); k > 1; --k) {
    if (per_row % k == 0) return k;
  }
  return at_most > 0 ? 1 : 0;
}

// Target size of the stored image: scale from the full-size dimensions, never up.
std::pair<int, int> target_size(int width, int height, const PackConfig& o) {
  double scale = 1.0;
  if (o.max_side > 0) scale = std::min(1.0, double(o.max_side) / std::max(width, height));
  if (o.short_side > 0) scale = std::min(1.0, double(o.short_side) / std::min(width, height));
  if (scale >= 1.0) return {width, height};
  return {static_cast<int>(std::max<int64_t>(1, py_round(width * scale))),
          static_cast<int>(std::max<int64_t>(1, py_round(height * scale)))};
}

packed::Encoding encoding_of(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
      return packed::Encoding::kJpeg;
    case ImageFormat::kPng:
      return packed::Encoding::kPng;
    case ImageFormat::kWebp:
      return packed::Encoding::kWebp;
    default:
      return packed::Encoding::kUnknown;
  }
}

struct Produced {
  std::optional<std::string> bad;  // kBadData: the reason, naming the sample
  RecordInfo info;
  std::vector<uint8_t> payload;
};

struct WorkerScratch {
  std::vector<uint8_t> bytes;
  std::vector<std::string> fields;
  DecodedRegion region;
  std::vector<uint8_t> resized;
  std::vector<uint8_t> resize_tmp;
};

// Reads and transcodes source sample `k` into `out` (payload + record header fields).
void transcode(const Dataset& source, int64_t k, const PackConfig& o, WorkerScratch& s,
               Produced& out) {
  const std::string name = source.name(k);
  const int64_t label = source.label(k);
  // -1: a label-free source (version 2)
  STOKER_CHECK(label >= -1 && label < packed::kNoLabel, "{}: label {} does not fit the format",
               name, label);
  read_with_retries(source, k, s.bytes);
  const ImageHeader header = probe_image(s.bytes, name, o.limits);
  out.info.label = label < 0 ? packed::kNoLabel : static_cast<uint32_t>(label);
  if (o.mode == PackMode::kOriginal) {
    // By magic, not by ImageFormat, so a raw payload repacked is named right either way.
    out.info.encoding = is_raw_image(s.bytes) ? packed::Encoding::kRaw : encoding_of(header.format);
    out.info.channels = 0;  // whatever the source has; decoders convert
    out.info.width = static_cast<uint32_t>(header.width);
    out.info.height = static_cast<uint32_t>(header.height);
    out.payload.assign(s.bytes.begin(), s.bytes.end());
    return;
  }
  const auto [tw, th] = target_size(header.width, header.height, o);
  DecodeConfig decode;
  decode.limits = o.limits;
  decode.dct_scaling = true;  // only scales whose output still covers (tw, th)
  const Rect whole{0, 0, header.width, header.height};
  decode_region(s.region, s.bytes, header, whole, tw, th, 3, name, decode);
  const DecodedRegion& r = s.region;
  const uint8_t* pixels = r.pixels.data();
  if (tw != r.width || th != r.height || r.scale != 1.0) {
    // The whole image in decoded coordinates, taps clipped to the decoded image (as PIL's
    // resize of the whole image).
    const Box box{-double(r.x0), -double(r.y0), header.width * r.scale - r.x0,
                  header.height * r.scale - r.y0};
    const Box bounds{-double(r.x0), -double(r.y0), double(r.scaled_width - r.x0),
                     double(r.scaled_height - r.y0)};
    s.resized.resize(static_cast<size_t>(tw) * th * 3);
    resize_antialiased(s.resized.data(), tw, th, r.pixels.data(), r.width, r.height, 3, box, bounds,
                       s.resize_tmp);
    pixels = s.resized.data();
  }
  out.info.channels = 3;
  out.info.width = static_cast<uint32_t>(tw);
  out.info.height = static_cast<uint32_t>(th);
  if (o.mode == PackMode::kJpeg) {
    out.info.encoding = packed::Encoding::kJpeg;
    out.payload =
        encode_jpeg(pixels, tw, th, 3, o.quality, restart_interval_for(tw, o.restart_interval));
  } else {
    out.info.encoding = packed::Encoding::kRaw;
    out.payload = encode_raw_image(pixels, tw, th, 3, o.zstd_level);
  }
}

// Version 2: sample k's fields (o.fields, in order) after its image payload.
void append_fields(const Dataset& source, int64_t k, const PackConfig& o, WorkerScratch& s,
                   std::vector<uint8_t>& payload) {
  s.fields.resize(o.fields.size());
  for (size_t f = 0; f < o.fields.size(); ++f) {
    read_field_with_retries(source, k, o.fields[f], s.fields[f]);
    size_t bad_at = 0;
    STOKER_CHECK_DATA(
        source.field_kind(o.fields[f]) != FieldKind::kText || util::is_utf8(s.fields[f], &bad_at),
        "{}: its field '{}' is not UTF-8 text (byte {})", source.name(k), o.fields[f], bad_at);
  }
  append_field_block(payload, s.fields);
}

// Reads and transcodes source sample `k` into `out` (payload + record header fields), and
// for a version-2 pack appends its field block.
void produce(const Dataset& source, int64_t k, const PackConfig& o, uint32_t version,
             WorkerScratch& s, Produced& out) {
  transcode(source, k, o, s, out);
  if (version >= packed::kFieldsVersion) append_fields(source, k, o, s, out.payload);
}

// Samples [begin, end) produced by a TaskPool, one job a sample, no further than `window` ahead
// of the writer; the writer takes them in order.
class ProducerPool {
 public:
  ProducerPool(const Dataset& source, const PackConfig& options, uint32_t version, int64_t begin,
               int64_t end, int threads)
      : source_(source),
        options_(options),
        version_(version),
        window_(std::max<int64_t>(16, int64_t{4} * threads)),
        next_submit_(begin),
        end_(end),
        slots_(static_cast<size_t>(window_)),
        scratch_(static_cast<size_t>(threads)),
        workers_(threads) {
    while (next_submit_ < end_ && next_submit_ < begin + window_) submit();
  }

  // The result for the next index, in order. Call exactly end - begin times. A fatal error of
  // that sample (I/O after its retries, internal) is thrown here.
  Produced take() {
    const int64_t k = next_submit_ - static_cast<int64_t>(jobs_.size());
    std::shared_ptr<TaskPool::Job> job = std::move(jobs_.front());
    jobs_.pop_front();
    job->wait();
    Produced result = std::move(slots_[static_cast<size_t>(k % window_)]);
    if (next_submit_ < end_) submit();
    return result;
  }

 private:
  void submit() {
    const int64_t k = next_submit_++;
    jobs_.push_back(workers_.submit(1, [this, k](int, int thread) {
      Produced& p = slots_[static_cast<size_t>(k % window_)];
      p = Produced{};
      try {
        produce(source_, k, options_, version_, scratch_[static_cast<size_t>(thread)], p);
      } catch (const Error& e) {
        // Only a bad sample may be skipped; a failed read stops the pack (recording it as
        // skipped would make the damage permanent: a re-run finds the pack complete).
        if (e.kind() != ErrorKind::kBadData) throw;
        p.bad = e.message();
      }
    }));
  }

  const Dataset& source_;
  const PackConfig& options_;
  const uint32_t version_;
  const int64_t window_;
  int64_t next_submit_;
  const int64_t end_;
  std::vector<Produced> slots_;  // sample k's in slot k % window, written by its task only
  std::vector<WorkerScratch> scratch_;
  std::deque<std::shared_ptr<TaskPool::Job>> jobs_;  // the samples in flight, in order
  TaskPool workers_;  // last: destroyed (joined) before the slots its tasks write
};

std::string read_text_or_empty(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes;
  try {
    read_file(path.string(), bytes, int64_t{1} << 30);
  } catch (const Error&) {
    return "";
  }
  return std::string(bytes.begin(), bytes.end());
}

// Removes shard files (and temporaries) numbered `from` or above: leftovers of a run that
// cut shards elsewhere. Names other than ours are left alone.
void remove_stale_shards(const std::filesystem::path& dir, uint64_t from) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string file = e.path().filename().string();
    if (file.ends_with(packed::kTempSuffix)) file.resize(file.size() - packed::kTempSuffix.size());
    if (!file.starts_with(packed::kShardPrefix) || !file.ends_with(packed::kShardSuffix)) continue;
    const std::string digits =
        file.substr(packed::kShardPrefix.size(),
                    file.size() - packed::kShardPrefix.size() - packed::kShardSuffix.size());
    if (digits.size() < 5 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoull(digits) >= from) std::filesystem::remove(e.path());
  }
}

// One writer per OUT: an exclusive flock on OUT/.pack.lock, held for the whole pack (the
// kernel drops it when the process dies, so a killed pack leaves no stale lock; the empty file
// stays, as unlinking a lock file lets two later writers lock two different files). A second
// writer fails at once; two packs into one OUT would otherwise race on the same temporary and
// final shard names.
UniqueFd lock_out(const std::filesystem::path& out) {
  const std::string path = (out / ".pack.lock").string();
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (!fd.valid()) {
    const int error = errno;
    STOKER_THROW_IO(error, path, "pack: {}: {}", path, errno_message(error));
  }
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    STOKER_CHECK_ARG(error != EWOULDBLOCK,
                     "pack: {} is being written by another stoker pack (it holds {}): wait for "
                     "it to finish, or give another OUT",
                     out.string(), path);
    STOKER_THROW_IO(error, path, "pack: cannot lock {}: {}", path, errno_message(error));
  }
  return fd;
}

}  // namespace
}  // namespace io

PackResult pack_dataset(const Dataset& source, const std::string& source_path,
                        const std::filesystem::path& out, const PackConfig& options) {
  using namespace io;  // NOLINT
  options.validate();
  if (is_remote_location(out.string())) {
    std::string location = out.string();
    while (!location.empty() && location.back() == '/') location.pop_back();
    const std::filesystem::path cache = cache_dir_from_option("");
    STOKER_CHECK_ARG(!cache.empty(),
                     "pack: {}: a remote OUT is packed in a local staging folder first, under "
                     "the cache folder, which is off (STOKER_CACHE_DIR=off)",
                     location);
    const std::filesystem::path staging =
        cache / "pack-staging" /
        fmt::format("{:016x}", XXH3_64bits(location.data(), location.size()));
    PackResult result = pack_dataset(source, source_path, staging, options);
    const std::string manifest_text = read_text_or_empty(staging / packed::kManifestName);
    const Manifest manifest =
        parse_manifest(manifest_text, (staging / packed::kManifestName).string());
    std::vector<uint8_t> bytes;
    const IoConfig io;  // the environment's retries and timeouts for the uploads
    for (const ManifestShard& shard : manifest.shards) {
      read_file((staging / shard.file).string(), bytes, int64_t{1} << 40);
      put_remote(location + "/" + shard.file, bytes, io);
    }
    put_remote(location + "/" + std::string(packed::kManifestName),
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(manifest_text.data()),
                                        manifest_text.size()),
               io);
    log(LogLevel::kInfo, "pack: uploaded {} shards and the manifest to {}", manifest.shards.size(),
        location);
    result.already_complete = false;
    return result;
  }
  const int64_t total = source.size();
  STOKER_CHECK(total > 0, "pack: {}: no samples", source_path);
  std::filesystem::create_directories(out);
  const UniqueFd lock = lock_out(out);  // held until the pack is done
  // Version 2 only when needed: every other pack keeps its version-1 bytes.
  const uint32_t version = options.fields.empty() && !source.classes().empty()
                               ? packed::kFormatVersion
                               : packed::kFieldsVersion;
  for (const std::string& f : options.fields) {
    STOKER_CHECK_ARG(source.has_field(f), "pack: {} has no field '{}'", source.describe(), f);
  }
  const std::string opts = options_json(options);
  const uint64_t hash = options_hash(version, opts, source);
  const std::filesystem::path manifest_path = out / packed::kManifestName;
  // A finished pack of another source or other options is someone's data: replaced only when
  // asked (PackConfig::replace, --force). A manifest that does not parse is no finished pack.
  if (!options.replace) {
    const std::string existing = read_text_or_empty(manifest_path);
    if (!existing.empty()) {
      std::optional<Manifest> old;
      try {
        old = parse_manifest(existing, manifest_path.string());
      } catch (const Error&) {
      }
      STOKER_CHECK_ARG(!old || old->options_hash == hash,
                       "pack: {} holds a finished pack of {} made with other options ({}); this "
                       "run would write {} with {}: give --force to replace it, or another OUT",
                       out.string(), old ? old->source : "", old ? old->options_json : "",
                       source_path, opts);
    }
  }

  Manifest manifest;
  manifest.version = version;
  for (const std::string& f : options.fields) {
    manifest.fields.push_back(ManifestField{f, source.field_kind(f)});
  }
  manifest.source_samples = static_cast<uint64_t>(total);
  manifest.classes = source.classes();
  manifest.options_json = opts;
  manifest.options_hash = hash;
  manifest.source = source_path;
  manifest.source_fingerprint = source.fingerprint();
  STOKER_CHECK_ARG(!source.multi_label(),
                   "pack: {}: a multi-label list cannot be packed yet (the packed format holds "
                   "one label per record); read the list directly",
                   source_path);

  PackResult result;
  PackProgress progress;
  progress.total = total;

  // Resume: keep the run of complete shards, from shard 0, that this very pack would write.
  uint64_t next_source = 0, next_record = 0;
  for (uint64_t number = 0;; ++number) {
    const std::filesystem::path file = out / shard_file_name(number);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) break;
    std::optional<ShardFile> shard;
    try {
      shard.emplace(ShardFile::open(file.string(), file.string()));
    } catch (const Error& e) {
      log(LogLevel::kInfo, "pack: rewriting {}", e.message());
      break;
    }
    if (shard->options_hash() != hash || shard->shard_number() != number ||
        shard->first_record() != next_record || shard->first_source() != next_source ||
        shard->source_count() > static_cast<uint64_t>(total) - next_source) {
      break;
    }
    for (const SkippedSample& s : shard->skipped()) manifest.skipped.emplace_back(s.name, s.reason);
    for (uint64_t j = 0; j < shard->record_count(); ++j) {
      manifest.payload_bytes += shard->entry(j).payload_length;
    }
    manifest.shards.push_back(ManifestShard{shard_file_name(number), shard->record_count(),
                                            next_record, shard->file_size(), shard->checksum()});
    next_record += shard->record_count();
    next_source += shard->source_count();
    ++result.reused_shards;
    result.skipped += static_cast<int64_t>(shard->skipped_count());
    progress.bytes += static_cast<int64_t>(shard->file_size());
  }
  progress.done = progress.reused = static_cast<int64_t>(next_source);
  progress.skipped = result.skipped;
  progress.shards = static_cast<int>(manifest.shards.size());

  const auto finish_manifest = [&]() -> std::string {
    manifest.records = next_record;
    manifest.fingerprint = manifest_fingerprint(manifest);
    return serialize_manifest(manifest);
  };

  // The counts of a finished pack, reported once more through the progress hook.
  auto finish_result = [&] {
    result.records = static_cast<int64_t>(next_record);
    result.shards = static_cast<int64_t>(manifest.shards.size());
    result.bytes = progress.bytes;
    progress.finished = true;
    if (options.progress) options.progress(progress);
    return result;
  };

  if (next_source == static_cast<uint64_t>(total)) {
    const std::string text = finish_manifest();
    if (read_text_or_empty(manifest_path) == text) {
      result.already_complete = true;
      return finish_result();
    }
  }
  // From here on the folder is being changed: a manifest describing the old state must not
  // survive an interruption, or a reader could pair it with new shards.
  if (std::filesystem::exists(manifest_path)) {
    std::filesystem::remove(manifest_path);
    fsync_directory(out);
  }
  if (options.progress) options.progress(progress);

  if (next_source < static_cast<uint64_t>(total)) {
    const int threads = options.threads > 0 ? options.threads : available_cpus();
    ProducerPool pool(source, options, version, static_cast<int64_t>(next_source), total, threads);
    std::optional<ShardWriter> writer;
    uint64_t shard_number = manifest.shards.size();
    const auto close_shard = [&](uint64_t source_end) {
      const ShardWriter::Result r = writer->finish(source_end);
      manifest.shards.push_back(ManifestShard{shard_file_name(shard_number), r.records,
                                              next_record - r.records, r.bytes, r.checksum});
      writer.reset();
      ++shard_number;
      progress.bytes += static_cast<int64_t>(r.bytes);
      ++progress.shards;
    };
    for (int64_t k = static_cast<int64_t>(next_source); k < total; ++k) {
      Produced p = pool.take();
      if (p.bad) {
        STOKER_CHECK_DATA(options.skip_bad_samples, "{}", *p.bad);
        if (!writer) writer.emplace(out, version, shard_number, hash, next_record, k);
        const std::string name = source.name(k);
        log(LogLevel::kWarning, "pack: skipping {}", *p.bad);
        writer->add_skipped(static_cast<uint64_t>(k), name, *p.bad);
        manifest.skipped.emplace_back(name, *p.bad);
        ++result.skipped;
        ++progress.skipped;
      } else {
        if (writer && writer->record_count() > 0 &&
            writer->size_with(p.payload.size()) > static_cast<uint64_t>(options.shard_size)) {
          close_shard(static_cast<uint64_t>(k));
        }
        if (!writer) writer.emplace(out, version, shard_number, hash, next_record, k);
        writer->add_record(p.info, p.payload);
        manifest.payload_bytes += p.payload.size();
        ++next_record;
      }
      ++progress.done;
      if (options.progress) options.progress(progress);
    }
    STOKER_CHECK(next_record > 0, "pack: {}: all {} samples were bad", source_path, total);
    close_shard(static_cast<uint64_t>(total));
  }

  remove_stale_shards(out, manifest.shards.size());
  const std::string text = finish_manifest();
  write_file_atomically(out, std::string(packed::kManifestName),
                        std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  return finish_result();
}

}  // namespace stoker
