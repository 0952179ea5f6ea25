// The monitor's recorder: samples CPU and GPU utilisation into the `stoker-monitor` log that
// the doctor reads (stoker/telemetry.h; the format is in docs/doctor.md, "Telemetry").
// `stoker monitor CMD` (tools/monitor_cmd.cc) runs the command, passes its signals on and calls
// this between; a program may also record its own run:
//
//   stoker::TelemetryRecorder recorder({.out = "run.jsonl"});
//   recorder.start({"my-job"}, "");
//   while (running) { sleep(1); recorder.sample(); }
//   recorder.finish(0, std::nullopt);
//
// CPU: /proc/stat deltas (all CPUs and each CPU: busy = 100 - idle - iowait, iowait, idle, in
// percent). GPUs: NVML (loaded at run time when present), else nvidia-smi, else none; the log's
// first line says which ("gpu_source"). How each is sampled: docs/doctor.md, "The monitor".
// The log is flushed after every line, so a killed job leaves a readable log.
// Thread-safety: one recorder is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stoker {

enum class GpuSource { kAuto, kNvml, kNvidiaSmi, kNone };

struct MonitorConfig {
  std::string out;                          // the log file (created or truncated)
  double interval = 1.0;                    // seconds between samples, from 0.05 to 3600
  GpuSource gpu_source = GpuSource::kAuto;  // kAuto: NVML, else nvidia-smi, else none
};

class TelemetryRecorder {
 public:
  // Opens the log and the GPU source. Throws stoker::Error when the log cannot be written,
  // when kNvml or kNvidiaSmi is asked for and not available, or (ArgumentError) for an interval
  // out of range.
  explicit TelemetryRecorder(const MonitorConfig& config);
  ~TelemetryRecorder();
  TelemetryRecorder(const TelemetryRecorder&) = delete;
  TelemetryRecorder& operator=(const TelemetryRecorder&) = delete;

  // The first line: the start time, interval, GPU source, CPU count, the command that is
  // measured and the stats file its loaders write ("" for none). Throws stoker::Error naming
  // the log when the line cannot be written.
  void start(const std::vector<std::string>& command, const std::string& stats_file);
  // One sample line: CPU since the previous sample (or the recorder's opening), GPUs now.
  void sample();
  // The last line: the command's exit status (128 + N for signal N) and the signal, if any.
  void finish(int exit_status, std::optional<int> signal);

  const char* gpu_source() const;  // "nvml", "nvidia-smi" or "none"
  // False once a line could not be written (disk full): sampling has ended, with one message
  // on stderr; the measured job is not stopped for it.
  bool logging() const;
  int64_t samples() const;  // sample lines written

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker
