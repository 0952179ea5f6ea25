// The loader's configuration, checked once against its dataset and resolved: rank, threads,
// prefetch depth, shard windows and the bytes of a batch slot. Every stage is built from a
// LoaderSetup, so a rule of the configuration (a default, a combination refused) is written
// here and nowhere else. Immutable after resolve_setup.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "stoker/dataset.h"
#include "stoker/env.h"
#include "stoker/loader.h"
#include "stoker/sampler.h"

namespace stoker::pipeline {

struct LoaderSetup {
  LoaderConfig config;  // as given, with rank and world_size filled in
  RankInfo rank;
  int threads = 1;
  int prefetch = 2;
  int cpus = 1;             // cores this process may use (available_cpus())
  int window_batches = 0;   // shuffle in shard windows of this many batches; 0: a global shuffle
  size_t sample_bytes = 0;  // one slot of a batch buffer: an output sample, or staging bytes
  int num_classes = 0;      // > 0: batches carry float label rows (Batch::soft_labels)
  SamplerConfig sampler;    // this rank's sampler (shard_ends set when windows are used)
  pid_t owner_pid = 0;      // the process whose threads the loader's are
};

// Checks `config` against `dataset` (throws an ArgumentError naming what is wrong) and resolves
// its defaults: the rank (discover_rank), default_threads, the prefetch depth, the shard
// windows of datasets read best in order.
LoaderSetup resolve_setup(const Dataset& dataset, const LoaderConfig& config);

}  // namespace stoker::pipeline
