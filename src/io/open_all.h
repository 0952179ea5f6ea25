// Opening the parts of a dataset at once (private to src/io): a remote shard's open is a round
// trip or more (a HEAD, an index read), spent waiting, not computing.
#pragma once

#include <cstddef>
#include <functional>

namespace stoker::io {

// Runs open_one(0) ... open_one(count - 1) on up to 16 threads, each under the calling thread's
// cancellations and deadline (util/stop.h). The first to fail stops the rest: those not started
// do not start, those in flight stop at their next check (a request within 0.1 s).
// Throws the failure of the lowest index among those that failed of their own accord (not
// stopped by another's failure); with one failure, whatever the timing, that one.
void open_all(size_t count, const std::function<void(size_t index)>& open_one);

}  // namespace stoker::io
