// Clocks for the stage accounting: CPU time of the calling thread, so that a stage's cost is
// the work it did, not the time it spent waiting or descheduled. Thread-safe.
#pragma once

namespace stoker {

// CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_seconds();
// CPU seconds used by the whole process (all threads) so far.
double process_cpu_seconds();

}  // namespace stoker
