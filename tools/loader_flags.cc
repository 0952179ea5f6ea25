#include "loader_flags.h"

#include <CLI/CLI.hpp>
#include <cstdint>

#include "stoker/sampler.h"
#include "stoker/transform.h"
#include "validators.h"

namespace stoker::cli {

void add_loader_flags(CLI::App& cmd, BenchFlags& f) {
  cmd.add_option("--threads", f.threads,
                 "worker threads (default: cores available / ranks on node)")
      ->check(at_least(0));
  cmd.add_option("--batch", f.batch, "batch size per rank")->check(at_least(1));
  cmd.add_option("--prefetch", f.prefetch, "batches in flight (default: chosen from threads)")
      ->check(at_least(0));
  cmd.add_option("--shard-window", f.shard_window,
                 "shuffle in windows of this many batches over shards read in order "
                 "(default: 4 for remote tar shards, else 0: one global shuffle)")
      ->check(at_least(0));
  cmd.add_option("--size", f.size, "output side in pixels")->check(at_least(1));
  cmd.add_option("--transform", f.transform, "train (RandomResizedCrop+flip) or eval")
      ->check(CLI::IsMember({"train", "eval"}));
  cmd.add_option("--output", f.output,
                 "float32, float16, bfloat16 (NCHW, normalised) or uint8 (NHWC)")
      ->check(CLI::IsMember({"float32", "uint8", "float16", "bfloat16"}));
  cmd.add_option("--mode", f.mode,
                 "sampler mode: exact (padded, masked), short (exact's samples, the last batch "
                 "short), pad, even (DistributedSampler without / with drop_last), drop")
      ->check(CLI::IsMember({"exact", "short", "pad", "even", "drop"}));
  cmd.add_option("--seed", f.seed, "shuffle and augmentation seed");
  cmd.add_option("--epoch", f.epoch, "first epoch")->check(at_least(0));
  auto* rank = cmd.add_option("--rank", f.rank, "this rank (with --world)");
  auto* world = cmd.add_option("--world", f.world, "world size (with --rank)");
  rank->needs(world);
  world->needs(rank);
  cmd.add_option("--bad-samples", f.bad_samples, "error (stop, naming the file) or skip (count)")
      ->check(CLI::IsMember({"error", "skip"}));
  cmd.add_flag("--no-shuffle", f.no_shuffle, "dataset order instead of a permutation");
  auto* exact = cmd.add_flag("--exact-decode", f.exact_decode,
                             "decode at full scale (no DCT scaling), train too");
  cmd.add_flag("--dct-scaling", f.dct_scaling,
               "eval too decodes at a DCT scale where the crop still covers the output (by "
               "default eval decodes at full scale: torchvision's pixels)")
      ->excludes(exact);
  cmd.add_option("--interpolation", f.interpolation,
                 "the crop's resize: bilinear, bicubic (antialiased) or nearest")
      ->check(CLI::IsMember({"bilinear", "bicubic", "nearest"}));

  // Storage: the defaults are IoConfig's (docs/environment.md), checked by it.
  cmd.add_option("--io-attempts", f.io_attempts,
                 "tries in all of a read failing with an I/O error, per sample end to end "
                 "(default: $STOKER_IO_ATTEMPTS, else 3)");
  cmd.add_option("--io-backoff", f.io_first_backoff,
                 "seconds before the second try, x4 before each later one (default: 0.05)");
  cmd.add_option("--connect-timeout", f.connect_timeout,
                 "remote data: seconds to connect (default: 10)");
  cmd.add_option("--stall-timeout", f.stall_timeout,
                 "remote data: a transfer under 1 KiB/s for this many seconds fails "
                 "(default: $STOKER_REMOTE_TIMEOUT, else 30)");
  cmd.add_option("--open-timeout", f.open_timeout,
                 "the deadline in seconds of a whole open of the data, every shard's requests "
                 "and retries, 0 for none (default: $STOKER_OPEN_TIMEOUT, else 600)");
  cmd.add_option("--read-ahead-connections", f.read_ahead_connections,
                 "remote data: connections fetching samples ahead, 0 for none "
                 "(default: $STOKER_READAHEAD_CONNECTIONS, else 32)");
  cmd.add_option("--read-ahead-mib", f.read_ahead_mib,
                 "remote data: MiB the read-ahead may hold (default: $STOKER_READAHEAD_MIB, "
                 "else 256)");
  cmd.add_option("--remote-cache", f.remote_cache,
                 "remote data: node-local folder caching whole objects "
                 "(default: $STOKER_REMOTE_CACHE, else none)");
  cmd.add_option("--remote-cache-mib", f.remote_cache_mib,
                 "remote data: MiB the cache may hold (default: $STOKER_REMOTE_CACHE_MIB, else "
                 "10240)");
  cmd.add_option("--packed-io", f.packed_io,
                 "packed shards: mmap or pread (default: $STOKER_PACKED_IO, else mmap)");
  cmd.add_option("--s3-addressing", f.s3_addressing,
                 "s3:// locations: auto, path or virtual (default: "
                 "$STOKER_S3_ADDRESSING_STYLE, else auto)");
  cmd.add_option("--close-timeout", f.close_timeout,
                 "seconds closing waits for reads in flight before abandoning stuck workers "
                 "(default: $STOKER_CLOSE_TIMEOUT, else 10)");
}

namespace {

// MiB from a flag as bytes; a value whose bytes do not fit is left for IoConfig to refuse.
uint64_t mib_bytes(uint64_t mib) { return mib > (UINT64_MAX >> 20) ? UINT64_MAX : mib << 20; }

}  // namespace

IoConfig io_config(const BenchFlags& f) {
  IoConfig io;
  if (f.io_attempts) io.retries.attempts = *f.io_attempts;
  if (f.io_first_backoff) io.retries.first_backoff_s = *f.io_first_backoff;
  if (f.connect_timeout) io.connect_timeout_s = *f.connect_timeout;
  if (f.stall_timeout) io.stall_timeout_s = *f.stall_timeout;
  if (f.open_timeout) io.open_timeout_s = *f.open_timeout;
  if (f.read_ahead_connections) io.read_ahead_connections = *f.read_ahead_connections;
  if (f.read_ahead_mib) io.read_ahead_bytes = mib_bytes(*f.read_ahead_mib);
  if (f.remote_cache) io.remote_cache_dir = *f.remote_cache;
  if (f.remote_cache_mib) io.remote_cache_bytes = mib_bytes(*f.remote_cache_mib);
  if (f.packed_io) io.packed_io = parse_packed_io(*f.packed_io);
  if (f.s3_addressing) io.s3_addressing = parse_s3_addressing(*f.s3_addressing);
  return io;
}

LoaderConfig loader_config(const BenchFlags& f) {
  LoaderConfig config;
  config.batch_size = f.batch;
  config.threads = f.threads;
  config.prefetch = f.prefetch;
  config.shard_window_batches = f.shard_window.value_or(-1);
  config.shuffle = !f.no_shuffle;
  config.seed = f.seed;
  config.mode = parse_sampler_mode(f.mode);
  config.rank = f.rank.value_or(0);
  config.world_size = f.world.value_or(1);
  config.bad_samples = parse_bad_sample_policy(f.bad_samples);
  config.transform.kind = parse_transform_kind(f.transform);
  config.transform.output = parse_output_kind(f.output);
  config.transform.size = f.size;
  config.transform.decode.dct_scaling = !f.exact_decode;
  config.transform.eval_dct_scaling = f.dct_scaling;
  config.transform.interpolation = parse_interpolation(f.interpolation);
  config.read_retries = io_config(f).retries;
  if (f.close_timeout) config.close_timeout_seconds = *f.close_timeout;
  return config;
}

}  // namespace stoker::cli
