// The doctor's fix lists, shared by every verdict source (live stats, telemetry, ...) so that
// the same verdict always suggests the same next steps. Not a public header.
#pragma once

#include <string>
#include <vector>

#include "stoker/diagnose.h"

namespace stoker::fixes {

// A fix nobody measured yet; `note` says how to measure it (empty: nothing to add).
Fix unmeasured(std::string action, std::string reason, std::string note);

std::vector<Fix> input_bound_cpu();      // pack, raw pixels, GPU augmentation, more cores
std::vector<Fix> io_bound();             // pack into shards, local copy, more threads
std::vector<Fix> rank_imbalance();       // shard the data, DDP instead of DataParallel
std::vector<Fix> straggler();            // one slow rank among balanced ones
std::vector<Fix> communication_bound();  // fewer, larger, overlapped all-reduces; topology

}  // namespace stoker::fixes
