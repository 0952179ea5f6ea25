#include "loader_flags.h"

#include <CLI/CLI.hpp>

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
  cmd.add_option("--mode", f.mode, "sampler mode")->check(CLI::IsMember({"exact", "pad", "drop"}));
  cmd.add_option("--seed", f.seed, "shuffle and augmentation seed");
  cmd.add_option("--epoch", f.epoch, "first epoch")->check(at_least(0));
  auto* rank = cmd.add_option("--rank", f.rank, "this rank (with --world)");
  auto* world = cmd.add_option("--world", f.world, "world size (with --rank)");
  rank->needs(world);
  world->needs(rank);
  cmd.add_option("--bad-samples", f.bad_samples, "error (stop, naming the file) or skip (count)")
      ->check(CLI::IsMember({"error", "skip"}));
  cmd.add_flag("--no-shuffle", f.no_shuffle, "dataset order instead of a permutation");
  cmd.add_flag("--exact-decode", f.exact_decode, "decode at full scale (no DCT scaling)");
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
  return config;
}

}  // namespace stoker::cli
