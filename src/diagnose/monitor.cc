// The monitor's recorder: /proc/stat and the GPUs sampled into the stoker-monitor log
// (stoker/monitor.h). Running the command is the stoker command's (tools/monitor_cmd.cc).
#include "stoker/monitor.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/telemetry_parse.h"
#include "stoker/error.h"
#include "util/check.h"

extern char** environ;

namespace stoker {
namespace {

// ordered_json: the log's keys in a readable order ("t" first), not sorted.
using json = nlohmann::ordered_json;
using SteadyClock = std::chrono::steady_clock;

double round2(double x) { return std::round(x * 100.0) / 100.0; }

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// ---- CPU: /proc/stat ---------------------------------------------------------------------

struct CpuTicks {
  int cpu = -1;  // -1: the "cpu" line (all CPUs)
  uint64_t total = 0, idle = 0, iowait = 0;
};

std::vector<CpuTicks> read_proc_stat() {
  std::vector<CpuTicks> out;
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0) break;  // the cpu lines come first
    const auto tokens = telemetry::split_whitespace(line);
    if (tokens.size() < 6) continue;
    CpuTicks t;
    if (tokens[0] != "cpu") {
      const auto n = telemetry::parse_index(tokens[0].substr(3));
      if (!n) continue;
      t.cpu = *n;
    }
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    for (size_t i = 1; i < tokens.size() && i <= 8; ++i) {
      const auto v = telemetry::parse_number(tokens[i]);
      const auto ticks = v ? static_cast<uint64_t>(*v) : 0;
      t.total += ticks;
      if (i == 4) t.idle = ticks;
      if (i == 5) t.iowait = ticks;
    }
    out.push_back(t);
  }
  return out;
}

json cpu_percent(const CpuTicks& now, const CpuTicks& before) {
  const double total = static_cast<double>(now.total - before.total);
  if (now.total <= before.total) return nullptr;
  // Per-CPU iowait (and on some kernels idle) may go backwards (proc(5)): no unsigned wrap.
  const auto delta = [](uint64_t a, uint64_t b) {
    return a >= b ? static_cast<double>(a - b) : 0.0;
  };
  const double idle = std::min(100.0, 100.0 * delta(now.idle, before.idle) / total);
  const double iowait = std::min(100.0 - idle, 100.0 * delta(now.iowait, before.iowait) / total);
  return {{"busy", round2(std::max(0.0, 100.0 - idle - iowait))},
          {"iowait", round2(iowait)},
          {"idle", round2(idle)}};
}

// ---- GPUs ----------------------------------------------------------------------------------

struct GpuReading {
  int index = 0;
  std::optional<double> util, memory_util, memory_used_mib, pcie_rx_mbps, pcie_tx_mbps;
};

json to_json(const GpuReading& g) {
  const auto opt = [](const std::optional<double>& v) { return v ? json(round2(*v)) : json(); };
  return {{"index", g.index},
          {"util", opt(g.util)},
          {"memory_util", opt(g.memory_util)},
          {"memory_used_mib", opt(g.memory_used_mib)},
          {"pcie_rx_mbps", opt(g.pcie_rx_mbps)},
          {"pcie_tx_mbps", opt(g.pcie_tx_mbps)}};
}

class GpuSampler {
 public:
  virtual ~GpuSampler() = default;
  virtual const char* name() const = 0;
  virtual std::vector<GpuReading> sample() = 0;
};

class NoGpus : public GpuSampler {
 public:
  const char* name() const override { return "none"; }
  std::vector<GpuReading> sample() override { return {}; }
};

// NVML through dlopen: the few entry points we use, declared here (nvml.h is not needed).
class Nvml : public GpuSampler {
 public:
  static std::unique_ptr<Nvml> open() {
    void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    std::unique_ptr<Nvml> nvml(new Nvml(lib));
    if (!nvml->load() || nvml->init_() != 0) return nullptr;
    nvml->initialised_ = true;
    unsigned count = 0;
    if (nvml->count_(&count) != 0) return nullptr;
    for (unsigned i = 0; i < count; ++i) {
      Device device = nullptr;
      if (nvml->handle_(i, &device) == 0) nvml->devices_.push_back({static_cast<int>(i), device});
    }
    return nvml;
  }

  ~Nvml() override {
    if (initialised_) shutdown_();
    ::dlclose(lib_);
  }

  const char* name() const override { return "nvml"; }

  std::vector<GpuReading> sample() override {
    std::vector<GpuReading> out;
    for (const auto& [index, device] : devices_) {
      GpuReading g;
      g.index = index;
      Utilization u{};
      if (utilization_(device, &u) == 0) {
        g.util = u.gpu;
        g.memory_util = u.memory;
      }
      Memory m{};
      if (memory_(device, &m) == 0) g.memory_used_mib = static_cast<double>(m.used) / 1048576.0;
      unsigned kb = 0;  // KB/s over the last 20 ms
      if (pcie_ != nullptr && pcie_(device, kPcieRx, &kb) == 0) g.pcie_rx_mbps = kb / 1000.0;
      if (pcie_ != nullptr && pcie_(device, kPcieTx, &kb) == 0) g.pcie_tx_mbps = kb / 1000.0;
      out.push_back(g);
    }
    return out;
  }

 private:
  using Device = struct NvmlDevice*;
  struct Utilization {
    unsigned gpu, memory;
  };
  struct Memory {
    unsigned long long total, free, used;
  };
  static constexpr int kPcieTx = 0, kPcieRx = 1;  // nvmlPcieUtilCounter_t

  explicit Nvml(void* lib) : lib_(lib) {}

  template <typename F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(lib_, name));
    return f != nullptr;
  }
  bool load() {
    sym(pcie_, "nvmlDeviceGetPcieThroughput");  // optional
    return sym(init_, "nvmlInit_v2") && sym(shutdown_, "nvmlShutdown") &&
           sym(count_, "nvmlDeviceGetCount_v2") && sym(handle_, "nvmlDeviceGetHandleByIndex_v2") &&
           sym(utilization_, "nvmlDeviceGetUtilizationRates") &&
           sym(memory_, "nvmlDeviceGetMemoryInfo");
  }

  void* lib_;
  bool initialised_ = false;
  std::vector<std::pair<int, Device>> devices_;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*count_)(unsigned*) = nullptr;
  int (*handle_)(unsigned, Device*) = nullptr;
  int (*utilization_)(Device, Utilization*) = nullptr;
  int (*memory_)(Device, Memory*) = nullptr;
  int (*pcie_)(Device, int, unsigned*) = nullptr;
};

// Runs argv with stdout captured (stdin and stderr on /dev/null) for at most `timeout_s`;
// nullopt when it cannot start, fails or takes too long.
std::optional<std::string> capture(const std::vector<std::string>& args, double timeout_s) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return std::nullopt;
  }
  std::string out;
  const auto deadline = SteadyClock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now())
            .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (1 << 20)) break;
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

// nvidia-smi run once per sample.
class NvidiaSmi : public GpuSampler {
 public:
  static std::unique_ptr<NvidiaSmi> open() {
    auto smi = std::make_unique<NvidiaSmi>();
    const auto first = smi->query();
    if (!first || first->empty()) return nullptr;
    return smi;
  }
  const char* name() const override { return "nvidia-smi"; }
  std::vector<GpuReading> sample() override { return query().value_or(std::vector<GpuReading>{}); }

 private:
  std::optional<std::vector<GpuReading>> query() {
    const auto out =
        capture({"nvidia-smi", "--query-gpu=index,utilization.gpu,utilization.memory,memory.used",
                 "--format=csv,noheader,nounits"},
                5.0);
    if (!out) return std::nullopt;
    std::vector<GpuReading> gpus;
    for (const auto& line : telemetry::split_lines(*out)) {
      if (telemetry::trim(line.text).empty()) continue;
      const auto fields = telemetry::split_char(line.text, ',');
      if (fields.size() != 4) return std::nullopt;
      const auto index = telemetry::parse_index(telemetry::trim(fields[0]));
      if (!index) return std::nullopt;
      GpuReading g;
      g.index = *index;
      g.util = telemetry::parse_number(telemetry::trim(fields[1]));  // [N/A] -> null
      g.memory_util = telemetry::parse_number(telemetry::trim(fields[2]));
      g.memory_used_mib = telemetry::parse_number(telemetry::trim(fields[3]));
      gpus.push_back(g);
    }
    return gpus;
  }
};

std::unique_ptr<GpuSampler> open_gpus(GpuSource source) {
  if (source == GpuSource::kAuto || source == GpuSource::kNvml) {
    if (auto nvml = Nvml::open()) return nvml;
    STOKER_CHECK(source == GpuSource::kAuto, "monitor: NVML (libnvidia-ml.so.1) is not usable");
  }
  if (source == GpuSource::kAuto || source == GpuSource::kNvidiaSmi) {
    if (auto smi = NvidiaSmi::open()) return smi;
    STOKER_CHECK(source == GpuSource::kAuto,
                 "monitor: nvidia-smi is not on PATH or reports no GPU");
  }
  return std::make_unique<NoGpus>();
}

class Log {
 public:
  explicit Log(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "we")) {
    STOKER_CHECK(file_ != nullptr, "monitor: cannot write {}: {}", path, std::strerror(errno));
  }
  ~Log() { std::fclose(file_); }
  void write(const json& line) {
    const std::string text = line.dump() + "\n";
    STOKER_CHECK(
        std::fwrite(text.data(), 1, text.size(), file_) == text.size() && std::fflush(file_) == 0,
        "monitor: cannot write {}: {}", path_, std::strerror(errno));
  }

 private:
  std::string path_;
  FILE* file_;
};

}  // namespace

struct TelemetryRecorder::State {
  explicit State(const MonitorConfig& c) : config(c), log(c.out), gpus(open_gpus(c.gpu_source)) {}
  MonitorConfig config;
  Log log;
  std::unique_ptr<GpuSampler> gpus;
  std::vector<CpuTicks> before = read_proc_stat();
  bool logging = true;
  int64_t samples = 0;

  // A log that can no longer be written (disk full) ends the sampling, not the job.
  void write(const json& line) {
    if (!logging) return;
    try {
      log.write(line);
    } catch (const Error& e) {
      std::fprintf(stderr, "stoker %s; no more samples\n", e.message().c_str());
      logging = false;
    }
  }
};

TelemetryRecorder::TelemetryRecorder(const MonitorConfig& config) {
  STOKER_CHECK_ARG(config.interval >= 0.05 && config.interval <= 3600,
                   "monitor: --interval must be from 0.05 to 3600 seconds, not {}",
                   config.interval);
  state_ = std::make_unique<State>(config);
}

TelemetryRecorder::~TelemetryRecorder() = default;

const char* TelemetryRecorder::gpu_source() const { return state_->gpus->name(); }
bool TelemetryRecorder::logging() const { return state_->logging; }
int64_t TelemetryRecorder::samples() const { return state_->samples; }

void TelemetryRecorder::start(const std::vector<std::string>& command,
                              const std::string& stats_file) {
  int cpus = 0;
  for (const CpuTicks& t : state_->before) cpus += t.cpu >= 0;
  // Unlike the samples, a first line that cannot be written is an error: nothing is measured.
  state_->log.write({{"stoker_monitor", 1},
                     {"start", epoch_seconds()},
                     {"interval", state_->config.interval},
                     {"gpu_source", state_->gpus->name()},
                     {"cpus", cpus},
                     {"command", command},
                     {"stats_file", stats_file}});
}

void TelemetryRecorder::sample() {
  if (!state_->logging) return;
  const std::vector<CpuTicks> now = read_proc_stat();
  json line = {{"t", round2(epoch_seconds())}};
  json per_cpu = json::array();
  for (const CpuTicks& t : now) {
    for (const CpuTicks& b : state_->before) {
      if (b.cpu != t.cpu) continue;
      json p = cpu_percent(t, b);
      if (p.is_null()) break;
      if (t.cpu < 0) {
        line["cpu"] = p;
      } else {
        p["cpu"] = t.cpu;
        per_cpu.push_back(p);
      }
      break;
    }
  }
  line["per_cpu"] = per_cpu;
  json g = json::array();
  for (const GpuReading& r : state_->gpus->sample()) g.push_back(to_json(r));
  line["gpus"] = g;
  state_->write(line);
  state_->before = now;
  ++state_->samples;
}

void TelemetryRecorder::finish(int exit_status, std::optional<int> signal) {
  json end = {{"t", epoch_seconds()}, {"exit_status", exit_status}, {"samples", state_->samples}};
  if (signal) end["signal"] = *signal;
  state_->write(end);
}

}  // namespace stoker
