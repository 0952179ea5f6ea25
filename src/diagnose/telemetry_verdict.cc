// The doctor's verdict from telemetry samples, and their time series (stoker/telemetry.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <utility>

#include "diagnose/fixes.h"
#include "diagnose/json.h"
#include "diagnose/telemetry_judge.h"
#include "diagnose/telemetry_parse.h"
#include "diagnose/telemetry_vocab.h"
#include "stoker/telemetry.h"
#include "util/check.h"

namespace stoker {
namespace {

using nlohmann::json;
using telemetry::collect_more;
using telemetry::line_of;

// One GPU of one file.
struct GpuSeries {
  int file = 0;
  int gpu = 0;
  std::vector<const GpuSample*> samples;
  double mean = 0;
};

struct Inputs {
  std::vector<GpuSeries> gpus;        // by (file, gpu)
  std::vector<const CpuSample*> cpu;  // "all CPUs" samples
  bool by_time = false;               // restricted to the time both logs cover
  double overlap_seconds = 0;
  std::string time_note;  // why the logs were compared by whole-file means
};

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

template <typename Sample, typename Value>
double mean_of(const std::vector<const Sample*>& samples, Value value) {
  double sum = 0;
  for (const Sample* s : samples) sum += value(*s);
  return samples.empty() ? 0.0 : sum / static_cast<double>(samples.size());
}

// The `k` samples whose value is closest to `target`, in log order: representative lines.
template <typename Sample, typename Value>
std::vector<const Sample*> closest(std::vector<const Sample*> samples, Value value, double target,
                                   size_t k) {
  std::stable_sort(samples.begin(), samples.end(), [&](const Sample* a, const Sample* b) {
    return std::abs(value(*a) - target) < std::abs(value(*b) - target);
  });
  samples.resize(std::min(k, samples.size()));
  std::sort(samples.begin(), samples.end(), [](const Sample* a, const Sample* b) {
    return std::pair(a->origin.file, a->origin.line) < std::pair(b->origin.file, b->origin.line);
  });
  return samples;
}

// A file's path as it may appear in JSON (valid UTF-8).
std::string path_of(const Telemetry& tel, int file) {
  return telemetry::printable(tel.files[static_cast<size_t>(file)].path);
}

bool absolute(const Telemetry& tel, const Origin& o) {
  return tel.files[static_cast<size_t>(o.file)].time_base == TimeBase::kAbsolute;
}

Inputs select_inputs(const Telemetry& tel, const TelemetryThresholds& th) {
  Inputs in;
  std::vector<const GpuSample*> gpu;
  for (const GpuSample& s : tel.gpus) gpu.push_back(&s);
  for (const CpuSample& s : tel.cpus) {
    if (s.cpu < 0) in.cpu.push_back(&s);
  }
  // Compare over the time both cover when both have dates and overlap.
  if (!gpu.empty() && !in.cpu.empty()) {
    const bool dated =
        std::all_of(gpu.begin(), gpu.end(), [&](auto* s) { return absolute(tel, s->origin); }) &&
        std::all_of(in.cpu.begin(), in.cpu.end(),
                    [&](auto* s) { return absolute(tel, s->origin); });
    if (dated) {
      const auto [g0, g1] = std::minmax_element(gpu.begin(), gpu.end(),
                                                [](auto* a, auto* b) { return a->time < b->time; });
      const auto [c0, c1] = std::minmax_element(in.cpu.begin(), in.cpu.end(),
                                                [](auto* a, auto* b) { return a->time < b->time; });
      const double lo = std::max((*g0)->time, (*c0)->time) - 0.5;
      const double hi = std::min((*g1)->time, (*c1)->time) + 0.5;
      std::vector<const GpuSample*> g;
      std::vector<const CpuSample*> c;
      for (auto* s : gpu) {
        if (s->time >= lo && s->time <= hi) g.push_back(s);
      }
      for (auto* s : in.cpu) {
        if (s->time >= lo && s->time <= hi) c.push_back(s);
      }
      if (hi > lo && c.size() >= static_cast<size_t>(th.min_samples) &&
          g.size() >= static_cast<size_t>(th.min_samples)) {
        in.by_time = true;
        in.overlap_seconds = hi - lo - 1.0;
        gpu = std::move(g);
        in.cpu = std::move(c);
      } else {
        in.time_note = fmt::format(
            "the GPU log ({:.0f} s) and the CPU log ({:.0f} s) barely overlap in time (another "
            "day or time zone?): compared whole-file means",
            (*g1)->time - (*g0)->time, (*c1)->time - (*c0)->time);
      }
    } else {
      in.time_note = "not every log has dates: compared whole-file means";
    }
  }
  std::map<std::pair<int, int>, GpuSeries> series;
  for (const GpuSample* s : gpu) {
    GpuSeries& g = series[{s->origin.file, s->gpu}];
    g.file = s->origin.file;
    g.gpu = s->gpu;
    g.samples.push_back(s);
  }
  for (auto& [key, g] : series) {
    g.mean = mean_of(g.samples, [](const GpuSample& s) { return s.util; });
    in.gpus.push_back(std::move(g));
  }
  return in;
}

// Rounds in which every GPU of a file has a sample: how often they dip below `low` together,
// and the PCIe traffic in those rounds.
struct Dips {
  int64_t rounds = 0;
  int64_t all_low = 0;
  int64_t any_low = 0;
  double traffic_sum = 0;  // rx + tx per GPU sample in all-low rounds, MB/s
  int64_t traffic_count = 0;
  const GpuSample* example = nullptr;  // the all-low sample with the most traffic
};

Dips find_dips(const Inputs& in, double low) {
  Dips dips;
  std::map<int, std::vector<const GpuSeries*>> by_file;
  for (const GpuSeries& g : in.gpus) by_file[g.file].push_back(&g);
  for (const auto& [file, gpus] : by_file) {
    if (gpus.size() < 2) continue;
    std::map<int64_t, std::vector<const GpuSample*>> rounds;
    for (const GpuSeries* g : gpus) {
      for (const GpuSample* s : g->samples) rounds[s->round].push_back(s);
    }
    for (const auto& [round, samples] : rounds) {
      if (samples.size() != gpus.size()) continue;
      ++dips.rounds;
      const auto low_count = std::count_if(samples.begin(), samples.end(),
                                           [&](const GpuSample* s) { return s->util < low; });
      if (low_count > 0) ++dips.any_low;
      if (low_count != static_cast<int64_t>(samples.size())) continue;
      ++dips.all_low;
      for (const GpuSample* s : samples) {
        if (!s->pcie_rx_mbps && !s->pcie_tx_mbps) continue;
        const double traffic = s->pcie_rx_mbps.value_or(0) + s->pcie_tx_mbps.value_or(0);
        dips.traffic_sum += traffic;
        ++dips.traffic_count;
        if (dips.example == nullptr || traffic > dips.example->pcie_rx_mbps.value_or(0) +
                                                     dips.example->pcie_tx_mbps.value_or(0)) {
          dips.example = s;
        }
      }
    }
  }
  return dips;
}

std::string gpu_name(const Telemetry& tel, const GpuSeries& g) {
  return fmt::format("GPU {} ({})", g.gpu, path_of(tel, g.file));
}

// What one snapshot of GPUs (a pasted nvidia-smi table or gpustat) can and cannot say: the
// traps an expert would point out, as evidence.
void snapshot_notes(const Telemetry& tel, Diagnosis& d) {
  bool idle_with_memory = false, busy = false, none_used = true, spinning = false;
  for (const GpuSample& s : tel.gpus) {
    const double used = s.memory_used_mib.value_or(0);
    if (s.util == 0 && used >= 1024) idle_with_memory = true;
    if (s.util > 0) busy = true;
    if (used >= 512) none_used = false;
    if (s.util >= 95 && s.power_w && s.power_cap_w && *s.power_cap_w > 0 &&
        *s.power_w < 0.35 * *s.power_cap_w) {
      spinning = true;
    }
  }
  if (idle_with_memory) {
    d.evidence.push_back(
        "memory held by a GPU at 0 % is not work: frameworks reserve memory up front "
        "(TensorFlow takes all of every visible GPU by default)");
  }
  if (!busy && none_used) {
    d.evidence.push_back(
        "the GPUs hold almost no memory: the job is not running on them (yet), so this says "
        "nothing about its input");
  }
  if (spinning) {
    d.evidence.push_back(
        "a GPU at 100 % utilisation draws under a third of its power cap: a kernel waiting on "
        "a collective (a communication hang) shows so, not work");
  }
}

// The verdict from GPU and CPU utilisation; nullopt without GPU or CPU samples.
std::optional<Diagnosis> diagnose_utilisation(const Telemetry& tel, const TelemetryThresholds& th) {
  const Inputs in = select_inputs(tel, th);
  if (in.gpus.empty() && in.cpu.empty()) return std::nullopt;
  Diagnosis d;
  UtilisationNumbers& n = d.numbers.utilisation.emplace();
  size_t max_samples = 0;
  std::vector<double> means;
  for (const GpuSeries& g : in.gpus) {
    max_samples = std::max(max_samples, g.samples.size());
    means.push_back(g.mean);
    n.gpus.push_back(GpuUtilisation{.file = path_of(tel, g.file),
                                    .index = g.gpu,
                                    .mean_util = g.mean,
                                    .samples = static_cast<int64_t>(g.samples.size())});
    d.evidence.push_back(fmt::format("{}: mean utilisation {:.1f} % over {} samples",
                                     gpu_name(tel, g), g.mean, g.samples.size()));
  }
  const double gpu_mean = mean(means);
  const double busy = mean_of(in.cpu, [](const CpuSample& s) { return s.busy; });
  const double iowait = mean_of(in.cpu, [](const CpuSample& s) { return s.iowait; });
  n.gpu_util_mean = gpu_mean;
  n.cpu_samples = static_cast<int64_t>(in.cpu.size());
  if (!in.cpu.empty()) {
    n.cpu_busy_mean = busy;
    n.cpu_iowait_mean = iowait;
    d.evidence.push_back(
        fmt::format("CPUs: {:.1f} % busy, {:.1f} % iowait on average over {} "
                    "samples",
                    busy, iowait, in.cpu.size()));
  }
  n.combined = in.by_time ? "time" : "file-means";
  if (in.by_time) {
    n.overlap_seconds = in.overlap_seconds;
    d.evidence.push_back(fmt::format("GPU and CPU logs compared over the {:.0f} s they overlap",
                                     in.overlap_seconds));
  } else if (!in.time_note.empty()) {
    d.evidence.push_back(in.time_note);
  }
  // A job summary's samples are means over the whole run: as good as a long series.
  const auto run_means = [&](const Origin& o) {
    return tel.files[static_cast<size_t>(o.file)].run_means;
  };
  const bool gpu_means = !in.gpus.empty() &&
                         std::all_of(in.gpus.begin(), in.gpus.end(),
                                     [&](auto& g) { return run_means(g.samples.front()->origin); });
  const bool cpu_means = !in.cpu.empty() && std::all_of(in.cpu.begin(), in.cpu.end(), [&](auto* c) {
    return run_means(c->origin);
  });
  const bool gpu_ok = max_samples >= static_cast<size_t>(th.min_samples) || gpu_means;
  const bool cpu_ok = in.cpu.size() >= static_cast<size_t>(th.min_samples) || cpu_means;
  if (gpu_means) {
    d.evidence.push_back("a job summary: each utilisation is the mean over the whole run");
  }
  const auto util = [](const GpuSample& s) { return s.util; };
  const auto cpu_busy = [](const CpuSample& s) { return s.busy; };
  std::vector<const GpuSample*> all_gpu;
  for (const GpuSeries& g : in.gpus)
    all_gpu.insert(all_gpu.end(), g.samples.begin(), g.samples.end());
  const auto cite_gpu = [&](double target, size_t k) {
    for (auto* s : closest(all_gpu, util, target, k)) d.evidence.push_back(tel.cite(s->origin));
  };
  const auto cite_cpu = [&](auto value, double target, size_t k) {
    for (auto* s : closest(in.cpu, value, target, k)) d.evidence.push_back(tel.cite(s->origin));
  };

  if (in.gpus.empty() && tel.first_batch_pending && busy >= th.cpu_pinned) {
    // The loop waits for its first batch while the CPUs compute: what it waits for is being
    // made on the CPU (a reader indexing the data set, the loader's first round).
    d.verdict = Verdict::kInputBoundCpu;
    d.confidence = Confidence::kMedium;
    d.summary = fmt::format(
        "input-bound on CPU: the progress bar stands at its start with no rate, the first batch "
        "not arrived, while the CPUs are {:.0f} % busy: the data is still being prepared on the "
        "CPU (a reader building instances, the loader's first round)",
        busy);
    d.evidence.push_back(tel.cite(*tel.first_batch_pending));
    cite_cpu(cpu_busy, busy, 1);
    d.next = {
        "py-spy dump --pid <the training process> (and its loader workers): where the "
        "CPU time goes before the first batch"};
    d.fixes = fixes::input_bound_cpu();
    return d;
  }
  if (in.gpus.empty()) {
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    d.next = collect_more();
    d.summary = fmt::format(
        "no GPU log: CPUs {:.1f} % busy, {:.1f} % iowait; add nvidia-smi or `stoker monitor` "
        "output to judge",
        busy, iowait);
    return d;
  }
  if (!gpu_ok) {
    // One look (or a few): judged as a snapshot, with what the paste shows of the CPUs.
    std::vector<telemetry::SnapshotGpu> snapshot;
    for (const GpuSeries& g : in.gpus) {
      const GpuSample* last = g.samples.back();
      double peak = 0;
      for (const GpuSample* s : g.samples) peak = std::max(peak, s->util);
      snapshot.push_back(telemetry::SnapshotGpu{.file = g.file,
                                                .gpu = g.gpu,
                                                .util = g.mean,
                                                .peak = peak,
                                                .memory_used_mib = last->memory_used_mib,
                                                .power_w = last->power_w,
                                                .power_cap_w = last->power_cap_w,
                                                .origin = last->origin});
    }
    // On a shared machine, the GPUs the paste says the job uses, when the look shows one of
    // them or more beside others: the others are someone else's work.
    if (!tel.job_gpus.empty()) {
      const auto of_job = [&](const telemetry::SnapshotGpu& g) {
        return std::find(tel.job_gpus.begin(), tel.job_gpus.end(), g.gpu) != tel.job_gpus.end();
      };
      const auto shown = std::count_if(snapshot.begin(), snapshot.end(), of_job);
      if (shown > 0 && shown < static_cast<std::ptrdiff_t>(snapshot.size())) {
        std::erase_if(snapshot, [&](const telemetry::SnapshotGpu& g) { return !of_job(g); });
        d.evidence.push_back(fmt::format(
            "the paste says the job uses GPU{} {}: the other GPUs of the look are left out "
            "(another job's on a shared machine)",
            tel.job_gpus.size() == 1 ? "" : "s", fmt::join(tel.job_gpus, ", ")));
      }
    }
    std::optional<telemetry::CpuView> cpu;
    if (!in.cpu.empty()) {
      const bool one_process = std::all_of(in.cpu.begin(), in.cpu.end(), [&](const CpuSample* c) {
        const std::string low = telemetry::lower(line_of(tel, c->origin));
        return low.find("process") != std::string::npos ||
               low.find("thread") != std::string::npos ||
               low.find("one core") != std::string::npos ||
               low.find("single core") != std::string::npos || telemetry::one_core_said_full(low);
      });
      cpu = telemetry::CpuView{.busy = busy,
                               .iowait = iowait,
                               .samples = static_cast<int64_t>(in.cpu.size()),
                               .one_process = one_process};
    }
    Diagnosis s = telemetry::judge_snapshot(tel, snapshot, cpu, th);
    s.numbers = std::move(d.numbers);
    s.evidence.insert(s.evidence.begin(), d.evidence.begin(), d.evidence.end());
    snapshot_notes(tel, s);
    return s;
  }
  // One GPU does the work.
  if (in.gpus.size() >= 2) {
    const auto busiest =
        std::max_element(in.gpus.begin(), in.gpus.end(),
                         [](const GpuSeries& a, const GpuSeries& b) { return a.mean < b.mean; });
    const double others = (gpu_mean * static_cast<double>(in.gpus.size()) - busiest->mean) /
                          static_cast<double>(in.gpus.size() - 1);
    n.others_util_mean = others;
    if (busiest->mean >= th.imbalance_busy && others <= th.imbalance_idle) {
      d.verdict = Verdict::kRankImbalance;
      d.summary = fmt::format(
          "one GPU does the work: {} averaged {:.1f} % while the other {} averaged {:.1f} %: "
          "unsharded data, or a single-GPU funnel such as DataParallel",
          gpu_name(tel, *busiest), busiest->mean, in.gpus.size() - 1, others);
      for (const GpuSeries& g : in.gpus) {
        for (auto* s : closest(g.samples, util, g.mean, 1)) {
          if (d.evidence.size() < in.gpus.size() + 8) d.evidence.push_back(tel.cite(s->origin));
        }
      }
      d.fixes = fixes::rank_imbalance();
      return d;
    }
  }
  // Busy but drawing little power: spinning in a collective, not computing.
  double power = 0, cap = 0;
  for (const GpuSeries& g : in.gpus) {
    for (const GpuSample* s : g.samples) {
      if (s->power_w && s->power_cap_w) power += *s->power_w, cap += *s->power_cap_w;
    }
  }
  if (gpu_mean >= th.gpu_healthy && cap > 0 && power < 0.35 * cap) {
    d.verdict = Verdict::kCommunicationBound;
    d.summary = fmt::format(
        "the GPUs report {:.0f} % utilisation but draw {:.0f} % of their power cap: kernels "
        "waiting on each other (a collective that does not complete), not training",
        gpu_mean, 100 * power / cap);
    cite_gpu(gpu_mean, 2);
    d.fixes = fixes::communication_bound();
    return d;
  }
  if (gpu_mean >= th.gpu_healthy) {
    d.verdict = Verdict::kHealthy;
    d.summary = fmt::format(
        "the GPUs are busy: mean utilisation {:.1f} % over {} GPU(s){}; the input pipeline "
        "keeps up",
        gpu_mean, in.gpus.size(),
        in.cpu.empty() ? std::string() : fmt::format(", CPUs {:.1f} % busy", busy));
    cite_gpu(gpu_mean, 2);
    return d;
  }
  // One GPU that computes in bursts and idles between them: with no peer to exchange
  // gradients with, what it waits for between steps is its next batch (or the loop's own host
  // work). Several GPUs idling together may be waiting on each other: the dips rule below.
  if (!cpu_ok && in.gpus.size() == 1 && gpu_mean < th.gpu_low) {
    const auto& series = in.gpus.front().samples;
    const auto count = [&](auto pred) {
      return static_cast<double>(std::count_if(series.begin(), series.end(), pred)) /
             static_cast<double>(series.size());
    };
    const double idle = count([&](const GpuSample* s) { return s->util <= th.imbalance_idle; });
    const double working = count([&](const GpuSample* s) { return s->util >= th.imbalance_busy; });
    if (idle >= 0.3 && working >= 0.2) {
      d.verdict = Verdict::kInputBound;
      d.confidence = Confidence::kLow;
      d.summary = fmt::format(
          "input-bound, probably: the GPU computes in bursts ({:.0f} % of the looks at {:.0f} % "
          "or more) and idles between them ({:.0f} % of the looks at {:.0f} % or less), {:.1f} "
          "% on average: a single GPU has no peer to wait for, so it waits for its next batch "
          "(or for the loop's own work on the host)",
          100 * working, th.imbalance_busy, 100 * idle, th.imbalance_idle, gpu_mean);
      cite_gpu(0, 1);
      cite_gpu(100, 1);
      d.next = {
          "the loop's data time against its step time, and mpstat -P ALL 1 60 with iostat -x 1 "
          "60 while it trains: CPUs pinned means decoding, high iowait means storage"};
      d.fixes = fixes::input_bound_cpu();
      for (Fix& f : fixes::io_bound()) d.fixes.push_back(std::move(f));
      return d;
    }
  }
  if (!cpu_ok) {
    d.verdict = Verdict::kUnknown;
    d.summary = fmt::format(
        "GPUs averaged {:.1f} % but there are {} CPU samples (need {}): add mpstat, sar -u, "
        "vmstat or `stoker monitor` output to say why",
        gpu_mean, in.cpu.size(), th.min_samples);
    cite_gpu(gpu_mean, 2);
    return d;
  }
  if (gpu_mean < th.gpu_low && busy >= th.cpu_pinned) {
    d.verdict = Verdict::kInputBoundCpu;
    d.summary = fmt::format(
        "input-bound on CPU: the GPUs averaged {:.1f} % while the CPUs were {:.1f} % busy "
        "(iowait {:.1f} %): decoding and augmentation cannot keep up",
        gpu_mean, busy, iowait);
    cite_gpu(gpu_mean, 2);
    cite_cpu(cpu_busy, busy, 2);
    d.fixes = fixes::input_bound_cpu();
    return d;
  }
  if (gpu_mean < th.gpu_low && iowait >= th.iowait_high && busy < th.cpu_low) {
    d.verdict = Verdict::kIoBound;
    d.summary = fmt::format(
        "io-bound: iowait {:.1f} % with the CPUs only {:.1f} % busy and the GPUs at {:.1f} %: "
        "the job waits on storage",
        iowait, busy, gpu_mean);
    cite_gpu(gpu_mean, 1);
    cite_cpu([](const CpuSample& s) { return s.iowait; }, iowait, 2);
    d.fixes = fixes::io_bound();
    return d;
  }
  const Dips dips = find_dips(in, th.gpu_low);
  if (dips.rounds > 0) {
    const double dip_fraction = static_cast<double>(dips.all_low) / dips.rounds;
    const double together =
        dips.any_low > 0 ? static_cast<double>(dips.all_low) / dips.any_low : 0.0;
    n.dip_fraction = dip_fraction;
    n.dip_together = together;
    if (dips.traffic_count > 0) {
      n.interconnect_mbps_in_dips = dips.traffic_sum / dips.traffic_count;
    }
    if (dip_fraction >= th.dip_fraction && together >= th.dip_together && busy < th.cpu_pinned) {
      if (dips.traffic_count == 0) {
        d.verdict = Verdict::kUnknown;
        d.summary = fmt::format(
            "the GPUs dip below {:.0f} % together in {:.0f} % of the rounds with the CPUs "
            "{:.1f} % busy, but there are no interconnect counters: log nvidia-smi dmon -s ut "
            "to see whether communication is the cause",
            th.gpu_low, 100 * dip_fraction, busy);
        return d;
      }
      const double traffic = dips.traffic_sum / dips.traffic_count;
      if (traffic >= th.interconnect_high_mbps) {
        d.verdict = Verdict::kCommunicationBound;
        d.summary = fmt::format(
            "communication-bound: all GPUs dipped below {:.0f} % together in {:.0f} % of the "
            "rounds ({:.0f} % of the dips were shared) while PCIe rx+tx averaged {:.0f} MB/s "
            "per GPU; CPUs {:.1f} % busy, GPUs {:.1f} % on average",
            th.gpu_low, 100 * dip_fraction, 100 * together, traffic, busy, gpu_mean);
        d.evidence.push_back(tel.cite(dips.example->origin));
        cite_cpu(cpu_busy, busy, 1);
        d.fixes = fixes::communication_bound();
        return d;
      }
    }
  }
  d.verdict = Verdict::kUnknown;
  d.summary = fmt::format(
      "no rule fits: GPUs {:.1f} %, CPUs {:.1f} % busy, iowait {:.1f} % (healthy needs GPUs "
      ">= {:.0f} %; input-bound GPUs < {:.0f} % with CPUs >= {:.0f} %)",
      gpu_mean, busy, iowait, th.gpu_healthy, th.gpu_low, th.cpu_pinned);
  cite_gpu(gpu_mean, 1);
  cite_cpu(cpu_busy, busy, 1);
  return d;
}

// One rank's stats lines merged into one window (fractions weighted by window length).
struct RankWindow {
  int rank = 0;
  PipelineWindow window;
  std::vector<const RankSample*> lines;
};

std::optional<Diagnosis> diagnose_ranks(const Telemetry& tel, const TelemetryThresholds& th) {
  if (tel.ranks.empty()) return std::nullopt;
  std::map<int, RankWindow> by_rank;
  for (const RankSample& s : tel.ranks) {
    RankWindow& r = by_rank[s.rank];
    r.rank = s.rank;
    r.lines.push_back(&s);
  }
  std::vector<RankWindow> ranks;
  for (auto& [rank, r] : by_rank) {
    PipelineWindow& w = r.window;
    double weight = 0;
    for (const RankSample* s : r.lines) weight += s->window.seconds;
    for (const RankSample* s : r.lines) {
      const double k = weight > 0 ? s->window.seconds / weight : 1.0 / r.lines.size();
      w.seconds += s->window.seconds;
      w.images += s->window.images;
      w.wait_fraction += k * s->window.wait_fraction;
      w.busy_fraction += k * s->window.busy_fraction;
      w.read_fraction += k * s->window.read_fraction;
      w.cpu_utilisation += k * s->window.cpu_utilisation;
      w.threads = s->window.threads;
      w.cpus = s->window.cpus;
    }
    ranks.push_back(std::move(r));
  }
  RankStatsNumbers stats;
  std::vector<Diagnosis> verdicts;
  std::vector<std::string> evidence;
  for (const RankWindow& r : ranks) {
    verdicts.push_back(diagnose_pipeline(r.window));
    stats.ranks.push_back(RankNumbers{.rank = r.rank,
                                      .lines = static_cast<int64_t>(r.lines.size()),
                                      .verdict = verdicts.back().verdict,
                                      .images_per_second = r.window.images_per_second(),
                                      .wait_fraction = r.window.wait_fraction,
                                      .busy_fraction = r.window.busy_fraction});
    if (evidence.size() < 16) {
      evidence.push_back(fmt::format(
          "rank {}: {:.0f} images/s, consumer waited {:.0f} %, workers {:.0f} % busy over "
          "{:.1f} s ({} lines): {}",
          r.rank, r.window.images_per_second(), 100 * r.window.wait_fraction,
          100 * r.window.busy_fraction, r.window.seconds, r.lines.size(),
          to_string(verdicts.back().verdict)));
    }
  }
  // Stragglers: the rule the cross-rank audit applies (find_stragglers, stoker/diagnose.h).
  std::vector<RankPace> paces;
  for (const RankWindow& r : ranks) {
    paces.push_back({.images_per_second = r.window.images_per_second(),
                     .wait_fraction = r.window.wait_fraction});
  }
  const std::vector<Straggler> stragglers = find_stragglers(paces, th.straggler);
  Diagnosis d;
  if (!stragglers.empty()) {
    std::vector<std::string> named;
    for (const Straggler& s : stragglers) {
      const RankWindow& r = ranks[s.rank];
      stats.ranks[s.rank].straggler = true;
      named.push_back(fmt::format(
          "rank {} straggles: {:.0f} images/s against a median of {:.0f} on the other ranks, "
          "its consumer waited {:.0f} % against their {:.0f} %",
          r.rank, paces[s.rank].images_per_second, s.others_images_per_second,
          100 * r.window.wait_fraction, 100 * s.others_wait_fraction));
    }
    d.verdict = Verdict::kRankImbalance;
    d.summary = fmt::format("{}; every step waits for the slowest rank", fmt::join(named, "; "));
    d.evidence = evidence;
    for (const Straggler& s : stragglers) {
      d.evidence.push_back(tel.cite(ranks[s.rank].lines.back()->origin));
    }
    // The fastest rank's last line, for contrast.
    const auto fast = std::max_element(ranks.begin(), ranks.end(), [](auto& a, auto& b) {
      return a.window.images_per_second() < b.window.images_per_second();
    });
    d.evidence.push_back(tel.cite(fast->lines.back()->origin));
    d.fixes = fixes::straggler();
  } else {
    // The ranks agree: the verdict most of them have (the first rank's on a tie).
    size_t best = 0;
    int best_count = 0;
    for (size_t i = 0; i < verdicts.size(); ++i) {
      const auto count = std::count_if(verdicts.begin(), verdicts.end(), [&](const Diagnosis& v) {
        return v.verdict == verdicts[i].verdict;
      });
      if (count > best_count) best = i, best_count = static_cast<int>(count);
    }
    d = verdicts[best];
    d.summary = ranks.size() == 1 ? fmt::format("rank {}: {}", ranks[best].rank, d.summary)
                                  : fmt::format("{} of {} ranks, e.g. rank {}: {}", best_count,
                                                ranks.size(), ranks[best].rank, d.summary);
    d.evidence.insert(d.evidence.begin(), evidence.begin(), evidence.end());
    d.evidence.push_back(tel.cite(ranks[best].lines.back()->origin));
  }
  // The agreed rank's window goes with the ranks (the pipeline part is the live verdict's).
  stats.agreed = std::move(d.numbers.pipeline);
  d.numbers = DiagnosisNumbers{};
  d.numbers.stats = std::move(stats);
  d.numbers.stats_decided = true;
  return d;
}

// `from`'s evidence and numbers attached to `to`, the verdict that decided.
void append(Diagnosis& to, const Diagnosis& from) {
  to.evidence.insert(to.evidence.end(), from.evidence.begin(), from.evidence.end());
  if (from.numbers.utilisation) to.numbers.utilisation = from.numbers.utilisation;
  if (from.numbers.stats) to.numbers.stats = from.numbers.stats;
}

}  // namespace

// What to run to judge a job whose logs were too thin: utilisation over time, CPU and storage
// while it trains, and the loop's own data time.
const std::vector<std::string>& telemetry::collect_more() {
  static const std::vector<std::string> commands = {
      "nvidia-smi dmon -s ut -d 1 -c 60 > gpu.log   (while training; or stoker monitor --out "
      "m.log -- python train.py)",
      "mpstat -P ALL 1 60 > cpu.log   and   iostat -x 1 60 > disk.log   (at the same time)",
      "the training loop's data time against step time (PyTorch's ImageNet example prints "
      "'Time ... Data ...'; a DataLoader can be timed with stoker.torch)"};
  return commands;
}

namespace {

// The "N/M" counters of a line whose count is at most its total ("[ 0/131135]", "[1][20/5961]"),
// as (N, M), in order.
std::vector<std::pair<int64_t, int64_t>> counters_of(std::string_view text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t slash = text.find('/'); slash != std::string_view::npos;
       slash = text.find('/', slash + 1)) {
    size_t a = slash;
    while (a > 0 && text[a - 1] >= '0' && text[a - 1] <= '9') --a;
    size_t b = slash + 1;
    while (b < text.size() && text[b] >= '0' && text[b] <= '9') ++b;
    if (a == slash || b == slash + 1 || slash - a > 12 || b - slash > 13) continue;
    const int64_t n = std::stoll(std::string(text.substr(a, slash - a)));
    const int64_t m = std::stoll(std::string(text.substr(slash + 1, b - slash - 1)));
    if (n <= m) out.emplace_back(n, m);
  }
  return out;
}

// The step's "N/M" counter of a line, as (N, M): of several, the one with the largest total
// ("Epoch: [600/1000][ 30/5005]", "Epoch 1/100 step 2500/5000": the step's, not the epoch's);
// nullopt when the line has none.
std::optional<std::pair<int64_t, int64_t>> step_counter_at(std::string_view text) {
  const auto all = counters_of(text);
  if (all.empty()) return std::nullopt;
  return *std::max_element(all.begin(), all.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
}

// How far into its epoch a step line is: its step counter's count ("Epoch: [1][30786/34406]");
// 0 when it shows none.
int64_t step_counter(std::string_view text) {
  const auto at = step_counter_at(text);
  return at ? at->first : 0;
}

// Running averages this many steps into an epoch carry the workers' start as a rounding
// error: a wait they show and the lines do not is the stalls between the lines shown.
constexpr int64_t kSettledAverageSteps = 500;
// A step line this near an epoch's start may still carry the workers' start.
constexpr int64_t kFirstIntervalSteps = 100;

// The nearest line above `o` with text on it is a validation's (mmseg's "Iter(val) [363]",
// "Validation: ...", "Evaluating ..."): a loader whose workers do not persist starts them again
// after each validation, so the step line below it carries their start.
bool follows_validation(const Telemetry& tel, const Origin& o) {
  for (int64_t line = o.line - 1; line >= 1; --line) {
    const std::string_view text = telemetry::trim(line_of(tel, {o.file, line}));
    if (text.empty() || text.starts_with("```")) continue;
    if (text.size() > telemetry::kMaxPastedLineBytes) return false;
    const std::string low = telemetry::lower(text);
    if (low.find("(val)") != std::string::npos) return true;  // mmseg's "Iter(val) [363]"
    // A validation's own log line, with its numbers ("Validation: loss 0.41, acc 0.88",
    // "Evaluating: 100%| 50/50"), not a sentence about one ("I disabled validation to check:")
    // nor a config line ("evaluation = dict(interval=4000)").
    const bool named = low.find("validation") != std::string::npos ||
                       low.find("evaluating") != std::string::npos ||
                       low.find("evaluation") != std::string::npos;
    return named && low.find('=') == std::string::npos && !low.ends_with(':') &&
           std::any_of(low.begin(), low.end(), telemetry::is_digit);
  }
  return false;
}

// Whether every rate read is how long a whole run or epoch took (true where there are none):
// nothing of the steps.
bool rates_are_whole_durations(const Telemetry& tel) {
  return std::all_of(tel.rates.begin(), tel.rates.end(),
                     [](const ThroughputSample& r) { return telemetry::whole_durations(r.unit); });
}

// The epoch and the step within it that a line names as values ("epoch": 2, "iter": 50 in
// mmdetection's JSON log; "Epoch 2 step 50"); nullopt where it names not both.
std::optional<std::pair<int64_t, int64_t>> epoch_and_step_named(std::string_view text) {
  std::optional<int64_t> epoch, step;
  for (const telemetry::NamedValue& v : telemetry::named_values(text)) {
    if (!v.unit.empty() || v.value < 0 || v.value != std::floor(v.value) || v.value > 1e12) {
      continue;
    }
    if (v.name == "epoch" && !epoch) epoch = static_cast<int64_t>(v.value);
    if (telemetry::counts_steps(v) && !step) step = static_cast<int64_t>(v.value);
  }
  if (!epoch || !step) {
    // The count before its word ("2021-03-14 01:35:07, 27 Epoch, 800 Iter, Loss: 0.1268"); not
    // a rate ("30 step/s").
    const std::string low = telemetry::lower(text);
    const auto count_before = [&](std::string_view word) -> std::optional<int64_t> {
      for (size_t at = low.find(word); at != std::string::npos; at = low.find(word, at + 1)) {
        const size_t end = at + word.size();
        if (at < 2 || low[at - 1] != ' ' ||
            (end < low.size() && (telemetry::is_alpha(low[end]) || low[end] == '/'))) {
          continue;
        }
        size_t begin = at - 1;
        while (begin > 0 && telemetry::is_digit(low[begin - 1])) --begin;
        if (begin == at - 1 || (begin > 0 && low[begin - 1] != ' ' && low[begin - 1] != ',')) {
          continue;
        }
        if (const auto n =
                telemetry::parse_index(std::string_view(low).substr(begin, at - 1 - begin))) {
          return *n;
        }
      }
      return std::nullopt;
    };
    // "27 Epoch, 800 Iter": the names read 800 as the epoch's; the count before the word is.
    if (const auto before = count_before("epoch")) epoch = before;
    for (const std::string_view w : {"iter", "iteration", "step"}) {
      if (!step) step = count_before(w);
    }
    if (!epoch || !step) return std::nullopt;
  }
  return std::pair{*epoch, *step};
}

// Whether step line `s` is its epoch's first logged interval, the line before it `before` late
// in the epoch before (a step counter that starts again: "[2][ 50/1051]" after
// "[1][1050/1051]"; mmdetection#6093's JSON "epoch": 2, "iter": 50 after "epoch": 1, "iter":
// 1800): a loader whose workers do not persist starts them again there.
bool starts_an_epoch_again(const Telemetry& tel, const StepSample& s, const StepSample& before) {
  const std::string_view text = line_of(tel, s.origin), above = line_of(tel, before.origin);
  const auto at = step_counter_at(text), was = step_counter_at(above);
  // The line above late in its epoch (past half of it), not another rank a few steps ahead.
  if (at && was) {
    return at->first <= kFirstIntervalSteps && was->first > at->first &&
           2 * was->first >= was->second;
  }
  const auto now = epoch_and_step_named(text), then = epoch_and_step_named(above);
  return now && then && now->first > then->first && now->second <= kFirstIntervalSteps &&
         then->second > now->second;
}

// The verdict from a training loop's own step times: how long each step waited for data.
std::optional<Diagnosis> diagnose_steps(const Telemetry& tel, const TelemetryThresholds& th) {
  // Lines that time the step only ("5.95s/it") say nothing of the wait.
  std::vector<const StepSample*> timed;
  for (const StepSample& s : tel.steps) {
    if (s.has_data) timed.push_back(&s);
  }
  if (timed.empty()) return std::nullopt;
  // The log's running averages (the last one covers the most steps) win over the per-step
  // values, whose first steps include the workers' start.
  // With a few step lines, the lines' own values say more than running averages that still
  // carry the workers' start: without the first line when it waited longest and is the only
  // line waiting more than the healthy share (the workers starting), with every line
  // otherwise (a stall in mid-run is the job's, however rare).
  const StepSample* last_average = nullptr;
  StepSample averaged;  // the last running averages' highest wait
  const StepSample* first_line = nullptr;
  const StepSample* longest = nullptr;
  double step_sum = 0, data_sum = 0, longest_step = 0, longest_data = -1;
  int64_t lines = 0, stalled = 0;
  for (const StepSample* s : timed) {
    if (s->average) {
      last_average = s;
      continue;
    }
    step_sum += s->step_seconds;
    data_sum += s->data_seconds;
    ++lines;
    if (first_line == nullptr) first_line = s;
    if (s->step_seconds > 0 && s->data_seconds >= th.wait.healthy_below * s->step_seconds) {
      ++stalled;
    }
    if (s->data_seconds > longest_data) {
      longest_data = s->data_seconds, longest_step = s->step_seconds, longest = s;
    }
  }
  // Two lines show the workers' start only where their counters say the first is the epoch's
  // first logged interval ("[1][20/5961]" then "[1][40/5961]"), not a run before a change.
  const StepSample* second_line = nullptr;
  for (const StepSample* s : timed) {
    if (!s->average && s != first_line) {
      second_line = s;
      break;
    }
  }
  const int64_t first_counter =
      lines == 2 && second_line != nullptr ? step_counter(line_of(tel, first_line->origin)) : 0;
  const bool counted_start = (first_counter > 0 && first_counter <= kFirstIntervalSteps &&
                              step_counter(line_of(tel, second_line->origin)) > first_counter) ||
                             (lines == 2 && follows_validation(tel, first_line->origin));
  // ... or where the one line that waited starts an epoch again, the counted line before it the
  // last epoch's (a test's line between them, "Loss: 0.1580 mAP: 0.8421 Data_time: 0.0030",
  // counts no step of either).
  const StepSample* before_longest = nullptr;
  if (const auto at = std::find(timed.begin(), timed.end(), longest); at != timed.end()) {
    for (auto it = std::make_reverse_iterator(at); it != timed.rend(); ++it) {
      const std::string_view text = line_of(tel, (*it)->origin);
      if (!(*it)->average && (step_counter_at(text) || epoch_and_step_named(text))) {
        before_longest = *it;
        break;
      }
    }
  }
  // No line but the one left out waited 15 % of its step or more.
  const bool longest_stalled =
      longest != nullptr && longest_data >= th.wait.healthy_below * longest_step;
  const bool workers_start =
      (lines >= 3 || counted_start) && stalled - (longest_stalled ? 1 : 0) == 0 &&
      (longest == first_line || (lines >= 3 && before_longest != nullptr &&
                                 starts_an_epoch_again(tel, *longest, *before_longest)));
  // Late in an epoch the averages win when they show a wait the lines do not: the highest of
  // the last few (where each rank prints its own, every step waits for the slowest).
  bool stalls_between = false;
  if (lines >= 3 && last_average != nullptr && step_sum > 0 &&
      step_counter(line_of(tel, last_average->origin)) >= kSettledAverageSteps) {
    double share = 0;
    int shares = 0;
    for (auto it = timed.rbegin(); it != timed.rend() && shares < 8; ++it) {
      if ((*it)->average && (*it)->step_seconds > 0) {
        share = std::max(share, (*it)->data_seconds / (*it)->step_seconds);
        ++shares;
      }
    }
    const double lines_share = data_sum / step_sum;
    stalls_between = share >= th.wait.healthy_below && share > 2 * lines_share;
    if (stalls_between) {
      averaged.step_seconds = last_average->step_seconds;
      averaged.data_seconds = share * last_average->step_seconds;
      averaged.origin = last_average->origin;
      averaged.average = true;
      last_average = &averaged;
    }
  }
  // One line, the epoch's first step ("[ 0/131135] ... time: 19.4891 data: 2.0020"): its step
  // and its wait carry the job's start (CUDA's setup, cuDNN's autotuning, the workers' first
  // batches), not the pace — unless even that first batch was there at once (a wait under 1 %
  // of the step: SparK's "data: 0.0002s"), which says the loader was ready.
  if (lines == 1 && first_line != nullptr && last_average == nullptr &&
      first_line->data_seconds >= 0.01 * first_line->step_seconds) {
    if (const auto at = step_counter_at(line_of(tel, first_line->origin));
        at && at->first <= 1 && at->second >= kFirstIntervalSteps) {
      Diagnosis d;
      d.verdict = Verdict::kUnknown;
      d.confidence = Confidence::kLow;
      d.summary = fmt::format(
          "one step line, the epoch's first (step {} of {}): its {:.3g} s step and {:.3g} s "
          "wait carry the job's start — CUDA's setup, cuDNN's autotuning, the loader's workers "
          "starting — not the pace it will keep",
          at->first, at->second, first_line->step_seconds, first_line->data_seconds);
      d.evidence.push_back(tel.cite(first_line->origin));
      d.next = {
          "the same log a few hundred steps later: the step and data times of the steady "
          "state"};
      return d;
    }
  }
  // Running averages late in an epoch twice the printed steps or more, their wait under half of
  // the difference: steps between the printed ones take seconds, and the wait for data is not
  // what the printing process spends them on. In a job of several processes that is the
  // exchange waiting for a slower one — its loader, or its GPU.
  if (lines >= 3 && last_average != nullptr && !stalls_between && step_sum > 0 &&
      last_average->step_seconds >= 2 * step_sum / static_cast<double>(lines) &&
      last_average->data_seconds <
          0.5 * (last_average->step_seconds - step_sum / static_cast<double>(lines)) &&
      step_counter(line_of(tel, last_average->origin)) >= kSettledAverageSteps) {
    const double printed = step_sum / static_cast<double>(lines);
    Diagnosis d;
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "the printed steps take {:.3g} s, but the running average is {:.3g} s after {} steps: "
        "steps between the printed ones take seconds, and the average wait for data ({:.3g} s) "
        "covers {:.0f} % of the difference — where several processes train, the one that prints "
        "waits in the exchange for a slower one (its loader, or its GPU), which this log does "
        "not show",
        printed, last_average->step_seconds, step_counter(line_of(tel, last_average->origin)),
        last_average->data_seconds,
        100 * std::min(1.0, last_average->data_seconds / (last_average->step_seconds - printed)));
    d.evidence.push_back(tel.cite(last_average->origin));
    d.next = {
        "every rank's step and data times (or the log of another rank), and the slow steps "
        "themselves (print every step for a while): which rank waits, and for what"};
    return d;
  }
  if (lines >= 3 && !stalls_between) last_average = nullptr;
  // Two lines are enough to leave out the first when it alone waited (the workers starting:
  // "Epoch [1][20/5961] ... data_time: 1.078" before "[1][40/5961] ... data_time: 0.008").
  if (workers_start && last_average == nullptr) {
    step_sum -= longest_step;
    data_sum -= longest_data;
  }
  Diagnosis d;
  StepNumbers& n = d.numbers.steps.emplace();
  if (last_average != nullptr && last_average->step_seconds > 0) {
    n.data_fraction = last_average->data_seconds / last_average->step_seconds;
    n.step_seconds = last_average->step_seconds;
    n.from_averages = true;
    n.upper_bound = last_average->data_upper_bound;
  } else if (step_sum > 0) {
    n.data_fraction = data_sum / step_sum;
    n.step_seconds = step_sum / static_cast<double>(workers_start ? lines - 1 : lines);
    // Lines whose wait is the step less its compute ("Time 2.87 RUN 0.87") bound it from above.
    n.upper_bound = std::all_of(timed.begin(), timed.end(), [](const StepSample* s) {
      return s->average || s->data_upper_bound;
    });
  }
  n.data_fraction = std::clamp(n.data_fraction, 0.0, 1.0);
  n.lines = std::max<int64_t>(lines, 1);
  // Averages only: a profile's totals, or a training log's own clocks (fairseq's wall against
  // its train_wall, one average per logging interval).
  const bool clocks =
      lines == 0 && last_average != nullptr &&
      tel.files[static_cast<size_t>(last_average->origin.file)].kind == TelemetryKind::kTrainLog;
  const bool profile = lines == 0 && !clocks;
  // cProfile's data rows are found by their functions' names (a loop may fetch in a function
  // of its own): sure, but not as sure as a profiler's own data-fetch row.
  const bool by_function_names = profile && last_average != nullptr &&
                                 tel.files[static_cast<size_t>(last_average->origin.file)].kind ==
                                     TelemetryKind::kPythonProfiler;
  const auto intervals =
      std::count_if(tel.steps.begin(), tel.steps.end(), [&](const StepSample& s) {
        return clocks && s.average && s.origin.file == last_average->origin.file;
      });
  // A profile's time outside the batches bounds the wait from above (the loop's hooks are in
  // it too): sure of a small wait, not as sure of a large one as a timed wait.
  const bool bound_only = n.upper_bound && n.data_fraction >= th.wait.healthy_below;
  d.confidence = clocks ? (intervals >= 3 ? Confidence::kMedium : Confidence::kLow)
                 : (profile || lines >= 20) && !stalls_between && !bound_only && !by_function_names
                     ? Confidence::kHigh
                 : lines >= 3 || profile ? Confidence::kMedium
                                         : Confidence::kLow;
  const StepSample& cited = last_average != nullptr ? *last_average : *timed.back();
  // Shares of a step whose seconds the log does not give: no seconds to show.
  const bool shares = cited.shares;
  d.evidence.push_back(fmt::format(
      "{}: {} waited {}{:.0f} % of the time for data ({})",
      clocks    ? fmt::format("{} intervals of the log's clocks", intervals)
      : profile ? "profile"
      : shares
          ? fmt::format("{} line{} of the step's phases in percent", lines, lines == 1 ? "" : "s")
          : fmt::format("{} step line{}", lines, lines == 1 ? "" : "s"),
      shares ? std::string("steps") : fmt::format("steps of {:.3f} s", n.step_seconds),
      n.upper_bound ? "at most " : "", 100 * n.data_fraction,
      clocks ? "the wall clock outside the training steps: waiting for data, validation, "
               "checkpoints"
      : n.upper_bound && profile
          ? "the epoch's time outside its batches: fetching and the loop's hooks"
      : n.upper_bound   ? "the step less the model's phases its timers name"
      : stalls_between  ? fmt::format("the log's running averages, {:.0f} % over the lines "
                                       "shown: stalls between them",
                                      100 * data_sum / step_sum)
      : n.from_averages ? (profile ? "the profile's totals" : "the log's running averages")
      // What was left out, where anything was: the one line that waited (the workers
      // starting), a stall only where it waited 15 % of its step or more.
      : workers_start && longest_stalled ? "over the lines but a one-off stall"
      : workers_start                    ? "over the lines but the one that waited longest"
                                         : "over the step lines"));
  d.evidence.push_back(tel.cite(cited.origin));
  const double pct = 100 * n.data_fraction;
  const WaitThresholds& w = th.wait;
  if (d.confidence == Confidence::kLow) {
    d.next = {"more of the log: a few step lines are a small sample of an epoch"};
  }
  if (n.data_fraction < w.healthy_below) {
    d.verdict = Verdict::kHealthy;
    d.summary = fmt::format(
        "the training step waits for data {}{:.0f} % of the time (under {:.0f} %): the input "
        "pipeline keeps up",
        n.upper_bound ? "at most " : "only ", pct, 100 * w.healthy_below);
    return d;
  }
  if (n.upper_bound && n.data_fraction < w.dominant) {
    // An upper bound in the mild band cannot tell a mild wait from the loop's own hooks; the
    // step is mostly the model's work either way, and the experts call such a job healthy
    // (Lightning's profile at 16 % and 19 % outside the batches, 21 % of fairseq's wall clock
    // outside its train_wall). Low: a mild wait may be in it.
    d.verdict = Verdict::kHealthy;
    d.confidence = Confidence::kLow;
    // What bounds the wait, whose work the rest of the step is, and what would time the wait.
    const auto [bound, work, next] =
        profile ? std::tuple{fmt::format("the epoch spends {:.0f} % of its time outside its "
                                         "batches (fetching data and the loop's hooks together)",
                                         pct),
                             "the batches' own work",
                             "the profiler with its data-fetch row (Lightning 2.x: "
                             "[_TrainingEpochLoop].train_dataloader_next), or the loop's data "
                             "time per step"}
        : clocks
            ? std::tuple{fmt::format("{:.0f} % of the log's wall clock falls outside its training "
                                     "steps (waiting for data, validation and checkpoints "
                                     "together)",
                                     pct),
                         "the steps' own work", "the loop's data time per step"}
            : std::tuple{fmt::format("the step's timers leave {:.0f} % of it untimed (a wait for "
                                     "data, or host work no timer names)",
                                     pct),
                         "the timed work", "the loop's data time beside these timers"};
    d.summary =
        fmt::format("{}: a wait of at most that, mild at worst, so {} sets the pace", bound, work);
    d.next = {next};
    return d;
  }
  d.verdict = Verdict::kInputBound;
  const bool mild = *mildly(n.data_fraction, w) != '\0';
  d.summary = fmt::format(
      "input-bound{}: the training step waits for data {}{:.0f} % of the time ({}); the loop's "
      "log alone does not say whether decoding (CPU) or reading (storage) holds it back",
      mild ? ", mildly" : "", n.upper_bound ? "up to " : "", pct,
      mild ? fmt::format("{:.0f}-{:.0f} % is mild", 100 * w.healthy_below, 100 * w.dominant)
           : fmt::format("{:.0f} % or more", 100 * w.dominant));
  d.fixes = fixes::input_bound_cpu();
  for (Fix& f : fixes::io_bound()) d.fixes.push_back(std::move(f));
  d.next = {
      "mpstat -P ALL 1 60 > cpu.log   and   iostat -x 1 60 > disk.log   (while "
      "training): CPUs pinned means decoding, high iowait or %util means storage"};
  return d;
}

// "2nd", "3rd", "8th", "21st".
std::string ordinal(size_t n) {
  const size_t tens = n % 100, ones = n % 10;
  const char* suffix = tens >= 11 && tens <= 13 ? "th"
                       : ones == 1              ? "st"
                       : ones == 2              ? "nd"
                       : ones == 3              ? "rd"
                                                : "th";
  return fmt::format("{}{}", n, suffix);
}

// Waits for data timed without their step (Telemetry::lone_waits) that jump, on a few steps, to
// a second or more and 20x their median ("data: 53577ms" among "data: 18ms"): a wait that long
// stalls the GPU whatever the step takes, unless the step itself takes many seconds. Loader
// workers that each make a whole batch in turn, more slowly than the GPU uses the batches of
// the others, leave it waiting once a round: every Nth step with N workers. nullopt when the
// waits do not show it.
std::optional<Diagnosis> waits_that_spike(const Telemetry& tel) {
  if (!tel.steps.empty() || tel.lone_waits.size() < telemetry::kLoneWaitsToJudge) {
    return std::nullopt;
  }
  std::vector<double> sorted;
  for (const auto& w : tel.lone_waits) sorted.push_back(w.second);
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::vector<size_t> spikes;  // indices into lone_waits
  double low = std::numeric_limits<double>::infinity(), high = 0, spike_sum = 0;
  for (size_t i = 0; i < tel.lone_waits.size(); ++i) {
    const double w = tel.lone_waits[i].second;
    if (w >= 1 && w >= 20 * median) {
      spikes.push_back(i);
      low = std::min(low, w), high = std::max(high, w), spike_sum += w;
    }
  }
  if (spikes.size() < 2 || 2 * spikes.size() > tel.lone_waits.size()) return std::nullopt;
  // Jumps at a fixed distance (give or take one line), three or more of them, are a round of
  // the workers; two are one distance, no pattern.
  std::set<size_t> gaps;
  for (size_t k = 1; k < spikes.size(); ++k) gaps.insert(spikes[k] - spikes[k - 1]);
  const bool periodic = spikes.size() >= 3 && *gaps.rbegin() - *gaps.begin() <= 1;
  const size_t period = *gaps.begin();
  const std::string jumps = fmt::format("{:.3g}", low) == fmt::format("{:.3g}", high)
                                ? fmt::format("{:.3g} s", low)
                                : fmt::format("{:.3g}-{:.3g} s", low, high);
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  // Counted in the log's lines: a line is a step only where the trainer prints every step.
  d.summary = fmt::format(
      "input-bound, probably: the wait for data jumps to {} on {} of {} lines{}, against a "
      "median wait of {:.3g} s — {:.3g} s of waiting per line on average; the log does not time "
      "the step, but only steps of many seconds hide waits so long. Loader workers that each make "
      "a whole batch in turn, more slowly than the GPU uses the others' batches, leave it waiting "
      "once a round (where each line is a step: every Nth step with N workers)",
      jumps, spikes.size(), tel.lone_waits.size(),
      periodic && period > 1 ? fmt::format(" (about every {} line)", ordinal(period))
                             : std::string(),
      median, spike_sum / static_cast<double>(tel.lone_waits.size()));
  d.evidence.push_back(tel.cite(tel.lone_waits[spikes.front()].first));
  d.evidence.push_back(tel.cite(tel.lone_waits[spikes.back()].first));
  d.next = {
      "the step time beside the wait (the loop's batch time), and top while training: workers "
      "at 100 % CPU each are decoding too slowly, workers in state D wait on storage"};
  d.fixes = fixes::input_bound_cpu();
  for (Fix& f : fixes::io_bound()) d.fixes.push_back(std::move(f));
  return d;
}

// Slow steps each right after the loop's own periodic work (TensorFlow's "Saving checkpoint to
// path ...", "Recording summary at step 672", nanoGPT's "saving checkpoint to out" after its
// evaluation): that work is what took the time, not a batch that was not ready — `healthy`, low
// confidence. nullopt when one of them follows no such work (that stall may be the input's).
// `lines` are the step lines, `slow` the slow ones among them, `fast` a step's usual time.
std::optional<Diagnosis> after_periodic_work(const Telemetry& tel,
                                             const std::vector<const StepSample*>& lines,
                                             const std::vector<const StepSample*>& slow,
                                             double fast, const std::string& slow_steps,
                                             double lost) {
  bool evaluated = false;  // an evaluation among the periodic work found
  const auto follows_work = [&](const StepSample* step) {
    for (int64_t line = step->origin.line - 1; line >= 1 && line >= step->origin.line - 3; --line) {
      // Another step line above: the work before it was that step's (its own text, "best
      // validation acc 0.72", is no work between the two).
      if (std::any_of(lines.begin(), lines.end(), [&](const StepSample* other) {
            return other->origin.file == step->origin.file && other->origin.line == line;
          })) {
        return false;
      }
      const std::string low = telemetry::lower(line_of(tel, {step->origin.file, line}));
      if (low.size() > telemetry::kMaxPastedLineBytes) return false;
      for (const std::string_view w :
           {"checkpoint", "saving model", "model saved", "recording summary", "snapshotting",
            "evaluat", "validation", "testing net"}) {
        if (low.find(w) != std::string::npos) {
          evaluated = evaluated || w == "evaluat" || w == "validation" || w == "testing net";
          return true;
        }
      }
    }
    return false;
  };
  if (slow.empty() || !std::all_of(slow.begin(), slow.end(), follows_work)) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kHealthy;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "{} ({:.0f} % of the time shown), each right after the loop's own periodic work (a "
      "checkpoint, a summary, an evaluation): that work took the time, not the input",
      slow_steps, 100 * lost);
  d.evidence.push_back(tel.cite(slow.front()->origin));
  const auto steady = std::find_if(lines.begin(), lines.end(),
                                   [&](const StepSample* x) { return x->step_seconds < 2 * fast; });
  if (steady != lines.end()) d.evidence.push_back(tel.cite((*steady)->origin));
  d.next = {
      "the job with checkpoints and summaries less often (or written asynchronously), and "
      "vmstat 1 during a save: swapping (si/so) or a slow checkpoint target makes it long"};
  if (evaluated) {
    d.next.push_back(
        "after an evaluation, a DataLoader's workers start again unless they persist "
        "(persistent_workers=True): the step after it then waits for them");
  }
  return d;
}

// The step lines that time the step only, of one run: the run that has the most of them (a
// table's rows, a run each, are runs to compare, not one run's steps).
std::vector<const StepSample*> step_series(const Telemetry& tel) {
  const auto timed = [](const StepSample& s) {
    return !s.has_data && !s.average && s.step_seconds > 0;
  };
  std::map<int, size_t> steps_of_run;
  for (const StepSample& s : tel.steps) {
    if (timed(s)) ++steps_of_run[s.run];
  }
  std::vector<const StepSample*> series;
  if (steps_of_run.empty()) return series;
  const int run =
      std::max_element(steps_of_run.begin(), steps_of_run.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  for (const StepSample& s : tel.steps) {
    if (timed(s) && s.run == run) series.push_back(&s);
  }
  return series;
}

// Step lines that time the step only, at two levels five times apart or more and taking turns
// ("Time/step: 44.2", 4.8, 43.9, 3.8, 45.7, 3.7): half the steps or more can be slow, so the
// median is no reference; the fast quarter is what a step's own work costs. Loader workers
// that deliver in bursts (one or two workers, each slower than the step) make this pattern; a
// regime change (all slow steps first, or last) does not. nullopt when the lines do not show it.
std::optional<Diagnosis> steps_at_two_levels(const Telemetry& tel,
                                             const std::vector<const StepSample*>& all) {
  // The first step also carries the job's start (workers, compilation): not one of the levels.
  const std::vector<const StepSample*> lines(all.begin() + 1, all.end());
  std::vector<double> seconds;
  for (const StepSample* s : lines) seconds.push_back(s->step_seconds);
  std::sort(seconds.begin(), seconds.end());
  const double fast = seconds[seconds.size() / 4];
  if (fast <= 0) return std::nullopt;
  size_t n_fast = 0, n_slow = 0, turns = 0;
  double slow_sum = 0, all_sum = 0;
  std::vector<const StepSample*> slow;
  int previous = 0;  // -1 fast, +1 slow
  for (const StepSample* s : lines) {
    all_sum += s->step_seconds;
    int level = 0;
    if (s->step_seconds <= 2 * fast) level = -1, ++n_fast;
    if (s->step_seconds >= 5 * fast) {
      level = 1, ++n_slow, slow_sum += s->step_seconds;
      slow.push_back(s);
    }
    if (level != 0 && previous != 0 && level != previous) ++turns;
    if (level != 0) previous = level;
  }
  // Two clear levels (few steps between them), each of three steps or more, taking turns
  // again and again.
  if (n_fast < 3 || n_slow < 3 || 5 * (n_fast + n_slow) < 4 * lines.size() || turns < 4) {
    return std::nullopt;
  }
  const double lost = (slow_sum - fast * static_cast<double>(n_slow)) / all_sum;
  // `all`: the first step line too, which bounds the work that comes before the second.
  if (auto periodic = after_periodic_work(
          tel, all, slow, fast,
          fmt::format("{} of {} steps take 5x or more the usual step of {:.3g} s", n_slow,
                      lines.size(), fast),
          lost)) {
    return periodic;
  }
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "input-bound, probably: the steps take turns between about {:.3g} s and 5x that or more "
      "({} of {} slow, {:.0f} % of the time shown lost to them); a step's own work does not "
      "vary so, batches that arrive in bursts do (loader workers each slower than the step)",
      fast, n_slow, lines.size(), 100 * lost);
  d.evidence.push_back(tel.cite(lines.front()->origin));
  d.evidence.push_back(tel.cite(lines.back()->origin));
  d.next = {
      "the loop's data time against its step time (stoker.torch.watch(loader) times a "
      "DataLoader): slow steps that wait for data are the loader's"};
  d.fixes = fixes::input_bound_cpu();
  return d;
}

// Step lines that time the step only, steady but for some that take twice as long or more:
// the GPU's work on a batch of a fixed size does not vary so; a batch that was not ready does
// (or the loop's own periodic work: a checkpoint, an evaluation, a log flush). nullopt when the
// log does not show it.
std::optional<Diagnosis> steps_that_stall(const Telemetry& tel) {
  const std::vector<const StepSample*> lines = step_series(tel);
  if (lines.size() < 6) return std::nullopt;
  std::vector<double> seconds;
  for (const StepSample* s : lines) seconds.push_back(s->step_seconds);
  // Steps that only fall (or only rise) line after line are a trend — a running average since
  // the start settling (Tacotron's "sec/step"), a model that grows — not stalls among steady
  // steps.
  if (std::is_sorted(seconds.begin(), seconds.end()) ||
      std::is_sorted(seconds.begin(), seconds.end(), std::greater<>())) {
    return std::nullopt;
  }
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::vector<const StepSample*> slow;
  double slow_sum = 0, all_sum = 0;
  for (const StepSample* s : lines) {
    all_sum += s->step_seconds;
    if (s->step_seconds >= 2 * median) slow.push_back(s), slow_sum += s->step_seconds;
  }
  if (slow.size() < 2 || 2 * slow.size() > lines.size()) return steps_at_two_levels(tel, lines);
  // Slow steps that are the log's first lines, each no slower than the one before ("iter 0 ...
  // time 7961.94ms", "iter 1 ... 248.63ms", then 22 ms: nanoGPT#392 compiling): the job's start
  // (a compile, cuDNN's autotuning, the workers' first batches), not stalls among its steps.
  bool warm_up = true;
  for (size_t k = 0; k < slow.size() && warm_up; ++k) {
    warm_up = slow[k] == lines[k] && (k == 0 || slow[k]->step_seconds <= slow[k - 1]->step_seconds);
  }
  if (warm_up) return std::nullopt;
  Diagnosis d;
  const double lost = (slow_sum - median * static_cast<double>(slow.size())) / all_sum;
  const std::string slow_steps =
      fmt::format("{} of {} steps take {:.1f}x or more the median step of {:.3g} s", slow.size(),
                  lines.size(), 2.0, median);
  if (auto periodic = after_periodic_work(tel, lines, slow, median, slow_steps, lost)) {
    return periodic;
  }
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "input-bound, probably: {} ({:.0f} % of the time shown lost to them); a step's own work "
      "does not vary so, a batch that was not ready does (or the loop's periodic work: "
      "checkpoints, evaluation)",
      slow_steps, 100 * lost);
  d.evidence.push_back(tel.cite(slow.front()->origin));
  d.evidence.push_back(tel.cite(lines.front()->origin));
  d.next = {
      "the loop's data time against its step time (stoker.torch.watch(loader) times a "
      "DataLoader): slow steps that wait for data are the loader's"};
  d.fixes = fixes::input_bound_cpu();
  return d;
}

// A job's speed that falls mid-run and stays low ("Speed 1534 samples/sec" for 400 steps, then
// 905, 485, 488): the GPU's work per batch did not change, what feeds it did (the page cache
// no longer holding the data, a slower part of the data set, an evaluation that left the
// loader cold). Read from rate lines or step lines without a data time, in line order: steady
// for 3 lines or more, then at most 2 lines of transition, then 2 or more lines all below
// 0.65x the steady speed. A gradual decline (a model that grows as it trains) is not a fall.
// nullopt when the log does not show it.
// The job's speed, per second, in line order: the longest series of rate lines, else the step
// lines without a data time or an average.
std::vector<std::pair<double, Origin>> speed_series(const Telemetry& tel) {
  std::vector<std::pair<double, Origin>> speed;
  // One series: the run, unit and per-GPU-ness that most rate lines share (a log printing
  // wps and ups on every line is two series, not one that jumps).
  std::map<std::tuple<int, std::string, bool>, size_t> series;
  for (const ThroughputSample& r : tel.rates) {
    if (!r.total) ++series[{r.run, r.unit, r.per_gpu}];
  }
  if (!series.empty()) {
    const auto longest =
        std::max_element(series.begin(), series.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const ThroughputSample& r : tel.rates) {
      if (!r.total && std::tuple(r.run, r.unit, r.per_gpu) == longest->first) {
        speed.emplace_back(r.per_second, r.origin);
      }
    }
  }
  if (speed.empty()) {
    for (const StepSample* s : step_series(tel)) speed.emplace_back(1 / s->step_seconds, s->origin);
  }
  // A line pasted twice in a row (a progress bar redrawn, "1/3527 [00:15<12:16:56, 12.54s/it]"
  // copied with its echo) is one sample: two would make a start look steady. (Speeds of one
  // line, a sentence's "7.9 ms/it with GPU ON, and about 10 ms/it without", stay.)
  // Only the next line (blank ones aside) and only a line with a counter ("1/3527",
  // step_counter): the same speed a few lines on ("throughput: 245 img/s" under each epoch's
  // heading) is another sample.
  const auto next_to = [&](const Origin& above, const Origin& below) {
    if (above.file != below.file || below.line <= above.line) return false;
    for (int64_t line = above.line + 1; line < below.line; ++line) {
      if (!telemetry::trim(line_of(tel, {above.file, line})).empty()) return false;
    }
    return true;
  };
  std::vector<std::pair<double, Origin>> once;
  for (const auto& sample : speed) {
    if (!once.empty() && next_to(once.back().second, sample.second)) {
      const std::string_view text = line_of(tel, sample.second);
      const std::string_view above = line_of(tel, once.back().second);
      if (text == above && step_counter(text) > 0) continue;
      // MXNet's Speedometer prints a line per metric, the same batch and speed on each
      // ("Batch [50] Speed: 875.63 samples/sec Train-accuracy=..." over "...
      // Train-top_k_accuracy_2=..."): lines alike in their first half, the speed among it, are
      // one sample.
      const size_t alike = static_cast<size_t>(
          std::mismatch(text.begin(), text.end(), above.begin(), above.end()).first - text.begin());
      // After the part alike, no rate; and the lines part at another metric's name, or at a
      // number that no counter names ("... | step 100" below "... | step 200" are two steps at
      // a rounded speed; each rank's copy of one step parts at its jitter or loss).
      const auto rate_in = [](std::string_view rest) {
        return rest.find("/s") != std::string_view::npos ||
               rest.find("sec") != std::string_view::npos;
      };
      const auto counted_here = [&] {
        std::string_view before = text.substr(0, alike);
        while (!before.empty() && (telemetry::is_digit(before.back()) || before.back() == ' ' ||
                                   before.back() == ':' || before.back() == '=' ||
                                   before.back() == '[' || before.back() == '#')) {
          before.remove_suffix(1);
        }
        const std::string low = telemetry::lower(before);
        for (const std::string_view w : {"step", "iter", "iteration", "batch", "epoch"}) {
          if (low.ends_with(w)) return true;
        }
        return false;
      };
      if (sample.first == once.back().first && alike >= text.size() / 2 && alike < text.size() &&
          alike < above.size() && !counted_here() && !rate_in(text.substr(alike)) &&
          !rate_in(above.substr(alike))) {
        continue;
      }
    }
    once.push_back(sample);
  }
  return once;
}

// Two samples of a speed parted by a heading: another file, or a line of words set apart by a
// blank line between them, not the loop's own periodic lines (an epoch's counter, a
// checkpoint's save, an evaluation), which part one run's log.
bool parted_by_heading(const Telemetry& tel, const Origin& above, const Origin& below) {
  if (above.file != below.file) return true;
  bool blank = false, heading = false;
  for (int64_t line = above.line + 1; line < below.line; ++line) {
    const std::string_view text = telemetry::trim(line_of(tel, {above.file, line}));
    if (text.empty()) {
      blank = true;
      continue;
    }
    const std::string low = telemetry::lower(text);
    bool periodic = false;
    for (const std::string_view w :
         {"epoch", "save", "saving", "checkpoint", "eval", "valid", "test", "snapshot"}) {
      periodic = periodic || low.find(w) != std::string::npos;
    }
    heading = heading || !periodic;
  }
  return blank && heading;
}

// The speed in blocks the paste parts with a line of its own between them (a heading: "With
// flair 0.4.1" above one log, "with flair 0.4.3 and 0.4.4" above the next), three lines or more
// each, steady within (every line within 2x of its block's median) and 2x apart or more
// between two of them: runs of the job under something that changed between them (a release,
// a setting, a machine), not stalls or a fall within one. `unknown`, naming the two paces;
// nullopt otherwise.
std::optional<Diagnosis> paces_of_headed_blocks(const Telemetry& tel) {
  const auto speed = speed_series(tel);
  if (speed.size() < 6) return std::nullopt;
  std::vector<std::vector<double>> blocks(1);
  std::vector<Origin> starts{speed.front().second};
  for (size_t k = 0; k < speed.size(); ++k) {
    if (k > 0 && parted_by_heading(tel, speed[k - 1].second, speed[k].second)) {
      blocks.emplace_back();
      starts.push_back(speed[k].second);
    }
    blocks.back().push_back(speed[k].first);
  }
  if (blocks.size() < 2) return std::nullopt;
  std::vector<double> medians;
  for (std::vector<double> b : blocks) {
    if (b.size() < 3) return std::nullopt;
    const double m = telemetry::median(b);
    for (const double v : b) {
      if (v > 2 * m || v < m / 2) return std::nullopt;
    }
    medians.push_back(m);
  }
  const auto [slow, fast] = std::minmax_element(medians.begin(), medians.end());
  if (*fast < 2 * *slow) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kUnknown;
  d.confidence = Confidence::kLow;
  const bool steps = tel.rates.empty();
  const auto pace = [&](double per_second) {
    return steps ? fmt::format("{:.3g} s a step", 1 / per_second)
                 : fmt::format("{:.4g} a second", per_second);
  };
  d.summary = fmt::format(
      "{} blocks of steady {} under headings of their own, one at {}, another {:.1f}x slower at "
      "{}: runs of the job under something that changed between them (a release, a setting, a "
      "machine), not stalls within one run; what changed is the question",
      blocks.size(), steps ? "steps" : "rates", pace(*fast), *fast / *slow, pace(*slow));
  d.evidence.push_back(tel.cite(starts[static_cast<size_t>(fast - medians.begin())]));
  d.evidence.push_back(tel.cite(starts[static_cast<size_t>(slow - medians.begin())]));
  d.next = {
      "the loop's data time against its step time in both runs (stoker.torch.watch(loader) "
      "times a DataLoader): a wait that grew is the input, a step that grew without it the "
      "model's work"};
  return d;
}

// A feeder's seconds per batch (Telemetry::feeder_batch_seconds) against the steps' latest
// time: a step cannot run faster than its batches are made. Close to it (80 % or more) is
// input-bound, medium; under half, healthy, low (the feeder keeps ahead); between, input-bound,
// low. nullopt without both.
std::optional<Diagnosis> feeder_pace(const Telemetry& tel) {
  if (tel.feeder_batch_seconds.empty() || tel.steps.empty()) return std::nullopt;
  const auto& [origin, per_batch] = tel.feeder_batch_seconds.back();
  const StepSample& last = tel.steps.back();
  if (last.step_seconds <= 0) return std::nullopt;
  double step = last.step_seconds;
  // Tacotron's sec/step is the mean of its last 100 steps: in its first 100, a series that falls
  // line after line is the mean since the start, its first step's wait for the feeder's first
  // batches among it. The steps after the first line's took, each, what the two means imply
  // (Step 1 at 222.339 s, Step 11 at 21.385 s: (11 x 21.385 - 222.339) / 10 = 1.29 s).
  const std::vector<const StepSample*> series = step_series(tel);
  if (series.size() >= 3 && series.back() == &last &&
      std::is_sorted(series.begin(), series.end(), [](const StepSample* a, const StepSample* b) {
        return a->step_seconds > b->step_seconds;
      })) {
    const StepSample& before = *series.front();
    // The step's own count, "Step      11 [21.385 sec/step, ...]".
    const auto count = [&](const StepSample& s) -> int64_t {
      for (const telemetry::NamedValue& v : telemetry::named_values(line_of(tel, s.origin))) {
        if (v.name == "step" && v.unit.empty() && v.value >= 1 && v.value == std::floor(v.value)) {
          return static_cast<int64_t>(v.value);
        }
      }
      return 0;
    };
    const int64_t n = count(last);
    const int64_t m = count(before);
    if (m > 0 && n > m && n <= 100) {
      const double own = (static_cast<double>(n) * last.step_seconds -
                          static_cast<double>(m) * before.step_seconds) /
                         static_cast<double>(n - m);
      if (own > 0) step = own;
    }
  }
  const double share = per_batch / step;
  Diagnosis d;
  d.evidence.push_back(tel.cite(origin));
  d.evidence.push_back(tel.cite(last.origin));
  const std::string pace = fmt::format(
      "the feeder makes a batch every {:.3g} s, a step takes {:.3g} s ({}{:.0f} %)", per_batch,
      step,
      step != last.step_seconds ? "the mean of those after the first, from the running mean; " : "",
      100 * share);
  if (share >= 0.8) {
    d.verdict = Verdict::kInputBound;
    // Low from the running mean: its first steps drew from the queue the feeder's first fill
    // had made, and that fill may have carried its start.
    d.confidence = step != last.step_seconds ? Confidence::kLow : Confidence::kMedium;
    d.summary = pace + ": the steps run at the pace their batches are made";
    d.fixes = fixes::input_bound_cpu();
    d.next = {
        "the CPUs while it trains (mpstat -P ALL 1 60): pinned means the feeder's decoding and "
        "features, idle with iowait the storage"};
  } else if (share < 0.5) {
    d.verdict = Verdict::kHealthy;
    d.confidence = Confidence::kLow;
    d.summary = pace + ": the feeder keeps ahead of the steps";
  } else {
    d.verdict = Verdict::kInputBound;
    d.confidence = Confidence::kLow;
    d.summary = pace + ": the feeder is close to the steps' pace, some steps may wait";
    d.fixes = fixes::input_bound_cpu();
  }
  return d;
}

// A speed that holds steady over many lines (after the first, which holds the start) of a job
// on one node that does not shard its model: every reading within 15 % of the median. A loader that
// cannot keep up most often shows itself as steps that wait — stalls among steady steps, a speed
// that falls, a first epoch that is cold; none here, so the GPU's work is probably what sets the
// pace. Low: a loader that is the limit can also deliver at an even rate, which only the loop's
// data time tells apart.
// Waits for data timed on lines of their own (Telemetry::lone_waits) beside step times that
// do not time the wait ("data_load_time: 47.413" lines under "Typical per-batch time is
// ~15s"): their median against the steps' median, and the waits longer than a whole step.
// Called only when the steps have no wait of their own.
std::optional<Diagnosis> waits_beside_steps(const Telemetry& tel, const TelemetryThresholds& th) {
  // One wait is as likely a checkpoint's or a validation's load: a series of them, at least.
  if (tel.lone_waits.size() < 2 || tel.steps.empty()) return std::nullopt;
  std::vector<double> steps, waits;
  for (const StepSample& s : tel.steps) {
    if (s.has_data || s.step_seconds <= 0) return std::nullopt;
    steps.push_back(s.step_seconds);
  }
  for (const auto& w : tel.lone_waits) waits.push_back(w.second);
  const double step = telemetry::median(steps);
  const double wait = telemetry::median(waits);
  const auto longer = std::count_if(waits.begin(), waits.end(), [&](double w) { return w > step; });
  // Each wait against a step and its wait together: the share of the time it waits.
  const double share = wait / (wait + step);
  Diagnosis d;
  d.evidence.push_back(tel.cite(tel.lone_waits.front().first));
  d.evidence.push_back(tel.cite(tel.steps.back().origin));
  const std::string numbers = fmt::format(
      "waits for data of {:.3g} s (median of {} line{}; {} longer than a whole step) beside "
      "steps of {:.3g} s",
      wait, waits.size(), waits.size() == 1 ? "" : "s", longer, step);
  if (share >= th.wait.healthy_below) {
    d.verdict = Verdict::kInputBound;
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "input-bound{}: {}: the loop waits for its batches about {:.0f} % of the time; the log "
        "does not say whether decoding (CPU) or reading (storage) holds them back",
        *mildly(share, th.wait) ? ", mildly" : "", numbers, 100 * share);
    d.fixes = fixes::input_bound_cpu();
  } else {
    d.verdict = Verdict::kHealthy;
    d.confidence = Confidence::kLow;
    d.summary =
        fmt::format("{}: the waits are a small share of the time ({:.0f} %)", numbers, 100 * share);
  }
  d.next = {
      "the loop's data time and step time printed on the same lines "
      "(stoker.torch.watch(loader) times a DataLoader)"};
  return d;
}

// The model's FLOPs at a large share of the GPUs' peak (Telemetry::mfu, the median of the
// lines after the first, a warm-up, at kBusyMfu % or more; or Telemetry::model_tflops against
// the peak of the one GPU the paste names): the GPUs compute most of the time, which a job
// waiting on its input could not. A low MFU says nothing of why (a small model, an old GPU, a
// peak the trainer assumes for another GPU, a MoE's small expert GEMMs).
constexpr double kBusyMfu = 35;

// A trainer's figures per line without the first (a warm-up), unless it is the only one.
std::vector<std::pair<Origin, double>> after_warm_up(
    const std::vector<std::pair<Origin, double>>& lines) {
  return {lines.size() > 1 ? lines.begin() + 1 : lines.begin(), lines.end()};
}
// The MFU figures weighed: a trainer's lines after its warm-up, then a table's rows, each a
// configuration of its own that none warms up.
std::vector<std::pair<Origin, double>> weighed_mfu(const Telemetry& tel) {
  std::vector<std::pair<Origin, double>> out = after_warm_up(tel.mfu);
  out.insert(out.end(), tel.mfu_configurations.begin(), tel.mfu_configurations.end());
  return out;
}
std::vector<double> values_of(const std::vector<std::pair<Origin, double>>& figures) {
  std::vector<double> out;
  for (const auto& f : figures) out.push_back(f.second);
  return out;
}
std::optional<Diagnosis> high_mfu(const Telemetry& tel) {
  // A dense model's tokens a second per GPU, its size named (named_model_billions): training
  // costs about 6 FLOPs per parameter per token (2 forward, 4 backward; attention's own a few
  // percent more), so the rate times 6N is the model's TFLOP/s per GPU.
  std::vector<std::pair<Origin, double>> from_tokens;
  std::optional<double> billions;
  const bool mfu_said = !tel.mfu.empty() || !tel.mfu_configurations.empty();
  if (!mfu_said && tel.model_tflops.empty()) {
    billions = telemetry::named_model_billions(tel);
    for (const ThroughputSample& r : tel.rates) {
      if (billions && r.unit == "tokens" && r.per_gpu && !r.total) {
        from_tokens.emplace_back(r.origin, 6 * *billions * 1e9 * r.per_second / 1e12);
      }
    }
  }
  // TFLOP/s are a trainer's only beside its loop's steps or rates (not a matmul benchmark's).
  const std::optional<telemetry::GpuPeak> peak =
      !mfu_said && (!tel.model_tflops.empty() || !from_tokens.empty()) &&
              (!tel.steps.empty() || !tel.rates.empty())
          ? telemetry::named_gpu_peak(tel)
          : std::nullopt;
  const std::vector<std::pair<Origin, double>> figures = !peak ? weighed_mfu(tel)
                                                         : !from_tokens.empty()
                                                             ? after_warm_up(from_tokens)
                                                             : after_warm_up(tel.model_tflops);
  if (figures.empty()) return std::nullopt;
  const double median = telemetry::median(values_of(figures));
  // TFLOP/s above the GPU's peak are several GPUs' (a job's total), not one's.
  if (peak && median > peak->tflops) return std::nullopt;
  const double m = peak ? 100 * median / peak->tflops : median;
  if (m < kBusyMfu) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kHealthy;
  d.confidence = Confidence::kMedium;
  const size_t rows = peak ? 0 : tel.mfu_configurations.size();
  const size_t lines = figures.size() - rows;
  const auto counted = [](size_t n, std::string_view what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  };
  const std::string lines_text = fmt::format(
      "median of {}", lines > 0 && rows > 0
                          ? counted(lines, "line") + " and " + counted(rows, "configuration")
                      : rows > 0 ? counted(rows, "configuration")
                                 : counted(lines, "line"));
  const std::string what =
      !from_tokens.empty()
          ? fmt::format(
                "{:.4g} TFLOP/s per GPU: 6 FLOPs per parameter per token of a {:g}B "
                "model at its tokens/s per GPU, {}",
                median, *billions, lines_text)
          : fmt::format("{:.4g} TFLOP/s per GPU, {}", median, lines_text);
  d.summary =
      peak ? fmt::format(
                 "the model's FLOPs run at {:.0f} % of the GPUs' peak ({}, against the {}'s "
                 "{:.0f} dense BF16): the GPUs compute most of the time, which a job waiting for "
                 "its input could not",
                 m, what, peak->name, peak->tflops)
           : fmt::format(
                 "the model's FLOPs run at {:.0f} % of the GPUs' peak (MFU, {}): the GPUs compute "
                 "most of the time, which a job waiting for its input could not (the peak is the "
                 "one the trainer assumes for its GPU)",
                 m, lines_text);
  d.evidence.push_back(tel.cite(figures.back().first));
  d.next = {
      "the loop's data time against its step time (stoker.torch.watch(loader) times a "
      "DataLoader): a wait near zero confirms it"};
  return d;
}

std::optional<Diagnosis> steady_speed(const Telemetry& tel) {
  // Across nodes, sharding its model or through a parameter server, a steady but slow job is as
  // likely to wait on the exchange every step: an even pace says it does not wait on its input
  // in bursts, not which of the two sets it.
  const bool exchanges = std::any_of(tel.runs.begin(), tel.runs.end(), [](const RunInfo& r) {
    return r.nodes.value_or(1) > 1 || r.exchange_heavy;
  });
  std::vector<std::pair<double, Origin>> speed = speed_series(tel);
  if (speed.size() < 9) return std::nullopt;
  // Whole epochs or runs timed: each averages thousands of steps, in which a loader's stalls
  // even out, so an even pace of them says nothing of waits.
  const Origin first = speed.front().second;
  if (std::any_of(tel.rates.begin(), tel.rates.end(), [&](const ThroughputSample& r) {
        return r.origin.file == first.file && r.origin.line == first.line &&
               telemetry::whole_durations(r.unit);
      })) {
    return std::nullopt;
  }
  std::vector<double> after_first;
  for (size_t i = 1; i < speed.size(); ++i) after_first.push_back(speed[i].first);
  std::vector<double> sorted = after_first;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (median <= 0 || sorted.front() < 0.85 * median || sorted.back() > 1.15 * median) {
    return std::nullopt;
  }
  Diagnosis d;
  d.confidence = Confidence::kLow;
  const double spread = std::max(1 - sorted.front() / median, sorted.back() / median - 1);
  if (exchanges) {
    d.verdict = Verdict::kUnknown;
    d.summary = fmt::format(
        "a steady speed ({} lines within {:.0f} % of their median) in a job that exchanges "
        "across machines, shards its model or goes through a parameter server every step: an "
        "even pace says the input does not arrive in bursts, but the exchange may set it as "
        "well as the GPU's work",
        after_first.size(), 100 * spread);
    d.evidence.push_back(tel.cite(speed.back().second));
    d.next = {
        "the same job on one GPU without the exchange (or its share of the step: NCCL_DEBUG=INFO "
        "and a profiler's all-reduce or send/recv time): as fast per GPU, the GPU's work sets the "
        "pace; faster, the exchange does"};
    return d;
  }
  d.verdict = Verdict::kHealthy;
  d.summary = fmt::format(
      "a steady speed: {} lines within {:.0f} % of their median, no stalls, no fall: a loader "
      "that cannot keep up most often shows as steps that wait, so the GPU's work probably sets "
      "the pace (an input pipeline that is the limit can also run evenly: the loop's data time "
      "would tell)",
      after_first.size(), 100 * spread);
  d.evidence.push_back(tel.cite(speed[1].second));
  d.evidence.push_back(tel.cite(speed.back().second));
  d.next = {
      "the loop's data time against its step time (stoker.torch.watch(loader) times a "
      "DataLoader), or GPU utilisation sampled while it runs (nvidia-smi dmon -s u)"};
  return d;
}

std::optional<Diagnosis> speed_that_falls(const Telemetry& tel) {
  const std::vector<std::pair<double, Origin>> speed = speed_series(tel);
  if (speed.size() < 5) return std::nullopt;
  // The lines before k: their median (sorted[k / 2], the least of `upper`) and their least,
  // kept as k grows (a log of a million lines is read in n log n).
  std::priority_queue<double> lower;
  std::priority_queue<double, std::vector<double>, std::greater<>> upper;
  double least = speed[0].first;
  const auto add = [&](double v) {
    least = std::min(least, v);
    if (!upper.empty() && v < upper.top()) {
      lower.push(v);
    } else {
      upper.push(v);
    }
    while (lower.size() > upper.size()) upper.push(lower.top()), lower.pop();
    while (upper.size() > lower.size() + 1) lower.push(upper.top()), upper.pop();
  };
  for (size_t i = 0; i < 3; ++i) add(speed[i].first);
  for (size_t k = 3; k + 2 <= speed.size(); add(speed[k].first), ++k) {
    const double steady = upper.top();
    if (least < 0.75 * steady) break;  // not steady before the fall
    if (speed[k].first >= 0.75 * steady) continue;
    // The fall starts at k; after at most two lines of transition, the rest stays low.
    for (size_t settle = k; settle <= k + 2 && settle + 2 <= speed.size(); ++settle) {
      const bool low = std::all_of(speed.begin() + static_cast<std::ptrdiff_t>(settle), speed.end(),
                                   [&](const auto& v) { return v.first <= 0.65 * steady; });
      if (!low) continue;
      std::vector<double> after;
      for (size_t i = settle; i < speed.size(); ++i) after.push_back(speed[i].first);
      std::sort(after.begin(), after.end());
      const double fallen = after[after.size() / 2];
      // Lines that keep falling after the fall are a decline, not a new level.
      if (after.front() < 0.6 * fallen) return std::nullopt;
      // A fall at a heading (nnue-pytorch#342's "* large:" above the larger network's runs) is
      // another run under what the heading names, not a fall within one.
      for (size_t i = k; i <= settle; ++i) {
        if (!parted_by_heading(tel, speed[i - 1].second, speed[i].second)) continue;
        Diagnosis d;
        d.verdict = Verdict::kUnknown;
        d.confidence = Confidence::kLow;
        d.summary = fmt::format(
            "the speed fell from {:.4g} to {:.4g} per second ({:.0f} %) at a heading: another "
            "run under what the heading names (a model, a setting, a release), not a fall within "
            "one run; what changed is the question",
            steady, fallen, 100 * fallen / steady);
        d.evidence.push_back(tel.cite(speed[i - 1].second));
        d.evidence.push_back(tel.cite(speed[i].second));
        d.next = {
            "the loop's data time against its step time in both runs (stoker.torch.watch(loader) "
            "times a DataLoader): a wait that grew is the input, a step that grew without it the "
            "model's work"};
        return d;
      }
      Diagnosis d;
      d.verdict = Verdict::kInputBound;
      d.confidence = Confidence::kLow;
      d.summary = fmt::format(
          "input-bound, probably: the speed fell from {:.4g} to {:.4g} per second ({:.0f} %) "
          "after {} steady lines and stayed there; the GPU's work per batch did not change, what "
          "feeds it did (the page cache no longer holding the data, a slower part of the data, "
          "a loader left cold by an evaluation)",
          steady, fallen, 100 * fallen / steady, k);
      d.evidence.push_back(tel.cite(speed[k - 1].second));
      d.evidence.push_back(tel.cite(speed[settle].second));
      d.next = {
          "the loop's data time per step before and after the fall (stoker.torch.watch(loader) "
          "times a DataLoader), with iostat -x 1 60 after it: a wait that grew is the input"};
      d.fixes = fixes::input_bound_cpu();
      for (Fix& f : fixes::io_bound()) d.fixes.push_back(std::move(f));
      return d;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Epoch lines that time the step only ("Epoch 0 | ... 1.65s/it", "Epoch 3 | ... 9.57it/s", Keras'
// "1464/1464 [====] - 3943s" under its "Epoch 1/50"):
// a first epoch several times slower than the steady ones after it is the page cache filling —
// the data came from storage once and from memory since — the classic sign of a job waiting on
// its storage. nullopt when the log does not show it.
// A first epoch this many times slower than the steady ones is the page cache filling; against
// epochs of a minute or more (whole epochs timed: a job's start costs seconds), the lower one.
constexpr double kColdFirstEpoch = 3, kColdFirstWholeEpoch = 2, kWholeEpochSeconds = 60;

// The verdict of a cold first epoch, `summary` saying what shows it.
Diagnosis cold_page_cache(std::string summary) {
  Diagnosis d;
  d.verdict = Verdict::kIoBound;
  d.confidence = Confidence::kLow;
  d.summary = std::move(summary) +
              ": the data came from storage until the page cache held it — the job waits on its "
              "storage whenever the data is not cached (another machine, a larger data set)";
  d.fixes = fixes::io_bound();
  d.next = {
      "iostat -x 1 60 during the first epoch: %util near 100 or a long r_await is the "
      "storage"};
  return d;
}

std::optional<Diagnosis> first_epoch_cold(const Telemetry& tel) {
  constexpr double kKerasStartSeconds = 60;  // Keras' first epoch traces its graph (below)
  constexpr double kJobStartSeconds = 10;    // a job's start: workers, compiling, autotuning
  std::vector<const StepSample*> epochs;
  std::optional<int> last_epoch;
  bool keras = false;  // Keras' progress lines, each under its "Epoch N/M"
  for (const StepSample& s : tel.steps) {
    if (s.has_data || s.average) continue;
    std::string head = telemetry::lower(line_of(tel, s.origin).substr(0, 64));
    // Keras prints "Epoch 2/50" on a line of its own above the epoch's progress line.
    if (head.find("epoch") == std::string::npos && s.origin.line > 1) {
      const std::string above =
          telemetry::lower(line_of(tel, Origin{s.origin.file, s.origin.line - 1}).substr(0, 64));
      if (telemetry::trim(above).starts_with("epoch")) head = above, keras = true;
    }
    const size_t at = head.find("epoch");
    if (at == std::string::npos) return {};
    // "Epoch: 1/30, Step: 2/951, ... Time/step: 67.3": steps within one epoch, not epochs.
    size_t digit = at + 5;
    while (digit < head.size() &&
           (head[digit] == ':' || head[digit] == ' ' || head[digit] == '[' || head[digit] == '=')) {
      ++digit;
    }
    size_t end = digit;
    while (end < head.size() && head[end] >= '0' && head[end] <= '9') ++end;
    const auto epoch = telemetry::parse_index(std::string_view(head).substr(digit, end - digit));
    if (epoch && last_epoch && *epoch == *last_epoch) return {};
    if (epoch) last_epoch = epoch;
    epochs.push_back(&s);
  }
  if (epochs.size() < 3) return std::nullopt;
  std::vector<double> later;
  for (size_t i = 1; i < epochs.size(); ++i) later.push_back(epochs[i]->step_seconds);
  std::sort(later.begin(), later.end());
  const double steady = later[later.size() / 2];
  const double first = epochs.front()->step_seconds;
  // A job's start (workers, autotuning, compilation) costs seconds: against steps of a minute
  // or more (whole epochs timed), twice the steady time is already the data coming from storage.
  const double cold = steady >= kWholeEpochSeconds ? kColdFirstWholeEpoch : kColdFirstEpoch;
  if (steady <= 0 || first < cold * steady) return std::nullopt;
  // Keras' first epoch also traces and compiles its graph, seconds to tens of seconds: the
  // extra time of the epoch ("1464/1464": its steps) must be more than that.
  if (keras) {
    const std::string_view text = telemetry::trim(line_of(tel, epochs.front()->origin));
    const auto steps = telemetry::parse_index(text.substr(0, text.find('/')));
    if (!steps || (first - steady) * static_cast<double>(*steps) < kKerasStartSeconds) {
      return std::nullopt;
    }
  }
  // Whole epochs timed ("0 epoch time: 0.559627"): an extra time of seconds is the job's start
  // (a JIT's compile, the GPU's setup), not a data set read from storage once.
  {
    const std::string head = telemetry::lower(line_of(tel, epochs.front()->origin));
    if ((head.find("epoch time") != std::string::npos ||
         head.find("epoch_time") != std::string::npos) &&
        first - steady < kJobStartSeconds) {
      return std::nullopt;
    }
  }
  Diagnosis d = cold_page_cache(fmt::format(
      "the first epoch's steps take {:.1f}x the later ones' ({:.3g} s against {:.3g} s)",
      first / steady, first, steady));
  d.evidence.push_back(tel.cite(epochs.front()->origin));
  d.evidence.push_back(tel.cite(epochs.back()->origin));
  return d;
}

// A sentence of the paste setting the first epoch against a later one, the first 3x slower or
// more (2x when the later epoch takes a minute or more, as in first_epoch_cold): the page cache
// filling, said in words. nullopt when no sentence says so.
std::optional<Diagnosis> first_epoch_said_cold(const Telemetry& tel) {
  for (const Telemetry::EpochsCompared& c : tel.epochs_compared) {
    const bool whole_epochs = c.unit == "s" && c.later >= kWholeEpochSeconds;
    if (c.first_slower_by < (whole_epochs ? kColdFirstWholeEpoch : kColdFirstEpoch)) continue;
    Diagnosis d = cold_page_cache(fmt::format(
        "the paste says the first epoch ran {:.1f}x slower than a later one ({:.4g} {} against "
        "{:.4g} {})",
        c.first_slower_by, c.first, c.unit, c.later, c.unit));
    d.evidence.push_back(tel.cite(c.origin));
    return d;
  }
  return std::nullopt;
}

// The busiest disk of iostat -x rows: its mean %util, or nullopt without rows.
std::optional<std::pair<std::string, double>> busiest_disk(const Telemetry& tel) {
  std::map<std::string, std::pair<double, int>> by_device;
  for (const DiskSample& s : tel.disks) {
    auto& [sum, n] = by_device[s.device];
    sum += s.util;
    ++n;
  }
  std::optional<std::pair<std::string, double>> best;
  for (const auto& [device, sn] : by_device) {
    const double mean = sn.first / sn.second;
    if (!best || mean > best->second) best = std::make_pair(device, mean);
  }
  return best;
}

// iostat's device rows alone, the busiest device by its mean %util (without iostat's first
// report, which averages since boot, where there are later ones): at 80 % or more with reads
// that queue (r_await 5 ms or more, or not shown) a disk at its limit, which a job reading from
// it waits on — `io-bound`, low (whether this job's steps wait, their data time says); an NVMe
// drive's or an array's %util near 100 with sub-millisecond reads is no limit. Otherwise
// `unknown`. nullopt without device rows.
std::optional<Diagnosis> disk_alone(const Telemetry& tel) {
  std::map<std::string, std::vector<const DiskSample*>> devices;
  for (const DiskSample& s : tel.disks) devices[s.device].push_back(&s);
  if (devices.empty()) return std::nullopt;
  std::string busiest;  // printable: quoted in the verdict
  const std::vector<const DiskSample*>* busiest_rows = nullptr;
  double util = -1;
  std::optional<double> read_await;
  for (const auto& [name, rows] : devices) {
    const size_t from = rows.size() > 1 ? 1 : 0;
    double sum = 0, waited = 0;
    int timed = 0;
    for (size_t k = from; k < rows.size(); ++k) {
      sum += rows[k]->util;
      if (rows[k]->read_await) waited += *rows[k]->read_await, ++timed;
    }
    const double mean = sum / static_cast<double>(rows.size() - from);
    if (mean > util) {
      busiest = telemetry::printable(name), busiest_rows = &rows, util = mean;
      read_await = timed > 0 ? std::optional<double>(waited / timed) : std::nullopt;
    }
  }
  Diagnosis d;
  d.confidence = Confidence::kLow;
  for (const DiskSample* s : *busiest_rows) {
    if (d.evidence.size() < 3) d.evidence.push_back(tel.cite(s->origin));
  }
  d.next = {
      "the loop's data time against its step time while iostat -x 1 runs: steps that wait "
      "while the disk is at its limit are the storage's"};
  const std::string reads =
      read_await ? fmt::format(", reads waiting {:.3g} ms", *read_await) : std::string();
  if (util >= 80 && (!read_await || *read_await >= 5)) {
    d.verdict = Verdict::kIoBound;
    d.summary = fmt::format(
        "iostat shows {} {:.0f} % busy{}: storage at its limit, which a job reading its data from "
        "it waits on",
        busiest, util, reads);
    d.fixes = fixes::io_bound();
    return d;
  }
  d.verdict = Verdict::kUnknown;
  d.summary = fmt::format(
      "iostat shows {} {:.0f} % busy{}: not storage at its limit, and the disks alone do not say "
      "what else limits the job",
      busiest, util, reads);
  return d;
}

// The cause is decided, so the view that would decide it is no longer asked for; a verdict
// still held with low confidence (a few step lines) asks for more of them.
void decided_next(Diagnosis& d) {
  d.next.clear();
  if (d.confidence == Confidence::kLow) {
    d.next = {
        "the loop's step and data times over a few hundred steps: a few lines are a "
        "sample"};
  }
}

// Refines an input-bound verdict from steps with the CPU and disk evidence when there is some.
void refine_with_cpu(Diagnosis& d, const std::optional<Diagnosis>& util, const Telemetry& tel) {
  if (d.verdict != Verdict::kInputBound) return;
  if (const auto disk = busiest_disk(tel); disk && disk->second >= 80) {
    d.verdict = Verdict::kIoBound;
    d.summary +=
        fmt::format("; iostat shows {} {:.0f} % busy: the storage", disk->first, disk->second);
    d.fixes = fixes::io_bound();
    decided_next(d);
    return;
  }
  // The job's processes waiting in the kernel on storage, unless the CPUs are pinned (a loader
  // busy decoding also reads its files).
  const UtilisationNumbers* u =
      util && util->numbers.utilisation ? &*util->numbers.utilisation : nullptr;
  const bool pinned =
      u != nullptr && u->cpu_busy_mean && u->cpu_samples >= 1 && *u->cpu_busy_mean >= 85;
  if (const auto blocked = pinned ? std::nullopt : telemetry::judge_process_states(tel)) {
    d.verdict = Verdict::kIoBound;
    d.summary += "; " + blocked->summary;
    d.evidence.insert(d.evidence.end(), blocked->evidence.begin(), blocked->evidence.end());
    d.fixes = fixes::io_bound();
    decided_next(d);
    return;
  }
  if (u == nullptr || !u->cpu_busy_mean || u->cpu_samples < 1) return;  // one look is a view
  if (*u->cpu_busy_mean >= 85) {
    d.verdict = Verdict::kInputBoundCpu;
    d.summary +=
        fmt::format("; the CPUs were {:.0f} % busy: decoding and augmentation", *u->cpu_busy_mean);
    d.fixes = fixes::input_bound_cpu();
    decided_next(d);
  } else if (u->cpu_iowait_mean && *u->cpu_iowait_mean >= 20) {
    d.verdict = Verdict::kIoBound;
    d.summary += fmt::format("; iowait {:.0f} %: the storage", *u->cpu_iowait_mean);
    d.fixes = fixes::io_bound();
    decided_next(d);
  }
}

// Waits for data without their steps whose median is a minute or more ("Batch load time:
// 149.7166 seconds"): a training step takes seconds, tens of seconds for the largest models,
// so a batch that long in coming leaves the GPU waiting whatever the model. A single such wait
// is as likely a loader's start (its workers each making a first batch), which a median
// of several is not; one alone is read at low confidence.
std::optional<Diagnosis> waits_longer_than_any_step(const Telemetry& tel) {
  constexpr double kLongerThanAnyStep = 60;
  if (tel.lone_waits.empty()) return std::nullopt;
  // A total, or a first batch named so, is no batch's wait.
  std::vector<double> waits;
  for (const auto& [origin, seconds] : tel.lone_waits) {
    const std::string low = telemetry::lower(line_of(tel, origin));
    bool whole = false;
    for (const std::string_view w :
         {"total", "sum", "cumulative", "overall", "first", "init", "startup", "warm"}) {
      whole = whole || low.find(w) != std::string::npos;
    }
    if (!whole) waits.push_back(seconds);
  }
  if (waits.empty()) return std::nullopt;
  std::sort(waits.begin(), waits.end());
  // The lower middle: of two waits, one long may be the first.
  const double typical = waits[(waits.size() - 1) / 2];
  if (typical < kLongerThanAnyStep) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "input-bound, probably: a batch takes {:.0f} s to load{} — longer than a training step "
      "of any model on a GPU, so the GPU waits for each; unless this is the loader's first "
      "batch (its workers starting), which later ones would show",
      typical, waits.size() > 1 ? fmt::format(" (median of {} waits)", waits.size()) : "");
  d.evidence.push_back(tel.cite(tel.lone_waits.back().first));
  d.fixes = fixes::input_bound_cpu();
  d.next = {
      "the loop's step time beside its data time over a few steps after the first, and top "
      "while it loads: workers at 100 % of their cores is the CPU, in D state the storage"};
  return d;
}

// GPUs seen below gpu_low on average: whatever a loader makes alone, this job's GPUs wait.
bool gpus_mostly_idle(const std::optional<Diagnosis>& util, const TelemetryThresholds& th) {
  return util && util->numbers.utilisation && !util->numbers.utilisation->gpus.empty() &&
         util->numbers.utilisation->gpu_util_mean < th.gpu_low;
}

// A `healthy` answer because an exchange costs little ("the compute sets the pace") beside GPUs
// seen mostly idle: the exchange is ruled out, the compute is not what the GPUs show; other
// rules answer.
bool compute_sets_pace_of_idle_gpus(const Diagnosis& d, const std::optional<Diagnosis>& util,
                                    const TelemetryThresholds& th) {
  return d.verdict == Verdict::kHealthy && gpus_mostly_idle(util, th);
}

// Rates alone, every one of a run the paste says reads synthetic data ("fake image and fake
// label", tf_cnn_benchmarks without --data_dir): no input pipeline runs in them, so whatever
// their speed, it is the model's and the framework's.
std::optional<Diagnosis> rates_on_synthetic_data(const Telemetry& tel) {
  // Not where the paste also speaks of its real data (the rates may be those), nor of scaling
  // across GPUs (a synthetic benchmark that scales badly asks about the exchange).
  if (tel.rates.empty() || tel.synthetic_scales || tel.data_parallel) return std::nullopt;
  for (const TelemetryFile& f : tel.files) {
    for (const std::string& line : f.lines) {
      if (line.size() > telemetry::kMaxPastedLineBytes) continue;
      const std::string low = telemetry::lower(line);
      for (const std::string_view w : {"real data", "real dataset", "real image", "actual data",
                                       "scaling", "scale up", "scales"}) {
        if (low.find(w) != std::string::npos) return std::nullopt;
      }
    }
  }
  for (const ThroughputSample& r : tel.rates) {
    if (r.run < 0 || static_cast<size_t>(r.run) >= tel.runs.size() ||
        !tel.runs[static_cast<size_t>(r.run)].synthetic) {
      return std::nullopt;
    }
  }
  Diagnosis d;
  d.verdict = Verdict::kHealthy;
  d.confidence = Confidence::kLow;
  const ThroughputSample& r = tel.rates.back();
  d.summary = fmt::format(
      "the runs read synthetic data ({:.4g} {}/s the last): no input pipeline runs in them, so "
      "their speed is the model's and the framework's, not the input's",
      r.per_second, r.unit);
  d.evidence.push_back(tel.cite(r.origin));
  d.next = {
      "the same job on its real data beside this rate: what the input pipeline costs is the "
      "difference"};
  return d;
}

}  // namespace

namespace {

// Scaling efficiencies the paste states (a table's "8 GPU efficiency" column, a line's "scaling
// efficiency 41.8%") where it gives no runs to measure them from: the lowest against the same
// bar as a measured one. Below it, the exchange is the likely cause (nothing times the wait).
std::optional<Diagnosis> stated_efficiency(const Telemetry& tel, const TelemetryThresholds& th) {
  if (tel.stated_scaling_efficiency.empty()) return std::nullopt;
  const auto low =
      std::min_element(tel.stated_scaling_efficiency.begin(), tel.stated_scaling_efficiency.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto high =
      std::max_element(tel.stated_scaling_efficiency.begin(), tel.stated_scaling_efficiency.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::string stated =
      low->second == high->second
          ? fmt::format("the paste states a scaling efficiency of {:.3g} %", low->second)
          : fmt::format("the paste states scaling efficiencies of {:.3g} to {:.3g} %", low->second,
                        high->second);
  // Of synthetic data (horovod#779's "synthetic - 1 worker 8 gpus", "For synthetic data,
  // scaling efficiency can not hit 90%"): the exchange alone, which cannot wait on the input.
  // Scaling there leaves the job's own loading out; not scaling there is the exchange.
  const bool synthetic =
      tel.synthetic_scales ||
      std::any_of(tel.runs.begin(), tel.runs.end(), [](const RunInfo& r) { return r.synthetic; });
  Diagnosis d;
  d.confidence = Confidence::kLow;
  d.evidence.push_back(tel.cite(low->first));
  if (synthetic && low->second >= 100 * th.scaling_healthy) {
    d.verdict = Verdict::kUnknown;
    d.summary = stated +
                " on synthetic data: the exchange between GPUs keeps up at that scale; the job's "
                "own data, its reading and decoding, is not in them";
    d.next = {"the same runs on the job's own data: their rate against the synthetic one's"};
    return d;
  }
  if (synthetic) {
    d.verdict = Verdict::kCommunicationBound;
    d.summary = fmt::format(
        "{} (under {:.0f} %) on synthetic data, which cannot starve the GPUs: the time goes to "
        "exchanging gradients between them",
        stated, 100 * th.scaling_healthy);
    d.next = {"NCCL_DEBUG=INFO (the transport it uses) and nvidia-smi topo -m"};
    d.fixes = fixes::communication_bound();
    return d;
  }
  if (low->second >= 100 * th.scaling_healthy) {
    d.verdict = Verdict::kHealthy;
    d.summary = stated + ": the job scales (as stated; no runs here to measure it from)";
    d.next = {"the runs' own rates at each scale, and the loop's data time on the real data"};
  } else {
    d.verdict = Verdict::kCommunicationBound;
    d.summary = fmt::format(
        "{} (under {:.0f} %): nothing here times the wait for data, so the exchange between "
        "GPUs is the likely cause, not a proven one",
        stated, 100 * th.scaling_healthy);
    d.next = {
        "the loop's data time per step at each scale: if it grows with the GPUs, the input is "
        "the cause; if not, the interconnect (NCCL_DEBUG=INFO, nvidia-smi topo -m)"};
    d.fixes = fixes::communication_bound();
  }
  return d;
}

}  // namespace

Diagnosis diagnose_telemetry(const Telemetry& tel, const TelemetryThresholds& th) {
  const auto util = diagnose_utilisation(tel, th);
  const auto ranks = diagnose_ranks(tel, th);
  const auto steps = diagnose_steps(tel, th);
  const auto scaling = telemetry::judge_scaling(tel, th);
  const auto memory = telemetry::judge_memory(tel);
  const auto phases = telemetry::judge_phases(tel, th);
  Diagnosis d;
  if (scaling) {
    // Runs at several scales: what people compare when more GPUs did not help.
    d = *scaling;
    if (steps) append(d, *steps);
    if (util) append(d, *util);
  } else if (const auto stated = steps || util ? std::nullopt : stated_efficiency(tel, th)) {
    // Scaling efficiencies the paste states, no runs to measure them from.
    d = *stated;
  } else if (const auto same = steps ? std::nullopt : telemetry::judge_models_at_one_pace(tel)) {
    // Models that differ, steps that do not: what sets their pace is not the model.
    d = *same;
    if (util) append(d, *util);
  } else if (const auto settings = steps ? std::nullopt : telemetry::judge_loader_settings(tel)) {
    // Runs under different loader settings: what people try when they suspect the loader.
    d = *settings;
    if (util) append(d, *util);
  } else if (const auto exchange = steps ? std::nullopt : telemetry::judge_exchange_settings(tel);
             exchange && !compute_sets_pace_of_idle_gpus(*exchange, util, th)) {
    // Runs under different strategies of exchange: what people try when they suspect it.
    d = *exchange;
    if (util) append(d, *util);
  } else if (const auto link = steps ? std::nullopt : telemetry::judge_link_settings(tel);
             link && !compute_sets_pace_of_idle_gpus(*link, util, th)) {
    // Runs with and without a link between the GPUs.
    d = *link;
    if (util) append(d, *util);
  } else if (const auto loader = steps || gpus_mostly_idle(util, th)
                                     ? std::nullopt
                                     : telemetry::judge_loader_against_model(tel)) {
    // The loader timed alone against the model: how much headroom the input has.
    d = *loader;
    if (util) append(d, *util);
  } else if (phases && phases->verdict == Verdict::kCommunicationBound &&
             (!steps || steps->verdict == Verdict::kHealthy)) {
    // The step's own timers: its time goes to the exchange, not to waiting for data.
    d = *phases;
    if (steps) append(d, *steps);
    if (util) append(d, *util);
  } else if (const auto claim =
                 steps && steps->verdict == Verdict::kHealthy
                     ? telemetry::judge_claims(
                           tel, steps->numbers.steps
                                    ? fmt::format("waiting for data {:.0f} % of the time",
                                                  100 * steps->numbers.steps->data_fraction)
                                    : std::string("waiting little for data"))
                     : std::nullopt;
             claim && claim->verdict == Verdict::kCommunicationBound) {
    // Steps that wait little for data, and the person's words that the larger scale is the
    // slower (fastreid#656: one card on each of several machines 66 times slower than one on
    // one machine): the input keeps up where it is timed, so what the larger scale adds, the
    // exchange, is the likely cause.
    d = *claim;
    append(d, *steps);
    if (util) append(d, *util);
    if (ranks) append(d, *ranks);
  } else if (steps) {
    // The loop's own data time measures the wait directly: it decides, the rest supports.
    d = *steps;
    // A wait known only as a bound in the mild band is healthy because the batches' own work
    // fills most of the step; GPUs seen mostly idle say that work is not the GPU's either: the
    // bound decides nothing then.
    if (d.verdict == Verdict::kHealthy && d.numbers.steps && d.numbers.steps->upper_bound &&
        d.numbers.steps->data_fraction >= th.wait.healthy_below && gpus_mostly_idle(util, th)) {
      d.verdict = Verdict::kUnknown;
      d.confidence = Confidence::kLow;
      d.summary = fmt::format(
          "a wait for data of at most {:.0f} % of the step beside GPUs mostly idle ({:.0f} %): "
          "the step's time goes to something neither bound shows — the loop's hooks, the CPU's "
          "own work, or the input after all",
          100 * d.numbers.steps->data_fraction, util->numbers.utilisation->gpu_util_mean);
    }
    refine_with_cpu(d, util, tel);
    if (util) append(d, *util);
    if (ranks) append(d, *ranks);
  } else if (const auto copies = util && util->verdict != Verdict::kUnknown
                                     ? std::nullopt
                                     : telemetry::judge_repeated_rates(tel)) {
    // Processes printing the same point of the loop at different rates: one of them lags.
    d = *copies;
    if (util) append(d, *util);
  } else if (ranks && (ranks->verdict == Verdict::kRankImbalance || !util ||
                       util->verdict == Verdict::kUnknown)) {
    d = *ranks;
    if (util) append(d, *util);
  } else if (const auto full = util && util->verdict == Verdict::kUnknown
                                   ? telemetry::judge_full_loader_queue(tel)
                                   : std::nullopt) {
    // The loader's queue full beside a GPU that one look could not judge (tensorpack's epoch
    // mean of GPUUtil at 75 %): the GPU does not wait for batches.
    d = *full;
    d.confidence = Confidence::kLow;
    append(d, *util);
  } else if (const auto warned = util && util->verdict == Verdict::kUnknown
                                     ? telemetry::judge_loader_warnings(tel)
                                     : std::nullopt) {
    // The trainer's own words that its batches were late beside a GPU that one look could not
    // judge: the words say what the GPU waits on, and an idle GPU confirms them where they come
    // more than once (once may be the queue filling at the start).
    d = *warned;
    if (gpus_mostly_idle(util, th) && tel.loader_warnings.size() >= 2) {
      d.confidence = Confidence::kMedium;
    }
    append(d, *util);
  } else if (util) {
    d = *util;
    if (ranks) append(d, *ranks);
    d.numbers.stats_decided = false;
  } else if (phases) {
    d = *phases;
  } else if (const auto bandwidth = telemetry::judge_bandwidth(tel)) {
    // A collective benchmark: how fast the GPUs exchange, the other half of scaling.
    d = *bandwidth;
  } else if (memory) {
    d = *memory;
  } else if (const auto speedups = telemetry::judge_speedups(tel)) {
    // Speedups at one larger scale, on synthetic data and on the job's own.
    d = *speedups;
  } else if (const auto claim = telemetry::judge_claims(tel)) {
    // Step times or rates of one scale at most, and the person's words comparing two.
    d = *claim;
  } else if (const auto stalled = telemetry::judge_stalled_collectives(tel)) {
    // Ranks waiting in a collective for another, by the framework's own account.
    d = *stalled;
    if (util) append(d, *util);
  } else if (const auto warned = telemetry::judge_loader_warnings(tel)) {
    // The trainer's own words that its batches were late.
    d = *warned;
  } else if (const auto full = telemetry::judge_full_loader_queue(tel)) {
    // The trainer's own queue of ready batches, full.
    d = *full;
  } else if (const auto gpu_time = telemetry::judge_gpu_time_against_wall(tel)) {
    // The GPU's time against the wall clock's, for the same iterations.
    d = *gpu_time;
  } else if (const auto blocked = telemetry::judge_process_states(tel)) {
    // The job's processes waiting in the kernel on storage.
    d = *blocked;
  } else if (const auto timed = telemetry::judge_process_times(tel)) {
    // A shell's `time` of the job's runs: the CPU time each spent against its wall clock.
    d = *timed;
  } else if (const auto transport =
                 tel.spans_machines ? telemetry::judge_nccl_transport(tel) : std::nullopt) {
    // NCCL's own account of the link it exchanges over between the job's machines.
    d = *transport;
  } else if (const auto spikes = waits_that_spike(tel)) {
    // Waits without their steps, a few of them long: the loader's rounds.
    d = *spikes;
  } else if (const auto long_waits = tel.steps.empty() && rates_are_whole_durations(tel)
                                         ? waits_longer_than_any_step(tel)
                                         : std::nullopt) {
    // Waits for one batch longer than a GPU's step of any model takes (beside how long a run
    // or an epoch took, which says nothing of its steps).
    d = *long_waits;
  } else if (const auto swings = telemetry::judge_utilisation_swings(tel)) {
    // The person's words that the GPU computes in bursts, where nothing measured decides.
    d = *swings;
  } else if (!tel.lone_waits.empty() && tel.steps.empty() && tel.rates.empty()) {
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "waits for data without their steps ({} line{}, the longest {:.3g} s): what share of the "
        "step they are, the log does not say",
        tel.lone_waits.size(), tel.lone_waits.size() == 1 ? "" : "s",
        std::max_element(tel.lone_waits.begin(), tel.lone_waits.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; })
            ->second);
    d.next = {"the loop's step (batch) time printed beside its data time"};
  } else if (const auto busy =
                 tel.steps.empty() && tel.rates.empty() ? high_mfu(tel) : std::nullopt) {
    // A trainer's MFU alone.
    d = *busy;
  } else if (const auto said = tel.steps.empty() && tel.rates.empty() ? first_epoch_said_cold(tel)
                                                                      : std::nullopt) {
    d = *said;
  } else if (!tel.steps.empty() || !tel.rates.empty()) {
    // Step times without their wait, or rates: how fast, not why.
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    // Stalls among steady steps and a first epoch that is cold say more than a speed that
    // falls, which says more than a rate or step times alone.
    const auto fall = speed_that_falls(tel);
    // How long a run or an epoch took beside step lines says nothing of the steps: they are
    // judged as steps.
    const bool steps_only =
        tel.rates.empty() || (!tel.steps.empty() && rates_are_whole_durations(tel));
    if (const auto waits = steps_only ? waits_beside_steps(tel, th) : std::nullopt) {
      d = *waits;
    } else if (const auto headed = paces_of_headed_blocks(tel)) {
      d = *headed;
    } else if (fall && !steps_only) {
      d = *fall;
    } else if (const auto cold = steps_only ? first_epoch_cold(tel) : std::nullopt) {
      d = *cold;
    } else if (const auto stalls = steps_only ? steps_that_stall(tel) : std::nullopt) {
      d = *stalls;
    } else if (fall) {
      d = *fall;
    } else if (const auto said = first_epoch_said_cold(tel)) {
      d = *said;
    } else if (const auto feeder = steps_only ? feeder_pace(tel) : std::nullopt) {
      d = *feeder;
    } else if (const auto busy = high_mfu(tel)) {
      d = *busy;
    } else if (const auto steady = steady_speed(tel);
               steady && steady->verdict != Verdict::kUnknown) {
      d = *steady;
    } else if (const auto synthetic = steps_only ? std::nullopt : rates_on_synthetic_data(tel)) {
      d = *synthetic;
    } else if (steady) {
      // Steady through an exchange: the exchange may set the pace (after synthetic data, which
      // says the input does not).
      d = *steady;
    } else if (!steps_only) {
      // The job's rate: of three lines or more like the last (its run, unit, per GPU or in
      // total), the median line's (a last line cut short in the paste, "total_ips : 2", is no
      // rate of the job's); else the last rate.
      const ThroughputSample& last = tel.rates.back();
      std::vector<const ThroughputSample*> alike;
      for (const ThroughputSample& x : tel.rates) {
        if (x.run == last.run && x.unit == last.unit && x.per_gpu == last.per_gpu &&
            x.total == last.total) {
          alike.push_back(&x);
        }
      }
      const ThroughputSample* r = &last;
      std::string of_lines;
      if (alike.size() >= 3) {
        const auto middle = alike.begin() + static_cast<std::ptrdiff_t>(alike.size() / 2);
        std::nth_element(alike.begin(), middle, alike.end(), [](const auto* a, const auto* b) {
          return a->per_second < b->per_second;
        });
        r = *middle;
        of_lines = fmt::format(", the median of {} lines", alike.size());
      }
      // Durations of a run or an epoch are kept as their rates; they are shown as durations.
      const bool duration = telemetry::whole_durations(r->unit);
      d.summary = duration ? fmt::format(
                                 "a duration alone ({:.4g} s {}{}): how long the job ran, not "
                                 "what limits it",
                                 1 / r->per_second, r->unit == "epochs" ? "per epoch" : "for a run",
                                 of_lines)
                           : fmt::format(
                                 "a rate alone ({:.4g} {}/s{}{}): how fast the job runs, not what "
                                 "limits it",
                                 r->per_second, r->unit, r->per_gpu ? " per GPU" : "", of_lines);
      d.evidence.push_back(tel.cite(r->origin));
    } else {
      const StepSample& s = tel.steps.back();
      d.summary = fmt::format(
          "step times only ({:.3g} s per step): the log does not say how much of it waits "
          "for data",
          s.step_seconds);
      d.evidence.push_back(tel.cite(s.origin));
    }
    if (d.next.empty()) {
      d.next = {
          "the loop's data time against its step time (stoker.torch.watch(loader) times a "
          "DataLoader), or the same job on fewer GPUs to compare rates"};
    }
  } else if (!tel.topologies.empty()) {
    const GpuTopology& t = tel.topologies.front();
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    d.evidence.push_back(tel.cite(t.origin));
    d.next = collect_more();
    if (t.pairs > 0 && t.sys_pairs == t.pairs) {
      // Every pair crosses the sockets: gradient exchange between any two GPUs goes through
      // the CPUs' interconnect, the slowest path a machine has.
      d.verdict = Verdict::kCommunicationBound;
      d.summary = fmt::format(
          "a topology only, but a telling one: all {} pairs of the {} GPUs are SYS (through the "
          "CPUs' interconnect, no NVLink, no shared PCIe switch): a multi-GPU job exchanging "
          "gradients on this machine is likely to wait on communication",
          t.pairs, t.gpus);
      d.fixes = fixes::communication_bound();
      d.next = {
          "NCCL_DEBUG=INFO in the job's log (which transport it uses), and the job's "
          "rate on 1 GPU against all of them"};
    } else if (t.pairs > 0 && t.nvlink_pairs == 0 && t.sys_pairs > 0) {
      // No NVLink and some pairs across the sockets: a ring all-reduce runs at its slowest hop,
      // and one SYS hop puts every step's gradient exchange through the CPUs' interconnect.
      d.verdict = Verdict::kCommunicationBound;
      d.summary = fmt::format(
          "a topology only: no NVLink between the {} GPUs and {} of {} pairs SYS (through the "
          "CPUs' interconnect): a ring all-reduce runs at its slowest hop, so gradient exchange "
          "across the sockets is the likely limit of a multi-GPU job here",
          t.gpus, t.sys_pairs, t.pairs);
      d.fixes = fixes::communication_bound();
      d.next = {
          "NCCL_DEBUG=INFO in the job's log (which transport it uses), and the job's "
          "rate on the GPUs of one socket against all of them"};
    } else {
      d.summary = fmt::format(
          "a topology only ({} GPUs, {} of {} pairs over NVLink{}): how the GPUs are connected, "
          "not how the job ran",
          t.gpus, t.nvlink_pairs, t.pairs,
          t.nvlink_pairs == 0 ? "; every pair goes through PCIe or the CPU interconnect" : "");
    }
  } else if (const auto transport = telemetry::judge_nccl_transport(tel)) {
    // NCCL's choice of sockets, in a paste that does not show the job spanning machines.
    d = *transport;
  } else if (const auto profile = std::find_if(
                 tel.files.begin(), tel.files.end(),
                 [](const TelemetryFile& f) { return f.kind == TelemetryKind::kPythonProfiler; });
             profile != tel.files.end()) {
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    d.summary =
        "a Python profile without both a data-loading row (the DataLoader's __next__, a "
        "dataset's __getitem__) and its total (\"N function calls in T seconds\"): how long "
        "some functions took, not what share of the run waited for data";
    d.next = {
        "the whole profile of the training loop, sorted by cumulative time "
        "(python -m cProfile -s cumtime train.py): the DataLoader's __next__ row against the "
        "total"};
  } else if (const auto pairs = telemetry::judge_forward_backward(tel)) {
    // Forward and backward timers alone, in a job not shown exchanging gradients.
    d = *pairs;
  } else if (!tel.few_workers_warnings.empty()) {
    // Lightning's warning alone: a setting that may starve the loop, nothing that shows it does.
    // The training loader's warning first: Lightning 1.x warns of the validation loader's before.
    const auto train =
        std::find_if(tel.few_workers_warnings.begin(), tel.few_workers_warnings.end(),
                     [](const auto& w) { return w.loader.find("train") != std::string::npos; });
    const Telemetry::FewWorkersWarning& w =
        train != tel.few_workers_warnings.end() ? *train : tel.few_workers_warnings.front();
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "PyTorch Lightning warns that {} has few workers (it does so at 2 or fewer{}): a setting "
        "under which decoding and augmentation run in one or two processes, suspect where the "
        "samples are images or audio, but no measurement of a wait{}",
        w.loader.empty() ? "a loader" : "the loader '" + w.loader + "'",
        w.suggested ? fmt::format(", suggesting {} for this machine's CPUs", *w.suggested)
                    : std::string(),
        w.loader.find("train") == std::string::npos && !w.loader.empty()
            ? fmt::format("; and '{}' is not the training loader", w.loader)
            : std::string());
    d.evidence.push_back(tel.cite(w.origin));
    d.next = {
        "the training loop's data time against its step time with num_workers as it is and "
        "raised (Lightning's SimpleProfiler prints train_dataloader_next against "
        "run_training_batch), and nvidia-smi dmon while it trains"};
  } else if (!tel.unplaced.empty()) {
    // Measurements no rule weighs: say what they are, and what would decide.
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    std::map<std::string, int> kinds;
    int64_t cited_line = -1;
    for (const auto& [origin, kind] : tel.unplaced) {
      ++kinds[kind];
      if (origin.line != cited_line && d.evidence.size() < 3) {
        d.evidence.push_back(tel.cite(origin));
        cited_line = origin.line;
      }
    }
    std::string counted;
    for (const auto& [kind, n] : kinds) {
      counted += fmt::format("{}{} {}{}", counted.empty() ? "" : ", ", n, kind, n == 1 ? "" : "s");
    }
    d.summary = fmt::format(
        "the paste's measurements ({}{}) time or rate what stoker cannot set against a step's "
        "wait for data, a GPU's use or another run of the job: how fast something is, not what "
        "limits it",
        counted,
        tel.unplaced.size() >= telemetry::kMaxUnplaced
            ? fmt::format(", the first {}", telemetry::kMaxUnplaced)
            : "");
    d.next = {
        "the training loop's data time against its step time (PyTorch's ImageNet example prints "
        "'Time ... Data ...'; stoker.torch.watch(loader) times any DataLoader), and nvidia-smi "
        "dmon while it trains"};
    if (kinds.size() == 1 && kinds.contains(std::string(telemetry::kDlioZeroUtilisation))) {
      d.summary =
          "DLIO's accelerator utilisation printed as 0 %: a run that took steps and timed none "
          "of them (its statistics were not collected: a failed run, or a DLIO release the "
          "workload's configuration does not match), not one that waited throughout";
      d.next = {
          "the run again with the DLIO release its configuration is written for, so that its "
          "[METRIC] block gives the accelerator utilisation, and top on its reader processes "
          "meanwhile"};
    } else if (kinds.size() == 1 && kinds.contains(std::string(telemetry::kTpuIdleTime))) {
      d.summary =
          "a TPU's idle time without its infeed share: a TPU that waits in infeed for the host's "
          "batches counts as busy, so a low idle time does not say whether the step waits for "
          "input";
      d.next = {
          "the monitor's infeed share (capture_tpu_profile --monitoring_level=2 prints "
          "'Infeed percentage'), or the profiler's input-pipeline analysis ('... % of the total "
          "step time sampled is waiting for input')"};
    }
  } else if (const auto disk = disk_alone(tel)) {
    d = *disk;
  } else {
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    // What was read, though no rule weighs it alone: said, so that the answer is not taken for
    // a paste that was not read.
    std::vector<std::string> read;
    const auto count = [&](size_t n, std::string_view one, std::string_view many) {
      if (n > 0) read.push_back(fmt::format("{} {}", n, n == 1 ? one : many));
    };
    count(tel.mfu.size() + tel.mfu_configurations.size(), "MFU figure", "MFU figures");
    count(tel.model_tflops.size(), "TFLOP/s figure", "TFLOP/s figures");
    count(tel.rates.size(), "rate", "rates");
    count(tel.steps.size(), "step time", "step times");
    count(tel.processes.size(), "GPU process", "GPU processes");
    count(tel.memory.size(), "GPU memory reading", "GPU memory readings");
    count(tel.feeder_batch_seconds.size(), "feeder's batch time", "feeder's batch times");
    if (read.empty()) {
      d.summary = "no samples: the logs hold no GPU, CPU or stoker stats lines";
    } else {
      std::string listed;
      for (const std::string& r : read) listed += (listed.empty() ? "" : ", ") + r;
      d.summary = fmt::format(
          "read {}, but nothing a rule weighs alone: no wait for data against a step, no GPU or "
          "CPU use over time, no run at another scale or setting to compare {} with",
          listed, read.size() == 1 && read[0].starts_with("1 ") ? "it" : "them");
      // The MFU as high_mfu reads it, under its bar.
      if (const auto mfu = weighed_mfu(tel);
          !mfu.empty() && telemetry::median(values_of(mfu)) < kBusyMfu) {
        // The range of every figure read, the warm-up's too.
        std::vector<std::pair<Origin, double>> all = tel.mfu;
        all.insert(all.end(), tel.mfu_configurations.begin(), tel.mfu_configurations.end());
        const auto [least, most] =
            std::minmax_element(all.begin(), all.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
        d.summary += fmt::format(
            " ({} — under the {:.0f} % at which the GPUs compute most of the time — says "
            "nothing of why: a small model, small per-GPU batches, an exchange, or a wait)",
            least->second == most->second
                ? fmt::format("an MFU of {:.2g} %", least->second)
                : fmt::format("MFU figures of {:.2g} to {:.2g} %", least->second, most->second),
            kBusyMfu);
      }
    }
    d.next = collect_more();
  }
  // Where nothing else decides, what the GPU should do with the model: ResNet-50 at a third
  // of its published rate on the paste's GPU.
  if (d.verdict == Verdict::kUnknown) {
    if (auto reference = telemetry::judge_against_reference(tel)) {
      append(*reference, d);
      d = std::move(*reference);
    }
  }
  // Where the measurements decide nothing, the cause the paste's own words state as found (one
  // cause, however often said): what the person answering would take from the same paste.
  const bool rows_guessed = std::any_of(tel.files.begin(), tel.files.end(),
                                        [](const TelemetryFile& f) { return f.gpus_guessed; });
  if (d.verdict == Verdict::kUnknown && !rows_guessed && !tel.stated_causes.empty() &&
      std::all_of(tel.stated_causes.begin(), tel.stated_causes.end(),
                  [&](const auto& c) { return c.verdict == tel.stated_causes.front().verdict; })) {
    const Telemetry::StatedCause& said = tel.stated_causes.front();
    Diagnosis words;
    words.verdict = said.verdict;
    words.confidence = Confidence::kLow;
    words.summary = fmt::format(
        "{}, as the paste says in words: what it measures decides nothing by itself ({})",
        to_string(said.verdict), d.summary);
    words.evidence.push_back(tel.cite(said.origin));
    words.evidence.insert(words.evidence.end(), d.evidence.begin(), d.evidence.end());
    words.next = d.next;
    words.numbers = std::move(d.numbers);
    if (said.verdict == Verdict::kInputBoundCpu || said.verdict == Verdict::kInputBound) {
      words.fixes = fixes::input_bound_cpu();
    } else if (said.verdict == Verdict::kIoBound) {
      words.fixes = fixes::io_bound();
    } else if (said.verdict == Verdict::kCommunicationBound) {
      words.fixes = fixes::communication_bound();
    }
    d = std::move(words);
  }
  // nvidia-smi rows cut out of their tables: which GPU each row is cannot be known, so the
  // utilisation verdict cannot stand.
  if (rows_guessed && !steps && d.numbers.utilisation && d.verdict != Verdict::kUnknown) {
    d.summary =
        "nvidia-smi rows without their GPU rows (grep'd or cut out of the table): " + d.summary +
        ", if all rows are one GPU";
    // Rows that all hold the same memory to the MiB are one GPU's looks (ranks of one job
    // differ by their buffers); otherwise which GPU each row is cannot be known.
    std::set<double> memory_mib;
    bool all_known = true;
    for (const GpuSample& g : tel.gpus) {
      if (!tel.files[static_cast<size_t>(g.origin.file)].gpus_guessed) continue;
      if (g.memory_used_mib) {
        memory_mib.insert(*g.memory_used_mib);
      } else {
        all_known = false;
      }
    }
    if (!(all_known && memory_mib.size() == 1)) {
      d.verdict = Verdict::kUnknown;
      d.fixes.clear();
    }
  }
  if (rows_guessed) {
    d.confidence = Confidence::kLow;
    d.next = collect_more();
  }
  for (const TelemetryNote& note : tel.notes) {
    d.evidence.push_back(note.text);
    d.evidence.push_back(tel.cite(note.origin));
  }
  auto& files = d.numbers.files.emplace();
  for (const TelemetryFile& f : tel.files) {
    files.push_back(TelemetryFileNumbers{telemetry::printable(f.path), to_string(f.kind)});
  }
  return d;
}

Diagnosis diagnose_step_times(const std::vector<double>& step_seconds,
                              const std::vector<double>& data_seconds, const std::string& source) {
  STOKER_CHECK_ARG(step_seconds.size() == data_seconds.size(),
                   "step times: {} steps but {} data times", step_seconds.size(),
                   data_seconds.size());
  Telemetry tel;
  TelemetryFile file;
  file.path = source;
  file.kind = TelemetryKind::kTrainLog;
  for (size_t i = 0; i < step_seconds.size(); ++i) {
    STOKER_CHECK_ARG(
        step_seconds[i] >= 0 && data_seconds[i] >= 0 && data_seconds[i] <= step_seconds[i] + 1e-9,
        "step {}: data time {} s outside the step's {} s", i, data_seconds[i], step_seconds[i]);
    file.lines.push_back(fmt::format("step {}: {:.4f} s, waited {:.4f} s for data", i,
                                     step_seconds[i], data_seconds[i]));
    tel.steps.push_back(StepSample{.origin = {0, static_cast<int64_t>(i) + 1},
                                   .time = static_cast<double>(i),
                                   .step_seconds = step_seconds[i],
                                   .data_seconds = data_seconds[i]});
  }
  tel.files.push_back(std::move(file));
  return diagnose_telemetry(tel);
}

json telemetry_series(const Telemetry& tel) {
  // Dated files share one origin; the others start at their own first sample.
  double t0 = std::numeric_limits<double>::infinity();
  std::vector<double> file_t0(tel.files.size(), std::numeric_limits<double>::infinity());
  const auto note = [&](const Origin& o, double t) {
    if (absolute(tel, o)) t0 = std::min(t0, t);
    file_t0[static_cast<size_t>(o.file)] = std::min(file_t0[static_cast<size_t>(o.file)], t);
  };
  for (const GpuSample& s : tel.gpus) note(s.origin, s.time);
  for (const CpuSample& s : tel.cpus) note(s.origin, s.time);
  const auto rel = [&](const Origin& o, double t) {
    return t - (absolute(tel, o) ? t0 : file_t0[static_cast<size_t>(o.file)]);
  };
  std::map<std::pair<int, int>, json> gpus;
  for (const GpuSample& s : tel.gpus) {
    json& g = gpus[{s.origin.file, s.gpu}];
    if (g.is_null()) {
      g = {{"file", path_of(tel, s.origin.file)},
           {"index", s.gpu},
           {"t", json::array()},
           {"util", json::array()}};
    }
    g["t"].push_back(rel(s.origin, s.time));
    g["util"].push_back(s.util);
  }
  json out = {{"gpus", json::array()},
              {"cpu", {{"t", json::array()}, {"busy", json::array()}, {"iowait", json::array()}}}};
  for (auto& [key, g] : gpus) out["gpus"].push_back(std::move(g));
  for (const CpuSample& s : tel.cpus) {
    if (s.cpu >= 0) continue;
    out["cpu"]["t"].push_back(rel(s.origin, s.time));
    out["cpu"]["busy"].push_back(s.busy);
    out["cpu"]["iowait"].push_back(s.iowait);
  }
  return out;
}

}  // namespace stoker
