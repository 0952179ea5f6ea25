// stoker pack / verify / inspect: flags -> stoker/packed.h, plus progress display.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "command.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/log.h"
#include "stoker/packed.h"
#include "util/check.h"
#include "validators.h"

namespace stoker::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

std::string human_seconds(double s) {
  if (!(s >= 0) || s > 1e7) return "--:--";
  const auto t = static_cast<int64_t>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02d}:{:02d}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02d}", t / 60, t % 60);
}

// A progress display on stderr: a redrawn bar on a terminal, a plain line every few seconds
// otherwise (logs, CI). Rate and ETA count only the work of this run, not reused shards.
class Progress {
 public:
  // `bytes`: the units are bytes (shown as MiB/s), else samples.
  Progress(std::string what, bool bytes)
      : what_(std::move(what)),
        bytes_(bytes),
        tty_(::isatty(STDERR_FILENO) == 1),
        start_(Clock::now()) {}

  // `base`: units already done when this run started (resumed work).
  void update(int64_t done, int64_t total, int64_t base, const std::string& extra, bool last) {
    const auto now = Clock::now();
    const double interval = tty_ ? 0.1 : 5.0;
    if (!last && std::chrono::duration<double>(now - shown_).count() < interval) return;
    shown_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done - base) / elapsed : 0;
    const double eta = rate > 0 ? static_cast<double>(total - done) / rate : -1;
    const double fraction = total > 0 ? static_cast<double>(done) / total : 1.0;
    const std::string count =
        bytes_ ? fmt::format("{}/{}", human_bytes(double(done)), human_bytes(double(total)))
               : fmt::format("{}/{}", done, total);
    const std::string speed = bytes_ ? human_bytes(rate) + "/s" : fmt::format("{:.0f}/s", rate);
    if (tty_) {
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(fraction * kWidth);
      std::string bar(static_cast<size_t>(filled), '=');
      if (filled < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
      std::fprintf(stderr, "\r%s [%s] %5.1f%% %s %s ETA %s%s\x1b[K%s", what_.c_str(), bar.c_str(),
                   100 * fraction, count.c_str(), speed.c_str(), human_seconds(eta).c_str(),
                   extra.c_str(), last ? "\n" : "");
    } else {
      std::fprintf(stderr, "%s: %s (%.1f%%), %s, ETA %s%s\n", what_.c_str(), count.c_str(),
                   100 * fraction, speed.c_str(), human_seconds(eta).c_str(), extra.c_str());
    }
    std::fflush(stderr);
  }

 private:
  std::string what_;
  bool bytes_;
  bool tty_;
  Clock::time_point start_;
  Clock::time_point shown_{};
};

struct PackFlags {
  std::string source;
  std::string out;
  std::string mode = "original";
  int max_side = 0;
  int short_side = 0;
  int quality = 90;
  int restart_interval = 2;
  int zstd = 0;
  uint64_t shard_size = uint64_t{256} << 20;
  int threads = 0;
  std::string bad_samples = "error";
  bool force = false;
  std::vector<std::string> fields;
};

// --mode raw without a size keeps every image at full size as pixels: says what that comes to,
// from the headers of up to 64 samples spread over the data set.
void warn_raw_size(const Dataset& source) {
  const int64_t n = source.size();
  const int64_t probes = std::min<int64_t>(n, 64);
  double pixels = 0;
  int64_t probed = 0;
  std::vector<uint8_t> bytes;
  for (int64_t k = 0; k < probes; ++k) {
    const int64_t index = k * n / probes;
    try {
      source.read(index, bytes);
      const ImageHeader h = probe_image(bytes, source.name(index), DecodeLimits{});
      pixels += static_cast<double>(h.width) * h.height;
      ++probed;
    } catch (const Error&) {
      // a bad sample: the pack itself reports it
    }
  }
  if (probed == 0) return;
  const double total = pixels / static_cast<double>(probed) * 3.0 * static_cast<double>(n);
  std::fprintf(stderr,
               "pack: warning: --mode raw without --max-side or --short-side stores every image "
               "at full size as RGB pixels: about %s for %lld images (from %lld headers); "
               "training crops rarely need more than --short-side 256 (about %s)\n",
               human_bytes(total).c_str(), static_cast<long long>(n),
               static_cast<long long>(probed),
               human_bytes(std::min(total, 256.0 * 256.0 * 4.0 / 3.0 * 3.0 * n)).c_str());
}

class Commands final : public Command {
 public:
  explicit Commands(CLI::App& app) {
    pack_ = app.add_subcommand(
        "pack", "pre-process SRC (image folder or file list) into packed shards in OUT");
    pack_->add_option("SRC", p_.source, "image folder or file list")->required();
    pack_->add_option("OUT", p_.out, "output folder (shards + manifest.json)")->required();
    pack_
        ->add_option("--mode", p_.mode,
                     "original (keep the bytes), jpeg (decode, resize, re-encode) or raw "
                     "(decoded uint8 RGB pixels)")
        ->check(CLI::IsMember({"original", "jpeg", "raw"}));
    auto* max_side =
        pack_
            ->add_option(
                "--max-side", p_.max_side,
                "resize so that the longer side is at most S (never up; default: keep the size)")
            ->check(at_least(1));
    auto* short_side =
        pack_
            ->add_option("--short-side", p_.short_side,
                         "resize so that the shorter side is at most S (default: keep the size)")
            ->check(at_least(1));
    max_side->excludes(short_side);
    quality_ = pack_->add_option("--quality", p_.quality, "JPEG quality for --mode jpeg")
                   ->check(between(1, 100));
    restart_ = pack_
                   ->add_option("--restart-interval", p_.restart_interval,
                                "--mode jpeg: a restart marker every K MCUs (at most this; 0 = "
                                "none), so that crops decode only what they touch")
                   ->check(between(0, 4096));
    zstd_ = pack_
                ->add_option("--zstd", p_.zstd,
                             "zstd-compress raw pixels at this level (1-22; default off)")
                ->check(between(1, 22));
    pack_
        ->add_option("--shard-size", p_.shard_size,
                     "cut shards past this many bytes (default 256MiB; suffixes kb, mb, gb "
                     "= 1024-based)")
        ->transform(CLI::AsSizeValue(false));
    pack_->add_option("--threads", p_.threads, "worker threads (default: cores available)")
        ->check(at_least(0));
    pack_->add_flag("--force", p_.force,
                    "replace a finished pack in OUT made from another source or with other "
                    "options (without it, that is an error)");
    pack_
        ->add_option("--bad-samples", p_.bad_samples,
                     "error (stop, naming the file) or skip (leave out, list in the manifest)")
        ->check(CLI::IsMember({"error", "skip"}));
    pack_
        ->add_option("--fields", p_.fields,
                     "per-sample fields to keep beside each image, comma-separated: WebDataset "
                     "members (txt,json,json.KEY) or a list's columns (caption); writes format "
                     "version 2 (docs/fields.md)")
        ->delimiter(',');

    verify_ = app.add_subcommand(
        "verify", "read every byte of a packed dataset; exit 1 naming the first corruption");
    verify_->add_option("OUT", verify_path_, "packed dataset folder or its manifest.json")
        ->required();

    inspect_ = app.add_subcommand(
        "inspect", "print a packed dataset's counts, classes, sizes and pack options");
    inspect_->add_option("OUT", inspect_path_, "packed dataset folder or its manifest.json")
        ->required();
    inspect_->add_flag("--json", inspect_json_, "one JSON object");
  }

  std::optional<int> run() override {
    if (pack_->parsed()) return run_pack();
    if (verify_->parsed()) return run_verify();
    if (inspect_->parsed()) return run_inspect();
    return std::nullopt;
  }

 private:
  int run_pack() {
    PackConfig o;
    o.mode = parse_pack_mode(p_.mode);
    STOKER_CHECK_ARG(quality_->count() == 0 || o.mode == PackMode::kJpeg,
                     "pack: --quality applies to --mode jpeg only");
    STOKER_CHECK_ARG(restart_->count() == 0 || o.mode == PackMode::kJpeg,
                     "pack: --restart-interval applies to --mode jpeg only");
    STOKER_CHECK_ARG(zstd_->count() == 0 || o.mode == PackMode::kRaw,
                     "pack: --zstd applies to --mode raw only");
    o.max_side = p_.max_side;
    o.short_side = p_.short_side;
    o.quality = p_.quality;
    o.restart_interval = p_.restart_interval;
    o.zstd_level = p_.zstd;
    STOKER_CHECK_ARG(p_.shard_size <= (uint64_t{1} << 40), "pack: --shard-size above 1 TiB");
    o.shard_size = static_cast<int64_t>(p_.shard_size);
    o.threads = p_.threads;
    o.skip_bad_samples = p_.bad_samples == "skip";
    o.replace = p_.force;
    o.fields = p_.fields;
    o.validate();

    FileListConfig lists;
    lists.field_columns = p_.fields;  // a list keeps only the columns asked for
    auto source = open_dataset(p_.source, lists);
    std::fprintf(stderr, "pack: %s -> %s (mode %s)\n", source->describe().c_str(), p_.out.c_str(),
                 p_.mode.c_str());
    if (o.mode == PackMode::kRaw && o.max_side == 0 && o.short_side == 0) warn_raw_size(*source);
    Progress bar("pack", false);
    int64_t base = -1;
    o.progress = [&](const PackProgress& p) {
      if (base < 0) {
        base = p.reused;
        if (p.reused > 0) {
          std::fprintf(stderr, "pack: resuming: %d complete shards (%lld samples) kept\n", p.shards,
                       static_cast<long long>(p.reused));
        }
      }
      const std::string extra =
          fmt::format(", {} in {} shards{}", human_bytes(static_cast<double>(p.bytes)), p.shards,
                      p.skipped > 0 ? fmt::format(", {} skipped", p.skipped) : "");
      bar.update(p.done, p.total, base, extra, p.finished);
    };
    const auto t0 = Clock::now();
    const PackResult r = pack_dataset(*source, p_.source, p_.out, o);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r.already_complete) {
      std::printf("pack: %s is already complete (%lld records, %lld shards); nothing written\n",
                  p_.out.c_str(), static_cast<long long>(r.records),
                  static_cast<long long>(r.shards));
    } else {
      std::printf(
          "pack: wrote %s: %lld records in %lld shards (%s), %lld skipped, %lld shards "
          "reused, %.1f s\n",
          p_.out.c_str(), static_cast<long long>(r.records), static_cast<long long>(r.shards),
          human_bytes(double(r.bytes)).c_str(), static_cast<long long>(r.skipped),
          static_cast<long long>(r.reused_shards), seconds);
    }
    return 0;
  }

  int run_verify() {
    Progress bar("verify", true);
    try {
      const VerifyReport r = verify_packed(verify_path_, [&](int64_t done, int64_t total) {
        bar.update(done, total, 0, "", done == total);
      });
      std::printf("verify: %s: OK (%lld shards, %lld records, %s)\n", verify_path_.c_str(),
                  static_cast<long long>(r.shards), static_cast<long long>(r.records),
                  human_bytes(double(r.bytes)).c_str());
      return 0;
    } catch (const Error& e) {
      std::fprintf(stderr, "\nverify: FAILED: %s\n", e.message().c_str());
      return 1;
    }
  }

  int run_inspect() {
    const PackedInfo info = inspect_packed(inspect_path_);
    if (inspect_json_) {
      nlohmann::ordered_json j;
      j["folder"] = info.folder.string();
      j["version"] = info.version;
      j["records"] = info.records;
      j["source_samples"] = info.source_samples;
      j["source"] = info.source;
      j["fingerprint"] = info.fingerprint;
      j["bytes"] = info.bytes;
      j["payload_bytes"] = info.payload_bytes;
      j["options"] = nlohmann::ordered_json::parse(info.options_json);
      j["classes"] = info.classes;
      j["class_counts"] = info.class_counts;
      auto fields = nlohmann::ordered_json::array();
      for (size_t k = 0; k < info.fields.size(); ++k) {
        fields.push_back({{"name", info.fields[k].first},
                          {"kind", info.fields[k].second},
                          {"first_record", info.first_record_fields[k]}});
      }
      j["fields"] = std::move(fields);
      auto shards = nlohmann::ordered_json::array();
      for (const PackedShardInfo& s : info.shards) {
        shards.push_back({{"file", s.file},
                          {"records", s.records},
                          {"bytes", s.bytes},
                          {"checksum", s.checksum}});
      }
      j["shards"] = std::move(shards);
      j["skipped"] = info.skipped.size();
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return 0;
    }
    std::printf("packed dataset %s (format version %d)\n", printable(info.folder.string()).c_str(),
                info.version);
    std::printf("  records      %lld of %lld source samples (%zu skipped)\n",
                static_cast<long long>(info.records), static_cast<long long>(info.source_samples),
                info.skipped.size());
    std::printf("  source       %s\n", printable(info.source).c_str());
    std::printf("  options      %s\n", info.options_json.c_str());
    std::printf("  fingerprint  %s\n", info.fingerprint.c_str());
    int64_t smallest = INT64_MAX, largest = 0;
    for (const auto& s : info.shards) {
      smallest = std::min(smallest, s.bytes);
      largest = std::max(largest, s.bytes);
    }
    std::printf("  shards       %zu, %s in all (%s to %s each)\n", info.shards.size(),
                human_bytes(double(info.bytes)).c_str(), human_bytes(double(smallest)).c_str(),
                human_bytes(double(largest)).c_str());
    std::printf(
        "  payload      %s, %s per record on average\n",
        human_bytes(double(info.payload_bytes)).c_str(),
        human_bytes(info.records > 0 ? double(info.payload_bytes) / info.records : 0).c_str());
    std::printf("  classes      %zu\n", info.classes.size());
    const size_t shown = std::min<size_t>(info.classes.size(), 20);
    for (size_t c = 0; c < shown; ++c) {
      std::printf("    %-30s %lld\n", printable(info.classes[c]).c_str(),
                  static_cast<long long>(info.class_counts[c]));
    }
    if (shown < info.classes.size()) std::printf("    ... %zu more\n", info.classes.size() - shown);
    if (info.classes.empty()) std::printf("    (label-free: every record's label is -1)\n");
    if (!info.fields.empty()) {
      std::printf("  fields       %zu, the first record's:\n", info.fields.size());
      for (size_t k = 0; k < info.fields.size(); ++k) {
        const std::string& value = info.first_record_fields[k];
        const std::string shown_value =
            info.fields[k].second == "bytes"
                ? fmt::format("<{} bytes>", value.size())
                : printable(value.substr(0, 120)) + (value.size() > 120 ? " ..." : "");
        std::printf("    %-14s %-6s %s\n", printable(info.fields[k].first).c_str(),
                    info.fields[k].second.c_str(), shown_value.c_str());
      }
    }
    for (size_t k = 0; k < std::min<size_t>(info.skipped.size(), 10); ++k) {
      std::printf("  skipped      %s: %s\n", printable(info.skipped[k].first).c_str(),
                  printable(info.skipped[k].second).c_str());
    }
    if (info.skipped.size() > 10)
      std::printf("  skipped      ... %zu more\n", info.skipped.size() - 10);
    return 0;
  }

  CLI::App* pack_ = nullptr;
  CLI::App* verify_ = nullptr;
  CLI::App* inspect_ = nullptr;
  CLI::Option* quality_ = nullptr;
  CLI::Option* restart_ = nullptr;
  CLI::Option* zstd_ = nullptr;
  PackFlags p_;
  std::string verify_path_;
  std::string inspect_path_;
  bool inspect_json_ = false;
};

}  // namespace

std::unique_ptr<Command> add_pack_commands(CLI::App& app) {
  return std::make_unique<Commands>(app);
}

}  // namespace stoker::cli
