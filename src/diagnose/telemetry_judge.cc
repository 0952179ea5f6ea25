// What a person pastes, judged as the people answering in the threads do (telemetry_judge.h):
// one look at the GPUs, runs at different scale, memory without utilisation.
#include "diagnose/telemetry_judge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "diagnose/fixes.h"
#include "diagnose/telemetry_parse.h"
#include "diagnose/telemetry_vocab.h"

namespace stoker::telemetry {

std::string_view line_of(const Telemetry& tel, const Origin& o) {
  const auto& lines = tel.files[static_cast<size_t>(o.file)].lines;
  return o.line >= 1 && static_cast<size_t>(o.line) <= lines.size()
             ? std::string_view(lines[static_cast<size_t>(o.line - 1)])
             : std::string_view();
}

namespace {

// Runs of one job under different loader settings (docs/doctor.md, "Loader settings compared"):
// a rate that moves by a fifth or more with the setting is a loader the steps wait for; under a
// tenth, a loader that keeps up. Against synthetic data, 80 % kept is what a loader that keeps
// up costs at most (copies to the GPU, a collate).
constexpr double kSettingMatters = 1.2;
constexpr double kSettingIrrelevant = 1.1;
constexpr double kSyntheticKept = 0.8;

// A rate as people write it: "5148", "10350", "29.7", "0.323".
std::string rate_text(double v) {
  return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

// "GPU 1", "GPUs 1-7", "GPUs 1, 3 and 5".
std::string gpu_list(const std::vector<const SnapshotGpu*>& gpus) {
  std::vector<int> ids;
  for (const SnapshotGpu* g : gpus) ids.push_back(g->gpu);
  std::sort(ids.begin(), ids.end());
  if (ids.size() == 1) return fmt::format("GPU {}", ids[0]);
  const bool run = ids.back() - ids.front() + 1 == static_cast<int>(ids.size());
  if (run) return fmt::format("GPUs {}-{}", ids.front(), ids.back());
  return fmt::format("GPUs {}", fmt::join(ids, ", "));
}

double mean_util(const std::vector<const SnapshotGpu*>& gpus) {
  double sum = 0;
  for (const SnapshotGpu* g : gpus) sum += g->util;
  return gpus.empty() ? 0 : sum / static_cast<double>(gpus.size());
}

const std::string kDmonWhileTraining =
    "nvidia-smi dmon -s u -d 1 -c 30 > gpu.log while it trains (30 looks, not one): a pattern "
    "that holds for 30 s is the job's shape, not a moment between steps";
// Which process is busy on the host: the loader's workers, or the training loop itself.
const std::string kTopWhileTraining =
    "top -H at the same time: the loader's workers at the top is the input, the main process "
    "alone the training loop's own host work";

}  // namespace

Diagnosis judge_snapshot(const Telemetry& tel, const std::vector<SnapshotGpu>& gpus,
                         const std::optional<CpuView>& cpu, const TelemetryThresholds& th) {
  Diagnosis d;
  d.confidence = Confidence::kLow;
  std::vector<const SnapshotGpu*> all, busy, idle;
  // A GPU busy at one of a few looks computes (the others fell between its steps); one idle at
  // every look does not.
  const auto highest = [](const SnapshotGpu& g) { return std::max(g.util, g.peak); };
  for (const SnapshotGpu& g : gpus) {
    all.push_back(&g);
    if (highest(g) >= th.imbalance_busy) busy.push_back(&g);
    if (highest(g) <= th.imbalance_idle) idle.push_back(&g);
  }
  // A GPU computing between the thresholds beside GPUs with nothing on them (no memory of a
  // job): the job uses that GPU alone, whatever moment of its step the look caught.
  const auto empty = [&](const SnapshotGpu* g) {
    return g->memory_used_mib && *g->memory_used_mib < 256;
  };
  if (busy.empty() && !idle.empty() && std::all_of(idle.begin(), idle.end(), empty)) {
    for (const SnapshotGpu& g : gpus) {
      if (highest(g) > th.imbalance_idle && g.memory_used_mib && *g.memory_used_mib >= 1024) {
        busy.push_back(&g);
      }
    }
  }
  const size_t n = all.size();
  const double mean = mean_util(all);
  const auto holds_job = [&](const SnapshotGpu* g) {
    if (g->memory_used_mib && *g->memory_used_mib >= 1024) return true;
    return std::any_of(tel.processes.begin(), tel.processes.end(), [&](const GpuProcess& p) {
      return p.origin.file == g->file && p.gpu == g->gpu && p.memory_mib.value_or(0) >= 256;
    });
  };
  // Whether the paste shows what the GPUs hold (memory or processes), not only how busy they are.
  const auto memory_seen = [&](const std::vector<const SnapshotGpu*>& which) {
    return std::all_of(which.begin(), which.end(), [&](const SnapshotGpu* g) {
      return g->memory_used_mib.has_value() ||
             std::any_of(tel.processes.begin(), tel.processes.end(), [&](const GpuProcess& p) {
               return p.origin.file == g->file && p.gpu == g->gpu;
             });
    });
  };
  const auto cite = [&](const std::vector<const SnapshotGpu*>& which) {
    for (const SnapshotGpu* g : which) {
      if (d.evidence.size() < 10) d.evidence.push_back(tel.cite(g->origin));
    }
  };
  const std::string look = n == 1 ? "one look at the GPU" : fmt::format("one look at {} GPUs", n);
  // One GPU computes, the others do not.
  if (n >= 2 && !busy.empty() && !idle.empty() && busy.size() + idle.size() == n) {
    d.verdict = Verdict::kRankImbalance;
    const bool idle_hold_job = std::all_of(idle.begin(), idle.end(), holds_job);
    std::vector<const SnapshotGpu*> shown = busy;
    shown.insert(shown.end(), idle.begin(), idle.end());
    cite(shown);
    if (busy.size() == 1) {
      // Medium when the idle GPUs run processes of their own (a multi-process job, one GPU
      // working); one process holding every GPU is also what DataParallel and a framework
      // reserving all visible GPUs look like, and no process table says nothing: low.
      std::set<int64_t> busy_pids;
      for (const GpuProcess& p : tel.processes) {
        if (p.origin.file == busy[0]->file && p.gpu == busy[0]->gpu) busy_pids.insert(p.pid);
      }
      const bool own_processes = std::all_of(idle.begin(), idle.end(), [&](const SnapshotGpu* g) {
        return std::any_of(tel.processes.begin(), tel.processes.end(), [&](const GpuProcess& p) {
          return p.origin.file == g->file && p.gpu == g->gpu && p.pid != 0 &&
                 !busy_pids.contains(p.pid);
        });
      });
      d.confidence = idle_hold_job && own_processes ? Confidence::kMedium : Confidence::kLow;
      // The busy GPU's own process on each idle one with a CUDA context's memory only
      // (deepmd-kit#1218: PID 12238 with 2333 MiB on GPU 0, 189 MiB on GPU 1): one process
      // that opened every visible GPU and computes on one.
      const bool context_only =
          !busy_pids.empty() && std::all_of(idle.begin(), idle.end(), [&](const SnapshotGpu* g) {
            bool seen = false;
            for (const GpuProcess& p : tel.processes) {
              if (p.origin.file != g->file || p.gpu != g->gpu) continue;
              if (!busy_pids.contains(p.pid) || p.memory_mib.value_or(0) >= 256) return false;
              seen = true;
            }
            return seen;
          });
      d.summary = fmt::format(
          "only {} computes ({:.0f} %) while {} {} at {:.0f} % {}: the second scaling failure "
          "if this is a multi-GPU job (every rank on one GPU, unsharded data, or a DataParallel "
          "funnel); innocent if it is a single-GPU job by design{} ({})",
          gpu_list(busy), busy[0]->util, gpu_list(idle), idle.size() == 1 ? "sits" : "sit",
          mean_util(idle),
          idle_hold_job       ? "holding memory"
          : context_only      ? "holding only a context of its process"
          : memory_seen(idle) ? "with no work of the job on them"
                              : "(what they hold not shown)",
          idle_hold_job
              ? ", or a framework that reserves memory on every visible GPU (TensorFlow, JAX)"
          : context_only ? ", which one process opening every visible GPU and computing on one "
                           "looks like (TensorFlow with memory growth on, or a script that "
                           "touches every device)"
                         : "",
          look);
      d.next = {
          "how the job is started: one process per GPU (torchrun --nproc-per-node=N), "
          "CUDA_VISIBLE_DEVICES and the script's device ids; a single-GPU job by design is "
          "not a fault",
          kDmonWhileTraining};
      d.fixes = fixes::rank_imbalance();
      return d;
    }
    // Several GPUs busy, each holding the job, and the idle ones holding no memory at all: no
    // rank runs on those (a rank's CUDA context alone takes hundreds of MiB), so they are not
    // the job's, and the job's own GPUs are all busy.
    if (std::all_of(idle.begin(), idle.end(), empty) &&
        std::all_of(busy.begin(), busy.end(), holds_job)) {
      d.verdict = Verdict::kHealthy;
      d.summary = fmt::format(
          "{} busy ({:.0f} %), each holding the job's memory; {} idle with no memory in use: no "
          "rank runs there, so they are not the job's, and the job's own GPUs keep busy ({})",
          gpu_list(busy), mean_util(busy), gpu_list(idle), look);
      d.next = {kDmonWhileTraining};
      d.fixes.clear();
      return d;
    }
    d.summary = fmt::format(
        "{} at {:.0f} % while {} are busy ({:.0f} %): in a synchronous (DDP) job a busy reading "
        "can be a rank spinning in a collective, waiting for the idle one: a straggling rank "
        "(its input, its node) holds every step back; innocent if the idle GPUs are not part "
        "of the job ({})",
        gpu_list(idle), mean_util(idle), gpu_list(busy), mean_util(busy), look);
    d.next = {kDmonWhileTraining,
              "the loop's step and data time on each rank (which rank waits for data)"};
    d.fixes = fixes::straggler();
    return d;
  }
  // Uneven: the busiest GPU does 1.7x the work of another (GPU 0 of DataParallel gathers
  // the outputs and the loss, and scatters the next batch).
  if (n >= 2) {
    const auto [lo, hi] = std::minmax_element(
        all.begin(), all.end(),
        [](const SnapshotGpu* a, const SnapshotGpu* b) { return a->util < b->util; });
    if ((*hi)->util >= th.gpu_healthy && (*lo)->util <= 0.6 * (*hi)->util) {
      d.verdict = Verdict::kRankImbalance;
      cite(all);
      d.summary = fmt::format(
          "uneven GPUs: GPU {} at {:.0f} % but GPU {} at {:.0f} %: the first does {:.1f}x the "
          "work, the shape of DataParallel (outputs and the loss gathered on one GPU) or of "
          "unequal shares ({})",
          (*hi)->gpu, (*hi)->util, (*lo)->gpu, (*lo)->util,
          (*hi)->util / std::max(1.0, (*lo)->util), look);
      d.next = {kDmonWhileTraining};
      d.fixes = fixes::rank_imbalance();
      return d;
    }
  }
  // Below healthy, the first GPU holding twice the memory of each other one, all holding the
  // job: DataParallel's funnel (the replicas' outputs, the loss and the next batch all pass
  // through GPU 0; the others wait for it each step).
  if (n >= 2 && mean < th.gpu_healthy && memory_seen(all) &&
      std::all_of(all.begin(), all.end(), holds_job)) {
    const SnapshotGpu* first = *std::min_element(
        all.begin(), all.end(), [](const auto* a, const auto* b) { return a->gpu < b->gpu; });
    // Busier than the others (an idle or hung job's 0 % beside 0 % is no funnel), and one
    // process on it: DDP ranks that also opened a context on GPU 0 put their own processes
    // there.
    std::vector<double> other_utils;
    double others_mib = 0;  // the most memory another GPU states (each does where funnel holds)
    for (const SnapshotGpu* g : all) {
      if (g == first) continue;
      other_utils.push_back(g->util);
      others_mib = std::max(others_mib, g->memory_used_mib.value_or(0));
    }
    std::set<int64_t> first_pids;
    for (const GpuProcess& p : tel.processes) {
      if (p.origin.file == first->file && p.gpu == first->gpu) first_pids.insert(p.pid);
    }
    const bool funnel =
        first->util > th.imbalance_idle && first->util >= 1.2 * median(other_utils) &&
        first_pids.size() <= 1 && first->memory_used_mib &&
        std::all_of(all.begin(), all.end(), [&](const SnapshotGpu* g) {
          return g == first ||
                 (g->memory_used_mib && 2 * *g->memory_used_mib <= *first->memory_used_mib &&
                  g->util <= first->util);
        });
    if (funnel) {
      d.verdict = Verdict::kRankImbalance;
      cite(all);
      d.summary = fmt::format(
          "GPU {} holds {:.0f} MiB against at most {:.0f} MiB on the others, at {:.0f} % "
          "utilisation on average: the shape of DataParallel, whose first GPU gathers every "
          "replica's outputs and the loss while the others wait; innocent if the job puts "
          "more of its own on GPU {} by design ({})",
          first->gpu, *first->memory_used_mib, others_mib, mean, first->gpu, look);
      d.next = {kDmonWhileTraining,
                "whether the script wraps the model in nn.DataParallel (one process for all "
                "GPUs) rather than DistributedDataParallel under torchrun"};
      d.fixes = fixes::rank_imbalance();
      return d;
    }
  }
  if (mean >= th.gpu_healthy) {
    double power = 0, cap = 0;
    for (const SnapshotGpu* g : all) {
      if (g->power_w && g->power_cap_w) power += *g->power_w, cap += *g->power_cap_w;
    }
    cite(all);
    if (cap > 0 && power < 0.35 * cap) {
      d.verdict = Verdict::kCommunicationBound;
      d.summary = fmt::format(
          "the GPUs report {:.0f} % but draw {:.0f} % of their power cap: kernels waiting on "
          "each other (a collective that does not complete), not training ({})",
          mean, 100 * power / cap, look);
      d.next = {kDmonWhileTraining, "NCCL_DEBUG=INFO in the job's log"};
      d.fixes = fixes::communication_bound();
      return d;
    }
    d.verdict = Verdict::kHealthy;
    d.summary = fmt::format(
        "{} busy: mean utilisation {:.0f} %: the GPUs, not the input, set the pace ({}; a "
        "series would be surer)",
        n == 1 ? "the GPU is" : fmt::format("all {} GPUs are", n), mean, look);
    d.next = {kDmonWhileTraining};
    return d;
  }
  if (mean < th.gpu_low && cpu) {
    cite(all);
    if (cpu->busy >= th.cpu_pinned && cpu->one_process) {
      // One core saturated, the rest of the machine unsaid: one process does the host's work
      // and the GPU waits on it.
      d.verdict = Verdict::kInputBoundCpu;
      d.summary = fmt::format(
          "input-bound on CPU, probably: {} at {:.0f} % while one core is {:.0f} % busy: one "
          "process does the host's work — a loader in the main process (num_workers=0, a "
          "generator without workers) or the loop's own Python — and the GPU waits on it ({})",
          n == 1 ? "the GPU" : "the GPUs", mean, cpu->busy, look);
      d.next = {kDmonWhileTraining, kTopWhileTraining};
      d.fixes = fixes::input_bound_cpu();
      return d;
    }
    if (cpu->busy >= th.cpu_pinned) {
      d.verdict = Verdict::kInputBoundCpu;
      d.summary = fmt::format(
          "input-bound on CPU: the GPUs at {:.0f} % while the CPUs are {:.0f} % busy: decoding "
          "and augmentation cannot keep up ({})",
          mean, cpu->busy, look);
      d.next = {kDmonWhileTraining, "mpstat -P ALL 1 60 > cpu.log at the same time"};
      d.fixes = fixes::input_bound_cpu();
      return d;
    }
    if (cpu->iowait >= th.iowait_high && cpu->busy < th.cpu_low) {
      d.verdict = Verdict::kIoBound;
      d.summary = fmt::format(
          "io-bound: the GPUs at {:.0f} % with iowait {:.0f} % and the CPUs only {:.0f} % busy: "
          "the job waits on storage ({})",
          mean, cpu->iowait, cpu->busy, look);
      d.next = {kDmonWhileTraining, "iostat -x 1 60 > disk.log at the same time"};
      d.fixes = fixes::io_bound();
      return d;
    }
  }
  d.verdict = Verdict::kUnknown;
  cite(all);
  if (mean < th.gpu_low && !tel.steps.empty()) {
    // The loop's step lines show it running, so the idle look is no hang: the GPUs wait most
    // of each step, for their input or for the loop's own work on the host.
    std::vector<double> steps;
    for (const StepSample& s : tel.steps) steps.push_back(s.step_seconds);
    d.verdict = Verdict::kInputBound;
    d.summary = fmt::format(
        "input-bound, probably: {} at {:.0f} % while the loop's steps run ({} step line{}, {:.3g} "
        "s per step): the GPUs wait most of each step, for their input or for the loop's own "
        "work on the host",
        n == 1 ? "the GPU" : fmt::format("all {} GPUs", n), mean, steps.size(),
        steps.size() == 1 ? "" : "s", median(steps));
    d.evidence.push_back(tel.cite(tel.steps.back().origin));
    d.next = {
        "the training loop's data time against its step time (stoker.torch.watch(loader) "
        "times any DataLoader): it says whether the wait is the input",
        kDmonWhileTraining};
    d.fixes = fixes::input_bound_cpu();
    return d;
  }
  if (mean < th.gpu_low) {
    d.summary = fmt::format(
        "{} at {:.0f} %{}: waiting on something — its input, a hang, or a moment between steps; "
        "one look cannot tell which",
        n == 1 ? "the GPU" : fmt::format("all {} GPUs", n), mean,
        cpu ? fmt::format(" with the CPUs {:.0f} % busy", cpu->busy) : std::string());
    d.next = {
        "the training loop's data time against its step time (PyTorch's ImageNet example "
        "prints 'Time ... Data ...'; stoker.torch.watch(loader) times any DataLoader): a step "
        "that waits for data is input-bound",
        kDmonWhileTraining};
  } else if (cpu && cpu->busy >= th.cpu_pinned && !cpu->one_process) {
    // Half busy beside saturated CPUs: the CPU side cannot do more, and the GPU waits the
    // other half. (Its own work on the host, not the input, may be what saturates them.)
    d.verdict = Verdict::kInputBoundCpu;
    d.summary = fmt::format(
        "input-bound on CPU, probably: {} at {:.0f} % while the CPUs are {:.0f} % busy: the "
        "CPUs can do no more, and the GPU waits for them the rest of the time ({})",
        n == 1 ? "the GPU" : "the GPUs", mean, cpu->busy, look);
    d.next = {kDmonWhileTraining, kTopWhileTraining};
    d.fixes = fixes::input_bound_cpu();
  } else {
    d.summary = fmt::format(
        "GPUs between busy and idle (mean {:.0f} %): {} cannot say what limits "
        "them",
        mean, look);
    d.next = collect_more();
  }
  return d;
}

namespace {

struct RunMeasure {
  const RunInfo* info = nullptr;
  int scale = 0;
  double per_second = 0;
  std::string unit;
  std::optional<double> data_fraction;
  Origin cited;
  bool per_gpu = false;  // per_second is a rate per GPU times the scale
};

// A run's measure as the paste gave it: the duration of its work ("epochs", "runs") in seconds,
// else its rate, counted in batches where `as_batches` (step times, a loop's iterations).
std::string measure_text(const std::string& unit, double per_second, bool as_batches) {
  if (unit == "speedup") return fmt::format("{:.3g}x", per_second);
  return whole_durations(unit)
             ? fmt::format("{} s", rate_text(1 / per_second))
             : fmt::format("{} {}/s", rate_text(per_second), as_batches ? "batches" : unit);
}

// Each run's rate samples and step samples (indices into Telemetry::rates and ::steps), built
// once: a table of many rows is as many runs, and each must not read every sample.
struct RunSamples {
  std::vector<std::vector<size_t>> rates, steps;
  explicit RunSamples(const Telemetry& tel) : rates(tel.runs.size()), steps(tel.runs.size()) {
    for (size_t k = 0; k < tel.rates.size(); ++k) {
      const auto r = static_cast<size_t>(tel.rates[k].run);
      if (r < rates.size()) rates[r].push_back(k);
    }
    for (size_t k = 0; k < tel.steps.size(); ++k) {
      const auto r = static_cast<size_t>(tel.steps[k].run);
      if (r < steps.size()) steps[r].push_back(k);
    }
  }
};

// A run's rate of `unit` over all its GPUs: a "total" rate, else per-GPU rates times the GPUs,
// else its plain rate lines; for "steps", its step times (scale / step: the batch per GPU
// fixed). nullopt when the run has none.
std::optional<RunMeasure> measure_run(const Telemetry& tel, const RunSamples& samples, size_t run,
                                      int scale, const std::string& unit) {
  RunMeasure m;
  m.info = &tel.runs[run];
  m.scale = scale;
  m.unit = unit;
  std::vector<double> total, per_gpu, plain, steps;
  Origin total_at, per_gpu_at, plain_at, steps_at;
  for (const size_t k : samples.rates[run]) {
    const ThroughputSample& r = tel.rates[k];
    if (r.unit != unit) continue;
    if (r.total) {
      total.push_back(r.per_second), total_at = r.origin;
    } else if (r.per_gpu) {
      per_gpu.push_back(r.per_second), per_gpu_at = r.origin;
    } else {
      plain.push_back(r.per_second), plain_at = r.origin;
    }
  }
  double step = 0, data = 0;
  for (const size_t k : samples.steps[run]) {
    const StepSample& s = tel.steps[k];
    if (s.average || s.step_seconds <= 0) continue;
    steps.push_back(s.step_seconds), steps_at = s.origin;
    if (s.has_data) step += s.step_seconds, data += s.data_seconds;
  }
  if (step > 0) m.data_fraction = data / step;
  if (unit == "steps") {
    if (steps.empty()) return std::nullopt;
    m.per_second = scale / median(steps);
    m.cited = steps_at;
  } else if (!total.empty()) {
    m.per_second = median(total), m.cited = total_at;
  } else if (!per_gpu.empty()) {
    // Per GPU times the GPUs (by nodes: the GPUs per node taken as equal in every run).
    m.per_second = median(per_gpu) * scale, m.cited = per_gpu_at, m.per_gpu = true;
  } else if (!plain.empty() && unit == "iterations") {
    // A loop's iterations a second are its steps, each GPU's batch in each (DDP's processes):
    // read like step times.
    m.per_second = median(plain) * scale, m.cited = plain_at;
  } else if (!plain.empty()) {
    m.per_second = median(plain), m.cited = plain_at;
  } else {
    return std::nullopt;
  }
  return m;
}

// The measures of `runs` (Telemetry::runs indices, each with its scale) in the first unit
// (images, then samples, tokens, the model's TFLOP/s per GPU, iterations, step times,
// durations, then speedups over a reference run) in which `enough` accepts them; empty when no
// unit does. Runs without that unit are left out.
template <typename Enough>
std::vector<RunMeasure> in_first_shared_unit(const Telemetry& tel, const RunSamples& samples,
                                             const std::vector<std::pair<size_t, int>>& runs,
                                             Enough enough) {
  std::vector<RunMeasure> measured;
  for (const char* unit : {"images", "samples", "tokens", "TFLOP", "iterations", "steps", "epochs",
                           "runs", "speedup"}) {
    measured.clear();
    for (const auto& [r, scale] : runs) {
      if (auto m = measure_run(tel, samples, r, scale, unit)) measured.push_back(std::move(*m));
    }
    if (enough(measured)) return measured;
  }
  return {};
}

// The runs of one series (group) at two scales or more, in the first unit they all have;
// empty when none. `group_runs`: the group's Telemetry::runs indices.
std::vector<RunMeasure> series_runs(const Telemetry& tel, const RunSamples& samples,
                                    const std::vector<size_t>& group_runs, bool by_gpus) {
  std::vector<std::pair<size_t, int>> scaled;
  for (const size_t r : group_runs) {
    const auto scale = by_gpus ? tel.runs[r].gpus : tel.runs[r].nodes;
    if (scale && *scale >= 1) scaled.emplace_back(r, *scale);
  }
  return in_first_shared_unit(tel, samples, scaled, [](const std::vector<RunMeasure>& m) {
    std::set<int> scales;
    for (const RunMeasure& x : m) scales.insert(x.scale);
    return scales.size() >= 2;
  });
}

Diagnosis judge_series(const Telemetry& tel, std::vector<RunMeasure> runs, bool by_gpus,
                       const TelemetryThresholds& th);

}  // namespace

namespace {

// Series of one job's durations at the same scales (a table's rows: 1 and 2 GPUs at batch 4,
// 8, ..., 512) whose scaling falls as the work of a run shrinks: the shortest runs scale worst.
// An exchange per step costs less per sample as batches grow and steps get fewer, so it cannot
// be why; a cost each run pays whole (its start, the loader's workers, validation), which more
// GPUs do not divide, can — for a loader, its per-epoch setup or a per-image floor. `worst`
// (a communication-bound answer) becomes that, when at least 3 series agree (ranks of time and
// efficiency in the same order for all but one pair of neighbours).
void fixed_cost_per_run(std::vector<ScalingNumbers> series, Diagnosis& worst) {
  std::erase_if(series, [&](const ScalingNumbers& s) {
    return (s.unit != "epochs" && s.unit != "runs") || s.runs.size() < 2 ||
           s.runs.front().scale != worst.numbers.scaling->runs.front().scale ||
           s.runs.back().scale != worst.numbers.scaling->runs.back().scale;
  });
  if (series.size() < 3) return;
  // Longest work first (its rate at the smallest scale the lowest).
  std::sort(series.begin(), series.end(), [](const ScalingNumbers& a, const ScalingNumbers& b) {
    return a.runs.front().per_second < b.runs.front().per_second;
  });
  int out_of_order = 0;
  for (size_t k = 1; k < series.size(); ++k) {
    out_of_order += series[k].efficiency > series[k - 1].efficiency;
  }
  const ScalingNumbers& longest = series.front();
  const ScalingNumbers& shortest = series.back();
  if (out_of_order > 1 || longest.efficiency - shortest.efficiency < 0.15) return;
  const auto took = [](const ScalingNumbers& s) { return 1 / s.runs.front().per_second; };
  worst.verdict = Verdict::kInputBound;
  worst.confidence = Confidence::kLow;
  worst.summary = fmt::format(
      "scaling falls as the runs get shorter: {:.0f} % where one run takes {:.3g} s, {:.0f} % "
      "where it takes {:.3g} s: a cost each run pays whole (its loader's start, a per-image "
      "floor, validation) that more GPUs do not divide, not the exchange of each step, which "
      "costs less per sample as batches grow",
      100 * longest.efficiency, took(longest), 100 * shortest.efficiency, took(shortest));
  worst.next = {
      "the loop's data time against its step time at the largest batch (stoker.torch.watch("
      "loader) times any DataLoader), or one epoch on synthetic data"};
  worst.fixes = fixes::input_bound_cpu();
}

}  // namespace

namespace {

// DLIO's accelerator utilisation at two accelerator counts or more (a table's rows). DLIO
// emulates each step's compute for a fixed time and exchanges no gradients, so each
// accelerator's samples a second follow its AU and the rest of its time is the wait for input:
// the wait at the largest count decides as a step log's does (WaitThresholds), and so does a
// wait that grows by 10 points or more from the smallest count; a CPU idle share of 15 % or
// less beside it (the CPUs 85 % busy or more, a snapshot's "pinned") says what the input waits
// on.
std::optional<Diagnosis> judge_accelerator_utilisation(const Telemetry& tel,
                                                       const TelemetryThresholds& th) {
  if (tel.accelerator_utilisation.empty()) return std::nullopt;
  // Each workload's rows by accelerator count; the series that waits most at its largest count
  // is the answer.
  std::map<std::string, std::vector<const Telemetry::UtilisationAtScale*>> series;
  for (const auto& u : tel.accelerator_utilisation) series[u.series].push_back(&u);
  const Telemetry::UtilisationAtScale* small = nullptr;
  const Telemetry::UtilisationAtScale* large = nullptr;
  std::vector<const Telemetry::UtilisationAtScale*> shown;
  for (auto& [name, rows] : series) {
    std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
      return a->accelerators < b->accelerators;
    });
    if (rows.front()->accelerators == rows.back()->accelerators) continue;
    if (large == nullptr || rows.back()->percent < large->percent) {
      small = rows.front(), large = rows.back(), shown = rows;
    }
  }
  const auto accelerators = [](int n) {
    return fmt::format("{} accelerator{}", n, n == 1 ? "" : "s");
  };
  Diagnosis d;
  d.confidence = Confidence::kMedium;
  if (large == nullptr) {
    // One count only (a table whose other rows failed): the wait of the row that waits most,
    // judged as the [METRIC] line's.
    const auto worst =
        std::min_element(tel.accelerator_utilisation.begin(), tel.accelerator_utilisation.end(),
                         [](const auto& a, const auto& b) { return a.percent < b.percent; });
    const double wait = 1 - worst->percent / 100;
    d.verdict = wait < th.wait.healthy_below ? Verdict::kHealthy : Verdict::kInputBound;
    d.summary = fmt::format(
        "DLIO's accelerator utilisation {:.1f} % on {}, waiting for input {:.0f} % of the time "
        "(DLIO emulates each step's compute and exchanges no gradients): {}",
        worst->percent, accelerators(worst->accelerators), 100 - worst->percent,
        d.verdict == Verdict::kHealthy
            ? "the input keeps up"
            : fmt::format("input-bound{}", *mildly(wait, th.wait) ? ", mildly" : ""));
    d.evidence.push_back(tel.cite(worst->origin));
    if (d.verdict != Verdict::kHealthy) d.fixes = fixes::input_bound_cpu();
    return d;
  }
  const double a = 1 - small->percent / 100, b = 1 - large->percent / 100;
  for (const auto* u : shown) {
    d.evidence.push_back(fmt::format(
        "{}: utilisation {:.1f} %, waiting for data {:.0f} % of the time{}",
        accelerators(u->accelerators), u->percent, 100 - u->percent,
        u->cpu_idle ? fmt::format(", CPUs idle {:.0f} %", *u->cpu_idle) : std::string()));
    d.evidence.push_back(tel.cite(u->origin));
  }
  const std::string falls = fmt::format(
      "DLIO's accelerator utilisation {} from {:.1f} % on {} to {:.1f} % on {} ({:.0f} % scaling "
      "efficiency: DLIO emulates each step's compute for a fixed time and exchanges no "
      "gradients, so the rest of its time, {:.0f} % -> {:.0f} %, is the wait for its input)",
      large->percent < small->percent ? "falls" : "goes", small->percent,
      accelerators(small->accelerators), large->percent, accelerators(large->accelerators),
      100 * large->percent / std::max(small->percent, 1e-9), 100 - small->percent,
      100 - large->percent);
  if (b - a < 0.1 && b < th.wait.healthy_below) {
    d.verdict = Verdict::kHealthy;
    d.summary = falls + ": the input keeps up at every count";
    return d;
  }
  const bool cpus_pinned = large->cpu_idle && *large->cpu_idle <= 15;
  d.verdict = cpus_pinned ? Verdict::kInputBoundCpu : Verdict::kInputBound;
  d.summary = fmt::format(
      "{}: the input pipeline does not keep up{}{}", falls,
      b - a >= 0.1 ? " with more accelerators"
                   : fmt::format(", already on {}", accelerators(small->accelerators)),
      cpus_pinned ? fmt::format("; the CPUs are {:.0f} % idle at {}: the processes that read and "
                                "decode the samples have no cores left",
                                *large->cpu_idle, large->accelerators)
                  : std::string());
  d.fixes = fixes::input_bound_cpu();
  if (!cpus_pinned) {
    d.next = {
        "the CPUs' load (top, mpstat) and the disks' (iostat -x) during the largest run: cores "
        "at 100 % are decoding the input, a disk at its rated rate or busy is the storage"};
  }
  return d;
}

}  // namespace

std::optional<Diagnosis> judge_scaling(const Telemetry& tel, const TelemetryThresholds& th) {
  if (auto utilisation = judge_accelerator_utilisation(tel, th)) return utilisation;
  if (tel.runs.size() < 2) return std::nullopt;
  // Scale by GPUs when runs state them, else by nodes. Several series (two models, a table's
  // columns) are judged apart; the one that scales worst is the answer, the others evidence.
  std::map<int, std::vector<size_t>> groups;  // group -> its runs
  for (size_t r = 0; r < tel.runs.size(); ++r) groups[tel.runs[r].group].push_back(r);
  const RunSamples samples(tel);
  for (const bool by_gpus : {true, false}) {
    std::optional<Diagnosis> worst;
    std::vector<std::string> others;
    std::vector<std::vector<RunMeasure>> series;
    // A series read twice (a table's rows as lines and as a table: the same scales at the
    // same measures) is one series.
    std::set<std::vector<std::tuple<int, double, std::string>>> seen;
    for (const auto& [g, group_runs] : groups) {
      if (auto runs = series_runs(tel, samples, group_runs, by_gpus); !runs.empty()) {
        std::vector<std::tuple<int, double, std::string>> key;
        for (const RunMeasure& m : runs) key.emplace_back(m.scale, m.per_second, m.unit);
        std::sort(key.begin(), key.end());
        if (seen.insert(std::move(key)).second) series.push_back(std::move(runs));
      }
    }
    // A rate states what each run did; a duration is read as a rate only by taking the work as
    // the same at every scale, which a table beside rates often belies (a batch grown with the
    // GPUs and the same step count): with rates, the durations are left out.
    const auto duration = [](const std::vector<RunMeasure>& runs) {
      return whole_durations(runs.front().unit);
    };
    if (!std::all_of(series.begin(), series.end(), duration)) std::erase_if(series, duration);
    std::vector<ScalingNumbers> judged;
    for (std::vector<RunMeasure>& runs : series) {
      Diagnosis d = judge_series(tel, std::move(runs), by_gpus, th);
      judged.push_back(*d.numbers.scaling);
      if (!worst || d.numbers.scaling->efficiency < worst->numbers.scaling->efficiency) {
        if (worst) others.push_back(worst->summary);
        worst = std::move(d);
      } else {
        others.push_back(d.summary);
      }
    }
    if (!worst) continue;
    // Series of different models scale with their compute per step: a heavier model hides a
    // per-step exchange behind more of it, so that short runs scale worst points to the
    // exchange there, not to a cost each run pays.
    std::set<std::string> models;
    for (const RunInfo& r : tel.runs) {
      if (!r.model.empty()) models.insert(r.model);
    }
    // Another series that reads as the answer does (two columns alike at the scales the
    // summary quotes) is not shown again.
    std::set<std::string> shown = {worst->summary};
    if (worst->verdict == Verdict::kCommunicationBound && models.size() < 2) {
      fixed_cost_per_run(judged, *worst);
    }
    for (const std::string& o : others) {
      if (shown.insert(o).second) worst->evidence.push_back("another series: " + o);
    }
    return worst;
  }
  return std::nullopt;
}

namespace {

Diagnosis judge_series(const Telemetry& tel, std::vector<RunMeasure> runs, bool by_gpus,
                       const TelemetryThresholds& th) {
  {
    const std::string unit = runs.front().unit;
    std::stable_sort(runs.begin(), runs.end(),
                     [](const RunMeasure& a, const RunMeasure& b) { return a.scale < b.scale; });
    // Step times that fall at every larger scale, three scales or more, time a step whose work
    // is divided among the GPUs (the global batch fixed), not one whose batch per GPU is fixed:
    // each step the same work. Two scales are as likely a warm-up or a changed batch, and a
    // paste stating its batch per GPU says which.
    const auto step_of = [](const RunMeasure& m) { return m.scale / m.per_second; };
    // Steps and iterations are counted in each GPU's batches (a run's steps times its GPUs).
    const bool batches = unit == "steps" || unit == "iterations";
    bool divided = batches && !tel.batch_per_gpu_stated;
    std::set<int> scales;
    for (size_t k = 0; k < runs.size(); ++k) {
      scales.insert(runs[k].scale);
      if (k > 0 && runs[k].scale > runs[k - 1].scale &&
          !(step_of(runs[k]) <= 0.9 * step_of(runs[k - 1]))) {
        divided = false;
      }
    }
    // Divided, too, where reading each GPU's batch as fixed would make the largest run more
    // than 1.2x as efficient per GPU as the smallest (no data-parallel job gains so much by
    // adding GPUs), over two scales or more (yolact#32's 0.66 s on one GPU and 0.50 s on four,
    // 0.55-0.57 s between).
    const bool superlinear = batches && !tel.batch_per_gpu_stated && scales.size() >= 2 &&
                             (runs.back().per_second / runs.back().scale) >
                                 1.2 * (runs.front().per_second / runs.front().scale);
    // The person's words that the larger run is the slower, beside step times that fall less
    // than the GPUs grow: a slower job, so each step is the same work at both scales (a
    // per-GPU batch would make the larger run the faster one).
    const bool said_slower =
        batches && !tel.batch_per_gpu_stated &&
        runs.back().per_second > runs.front().per_second &&  // read so, the larger is faster
        std::any_of(tel.claims.begin(), tel.claims.end(),
                    [](const ScalingClaim& c) { return c.larger_is_slower && !c.unchanged; }) &&
        std::none_of(tel.claims.begin(), tel.claims.end(),
                     [](const ScalingClaim& c) { return !c.larger_is_slower; });
    // An efficiency the paste states for its two scales, which one reading gives (within 3
    // points) and the other does not, says which reading is the person's.
    std::optional<bool> stated_divided;
    if (batches && scales.size() == 2 && !tel.stated_scaling_efficiency.empty()) {
      const double kept = 100 * (runs.back().per_second / runs.back().scale) /
                          (runs.front().per_second / runs.front().scale);
      const double split = kept * runs.front().scale / runs.back().scale;
      const double said = tel.stated_scaling_efficiency.back().second;
      if (std::abs(said - split) <= 3 && std::abs(said - kept) > 3) stated_divided = true;
      if (std::abs(said - kept) <= 3 && std::abs(said - split) > 3) stated_divided = false;
    }
    divided =
        stated_divided.value_or((divided && scales.size() >= 3) || superlinear || said_slower);
    if (divided) {
      for (RunMeasure& m : runs) m.per_second /= m.scale;
    }
    const RunMeasure& small = runs.front();
    const RunMeasure& large = runs.back();
    // Runs counted in iterations time the same steps at each scale, each GPU's batch in every
    // step: the larger run does its GPUs' times the work, so its efficiency is its speed's.
    const bool same_steps = tel.run_in_iterations && unit == "runs";
    const double efficiency =
        same_steps ? large.per_second / small.per_second
                   : (large.per_second / large.scale) / (small.per_second / small.scale);
    Diagnosis d;
    // That the iterations are the same and each GPU's batch too is the trainers' way, not
    // something the paste shows.
    d.confidence = same_steps ? Confidence::kLow : Confidence::kMedium;
    ScalingNumbers& n = d.numbers.scaling.emplace();
    n.scale_unit = by_gpus ? "gpus" : "nodes";
    n.unit = unit;
    n.efficiency = efficiency;
    const char* what = by_gpus ? "GPU" : "node";
    // Durations of the same work ("epochs", "runs") are shown as the durations they were.
    const bool durations = whole_durations(unit);
    // Rates per GPU compared by nodes are shown per GPU: their product with the nodes is no
    // rate the job had (the GPUs per node unknown).
    const bool shown_per_gpu =
        !by_gpus &&
        std::all_of(runs.begin(), runs.end(), [](const RunMeasure& m) { return m.per_gpu; });
    const auto measure = [&](const RunMeasure& m) {
      return shown_per_gpu ? measure_text(unit, m.per_second / m.scale, batches) + " per GPU"
                           : measure_text(unit, m.per_second, batches);
    };
    for (const RunMeasure& m : runs) {
      n.runs.push_back(ScalingRun{.source = printable(m.info->source),
                                  .line = m.info->line,
                                  .scale = m.scale,
                                  .per_second = m.per_second,
                                  .data_fraction = m.data_fraction});
      d.evidence.push_back(fmt::format(
          "{} {}{}: {}{}", m.scale, what, m.scale == 1 ? "" : "s", measure(m),
          m.data_fraction
              ? fmt::format(", waiting for data {:.0f} % of each step", 100 * *m.data_fraction)
              : std::string()));
      d.evidence.push_back(tel.cite(m.cited));
    }
    // A duration that grows with the GPUs may be each GPU's own share of work as large as the
    // single GPU's (a batch per GPU, a benchmark's per-device input): its efficiency then is
    // the small run's duration over the large one's.
    const std::string per_gpu_work =
        same_steps ? fmt::format(
                         ", each run the same iterations of a batch on every {}: the larger "
                         "does {:.3g}x the work",
                         what, static_cast<double>(large.scale) / small.scale)
        : durations && unit == "runs" && large.per_second <= small.per_second
            ? fmt::format(
                  ", if both runs did the same work; {:.0f} % if each {} did as much "
                  "work as the smaller run",
                  100 * large.per_second / small.per_second, what)
            : std::string();
    const std::string rates = fmt::format(
        "{} -> {} {}s: {} -> {}{}, {:.0f} % scaling efficiency (the rate per {} kept{}{})",
        small.scale, large.scale, what, measure(small), measure(large),
        !durations             ? ""
        : unit == "epochs"     ? " for the same epoch"
        : per_gpu_work.empty() ? " for the same work"
                               : "",
        100 * efficiency, shown_per_gpu ? "GPU" : what,
        stated_divided && batches
            ? fmt::format(", from {} read as the paste's own {:.3g} % reads them: {}",
                          unit == "steps" ? "step times" : "iterations a second",
                          tel.stated_scaling_efficiency.back().second,
                          *stated_divided ? "each step the same work, divided among them"
                                          : "each GPU's batch the same in both runs")
        : !divided && batches
            ? fmt::format(", from {}: if each GPU's batch is the same in both runs",
                          unit == "steps" ? "step times" : "iterations a second")
        : divided && said_slower && !superlinear
            ? fmt::format(", from {} of a larger run the paste calls the slower: each step the "
                          "same work, divided among them",
                          unit == "steps" ? "step times" : "iterations a second")
        : divided ? fmt::format(", from {} that {}: each step the same work, divided among them",
                                unit == "steps" ? "step times" : "iterations a second",
                                superlinear       ? "each GPU's batch kept would make "
                                                    "better than linear"
                                : unit == "steps" ? "fall with the GPUs"
                                                  : "rise with the GPUs")
                  : "",
        per_gpu_work);
    if (efficiency >= th.scaling_healthy) {
      d.verdict = Verdict::kHealthy;
      d.summary = rates + ": the job scales";
      if (same_steps) {
        d.next = {
            "the time of one iteration at each scale as the trainer's log prints it (and its "
            "batch per GPU): about the same time says each GPU added does as much"};
      }
      return d;
    }
    const auto& a = small.data_fraction;
    const auto& b = large.data_fraction;
    if (a && b && (*b - *a >= 0.1 || *b >= th.wait.dominant)) {
      d.verdict = Verdict::kInputBound;
      d.summary = fmt::format(
          "{}; the wait for data grows from {:.0f} % to {:.0f} % of each step: the input "
          "pipeline does not keep up with more GPUs",
          rates, 100 * *a, 100 * *b);
      d.fixes = fixes::input_bound_cpu();
      return d;
    }
    d.verdict = Verdict::kCommunicationBound;
    if (a && b) {
      d.summary = fmt::format(
          "{} while the wait for data stays at {:.0f} -> {:.0f} % of each step: the time goes "
          "to exchanging gradients (or synchronising) between {}s",
          rates, 100 * *a, 100 * *b, what);
    } else if (tel.synthetic_scales && !small.info->synthetic && !large.info->synthetic) {
      d.verdict = Verdict::kInputBound;
      d.summary = fmt::format(
          "{} on the job's data, while the paste says the same job scales on synthetic data: "
          "what its own data adds is the loading, which does not keep up with more GPUs",
          rates);
      d.next = {
          "the loop's data time per step at each scale, and the CPUs' load (top) while the "
          "larger run trains: decoding (CPU) or reading (storage)"};
      d.fixes = fixes::input_bound_cpu();
      return d;
    } else if (small.info->synthetic || large.info->synthetic) {
      d.summary = fmt::format(
          "{} on synthetic data, which cannot starve the GPUs: the time goes to exchanging "
          "gradients between {}s",
          rates, what);
    } else {
      d.confidence = Confidence::kLow;
      d.summary = fmt::format(
          "{}: the logs do not time the wait for data, so communication between {}s is the "
          "likely cause, not a proven one",
          rates, what);
      d.next = {
          "the loop's data time per step in both runs: if it grows with the GPUs, the "
          "input is the cause; if not, the interconnect (NCCL_DEBUG=INFO, nvidia-smi topo "
          "-m, the link between nodes)"};
    }
    d.fixes = fixes::communication_bound();
    return d;
  }
}

// What ResNet-50 trains at on one GPU, images/s, at 224 px with fp32 (TF32 convolutions on
// Ampere and later, PyTorch's default), batch 64-256, on synthetic data — rounded down:
// TensorFlow's published benchmarks (K80 52, P100 219), Lambda's (1080 Ti 209, 2080 Ti 294),
// NVIDIA's DeepLearningExamples (V100 ~360-390, A100 TF32 ~800+). A job at a third of it or
// less loses two thirds of the GPU to something other than its arithmetic.
struct ReferenceRate {
  std::string_view gpu;   // as written in a paste, lower case, without "tesla"/"geforce"
  std::string_view name;  // as NVIDIA writes it
  double images_per_second;
};
constexpr ReferenceRate kResNet50Reference[] = {{"k80", "K80", 50},
                                                {"p100", "P100", 200},
                                                {"v100", "V100", 350},
                                                {"t4", "T4", 80},
                                                {"a100", "A100", 700},
                                                {"h100", "H100", 1000},
                                                {"1080 ti", "1080 Ti", 190},
                                                {"1080ti", "1080 Ti", 190},
                                                {"2080 ti", "2080 Ti", 270},
                                                {"2080ti", "2080 Ti", 270},
                                                {"rtx 3090", "RTX 3090", 350},
                                                {"rtx3090", "RTX 3090", 350}};

// The paste's words that put a ResNet-50's rate off the reference: another task or input size
// (a detector's backbone, video clips, 512 px), no arithmetic to compare (synthetic data is the
// reference's own setting, inference and batch 1 another), or a fraction of the GPU (MIG).
bool off_the_reference(std::string_view low) {
  for (const std::string_view w :
       {"detection", "detector", "segmentation", "rcnn",         "r-cnn",         "retinanet",
        "yolo",      "deeplab",  "fpn",          "detr",         "keypoint",      "inference",
        "predict",   "evaluat",  "batch size 1", "batch_size=1", "batch size: 1", "bs=1",
        "frames",    "clip",     "video",        "tsm",          "slowfast",      "mig",
        "1g.",       "2g.",      "3g."}) {
    // Anywhere, not as whole words: "mig" in "migrate" or "clip" in "clipping" declines too,
    // the cautious side.
    if (low.find(w) != std::string_view::npos) return true;
  }
  if (says_synthetic_data(low)) return true;  // the reference reads real data
  // An input size other than 224 ("512x512", "384x384").
  for (size_t x = low.find('x'); x != std::string_view::npos; x = low.find('x', x + 1)) {
    if (x >= 3 && x + 3 < low.size() && is_digit(low[x - 1]) && is_digit(low[x + 1])) {
      size_t b = x;
      while (b > 0 && is_digit(low[b - 1])) --b;
      const auto side = parse_index(low.substr(b, x - b));
      if (side && *side >= 64 && *side != 224 && *side <= 4096) return true;
    }
  }
  return false;
}

// Whether `low` (a lower-case line) names the GPU `gpu` as a word: not inside another ("t4x",
// "gt4"), a number ("[3090/5005]"), a path, a label ("t4=0.4") or a model's name
// ("bert-t4"; "tesla-v100", "nvidia-a100", "dgx-a100" are GPUs); "3090 ti" is another GPU than
// "3090".
bool names_gpu(std::string_view low, std::string_view gpu) {
  const auto inside = [&](size_t k) {
    return is_alpha(low[k]) || is_digit(low[k]) || low[k] == '/' || low[k] == '[' ||
           low[k] == '.' || low[k] == '_';
  };
  for (size_t at = low.find(gpu); at != std::string_view::npos; at = low.find(gpu, at + 1)) {
    const size_t end = at + gpu.size();
    // A count glued on is no other word: "8xa100", "a100x8".
    const bool count_before = at >= 2 && low[at - 1] == 'x' && is_digit(low[at - 2]);
    const bool count_after = end + 1 < low.size() && low[end] == 'x' && is_digit(low[end + 1]);
    if ((at > 0 && inside(at - 1) && !count_before) ||
        (end < low.size() && inside(end) && !count_after)) {
      continue;
    }
    if (end < low.size() && low[end] == '=') continue;  // "t4=0.4": a timer's label
    if (at > 0 && low[at - 1] == '-') {
      const std::string_view before = low.substr(0, at);
      if (!before.ends_with("tesla-") && !before.ends_with("nvidia-") &&
          !before.ends_with("dgx-") && !before.ends_with("geforce-")) {
        continue;
      }
    }
    const std::string_view rest = low.substr(end);
    if (rest.starts_with(" ti") && (rest.size() == 3 || !is_alpha(rest[3]))) continue;
    return true;
  }
  return false;
}

// Dense BF16/FP16 tensor-core peaks, TFLOP/s, from NVIDIA's data sheets: the figure MFU is
// measured against (nanoGPT, Megatron, torchtitan use the same ones). Where a GPU comes in
// several forms (the H100's PCIe card makes 756), the fastest: a share of it is a lower bound.
struct PeakTflops {
  std::string_view gpu;  // as written in a paste, lower case
  std::string_view name;
  double tflops;
};
constexpr PeakTflops kPeakTflops[] = {
    {"v100", "V100", 125},        {"a100", "A100", 312},        {"a800", "A800", 312},
    {"h100", "H100", 989},        {"h800", "H800", 989},        {"h200", "H200", 989},
    {"a10g", "A10G", 70},         {"l40s", "L40S", 362},        {"rtx 4090", "RTX 4090", 165},
    {"rtx4090", "RTX 4090", 165}, {"rtx 3090", "RTX 3090", 71}, {"rtx3090", "RTX 3090", 71},
    {"a6000", "RTX A6000", 155}};

// Accelerators whose peak the table does not hold (or that are no NVIDIA GPU): a paste that
// names one of them beside a GPU of the table may be about either.
constexpr std::string_view kOtherAccelerators[] = {
    "tpu",  "mi300", "mi300x", "mi250", "mi250x", "mi210", "gaudi", "gaudi2", "trainium",
    "ipu",  "t4",    "a10",    "a30",   "a40",    "l40",   "l4",    "h20",    "gh200",
    "b200", "gb200", "p100",   "k80",   "p40",    "v100s", "titan", "2080",   "1080",
    "3080", "4080",  "a5000",  "a4000", "mps",    "m1",    "m2",    "3090 ti"};

}  // namespace

std::optional<GpuPeak> named_gpu_peak(const Telemetry& tel) {
  std::set<const PeakTflops*> named;
  for (const TelemetryFile& f : tel.files) {
    for (const std::string& line : f.lines) {
      if (line.size() > kMaxPastedLineBytes) continue;
      const std::string low = lower(line);
      for (const PeakTflops& p : kPeakTflops) {
        if (names_gpu(low, p.gpu)) named.insert(&p);
      }
      for (const std::string_view other : kOtherAccelerators) {
        if (names_gpu(low, other)) return std::nullopt;
      }
    }
  }
  std::set<std::string_view> names;
  for (const PeakTflops* p : named) names.insert(p->name);
  if (names.size() != 1) return std::nullopt;
  return GpuPeak{std::string((*named.begin())->name), (*named.begin())->tflops};
}

std::optional<double> named_model_billions(const Telemetry& tel) {
  std::set<double> sizes;
  for (const TelemetryFile& f : tel.files) {
    for (const std::string& line : f.lines) {
      if (line.size() > kMaxPastedLineBytes) continue;
      const std::string low = lower(line);
      // Words, by their stems: "generated", "decoding", "Qwen2MoeForCausalLM", "JetMoE",
      // "LoraConfig" — not "LlamaDecoderLayer". LoRA trains a few adapters: its backward skips
      // the weights' gradients (about 4 FLOPs per parameter, not 6).
      for (const std::string& w : alnum_words(low, false)) {
        const bool other =
            w.starts_with("generat") || (w.starts_with("decod") && !w.starts_with("decoder")) ||
            w.find("moe") != std::string::npos || w.starts_with("lora") || w.starts_with("qlora") ||
            w.starts_with("peft") || w.starts_with("inferenc") || w.starts_with("serving") ||
            w.starts_with("vllm") || w.starts_with("prefill") || w.starts_with("mixtral") ||
            w == "experts";
        if (other) return std::nullopt;
      }
      const ModelSizes named = model_sizes_named(low);
      if (named.active) return std::nullopt;
      sizes.insert(named.billions.begin(), named.billions.end());
    }
  }
  if (sizes.size() != 1) return std::nullopt;
  return *sizes.begin();
}

std::optional<Diagnosis> judge_against_reference(const Telemetry& tel) {
  if (tel.rates.empty()) return std::nullopt;
  bool resnet50 = false;
  std::set<std::string_view> gpus;
  for (const TelemetryFile& f : tel.files) {
    for (const std::string& line : f.lines) {
      if (line.size() > kMaxPastedLineBytes) continue;
      const std::string low = lower(line);
      for (const std::string_view w : {"resnet50", "resnet-50", "resnet 50", "resnet_50"}) {
        resnet50 = resnet50 || low.find(w) != std::string::npos;
      }
      if (off_the_reference(low)) return std::nullopt;
      for (const ReferenceRate& r : kResNet50Reference) {
        if (names_gpu(low, r.gpu)) gpus.insert(r.name);
      }
    }
  }
  if (!resnet50 || gpus.size() != 1) return std::nullopt;
  const ReferenceRate& ref =
      *std::find_if(std::begin(kResNet50Reference), std::end(kResNet50Reference),
                    [&](const ReferenceRate& r) { return r.name == *gpus.begin(); });
  // The fastest rate the paste states per GPU. A rate is divided among GPUs only when it says
  // it is the job's ("total images/sec") or its own line names them ("8 GPUs: 800 images/sec");
  // otherwise it may be one rank's (torchrun's ranks print their own), so it is taken as
  // one GPU's: an upper bound either way. Rates of an evaluation are not training's.
  const ThroughputSample* best = nullptr;
  double best_per_gpu = 0;
  for (const ThroughputSample& r : tel.rates) {
    if (r.unit != "images" && r.unit != "samples") continue;
    const std::string low = lower(line_of(tel, r.origin));
    if (low.find("val") != std::string::npos || low.find("eval") != std::string::npos ||
        low.find("test") != std::string::npos) {
      continue;
    }
    double per_gpu = r.per_second;
    const std::optional<int> on_line = gpu_count_of(low);
    const std::optional<int> count = r.total ? r.gpus : on_line;
    if (!r.per_gpu && low.find("rank") == std::string::npos && count && *count > 1) {
      per_gpu /= *count;
    }
    if (best == nullptr || per_gpu > best_per_gpu) best = &r, best_per_gpu = per_gpu;
  }
  if (best == nullptr || best_per_gpu * 3 > ref.images_per_second) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "input-bound, probably: {} {}/s per GPU at most, where {} {} trains ResNet-50 at about "
      "{:.0f} images/s (published benchmarks, 224 px, fp32): {:.0f} % of what the GPU can do, "
      "so it waits for something other than its arithmetic, most often its input",
      rate_text(best_per_gpu), best->unit,
      ref.name.front() == 'A' || ref.name.front() == 'H' || ref.name.front() == 'R' ? "an" : "a",
      ref.name, ref.images_per_second, 100 * best_per_gpu / ref.images_per_second);
  d.evidence.push_back(tel.cite(best->origin));
  d.fixes = fixes::input_bound_cpu();
  d.next = {
      "the loop's data time against its step time, or the same job on synthetic data "
      "(tf_cnn_benchmarks without --data_dir, or a DataLoader of torch.randn batches): at the "
      "published rate, the input is what was missing"};
  return d;
}

// A loader alone has the CPUs to itself; beside the training it shares them with the main
// process, so it must make a fifth more than the model takes to keep up in the job.
constexpr double kLoaderMargin = 1.2;
std::optional<Diagnosis> judge_loader_against_model(const Telemetry& tel) {
  if (tel.loader_against_model.empty()) return std::nullopt;
  const Telemetry::LoaderAgainstModel& l = tel.loader_against_model.back();
  if (l.loader_per_second <= 0 || l.model_per_second <= 0) return std::nullopt;
  const double ratio = l.loader_per_second / l.model_per_second;
  const std::string unit = l.unit == "iterations" ? "batches" : l.unit;
  Diagnosis d;
  d.confidence = Confidence::kMedium;
  d.evidence.push_back(fmt::format("the loader alone: {} {}/s; the model it feeds: {} {}/s",
                                   rate_text(l.loader_per_second), unit,
                                   rate_text(l.model_per_second), unit));
  d.evidence.push_back(tel.cite(l.origin));
  if (ratio >= kLoaderMargin) {
    d.verdict = Verdict::kHealthy;
    d.summary = fmt::format(
        "the loader makes {:.1f}x what the model takes ({} against {} {}/s): the model's "
        "compute sets the pace, not the input",
        ratio, rate_text(l.loader_per_second), rate_text(l.model_per_second), unit);
    d.next = {
        "the training's own data time per step: the loader beside the model shares its "
        "CPUs"};
    return d;
  }
  d.verdict = Verdict::kInputBound;
  d.summary = fmt::format(
      "input-bound: the loader alone makes {} {}/s, {} what the model takes ({} {}/s), "
      "so the model waits for its batches",
      rate_text(l.loader_per_second), unit,
      ratio < 1 ? fmt::format("{:.2f}x", ratio) : std::string("barely more than"),
      rate_text(l.model_per_second), unit);
  d.fixes = fixes::input_bound_cpu();
  d.next = {
      "top -H while the loader runs alone: its workers at 100 % of their cores is the "
      "CPU, waiting in D state the storage"};
  return d;
}

namespace {

// Whether every run that states its GPUs states the same count: runs compared at one scale.
bool runs_at_one_scale(const Telemetry& tel) {
  std::optional<int> scale;
  for (const RunInfo& r : tel.runs) {
    if (r.gpus && scale && *r.gpus != *scale) return false;
    if (r.gpus) scale = r.gpus;
  }
  return true;
}

// A run labelled by its loader: a setting of it, where its data is read, or synthetic data.
bool loader_labelled(const RunInfo& r) {
  return !r.loader_setting.empty() || !r.storage.empty() || r.synthetic;
}

}  // namespace

std::optional<Diagnosis> judge_exchange_settings(const Telemetry& tel) {
  // The runs compared, all at one scale, none labelled by its loader, two strategies at least.
  if (!runs_at_one_scale(tel) || std::any_of(tel.runs.begin(), tel.runs.end(), loader_labelled)) {
    return std::nullopt;
  }
  std::set<std::string> strategies;
  for (const RunInfo& r : tel.runs) {
    if (!r.exchange_setting.empty()) strategies.insert(r.exchange_setting);
  }
  if (strategies.size() < 2) return std::nullopt;
  std::vector<std::pair<size_t, int>> all;
  for (size_t r = 0; r < tel.runs.size(); ++r) {
    if (!tel.runs[r].exchange_setting.empty()) all.emplace_back(r, 1);
  }
  const std::vector<RunMeasure> runs = in_first_shared_unit(
      tel, RunSamples(tel), all, [](const std::vector<RunMeasure>& m) { return m.size() >= 2; });
  // One measure per strategy: the median of its runs'.
  std::map<std::string, std::vector<double>> rates;
  std::map<std::string, Origin> cited;
  for (const RunMeasure& m : runs) {
    rates[m.info->exchange_setting].push_back(m.per_second);
    cited.emplace(m.info->exchange_setting, m.cited);
  }
  if (rates.size() < 2) return std::nullopt;
  std::string slowest, fastest;
  std::map<std::string, double> rate;
  for (const auto& [name, r] : rates) {
    rate[name] = median(r);
    if (slowest.empty() || rate[name] < rate[slowest]) slowest = name;
    if (fastest.empty() || rate[name] > rate[fastest]) fastest = name;
  }
  const std::string unit = runs.front().unit;
  const auto measure = [&](const std::string& name) {
    return measure_text(unit, rate[name], unit == "steps");
  };
  Diagnosis d;
  d.confidence = Confidence::kLow;
  d.next = {
      "a profile of one step under each (torch.profiler): the time in NCCL all-gather and "
      "reduce-scatter against the model's kernels"};
  const double gain = rate[fastest] / rate[slowest];
  if (gain >= kExchangeMatters) {
    d.verdict = Verdict::kCommunicationBound;
    for (const std::string& name : {slowest, fastest}) {
      d.evidence.push_back(fmt::format("{}: {}", name, measure(name)));
      d.evidence.push_back(tel.cite(cited.at(name)));
    }
    d.summary = fmt::format(
        "the same job on the same GPUs runs {:.2g}x faster under {} ({}) than under {} ({}): how "
        "the GPUs exchange gradients and parameters sets its pace, not the input (a strategy "
        "that also offloads to the CPU or recomputes is slower for that too)",
        gain, fastest, measure(fastest), slowest, measure(slowest));
    d.fixes = fixes::communication_bound();
    return d;
  }
  // How much of the model each strategy shards, and so exchanges each step beyond DDP's
  // all-reduce of the gradients: the optimizer state (ZeRO-1), the gradients too (ZeRO-2,
  // FSDP's SHARD_GRAD_OP), the parameters too, gathered again for the forward and the backward
  // (ZeRO-3, FSDP's full sharding, its default). -1: a library or backend, no rank.
  const auto sharded = [](const std::string& name) {
    if (name == "ddp" || name == "no_shard" || name == "zero-0") return 0;
    if (name == "zero-1") return 1;
    if (name == "zero-2" || name == "shard_grad_op") return 2;
    if (name == "zero-3" || name == "full_shard" || name == "hybrid_shard" || name == "fsdp") {
      return 3;
    }
    return -1;
  };
  std::string most, least;
  for (const auto& [name, r] : rate) {
    const int s = sharded(name);
    if (s < 0) return std::nullopt;
    if (most.empty() || s > sharded(most) || (s == sharded(most) && r < rate[most])) most = name;
    if (least.empty() || s < sharded(least) || (s == sharded(least) && r > rate[least])) {
      least = name;
    }
  }
  if (sharded(most) == sharded(least)) return std::nullopt;
  const double cost = rate[least] / rate[most];
  for (const std::string& name : {most, least}) {
    d.evidence.push_back(fmt::format("{}: {}", name, measure(name)));
    d.evidence.push_back(tel.cite(cited.at(name)));
  }
  if (cost >= kExchangeExposed) {
    d.verdict = Verdict::kCommunicationBound;
    d.summary = fmt::format(
        "the same job on the same GPUs runs {:.2g}x slower under {} ({}), which shards more of "
        "the model and so exchanges more each step, than under {} ({}): the exchange is not "
        "hidden behind the compute (a strategy that also offloads to the CPU or recomputes is "
        "slower for that too)",
        cost, most, measure(most), least, measure(least));
    d.fixes = fixes::communication_bound();
    return d;
  }
  d.verdict = Verdict::kHealthy;
  d.summary = fmt::format(
      "the same job on the same GPUs runs under {} ({}) {} its pace under {} ({}), though {} "
      "shards more of the model and so exchanges more each step: the extra exchange hides "
      "behind the compute, which sets the pace",
      most, measure(most),
      cost > 1 ? fmt::format("within {:.0f} % of", 100 * (cost - 1)) : std::string("at or above"),
      least, measure(least), most);
  return d;
}

std::optional<Diagnosis> judge_link_settings(const Telemetry& tel) {
  if (!runs_at_one_scale(tel) || std::any_of(tel.runs.begin(), tel.runs.end(), loader_labelled)) {
    return std::nullopt;
  }
  std::vector<std::pair<size_t, int>> labelled;
  for (size_t r = 0; r < tel.runs.size(); ++r) {
    if (!tel.runs[r].link_setting.empty()) labelled.emplace_back(r, 1);
  }
  const std::vector<RunMeasure> runs =
      in_first_shared_unit(tel, RunSamples(tel), labelled,
                           [](const std::vector<RunMeasure>& m) { return m.size() >= 2; });
  // The median rate of each strategy's runs with the link and without it.
  std::map<std::pair<std::string, std::string>, std::vector<double>> rates;
  std::map<std::pair<std::string, std::string>, Origin> cited;
  for (const RunMeasure& m : runs) {
    const std::pair key{m.info->exchange_setting, m.info->link_setting};
    rates[key].push_back(m.per_second);
    cited.emplace(key, m.cited);
  }
  for (const auto& [key, on_rates] : rates) {
    const auto& [strategy, link] = key;
    if (link.starts_with("no ")) continue;
    const auto off = rates.find({strategy, "no " + link});
    if (off == rates.end()) continue;
    const double with = median(on_rates), without = median(off->second);
    const double cost = with / without;
    if (cost < 1 / kExchangeExposed) return std::nullopt;  // faster without the link: not it
    const std::string unit = runs.front().unit;
    const auto measure = [&](double per_second) {
      return measure_text(unit, per_second, unit == "steps");
    };
    const std::string name = link == "nvlink"       ? "NVLink"
                             : link == "infiniband" ? "InfiniBand"
                                                    : "P2P";
    Diagnosis d;
    d.evidence.push_back(fmt::format("with {}: {}", name, measure(with)));
    d.evidence.push_back(tel.cite(cited.at(key)));
    d.evidence.push_back(fmt::format("without {}: {}", name, measure(without)));
    d.evidence.push_back(tel.cite(cited.at(off->first)));
    d.next = {
        "nccl-tests' all_reduce_perf both ways (NCCL_P2P_DISABLE=1 for the path without): the "
        "bus bandwidth each link gives the exchange"};
    if (cost >= kExchangeExposed) {
      d.verdict = Verdict::kCommunicationBound;
      d.confidence = Confidence::kMedium;
      d.summary = fmt::format(
          "the same job{} runs {:.2g}x slower without {} ({}) than with it ({}): only the "
          "exchange between the GPUs crosses that link, so the exchange sets the pace",
          strategy.empty() ? "" : fmt::format(" under {}", strategy), cost, name, measure(without),
          measure(with));
      d.fixes = fixes::communication_bound();
      return d;
    }
    d.verdict = Verdict::kHealthy;
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "the same job{} runs within {:.0f} % without {} ({}) of its pace with it ({}): the "
        "exchange between the GPUs hides behind the compute, which sets the pace",
        strategy.empty() ? "" : fmt::format(" under {}", strategy), 100 * std::max(0.0, cost - 1),
        name, measure(without), measure(with));
    return d;
  }
  return std::nullopt;
}

namespace {

// Whether a line of the paste names storage read over a network or from a spinning disk (S3,
// NFS, an HDD): looked for only by the judgements it decides, not on every line of every log.
bool paste_names_remote_storage(const Telemetry& tel) {
  for (const TelemetryFile& f : tel.files) {
    for (const std::string& line : f.lines) {
      if (names_remote_storage(line)) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<Diagnosis> judge_loader_settings(const Telemetry& tel) {
  // The runs compared, all at one scale: at least one labelled by its loader.
  if (!runs_at_one_scale(tel) || std::none_of(tel.runs.begin(), tel.runs.end(), loader_labelled)) {
    return std::nullopt;
  }
  // The first unit two runs or more have; runs without it are passed over.
  std::vector<std::pair<size_t, int>> all;
  for (size_t r = 0; r < tel.runs.size(); ++r) all.emplace_back(r, 1);
  const std::vector<RunMeasure> runs = in_first_shared_unit(
      tel, RunSamples(tel), all, [](const std::vector<RunMeasure>& m) { return m.size() >= 2; });
  if (runs.empty()) return std::nullopt;
  const auto label = [](const RunMeasure& m) {
    const std::string& rest = m.info->loader_setting;
    const std::string& where = m.info->storage;
    if (where.empty()) return rest.empty() ? std::string("the run without a setting named") : rest;
    return rest.empty() ? where : fmt::format("{}, {}", rest, where);
  };
  const bool storage_table = std::any_of(
      runs.begin(), runs.end(), [](const RunMeasure& m) { return !m.info->storage.empty(); });
  // One measure per setting: the median of its runs' (a setting seen twice is one setting).
  struct Setting {
    std::string label;
    bool synthetic = false;
    std::string rest, storage;  // the loader setting (or the row's other cells), the storage
    std::optional<int> threads;
    bool compute_threads = false;
    std::optional<int> workers;
    std::vector<double> rates;
    Origin cited;
    double per_second = 0;
  };
  std::vector<Setting> settings;
  for (const RunMeasure& m : runs) {
    auto it = std::find_if(settings.begin(), settings.end(),
                           [&](const Setting& x) { return x.label == label(m); });
    if (it == settings.end()) {
      settings.push_back(Setting{label(m),
                                 m.info->synthetic,
                                 m.info->loader_setting,
                                 m.info->storage,
                                 m.info->loader_threads,
                                 m.info->compute_threads,
                                 m.info->loader_workers,
                                 {},
                                 m.cited,
                                 0});
      it = std::prev(settings.end());
    }
    it->rates.push_back(m.per_second);
    it->synthetic = it->synthetic || m.info->synthetic;
  }
  if (settings.size() < 2) return std::nullopt;
  for (Setting& x : settings) x.per_second = median(x.rates);
  const std::string unit = runs.front().unit;
  const auto measure = [&](const Setting& x) {
    return measure_text(unit, x.per_second, unit == "steps");
  };
  const Setting* slowest = nullptr;
  const Setting* fastest = nullptr;
  const Setting* synthetic = nullptr;
  for (const Setting& x : settings) {
    if (x.synthetic) {
      if (synthetic == nullptr || x.per_second > synthetic->per_second) synthetic = &x;
      continue;
    }
    // The first of the slowest and the last of the fastest: two settings, even at one pace.
    if (slowest == nullptr || x.per_second < slowest->per_second) slowest = &x;
    if (fastest == nullptr || x.per_second >= fastest->per_second) fastest = &x;
  }
  if (fastest == nullptr) return std::nullopt;  // synthetic runs only: nothing loads
  Diagnosis d;
  // The settings compared, the slowest, the fastest and synthetic data first (five at most).
  std::vector<const Setting*> shown;
  const auto show = [&](const Setting* x) {
    if (x != nullptr && shown.size() < 5 &&
        std::find(shown.begin(), shown.end(), x) == shown.end()) {
      shown.push_back(x);
    }
  };
  show(slowest);
  show(fastest);
  show(synthetic);
  for (const Setting& x : settings) show(&x);
  for (const Setting* x : shown) {
    d.evidence.push_back(fmt::format("{}: {}", x->label, measure(*x)));
    d.evidence.push_back(tel.cite(x->cited));
  }
  const double gain = fastest->per_second / slowest->per_second;
  // Against the model fed without loading: what the loader costs at its best setting.
  const std::string ceiling =
      synthetic == nullptr
          ? std::string()
          : fmt::format(
                "; on synthetic data (no loading) {}, of which the best setting reaches "
                "{:.0f} %",
                measure(*synthetic), 100 * fastest->per_second / synthetic->per_second);
  if (storage_table && slowest != fastest) {
    // Storage and something else changed together (a model, a batch size): no comparison of
    // either. The same storage in both: a comparison of loader settings only where both rows
    // name one.
    if (slowest->storage != fastest->storage && slowest->rest != fastest->rest) return {};
    // A run that names neither storage nor a setting (another table's row, rikai#468's) says
    // nothing of where its data was read: no comparison of storage either. (Neither is
    // synthetic: those are set apart above.)
    if (slowest->storage != fastest->storage &&
        ((slowest->storage.empty() && slowest->rest.empty()) ||
         (fastest->storage.empty() && fastest->rest.empty()))) {
      return {};
    }
    if (slowest->storage == fastest->storage &&
        (!loader_setting_of(slowest->rest) || !loader_setting_of(fastest->rest))) {
      return {};
    }
  }
  if (slowest != fastest && gain >= kSettingMatters) {
    // Where or how the files are read (NFS or local SSD, a cache on or off, a FUSE mount's read
    // mode) makes the same model faster: its steps waited on reads. More workers, kept alive or
    // pinning memory do: its steps waited on the loader, and what the settings add is CPU
    // processes working for it.
    const bool storage = slowest->storage != fastest->storage;
    // The loader's threads alone changed (its workers the same). More of a loader's threads
    // faster: they overlap waits, on reads above all (a thread decoding in Python holds the
    // GIL), so a paste that names storage read over a network or from a disk (S3, NFS, an HDD)
    // waited on it, and one that does not may have waited on either. More threads of CPU work
    // faster (OMP_NUM_THREADS, a decoder's, tf.data's map): that work set the pace. Fewer of
    // either faster: threads oversubscribed the CPUs (OMP_NUM_THREADS against the workers).
    if (!storage && slowest->threads && fastest->threads &&
        *slowest->threads != *fastest->threads && slowest->workers == fastest->workers) {
      const bool more_faster = *fastest->threads > *slowest->threads;
      const bool compute = slowest->compute_threads || fastest->compute_threads;
      const bool reads = more_faster && !compute && paste_names_remote_storage(tel);
      d.verdict = !more_faster || compute ? Verdict::kInputBoundCpu
                  : reads                 ? Verdict::kIoBound
                                          : Verdict::kInputBound;
      d.confidence = d.verdict == Verdict::kInputBound ? Confidence::kLow : Confidence::kMedium;
      d.summary = fmt::format(
          "the rate follows the {}threads: {} with {}, {} with {} ({:.2g}x){}: {}",
          compute ? "" : "loader's ", measure(*slowest), slowest->label, measure(*fastest),
          fastest->label, gain, ceiling,
          !more_faster ? "more threads than the CPUs run at once slow the CPU work"
          : compute    ? "the CPU work spread over more threads ran faster, so it set the pace"
          : reads      ? "more threads hide the latency of the reads the steps waited on"
                       : "at the slower setting the steps wait for the loader (threads "
                         "overlap reads more than decoding)");
      d.fixes = d.verdict == Verdict::kInputBoundCpu ? fixes::input_bound_cpu() : fixes::io_bound();
      if (d.verdict == Verdict::kInputBound) {
        d.next = {
            "the CPUs while it loads (mpstat -P ALL 1 60): busy means decoding, idle with iowait "
            "or a remote store means reads"};
      }
      return d;
    }
    // A cache turned on or grown, and no medium named anywhere in the paste: a cache of files
    // saves their reads, one of decoded samples (mmcv's, OTX's) their decoding too, and the
    // paste does not say which.
    // (A cold page cache against a warm one is the disk's reads: "cold cache", "drop_caches".)
    // Where the slower row names no file medium (a technique column's "Baseline" beside
    // "Caching + Prefetching"), only the faster one's cache differs from it.
    const auto names_files = [](const std::string& where) {
      const std::string low = telemetry::lower(where);
      bool files = !!storage_medium_of(where);
      for (const std::string_view w : {"readtype", "fuse", "cold", "warm", "page cache", "drop"}) {
        files = files || low.find(w) != std::string::npos;
      }
      return files;
    };
    const auto cache_only = [&](const std::string& where) {
      return telemetry::lower(where).find("cach") != std::string::npos && !names_files(where);
    };
    const auto cache_or_none = [&](const std::string& where) {
      return cache_only(where) || !names_files(where);
    };
    if (storage && cache_only(fastest->storage) && cache_or_none(slowest->storage) &&
        !paste_names_remote_storage(tel)) {
      d.verdict = Verdict::kInputBound;
      d.confidence = Confidence::kMedium;
      d.summary = fmt::format(
          "the rate follows the cache: {} with {}, {} with {} ({:.2g}x){}: at the slower setting "
          "the steps wait for their input — a cache saves the reads of files and, where it holds "
          "decoded samples, their decoding too; the paste does not say which",
          measure(*slowest), slowest->label, measure(*fastest), fastest->label, gain, ceiling);
      d.fixes = fixes::input_bound_cpu();
      d.next = {
          "the CPUs while it loads with the cache off (mpstat -P ALL 1 60): busy means decoding, "
          "idle with iowait means reads"};
      return d;
    }
    d.verdict = storage ? Verdict::kIoBound : Verdict::kInputBoundCpu;
    d.confidence = Confidence::kMedium;
    d.summary = fmt::format(
        "the rate follows {}: {} with {}, {} with {} ({:.2g}x){}: at the slower setting the steps "
        "wait for {}",
        storage ? "where the data is read from" : "the loader's setting", measure(*slowest),
        slowest->label, measure(*fastest), fastest->label, gain, ceiling,
        storage ? "the storage" : "the loader's CPU work");
    d.fixes = storage ? fixes::io_bound() : fixes::input_bound_cpu();
    return d;
  }
  if (synthetic != nullptr) {
    const double share = fastest->per_second / synthetic->per_second;
    d.confidence = Confidence::kMedium;
    if (share < kSyntheticKept) {
      d.verdict = Verdict::kInputBound;
      d.summary = fmt::format(
          "on synthetic data the job runs {}, on its own data {} ({:.0f} %): loading and "
          "preprocessing cost the difference",
          measure(*synthetic), measure(*fastest), 100 * share);
      d.fixes = fixes::input_bound_cpu();
      d.next = {
          "the CPUs while it trains (mpstat -P ALL 1 60): pinned means decoding, idle with "
          "iowait means storage"};
    } else {
      d.verdict = Verdict::kHealthy;
      d.summary = fmt::format(
          "on its own data the job runs {}, {:.0f} % of its {} on synthetic data: the input "
          "pipeline keeps up",
          measure(*fastest), 100 * share, measure(*synthetic));
    }
    return d;
  }
  if (gain < kSettingIrrelevant) {
    d.verdict = Verdict::kHealthy;
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "the loader's settings change the rate by {:.0f} % at most ({} with {}, {} with {}): "
        "the loader keeps up, the steps are the model's",
        100 * (gain - 1), measure(*slowest), slowest->label, measure(*fastest), fastest->label);
    d.next = {
        "the job on synthetic data (the same batch each step): if it runs no faster, the "
        "input is not what limits"};
    return d;
  }
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "the loader's setting moves the rate a little ({} with {}, {} with {}, {:.2g}x): some "
      "steps wait for data",
      measure(*slowest), slowest->label, measure(*fastest), fastest->label, gain);
  d.fixes = fixes::input_bound_cpu();
  d.next = {
      "the loop's data time against its step time at the best setting "
      "(stoker.torch.watch(loader))"};
  return d;
}

std::optional<Diagnosis> judge_models_at_one_pace(const Telemetry& tel) {
  // Each run of a model, in the first unit three of them share (a duration is no pace).
  std::vector<std::pair<size_t, int>> of_models;
  for (size_t r = 0; r < tel.runs.size(); ++r) {
    if (!tel.runs[r].model.empty()) of_models.emplace_back(r, 1);
  }
  std::vector<RunMeasure> runs =
      in_first_shared_unit(tel, RunSamples(tel), of_models, [](const std::vector<RunMeasure>& m) {
        return m.size() >= 3 && m.front().unit != "epochs" && m.front().unit != "runs";
      });
  if (runs.empty()) return std::nullopt;
  // The largest set of runs of one setup (group) within 2 % of its slowest: sorted by setup
  // and pace, a window slides over them (linear after the sort, however many rows).
  std::sort(runs.begin(), runs.end(), [](const RunMeasure& a, const RunMeasure& b) {
    return std::tie(a.info->group, a.per_second) < std::tie(b.info->group, b.per_second);
  });
  size_t best_from = 0, best_size = 0;
  for (size_t from = 0, to = 0; from < runs.size(); ++from) {
    to = std::max(to, from);
    while (to < runs.size() && runs[to].info->group == runs[from].info->group &&
           runs[to].per_second <= 1.02 * runs[from].per_second) {
      ++to;
    }
    if (to - from > best_size) best_from = from, best_size = to - from;
  }
  std::vector<const RunMeasure*> best;
  for (size_t k = best_from; k < best_from + best_size; ++k) best.push_back(&runs[k]);
  std::set<std::string> models;
  for (const RunMeasure* m : best) models.insert(m->info->model);
  if (best.size() < 3 || models.size() < 2) return std::nullopt;
  const RunMeasure& m = *best.front();
  const bool steps = m.unit == "steps";
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kMedium;
  // The models named, five at most.
  std::vector<std::string> named(
      models.begin(), std::next(models.begin(), std::min<std::ptrdiff_t>(5, std::ssize(models))));
  if (models.size() > named.size()) named.push_back(fmt::format("{} more", models.size() - 5));
  d.summary = fmt::format(
      "{} runs of {} different models ({}) take the same {}: a step whose time does not "
      "depend on the model is set by something else, most often the input pipeline feeding "
      "it",
      best.size(), models.size(), fmt::join(named, ", "),
      steps ? fmt::format("{:.3g} s per step", 1 / m.per_second)
            : fmt::format("{} {}/s", rate_text(m.per_second), m.unit));
  for (size_t k = 0; k < best.size() && k < 5; ++k) d.evidence.push_back(tel.cite(best[k]->cited));
  d.fixes = fixes::input_bound_cpu();
  d.next = {
      "one model's data time against its step time (stoker.torch.watch(loader)), or the "
      "same model on synthetic data: if it runs faster, the input sets the pace"};
  return d;
}

std::optional<Diagnosis> judge_claims(const Telemetry& tel, std::string_view steps_keep_up) {
  const auto slower = std::find_if(tel.claims.begin(), tel.claims.end(),
                                   [](const ScalingClaim& c) { return c.larger_is_slower; });
  // Words that say both (one comparison slower, another faster) decide nothing.
  const bool faster = std::any_of(tel.claims.begin(), tel.claims.end(),
                                  [](const ScalingClaim& c) { return !c.larger_is_slower; });
  if (slower == tel.claims.end() || faster) return std::nullopt;
  Diagnosis d;
  // The utilisation said at two scales, where a sentence gives it.
  const auto said = std::find_if(tel.claims.begin(), tel.claims.end(),
                                 [](const ScalingClaim& c) { return c.utilisation.has_value(); });
  const std::string utilisation =
      said == tel.claims.end()
          ? std::string()
          : fmt::format("the GPUs' utilisation{} falls from {:.0f} % on {} {}{} to {:.0f} % on {}",
                        said->across_nodes ? "" : " on one machine", said->utilisation->smaller,
                        said->utilisation->smaller_scale, said->across_nodes ? "machine" : "GPU",
                        said->utilisation->smaller_scale == 1 ? "" : "s", said->utilisation->larger,
                        said->utilisation->larger_scale);
  // A speed the same, or a utilisation that falls, on more of one machine's GPUs, where no
  // sentence says a larger run is slower or spans machines: the GPUs added do no more work (or
  // wait more), so something they all share sets the pace. On one machine that is most often
  // the CPUs preparing the batches; an exchange between GPUs that costs what they add would
  // make the larger run slower, not the same, and NCCL's kernels count as busy while they wait.
  const bool shared_on_one_machine = std::all_of(
      tel.claims.begin(), tel.claims.end(),
      [](const ScalingClaim& c) { return (c.unchanged || c.utilisation) && !c.across_nodes; });
  // One GPU alone idle half its time or more (so#46364010: 45 % on one K80, 15 % each on four,
  // the larger run slower): with no exchange there, it waits for its batches, and more GPUs
  // share the same supply (four at 15 % do about the work of one at 45 %).
  const bool idle_alone =
      said != tel.claims.end() && !said->across_nodes && said->utilisation->smaller_scale == 1 &&
      said->utilisation->smaller < 50 && said->utilisation->larger < said->utilisation->smaller;
  if (shared_on_one_machine || idle_alone) {
    d.verdict = Verdict::kInputBound;
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "{}{}: GPUs that add nothing wait on something they share — most often the CPUs "
        "preparing the batches (else the storage, or one process driving every GPU, as "
        "DataParallel does); likely, not proven",
        utilisation.empty() ? "the paste says the job runs no faster on more GPUs of one machine"
                            : "the paste says " + utilisation,
        idle_alone ? fmt::format("; one GPU alone, with no exchange at all, already idles {:.0f} "
                                 "% of its time",
                                 100 - said->utilisation->smaller)
                   : std::string());
    d.evidence.push_back(tel.cite(slower->origin));
    d.fixes = fixes::input_bound_cpu();
    d.next = {
        "the loop's data time per step on one GPU and on all of them, and the CPUs' load (top) "
        "while the larger run trains: a wait that grows, or CPUs at 100 %, is the input; "
        "neither, the exchange between GPUs (NCCL_DEBUG=INFO, nvidia-smi topo -m)",
        "the samples one epoch holds at each scale: a trainer that counts an epoch in each GPU's "
        "own batches (XLM's epoch_size) does N times the work in the same time"};
    return d;
  }
  d.verdict = Verdict::kCommunicationBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "the paste says {}, and {}: what a larger scale adds is the exchange between GPUs, so "
      "communication is the likely cause, not a proven one",
      !utilisation.empty() ? utilisation
      : slower->unchanged  ? std::string("the larger run is no faster")
                           : std::string("the larger run is the slower"),
      steps_keep_up.empty() ? std::string("nothing it shows times the wait for data")
                            : fmt::format("the steps it times keep up ({})", steps_keep_up));
  d.evidence.push_back(tel.cite(slower->origin));
  d.fixes = fixes::communication_bound();
  d.next = {
      "the loop's data time per step in both runs: if it grows with the GPUs, the input is the "
      "cause; if not, the interconnect (NCCL_DEBUG=INFO, nvidia-smi topo -m, the link between "
      "nodes)"};
  return d;
}

std::optional<Diagnosis> judge_nccl_transport(const Telemetry& tel) {
  if (!tel.nccl_over_sockets) return std::nullopt;
  Diagnosis d;
  d.confidence = Confidence::kLow;
  const std::string sockets = fmt::format(
      "over TCP sockets{}, not InfiniBand or RoCE",
      tel.nccl_without_verbs ? " (its InfiniBand/RoCE library, libibverbs, failed to load)" : "");
  d.evidence.push_back(tel.cite(*tel.nccl_over_sockets));
  if (!tel.spans_machines) {
    d.verdict = Verdict::kUnknown;
    d.summary = fmt::format(
        "NCCL would exchange between machines {}: if the job spans machines, every step's "
        "gradients cross an Ethernet link through the host's network stack, the likely limit; "
        "the paste does not show that it does (on one machine NCCL does not use the network)",
        sockets);
    d.next = {
        "how many machines the job spans, and nccl-tests' all_reduce_perf across them (its busbw "
        "against the link's rated speed)"};
    return d;
  }
  d.verdict = Verdict::kCommunicationBound;
  d.summary = fmt::format(
      "NCCL exchanges between the job's machines {}: every step's gradients cross an Ethernet "
      "link through the host's network stack, several times slower than RDMA; communication is "
      "the likely limit, not a proven one",
      sockets);
  d.fixes = fixes::communication_bound();
  d.next = {
      "nccl-tests' all_reduce_perf across the machines (its busbw against the link's rated "
      "speed), and NCCL_DEBUG=INFO after installing the RDMA libraries (rdma-core) or setting "
      "NCCL_IB_HCA / NCCL_SOCKET_IFNAME to the fast interface: 'via NET/IB' says the RDMA path "
      "is used"};
  return d;
}

std::optional<Diagnosis> judge_speedups(const Telemetry& tel) {
  const Telemetry::SpeedupSaid* synthetic = nullptr;
  const Telemetry::SpeedupSaid* own = nullptr;
  for (const auto& s : tel.speedups) {
    (s.synthetic ? synthetic : own) = &s;
  }
  // Where synthetic data scales no better, the exchange limits both alike: not told here.
  if (synthetic == nullptr || own == nullptr || own->times >= kSyntheticKept * synthetic->times) {
    return std::nullopt;
  }
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kMedium;
  d.summary = fmt::format(
      "the same job speeds up {:.3g}x on synthetic data and {:.3g}x on its own data ({:.0f} % "
      "of it): the exchange between GPUs is the same in both, what its own data adds is the "
      "reading and decoding, which does not keep up at the larger scale",
      synthetic->times, own->times, 100 * own->times / synthetic->times);
  d.evidence.push_back(tel.cite(synthetic->origin));
  if (own->origin.line != synthetic->origin.line) d.evidence.push_back(tel.cite(own->origin));
  d.next = {
      "the loop's data time per step at the larger scale, and the CPUs' load (top) while it "
      "trains: busy means decoding, idle with iowait means reading"};
  d.fixes = fixes::input_bound_cpu();
  return d;
}

std::optional<Diagnosis> judge_loader_warnings(const Telemetry& tel) {
  if (tel.loader_warnings.empty()) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "input-bound, probably: the trainer says itself that its batches were not ready ({} "
      "line{}: darknet's \"performance bottleneck on CPU or Disk\", Caffe's \"prefetch queue "
      "empty\" or \"Waiting for data\", Detectron's \"mb_qsize\": 0, a reader's \"waiting for data "
      "loading\"); once at the start is the "
      "queue filling, throughout the run it is the loader",
      tel.loader_warnings.size(), tel.loader_warnings.size() == 1 ? "" : "s");
  d.evidence.push_back(tel.cite(tel.loader_warnings.front()));
  d.fixes = fixes::input_bound_cpu();
  d.next = {
      "how often the message comes in a longer log, and the CPUs while it trains (mpstat -P ALL "
      "1 60): pinned means decoding, idle with iowait means storage"};
  return d;
}

std::optional<Diagnosis> judge_utilisation_swings(const Telemetry& tel) {
  if (tel.utilisation_swings.empty()) return std::nullopt;
  const Telemetry::UtilisationSwing& s = tel.utilisation_swings.front();
  Diagnosis d;
  d.verdict = Verdict::kInputBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "input-bound, probably: the paste says the GPU's use swings between {:.0f} % and {:.0f} "
      "%: it computes in bursts and idles between them, the pattern of steps that wait for "
      "their batch (a loop that waits on the CPU each step makes it too); words, not a "
      "measurement",
      s.low, s.high);
  d.evidence.push_back(tel.cite(s.origin));
  d.fixes = fixes::input_bound_cpu();
  d.next = {
      "the loop's data time against its step time (stoker.torch.watch(loader) times a "
      "DataLoader), and nvidia-smi dmon -s u while it trains: idle stretches as long as the "
      "wait for data confirm it"};
  return d;
}

std::optional<Diagnosis> judge_gpu_time_against_wall(const Telemetry& tel) {
  if (tel.gpu_time_against_wall.empty()) return std::nullopt;
  // The run whose GPU is least busy decides.
  const auto least = std::min_element(
      tel.gpu_time_against_wall.begin(), tel.gpu_time_against_wall.end(),
      [](const auto& a, const auto& b) { return a.gpu / a.wall < b.gpu / b.wall; });
  const double busy = least->gpu / least->wall;
  Diagnosis d;
  d.confidence = Confidence::kLow;
  d.evidence.push_back(tel.cite(least->origin));
  if (busy >= 0.9) {
    d.verdict = Verdict::kHealthy;
    d.confidence = Confidence::kMedium;
    d.summary = fmt::format(
        "the GPU computes {:.1f} % of the wall time{} ({:.6g} against {:.6g}): nothing on the "
        "host, its input or its launches, paces the loop",
        100 * busy,
        tel.gpu_time_against_wall.size() > 1 ? " in the run where it computes least" : "",
        least->gpu, least->wall);
    return d;
  }
  d.verdict = Verdict::kUnknown;
  d.summary = fmt::format(
      "the GPU computes only {:.0f} % of the wall time ({:.6g} against {:.6g}): the host holds "
      "it back, by its input or by launching its work; this split alone does not say which",
      100 * busy, least->gpu, least->wall);
  d.next = {
      "a torch.profiler trace of a few iterations: the DataLoader's next() against the gaps "
      "between kernels"};
  return d;
}

std::optional<Diagnosis> judge_full_loader_queue(const Telemetry& tel) {
  // Full throughout: every reading at 90 % of the capacity or more.
  if (tel.loader_queue_fill.empty() || !tel.loader_warnings.empty() ||
      std::any_of(tel.loader_queue_fill.begin(), tel.loader_queue_fill.end(),
                  [](const auto& f) { return f.second < 0.9; })) {
    return std::nullopt;
  }
  Diagnosis d;
  d.verdict = Verdict::kHealthy;
  d.confidence = Confidence::kMedium;
  d.summary = fmt::format(
      "the trainer shows its loader's queue of ready batches full ({} line{}, at 90 % of its "
      "default capacity or more, never empty): the batches wait for the step, not the step for "
      "them, so the input pipeline keeps up",
      tel.loader_queue_fill.size(), tel.loader_queue_fill.size() == 1 ? "" : "s");
  d.evidence.push_back(tel.cite(tel.loader_queue_fill.front().first));
  if (tel.loader_queue_fill.size() > 1) {
    d.evidence.push_back(tel.cite(tel.loader_queue_fill.back().first));
  }
  d.next = {
      "the queue's size over a longer log: near full throughout confirms it, falling to 0 "
      "means the loader cannot keep up"};
  return d;
}

std::optional<Diagnosis> judge_stalled_collectives(const Telemetry& tel) {
  if (tel.missing_ranks.empty()) return std::nullopt;
  std::map<int, int64_t> missing;  // rank -> stalled ops it is missing from
  for (const auto& [origin, ranks] : tel.missing_ranks) {
    for (const int r : ranks) ++missing[r];
  }
  const auto ops = static_cast<int64_t>(tel.missing_ranks.size());
  std::vector<int> always;
  for (const auto& [rank, n] : missing) {
    if (n == ops) always.push_back(rank);
  }
  Diagnosis d;
  d.verdict = Verdict::kRankImbalance;
  d.evidence.push_back(tel.cite(tel.missing_ranks.front().first));
  d.fixes = fixes::straggler();
  d.next = {
      "each rank's step time (or its data time) over a few hundred steps: the rank that is "
      "late has more to do or a slower node; HOROVOD_TIMELINE shows where it spends the time"};
  if (!always.empty()) {
    d.confidence = Confidence::kMedium;
    d.summary = fmt::format(
        "rank{} {} {} missing from all {} stalled collective{} (Horovod's stall warning): the "
        "other ranks have submitted their tensors and wait for {}; one rank that falls this far "
        "behind has more work (an unequal share, rank 0's logging, evaluation or checkpoints), "
        "a slower node, or a code path the others do not take",
        always.size() == 1 ? "" : "s", fmt::join(always, ", "), always.size() == 1 ? "is" : "are",
        ops, ops == 1 ? "" : "s", always.size() == 1 ? "it" : "them");
  } else {
    d.confidence = Confidence::kLow;
    d.summary = fmt::format(
        "{} stalled collective{} (Horovod's stall warning), each missing some ranks, not always "
        "the same: ranks reach the exchange at different times",
        ops, ops == 1 ? "" : "s");
  }
  return d;
}

std::optional<Diagnosis> judge_process_states(const Telemetry& tel) {
  const auto blocked = static_cast<int64_t>(tel.processes_in_d.size());
  // One process in D for a moment is any process touching a disk; several of the job's, or a
  // third of the rows, is a job whose readers wait on storage.
  if (blocked < 2 && 3 * blocked < tel.process_rows) return std::nullopt;
  if (blocked == 0) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kIoBound;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "{} of {} processes listed are in state D (uninterruptible sleep: in the kernel, waiting "
      "on storage or a network file system); data loader workers found there are reading, not "
      "decoding",
      blocked, tel.process_rows);
  d.evidence.push_back(tel.cite(tel.processes_in_d.front()));
  d.fixes = fixes::io_bound();
  d.next = {
      "iostat -x 1 60 while it trains: the disk's %util and r_await (near 100 % or tens of "
      "milliseconds is the storage), and whether the D state persists in a few ps looks"};
  return d;
}

std::optional<Diagnosis> judge_process_times(const Telemetry& tel) {
  if (tel.process_times.empty()) return std::nullopt;
  using Times = Telemetry::ProcessTimes;
  const auto by_real = [](const Times& a, const Times& b) {
    return a.real_seconds < b.real_seconds;
  };
  const Times& fast =
      *std::min_element(tel.process_times.begin(), tel.process_times.end(), by_real);
  const Times& slow =
      *std::max_element(tel.process_times.begin(), tel.process_times.end(), by_real);
  const auto busy = [](const Times& t) { return t.cpu_seconds / t.real_seconds; };
  const auto clock = [](double seconds) {
    return seconds >= 3600 ? fmt::format("{:.3g} h", seconds / 3600)
           : seconds >= 60 ? fmt::format("{:.3g} min", seconds / 60)
                           : fmt::format("{:.3g} s", seconds);
  };
  Diagnosis d;
  d.confidence = Confidence::kLow;
  d.evidence.push_back(tel.cite(slow.origin));
  if (&fast != &slow) d.evidence.push_back(tel.cite(fast.origin));
  // Runs of one job: where both show their command, the same program, and neither on the CPU
  // alone (a GPU run beside a CPU run is faster with fewer CPUs busy, and says nothing of the
  // input).
  const auto program = [](const std::string& command) {
    for (const std::string_view w : split_whitespace(command)) {
      if (w.starts_with('-') || w.find('=') != std::string_view::npos || w.starts_with("python") ||
          w == "$" || w == "sudo" || w == "srun" || w == "torchrun" || w == "accelerate" ||
          w == "launch" || w == "-m") {
        continue;
      }
      return std::string(w);
    }
    return std::string();
  };
  const auto on_cpu = [](const std::string& command) {
    const std::string c = lower(command);
    for (const std::string_view f : {"--device cpu", "--device=cpu", "device=cpu", "--no-cuda",
                                     "--no_cuda", "--cpu", "cuda_visible_devices= "}) {
      if (c.find(f) != std::string::npos) return true;
    }
    return false;
  };
  const bool one_job = fast.command.empty() || slow.command.empty() ||
                       (program(fast.command) == program(slow.command) && !on_cpu(fast.command) &&
                        !on_cpu(slow.command));
  // The faster run kept fewer CPUs busy, not only less work done at the same pace.
  if (&fast != &slow && one_job && fast.real_seconds <= 0.7 * slow.real_seconds &&
      fast.cpu_seconds <= 0.5 * slow.cpu_seconds && busy(slow) >= 2 &&
      busy(fast) <= 0.5 * busy(slow)) {
    d.verdict = Verdict::kInputBoundCpu;
    d.summary = fmt::format(
        "the run that spent less CPU time finished sooner: {} of wall clock with {} of CPU time "
        "({:.3g} CPUs busy), against {} with {} ({:.3g} CPUs): its CPU work set its pace — in "
        "a GPU job, most often the input pipeline's decoding and augmenting",
        clock(slow.real_seconds), clock(slow.cpu_seconds), busy(slow), clock(fast.real_seconds),
        clock(fast.cpu_seconds), busy(fast));
    d.fixes = fixes::input_bound_cpu();
    d.next = {
        "the loop's data time against its step time in the slower run (stoker.torch.watch(loader) "
        "times a DataLoader)"};
    return d;
  }
  // `time` of file-system commands only (fluid#1127's "time cp alluxio-2.6.2-bin.tar.gz
  // /dev/null", 1.6 min; azhpc-images#217's "time ls" on NFS, 0.64 s), the CPUs idle through
  // them: the command waited on the storage, as a loader reading from it would.
  const auto file_command = [&](const Times& t) {
    constexpr std::string_view kFileCommands[] = {"cp",    "cat",   "ls",   "dd",     "tar",
                                                  "rsync", "find",  "du",   "md5sum", "stat",
                                                  "touch", "mkdir", "head", "wc"};
    const std::string p = program(t.command);
    return std::find(std::begin(kFileCommands), std::end(kFileCommands), p) !=
           std::end(kFileCommands);
  };
  if (std::all_of(tel.process_times.begin(), tel.process_times.end(), file_command) &&
      slow.real_seconds >= 0.3 && busy(slow) <= 0.1) {
    d.verdict = Verdict::kIoBound;
    d.summary = fmt::format(
        "`{}` took {} of wall clock with {:.2g} CPUs busy: a file-system command that waits, not "
        "computes — the storage (or the network to it) is slow, and a loader reading from it "
        "waits the same",
        program(slow.command), clock(slow.real_seconds), busy(slow));
    d.fixes = fixes::io_bound();
    d.next = {
        "the same read from local disk or /dev/shm, and the file's size over the time (MB/s) "
        "against what the loader needs per second"};
    return d;
  }
  d.verdict = Verdict::kUnknown;
  d.summary = fmt::format(
      "process times only ({} run{}; the longest {} of wall clock, {:.3g} CPUs busy on "
      "average): what the CPUs did, not whether the GPU waited for them",
      tel.process_times.size(), tel.process_times.size() == 1 ? "" : "s", clock(slow.real_seconds),
      busy(slow));
  d.next = {
      "the loop's data time against its step time (stoker.torch.watch(loader)), or nvidia-smi "
      "dmon beside the run: an idle GPU while the CPUs are busy is the input"};
  return d;
}

std::optional<Diagnosis> judge_repeated_rates(const Telemetry& tel) {
  constexpr double kLags = 0.75;  // the slowest copy's share of the fastest's rate
  int points = 0, uneven = 0;
  using Copy = std::pair<Origin, double>;
  const Copy* lo = nullptr;  // the slowest and fastest copies of the most uneven point
  const Copy* hi = nullptr;
  double worst_share = 1;
  for (const Telemetry::RepeatedRate& g : tel.repeated_rates) {
    if (g.copies.size() < 2) continue;
    const auto [slowest, fastest] =
        std::minmax_element(g.copies.begin(), g.copies.end(),
                            [](const Copy& a, const Copy& b) { return a.second < b.second; });
    if (fastest->second <= 0) continue;
    ++points;
    const double share = slowest->second / fastest->second;
    if (share <= kLags) ++uneven;
    if (share < worst_share) worst_share = share, lo = &*slowest, hi = &*fastest;
  }
  if (points < 2 || uneven < 2 || 2 * uneven < points || lo == nullptr) return std::nullopt;
  Diagnosis d;
  d.verdict = Verdict::kRankImbalance;
  d.confidence = Confidence::kLow;
  d.summary = fmt::format(
      "the processes print the same point of the loop at different rates ({} of {} points "
      "uneven; at the worst, {} against {}, {:.2g}x): one process lags, and in a synchronous job "
      "the others wait for it at every exchange",
      uneven, points, rate_text(lo->second), rate_text(hi->second), worst_share);
  d.evidence.push_back(tel.cite(lo->first));
  d.evidence.push_back(tel.cite(hi->first));
  d.fixes = fixes::straggler();
  d.next = {
      "each process's rank beside its rate (the launcher's rank prefix), then that rank's node: "
      "its GPU, its loader's CPUs, other jobs on it"};
  return d;
}

// A backward at kInflatedBackward times its forward or more (Telemetry::forward_backward, the
// median ratio): the arithmetic of a backward is about twice its forward's (three times with
// activation checkpointing), so the rest is something else inside it — in a data-parallel job,
// the gradient all-reduce that DDP, DeepSpeed and accelerate overlap with the backward.
constexpr double kInflatedBackward = 5;
std::optional<Diagnosis> judge_forward_backward(const Telemetry& tel) {
  if (tel.forward_backward.empty()) return std::nullopt;
  std::vector<std::pair<double, const ForwardBackward*>> ratios;
  for (const ForwardBackward& f : tel.forward_backward) {
    if (f.forward_seconds > 0) ratios.emplace_back(f.backward_seconds / f.forward_seconds, &f);
  }
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto [ratio, median_pair] = ratios[ratios.size() / 2];
  if (ratio < kInflatedBackward) return std::nullopt;
  const ForwardBackward& pair = *median_pair;
  const std::string times =
      pair.unit_stated
          ? fmt::format("{:.3g} s against {:.3g} s", pair.backward_seconds, pair.forward_seconds)
          : fmt::format("{:.3g} against {:.3g}", pair.backward_seconds, pair.forward_seconds);
  // CUDA runs asynchronously: a forward timed without torch.cuda.synchronize() stops before
  // its kernels finish, and they are billed to what is timed next.
  constexpr std::string_view kUnsynchronised =
      "a forward timed without torch.cuda.synchronize() stops before its kernels finish and "
      "bills them to the backward";
  Diagnosis d;
  d.confidence = Confidence::kLow;
  d.evidence.push_back(tel.cite(pair.origin));
  if (!tel.data_parallel) {
    d.verdict = Verdict::kUnknown;
    d.summary = fmt::format(
        "the backward takes {:.0f}x the forward ({}; its arithmetic is about 2x), in a job "
        "the paste does not show exchanging gradients: {}, or the backward is heavy",
        ratio, times, kUnsynchronised);
    d.next = {
        "the forward and backward timed after torch.cuda.synchronize(), beside the "
        "loop's data time"};
    return d;
  }
  d.verdict = Verdict::kCommunicationBound;
  d.summary = fmt::format(
      "communication-bound, probably: the backward takes {:.0f}x the forward ({}; its "
      "arithmetic is about 2x): the rest is the gradient exchange that runs inside it — unless "
      "{}, or the job offloads to the CPU",
      ratio, times, kUnsynchronised);
  d.next = {
      "the same steps on one GPU (the backward's own arithmetic), or NCCL_DEBUG=INFO and "
      "nvidia-smi topo -m (how the GPUs exchange)"};
  d.fixes = fixes::communication_bound();
  return d;
}

std::optional<Diagnosis> judge_phases(const Telemetry& tel, const TelemetryThresholds& th) {
  // Without exchange timers, a backward far above its forward in a data-parallel job (an
  // unknown answer from the pair waits for the other judges: judge_forward_backward).
  if (tel.phases.empty()) {
    auto d = judge_forward_backward(tel);
    if (d && d->verdict != Verdict::kCommunicationBound) return std::nullopt;
    return d;
  }
  double exchange = 0, compute = 0;
  for (const PhaseSample& p : tel.phases) {
    exchange += p.communication_seconds;
    compute += p.compute_seconds;
  }
  const double share = exchange / (exchange + compute);
  const size_t lines = tel.phases.size();
  const bool profile = std::all_of(tel.phases.begin(), tel.phases.end(),
                                   [](const PhaseSample& p) { return p.gpu_profile; });
  Diagnosis d;
  d.confidence = lines >= 3 ? Confidence::kMedium : Confidence::kLow;
  d.evidence.push_back(
      profile
          ? fmt::format("the profile's GPU time: NCCL's kernels {:.3g} s of {:.3g} s ({:.0f} %)",
                        exchange, exchange + compute, 100 * share)
          : fmt::format("{} timer line{}: gradient exchange {:.3g} s against {:.3g} s of compute "
                        "({:.0f} %)",
                        lines, lines == 1 ? "" : "s", exchange / static_cast<double>(lines),
                        compute / static_cast<double>(lines), 100 * share));
  d.evidence.push_back(tel.cite(tel.phases.back().origin));
  if (share >= th.wait.dominant) {
    d.verdict = Verdict::kCommunicationBound;
    d.summary =
        profile ? fmt::format(
                      "communication-bound: the profile's GPUs spend {:.0f} % of their time in "
                      "NCCL's kernels (all-reduce, reduce-scatter, all-gather)",
                      100 * share)
                : fmt::format(
                      "communication-bound: the trainer's timers spend {:.0f} % of the step's "
                      "timed phases exchanging gradients (all-reduce, reduce-scatter, all-gather)",
                      100 * share);
    d.fixes = fixes::communication_bound();
    d.next = {"NCCL_DEBUG=INFO in the job's log (which transport it uses), and nvidia-smi topo -m"};
    return d;
  }
  d.verdict = Verdict::kUnknown;
  d.confidence = Confidence::kLow;
  if (profile) {
    d.summary = fmt::format(
        "the profile's GPUs spend {:.0f} % of their time in NCCL's kernels: not what limits "
        "them; the profile does not show the wait for data",
        100 * share);
    d.next = {
        "a profile whose steps hold the DataLoader's iteration (its enumerate(DataLoader) row), "
        "or the loop's data time against its step time"};
    return d;
  }
  // The timed step is the model's own work (forward, backward, the optimizer's step) with a
  // minor exchange: what experts call compute-bound, the input not in question. Low: the
  // timers leave out the wait for data, which a loader that stalls would add between steps —
  // and which the paste may show otherwise: a wait timed on its own (Megatron's batch-generator
  // beside the phases), the trainer's words that its batches were late, ranks stalled in a
  // collective, processes waiting on storage. Then that evidence decides, not the timers.
  const bool wait_shown_otherwise = !tel.lone_waits.empty() || !tel.loader_warnings.empty() ||
                                    !tel.missing_ranks.empty() || !tel.processes_in_d.empty();
  if (wait_shown_otherwise) return std::nullopt;  // what shows the wait decides
  d.verdict = Verdict::kHealthy;
  d.summary = fmt::format(
      "the trainer's timers spend {:.0f} % of the step exchanging gradients and the rest on the "
      "model's own work (forward, backward, the optimizer's step): the step is compute, the "
      "exchange not what limits it; the timers do not time the wait for data",
      100 * share);
  d.next = {
      "the loop's data time against its step time (Megatron: the batch-generator timer with "
      "--timing-log-level 1 or more): a wait near zero confirms it"};
  return d;
}

// What decides a benchmark that shows no link's bandwidth: its rows of large messages.
constexpr std::string_view kLargeMessageRows =
    "the benchmark's rows at 64 MB and more (all_reduce_perf -b 8 -e 8G -f 2): their busbw "
    "against the link's rate (NVLink hundreds of GB/s, InfiniBand tens per link)";

// GPU-to-GPU copies under this (GB/s, one way) are under what one PCIe 3.0 x16 link carries
// (about 12): a path through the CPU's host bridge, or lanes cut to x8 or x4.
constexpr double kWeakPeerCopyGbps = 8;

// A collective's bus bandwidth at 1 GB messages and more from this (GB/s) is NVLink's class
// (NVLink 3 and later, or NVSwitch; 8 InfiniBand NDR rails reach it too): no PCIe or single
// network link carries it, and no data-parallel job's exchange waits long on it. Between 5
// and this the link may be a fast network's or a slow NVLink's: the benchmark alone cannot say.
constexpr double kNvlinkClassGbps = 100;

std::optional<Diagnosis> judge_bandwidth(const Telemetry& tel) {
  if (tel.bandwidths.empty()) return std::nullopt;
  // CUDA's p2pBandwidthLatencyTest alone: the GPUs' copies to each other, one way, P2P on.
  if (std::all_of(tel.bandwidths.begin(), tel.bandwidths.end(), [](const BandwidthSample& b) {
        return b.group.starts_with("p2pBandwidthLatencyTest");
      })) {
    const BandwidthSample* slow = nullptr;
    for (const BandwidthSample& b : tel.bandwidths) {
      if (b.group.find("unidirectional P2P=Enabled") == std::string::npos) continue;
      if (slow == nullptr || b.bus_gbps < slow->bus_gbps) slow = &b;
    }
    Diagnosis d;
    d.confidence = Confidence::kLow;
    if (slow == nullptr) {
      // Copies both ways at once, or with P2P off (through the host): no link's one-way rate.
      d.verdict = Verdict::kUnknown;
      d.summary =
          "p2pBandwidthLatencyTest's matrices without its one-way copies with P2P on: what the "
          "link between the GPUs carries is the unidirectional P2P=Enabled matrix";
      d.evidence.push_back(tel.cite(tel.bandwidths.front().origin));
      d.next = {"the test's 'Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)'"};
      return d;
    }
    d.evidence.push_back(tel.cite(slow->origin));
    if (slow->bus_gbps < kWeakPeerCopyGbps) {
      d.verdict = Verdict::kCommunicationBound;
      d.summary = fmt::format(
          "{} copies {:.3g} GB/s: under what one PCIe 3.0 x16 link carries (about 12 GB/s) — "
          "the path between the GPUs (through the CPU's host bridge, or lanes cut to x8 or x4) "
          "limits every gradient exchange between them",
          slow->group, slow->bus_gbps);
      d.fixes = fixes::communication_bound();
      d.next = {
          "nvidia-smi topo -m and lspci -vv (each GPU's link width and speed, LnkSta), and the "
          "job's speed on one GPU against two: the share of the step the exchange takes"};
    } else {
      d.verdict = Verdict::kUnknown;
      d.summary = fmt::format(
          "the GPUs copy to each other at {:.3g} GB/s or more (the slowest pair, one way): a PCIe "
          "link's rate or better, not what limits a job; its own step and data times would say",
          slow->bus_gbps);
      d.next = collect_more();
    }
    return d;
  }
  // A benchmark that shows no link's bandwidth: `unknown`, its rows of large messages decide.
  const auto no_link_rate = [&](std::string summary, const Origin& cited) {
    Diagnosis d;
    d.verdict = Verdict::kUnknown;
    d.confidence = Confidence::kLow;
    d.summary = std::move(summary);
    d.evidence.push_back(tel.cite(cited));
    d.next = {std::string(kLargeMessageRows)};
    return d;
  };
  // A sweep's average alone: small messages' near-zero rows pull it down by how far the sweep
  // reaches (-b 8 or -b 1M), so it may be a fast link's or a slow one's. Rows, where there
  // are any, are read instead.
  if (std::all_of(tel.bandwidths.begin(), tel.bandwidths.end(),
                  [](const BandwidthSample& b) { return b.sweep_average; })) {
    const BandwidthSample& b = tel.bandwidths.back();
    return no_link_rate(
        fmt::format("{} is {:.3g} GB/s: a mean over every message size of the sweep, small ones' "
                    "latency with large ones' bandwidth, so it is no measure of the link without "
                    "the sizes it spans",
                    b.group, b.bus_gbps),
        b.origin);
  }
  // Each group at its largest messages (small ones measure latency, not the link).
  struct Group {
    std::string name;
    double bytes = -1, gbps = 0;
    Origin origin;
  };
  std::map<std::string, Group> by_name;
  for (const BandwidthSample& b : tel.bandwidths) {
    if (b.sweep_average) continue;
    Group& g = by_name[b.group];
    if (b.bytes > g.bytes || (b.bytes == g.bytes && b.bus_gbps > g.gbps)) {
      g = Group{b.group, b.bytes, b.bus_gbps, b.origin};
    }
  }
  constexpr double kLarge = 64.0 * 1024 * 1024;
  std::vector<Group> groups;
  for (const auto& [name, g] : by_name) {
    if (g.bytes == 0 || g.bytes >= kLarge) groups.push_back(g);
  }
  if (groups.empty()) {
    for (const auto& [name, g] : by_name) groups.push_back(g);
  }
  // Rows of small messages only (a sweep cut off at a few KB): each collective's time there is
  // its latency, tens of microseconds on any fabric, so the bandwidth it works out to says
  // nothing of the link's.
  constexpr double kSmall = 1024.0 * 1024;
  if (std::all_of(groups.begin(), groups.end(),
                  [](const Group& g) { return g.bytes > 0 && g.bytes < kSmall; })) {
    const auto largest = std::max_element(groups.begin(), groups.end(),
                                          [](auto& a, auto& b) { return a.bytes < b.bytes; });
    return no_link_rate(
        fmt::format("{} reaches only {:.0f} B messages ({:.3g} GB/s): at that size a collective's "
                    "time is its latency, not the link's bandwidth",
                    largest->name, largest->bytes, largest->gbps),
        largest->origin);
  }
  const auto slower = [](const Group& a, const Group& b) { return a.gbps < b.gbps; };
  const auto slow = std::min_element(groups.begin(), groups.end(), slower);
  // Against the fastest group of the same collective when there is one ("allreduce [[0..7]]"
  // against "allreduce [[0..3]]"), else the fastest.
  const auto kind = [](const Group& g) { return g.name.substr(0, g.name.find(' ')); };
  auto fast = std::max_element(groups.begin(), groups.end(), slower);
  for (auto g = groups.begin(); g != groups.end(); ++g) {
    if (g != slow && kind(*g) == kind(*slow) &&
        (kind(*fast) != kind(*slow) || g->gbps > fast->gbps)) {
      fast = g;
    }
  }
  const auto size_text = [](double bytes) {
    if (bytes <= 0) return std::string();
    return bytes >= 1e9 ? fmt::format(" ({:.3g} GB messages)", bytes / 1e9)
                        : fmt::format(" ({:.3g} MB messages)", bytes / 1e6);
  };
  Diagnosis d;
  d.confidence = Confidence::kLow;
  d.evidence.push_back(tel.cite(slow->origin));
  d.next = {
      "NCCL_DEBUG=INFO in the job's log (which transport it uses: Socket, or IB/RoCE), and the "
      "gradient bytes per step over this bandwidth against the step time"};
  if (groups.size() >= 2 && fast->gbps >= 5 * slow->gbps) {
    d.verdict = Verdict::kCommunicationBound;
    d.confidence = Confidence::kMedium;
    d.summary = fmt::format(
        "{} runs at {:.3g} GB/s{} against {:.3g} GB/s for {}: {:.0f}x slower — the link the slow "
        "group crosses (between nodes, most often) sets the pace of every gradient exchange over "
        "it",
        slow->name, slow->gbps, size_text(slow->bytes), fast->gbps, fast->name,
        fast->gbps / std::max(slow->gbps, 1e-9));
    d.evidence.push_back(tel.cite(fast->origin));
    d.fixes = fixes::communication_bound();
  } else if (slow->gbps < 5) {
    d.verdict = Verdict::kCommunicationBound;
    d.summary = fmt::format(
        "{} moves {:.3g} GB/s{}: socket-class (NVLink moves hundreds of GB/s, InfiniBand tens per "
        "link): a data-parallel job that exchanges a large model's gradients every step waits on "
        "it",
        slow->name, slow->gbps, size_text(slow->bytes));
    d.fixes = fixes::communication_bound();
  } else if (slow->gbps >= kNvlinkClassGbps && slow->bytes >= 1e9) {
    d.verdict = Verdict::kHealthy;
    d.summary = fmt::format(
        "the link this test measured is fast: {} at {:.3g} GB/s{}, NVLink-class, so exchanging "
        "gradients over it is not what slows a job (a job across other links may still wait); "
        "the job's own step and data times would say whether its input keeps up",
        slow->name, slow->gbps, size_text(slow->bytes));
    d.next = collect_more();
  } else {
    d.verdict = Verdict::kUnknown;
    d.summary = fmt::format(
        "the interconnect measured is not slow ({} at {:.3g} GB/s{}): the job's own step and data "
        "times would say what limits it",
        slow->name, slow->gbps, size_text(slow->bytes));
    d.next = collect_more();
  }
  return d;
}

std::optional<Diagnosis> judge_memory(const Telemetry& tel) {
  if (tel.memory.empty()) return std::nullopt;
  // The last reading of each GPU.
  std::map<std::pair<int, int>, const GpuMemorySample*> last;
  for (const GpuMemorySample& m : tel.memory) last[{m.origin.file, m.gpu}] = &m;
  Diagnosis d;
  d.confidence = Confidence::kLow;
  d.verdict = Verdict::kUnknown;
  const GpuMemorySample* top = nullptr;
  std::vector<double> others;
  for (const auto& [key, m] : last) {
    if (top == nullptr || m->used_mib > top->used_mib) top = m;
  }
  for (const auto& [key, m] : last) {
    if (m != top) others.push_back(m->used_mib);
    if (d.evidence.size() < 8) d.evidence.push_back(tel.cite(m->origin));
  }
  const double rest = median(others);
  d.next = {kDmonWhileTraining,
            "nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv -l 1: "
            "utilisation, not only memory"};
  if (!others.empty() && rest > 0 && top->used_mib >= 2 * rest) {
    d.verdict = Verdict::kRankImbalance;
    d.summary = fmt::format(
        "GPU {} holds {:.0f} MiB, {:.1f}x the other GPUs' {:.0f} MiB: the shape of DataParallel "
        "(outputs, the loss and the gradients gathered on the first GPU) or of extra models "
        "placed there; memory is not time, so how much it slows the job is not shown",
        top->gpu, top->used_mib, top->used_mib / rest, rest);
    d.fixes = fixes::rank_imbalance();
  } else {
    d.summary = fmt::format(
        "GPU memory only ({} GPUs, {:.0f} MiB at most): memory says what the job holds, not "
        "how busy it keeps the GPUs",
        last.size(), top->used_mib);
  }
  return d;
}

}  // namespace stoker::telemetry
