// The loader flags shared by stoker bench and stoker demo, and the LoaderConfig and IoConfig
// they give.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "stoker/loader.h"

namespace CLI {
class App;
}  // namespace CLI

namespace stoker::cli {

// How the loader is configured, and what bench measures and prints.
struct BenchFlags {
  std::string data;
  int threads = 0;
  int batch = 256;
  int prefetch = 0;
  std::optional<int> shard_window;
  int size = 224;
  std::string transform = "train";
  std::string output = "float32";
  std::string mode = "exact";
  int64_t images = 0;
  uint64_t seed = 0;
  int64_t epoch = 0;
  std::optional<int> rank;
  std::optional<int> world;
  std::string bad_samples = "error";
  bool no_shuffle = false;
  bool exact_decode = false;
  bool dct_scaling = false;  // eval too (train has it unless --exact-decode)
  std::string interpolation = "bilinear";
  bool digest = false;
  bool json = false;
  bool stats = false;                    // live stats lines and the live verdict
  std::string stats_file;                // where the stats lines go ("" with --stats: stderr)
  std::optional<double> stats_interval;  // seconds between stats lines
  // Storage (IoConfig, LoaderConfig::read_retries and close_timeout_seconds); unset: the
  // config's default, which is its environment variable's value when that is set.
  std::optional<int> io_attempts;
  std::optional<double> io_first_backoff;
  std::optional<double> connect_timeout;
  std::optional<double> stall_timeout;
  std::optional<double> open_timeout;
  std::optional<int> read_ahead_connections;
  std::optional<uint64_t> read_ahead_mib;
  std::optional<std::string> remote_cache;
  std::optional<uint64_t> remote_cache_mib;
  std::optional<std::string> packed_io;
  std::optional<std::string> s3_addressing;
  std::optional<double> close_timeout;
  bool measure_fixes = true;   // with --stats: measure the fixes on a sample
  std::string device = "cpu";  // cpu | cuda (GPU augmentation)
  int gpu = 0;                 // CUDA device index
  std::string decode = "cpu";  // cpu | gpu | auto (with --device cuda)
  std::string jpeg_backend = "auto";
};

// --threads, --batch, --prefetch, --size, --transform, --output, --mode, --seed, --epoch,
// --rank/--world, --bad-samples, --no-shuffle, --exact-decode, and the storage flags
// (--io-attempts, --io-backoff, --connect-timeout, --stall-timeout, --open-timeout,
// --read-ahead-connections, --read-ahead-mib, --remote-cache, --remote-cache-mib, --packed-io,
// --s3-addressing, --close-timeout).
void add_loader_flags(CLI::App& cmd, BenchFlags& flags);

// The loader configuration of `flags`: one rank unless --rank/--world say otherwise
// (docs/architecture.md, "Rank discovery and agreement"), whatever the environment says; the
// read retries are io_config(flags)'s.
LoaderConfig loader_config(const BenchFlags& flags);

// How the dataset reads its storage: the storage flags over IoConfig's defaults.
IoConfig io_config(const BenchFlags& flags);

}  // namespace stoker::cli
