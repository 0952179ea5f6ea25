#include "pipeline/setup.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "stoker/error.h"
#include "util/check.h"
#include "util/env_vars.h"

namespace stoker::pipeline {
namespace {

// Staging bytes a new batch buffer starts with per sample in AugmentMode::kDeferred: the
// configured amount, or 2.25 * size^2 * channels (the decoded area of an average DCT-scaled
// crop), rounded up to 64 bytes.
size_t staging_bytes_per_sample(const LoaderConfig& c) {
  if (c.staging_bytes_per_sample > 0) return (c.staging_bytes_per_sample + 63) / 64 * 64;
  const auto side = static_cast<size_t>(c.transform.size);
  return (side * side * static_cast<size_t>(c.transform.channels) * 9 / 4 + 63) / 64 * 64;
}

// Float labels: MixUp/CutMix's soft rows, or a multi-label dataset's multi-hot ones.
int float_label_classes(const Dataset& dataset, const LoaderConfig& config) {
  if (config.mix.enabled()) {
    STOKER_CHECK_ARG(!dataset.classes().empty(), "MixUp/CutMix need labels: {} has none",
                     dataset.describe());
    return config.mix.num_classes;
  }
  if (dataset.multi_label()) {
    STOKER_CHECK_ARG(config.augment == AugmentMode::kCpu,
                     "{}: multi-label batches (multi-hot rows) are on the CPU path only",
                     dataset.describe());
    return static_cast<int>(dataset.classes().size());
  }
  return 0;
}

}  // namespace

LoaderSetup resolve_setup(const Dataset& dataset, const LoaderConfig& config) {
  LoaderSetup s;
  s.config = config;
  const LoaderConfig& c = s.config;
  STOKER_CHECK_ARG(c.batch_size >= 1, "batch_size must be >= 1 (got {})", c.batch_size);
  STOKER_CHECK_ARG(c.threads >= 0, "threads must be >= 0 (got {})", c.threads);
  STOKER_CHECK_ARG(c.prefetch >= 0, "prefetch must be >= 0 (got {})", c.prefetch);
  STOKER_CHECK_ARG(dataset.size() >= 1, "{}: the dataset is empty", dataset.describe());
  c.transform.validate();
  c.mix.validate();
  c.read_retries.validate();
  STOKER_CHECK_ARG(c.close_timeout_seconds >= util::kCloseTimeout.low &&
                       c.close_timeout_seconds <= util::kCloseTimeout.high,
                   "close_timeout_seconds must be in [{}, {}] (got {})", util::kCloseTimeout.low,
                   util::kCloseTimeout.high, c.close_timeout_seconds);
  s.num_classes = float_label_classes(dataset, c);
  STOKER_CHECK_ARG(!c.mix.enabled() || (c.transform.output == OutputKind::kFloat32 &&
                                        c.augment == AugmentMode::kCpu),
                   "MixUp/CutMix in the workers need float32 output on the CPU path (got {}{})",
                   to_string(c.transform.output),
                   c.augment == AugmentMode::kCpu ? "" : " with the GPU augmentation");
  STOKER_CHECK_ARG(!c.mix.enabled() || !c.transform.channels_last,
                   "MixUp/CutMix in the workers need [C, H, W] images (channels_last off)");
  STOKER_CHECK_ARG(c.augment != AugmentMode::kDeferred || !c.transform.has_cpu_only_steps(),
                   "the GPU augmentation does square outputs with crop, resize, flip and "
                   "normalisation only: augment ops, RandomErasing and non-square sizes run "
                   "on the CPU path (device='cpu')");
  for (size_t k = 0; k < c.fields.size(); ++k) {
    const std::string& field = c.fields[k];
    STOKER_CHECK_ARG(!field.empty(), "fields: an empty field name");
    STOKER_CHECK_ARG(std::find(c.fields.begin(), c.fields.begin() + static_cast<ptrdiff_t>(k),
                               field) == c.fields.begin() + static_cast<ptrdiff_t>(k),
                     "fields: '{}' is asked for twice", field);
    STOKER_CHECK_ARG(dataset.has_field(field),
                     "fields: {} has no field '{}' (WebDataset fields are member extensions "
                     "some sample has, or json.KEY)",
                     dataset.describe(), field);
  }
  STOKER_CHECK_ARG(!c.stage_encoded_jpegs || c.augment == AugmentMode::kDeferred,
                   "JPEGs staged encoded (the GPU decode) need the GPU augmentation");
  if (c.rank.has_value() != c.world_size.has_value()) {
    STOKER_THROW_ARG("give both rank and world_size, or neither");
  }
  s.rank = discover_rank(c.rank, c.world_size);
  s.config.rank = s.rank.rank;
  s.config.world_size = s.rank.world_size;
  s.threads = c.threads > 0 ? c.threads : default_threads(s.rank);
  s.cpus = available_cpus();
  // Enough batches in flight that every worker has a sample to work on while the consumer
  // holds the batch before: about four samples per thread, at least two batches.
  s.prefetch =
      c.prefetch > 0 ? c.prefetch : std::max(2, (4 * s.threads + c.batch_size - 1) / c.batch_size);
  s.sampler = SamplerConfig{.dataset_size = dataset.size(),
                            .batch_size = c.batch_size,
                            .rank = s.rank.rank,
                            .world_size = s.rank.world_size,
                            .mode = c.mode,
                            .shuffle = c.shuffle,
                            .seed = c.seed};
  STOKER_CHECK_ARG(c.shard_window_batches >= -1, "shard_window_batches must be >= -1 (got {})",
                   c.shard_window_batches);
  s.window_batches = c.shard_window_batches >= 0     ? c.shard_window_batches
                     : dataset.prefers_shard_order() ? 4
                                                     : 0;
  if (s.window_batches > 0 && c.shuffle) {
    auto ends = std::make_shared<std::vector<int64_t>>(dataset.shard_ends());
    STOKER_CHECK_ARG(!ends->empty(), "shard_window_batches={}: {} is not stored in shards",
                     s.window_batches, dataset.describe());
    s.sampler.shard_ends = std::move(ends);
  } else {
    s.window_batches = 0;
  }
  s.sample_bytes = c.augment == AugmentMode::kDeferred ? staging_bytes_per_sample(c)
                                                       : c.transform.sample_bytes();
  s.owner_pid = ::getpid();
  return s;
}

}  // namespace stoker::pipeline
