// The monitor: runs a command and samples CPU and GPU utilisation while it runs, writing the
// `stoker-monitor` log that the doctor reads (stoker/telemetry.h; the format is in
// docs/doctor.md, "Telemetry").
//
// CPU: /proc/stat deltas (all CPUs and each CPU: busy = 100 - idle - iowait, iowait, idle, in
// percent). GPUs: NVML (loaded at run time when present), else nvidia-smi, else none; the log's
// first line says which ("gpu_source"). How each is sampled: docs/doctor.md, "The monitor".
//
// The command inherits stdin, stdout, stderr and the environment, with STOKER_STATS_FILE set to
// OUT.stats.jsonl (unless already set; named in the log's first line as "stats_file"): every
// stoker loader inside it appends its stats lines there (stoker/loader.h); SIGINT and SIGTERM sent
// to the monitor by another process (kill, a scheduler) are passed on to it (a terminal's Ctrl-C
// reaches both already). The log is flushed after every line, so a killed job leaves a
// readable log. Failure: stoker::Error when the log cannot be written or the command cannot be
// started; the command's own failures are its exit status.
// Not thread-safe: it installs SIGINT/SIGTERM handlers for the duration of the call.
#pragma once

#include <string>
#include <vector>

namespace stoker {

enum class GpuSource { kAuto, kNvml, kNvidiaSmi, kNone };

struct MonitorConfig {
  std::vector<std::string> command;         // argv, searched on PATH
  std::string out;                          // the log file (created or truncated)
  double interval = 1.0;                    // seconds between samples, at least 0.05
  GpuSource gpu_source = GpuSource::kAuto;  // kAuto: NVML, else nvidia-smi, else none
};

// Runs the command to the end while sampling; returns its exit status (128 + N when signal N
// ended it, like a shell). Throws stoker::Error when kNvml or kNvidiaSmi is asked for and not
// available.
int run_monitor(const MonitorConfig& options);

}  // namespace stoker
