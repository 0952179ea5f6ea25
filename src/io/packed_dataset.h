// Opening a packed dataset with a chosen eager budget (private to src/io; open_packed in
// stoker/packed.h uses kEagerIndexBytes). Shards are opened and checked on first use; open
// opens every one at once when their indexes total at most `eager_index_bytes`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "stoker/dataset.h"

namespace stoker::io {

// 64 MiB of shard indexes (2.8 M records): below, a damaged shard is an error at open.
inline constexpr uint64_t kEagerIndexBytes = uint64_t{64} << 20;

std::shared_ptr<Dataset> open_packed_dataset(const std::filesystem::path& path,
                                             uint64_t eager_index_bytes, const IoConfig& io = {});

}  // namespace stoker::io
