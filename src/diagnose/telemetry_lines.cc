// Pasted text read by vocabulary (stoker/telemetry.h, read_pasted): training-loop step lines,
// throughput lines, job summaries and monitoring panels, found by the names of their numbers
// (telemetry_vocab.h), and the runs a paste holds (a 1-GPU and an 8-GPU log under their own
// headings).
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <span>

#include "diagnose/telemetry_parse.h"
#include "diagnose/telemetry_vocab.h"

namespace stoker::telemetry {
namespace {

struct LineReading {
  std::optional<double> step, data, step_avg, data_avg;
  int step_priority = -1;
  bool step_without_data = false;
  bool step_is_total = false;      // "Total step time: 0.33s": its parts may follow on their lines
  std::string step_unit;           // the step value's unit as printed ("ms", "s"; empty: none)
  bool data_is_remainder = false;  // data is the step less its compute ("Time 2.87 RUN 0.87")
  bool meaningful = false;         // anything the doctor reads
  std::string data_name;           // the wait's name as printed ("data", "loadertime")
  bool data_has_unit = false;      // "data: 53577ms", not "load: 0.2"
};

// The value named `name` on a line, if any.
std::optional<double> value_named(const std::vector<NamedValue>& values, std::string_view name) {
  for (const NamedValue& v : values) {
    if (v.name == name) return v.value;
  }
  return std::nullopt;
}

bool named(const std::vector<NamedValue>& values, std::string_view name) {
  return value_named(values, name).has_value();
}

// The value named `name` on a line in seconds, if it has one and a duration's unit.
std::optional<double> seconds_named(const std::vector<NamedValue>& values, std::string_view name) {
  for (const NamedValue& v : values) {
    if (v.name == name) return seconds_of(v);
  }
  return std::nullopt;
}

// The step and data wait of one line. ESPnet prints the data wait as iter_time beside the
// step's train_time (YOLOX's iter_time is the step): the names next to it decide.
LineReading read_step(const std::vector<NamedValue>& values) {
  LineReading r;
  // ESPnet's iter_time beside train_time is its data wait — unless the line names a wait of
  // its own ("Data time: 20.3755, Train time: 2.3035, Iter time: 22.6790": the total).
  const bool espnet =
      named(values, "train_time") && named(values, "iter_time") &&
      std::none_of(values.begin(), values.end(), [](const NamedValue& v) {
        return v.name != "iter_time" && meaning_of(v).quantity == Quantity::kDataWait;
      });
  // BasicSR-style loggers (traiNNer, mmsr): "<epoch:249, iter: 250, lr:1.000e-04, t:286.9083s,
  // td:4.1610s, eta:...>": t is the step, td its data wait; a lone "t" is no name to trust.
  const bool t_td = named(values, "t") && named(values, "td");
  // Mozilla/Coqui TTS: "step_time: 0.23 loader_time: 5.4650": the step is timed after its batch
  // arrived, the wait for it apart.
  const bool tts = (named(values, "step_time") || named(values, "steptime")) &&
                   (named(values, "loader_time") || named(values, "loadertime"));
  // MaxText: "completed step: 15107, seconds: 2.167, TFLOP/s: 36.722": beside a step's
  // counter, a bare "seconds" is how long the step took.
  const bool step_seconds =
      named(values, "completed_step") && (named(values, "seconds") || named(values, "secs"));
  // "Step 106 duration : 0.565" (tensorflow#18691's own timer): a duration after the step's
  // counter is that step's.
  const bool counted_duration =
      values.size() == 2 && values[1].name == "duration" && counts_steps(values[0]);
  // FunASR: "{'data_load': '0.000', 'forward_time': '0.304', ..., 'total_time': '0.777'}":
  // beside a step's wait for data, the total is the step (alone, a profile's "Total time" is no
  // step; beside an epoch's sums, "total_batch_fetch_time" and "total_batches", an epoch's).
  const bool total_beside_wait =
      named(values, "total_time") && !named(values, "total_batches") &&
      std::any_of(values.begin(), values.end(), [](const auto& v) {
        return meaning_of(v).quantity == Quantity::kDataWait && !v.name.starts_with("total");
      });
  // DeepSpeed's timers ("forward: 648.32 | backward: 2160.50 | ... | step: 1376.68"): beside a
  // forward and a backward that together take longer, "step" times the optimizer's step.
  const auto forward = seconds_named(values, "forward");
  const auto backward = seconds_named(values, "backward");
  const auto optimizer_step_time = seconds_named(values, "step");
  const bool optimizer_step =
      forward && backward && optimizer_step_time && *optimizer_step_time < *forward + *backward;
  std::optional<double> iteration;  // the seconds of an "it/s" rate
  std::vector<double> steps;        // every step-like value of the line, in seconds
  for (const NamedValue& v : values) {
    Meaning m = meaning_of(v);
    if (espnet && v.name == "iter_time") m.quantity = Quantity::kDataWait;
    if (step_seconds && (v.name == "seconds" || v.name == "secs") && v.unit.empty()) {
      m.quantity = Quantity::kStep, m.priority = 2;
    }
    if (counted_duration && v.name == "duration") m.quantity = Quantity::kStep, m.priority = 2;
    if (total_beside_wait && v.name == "total_time") m.quantity = Quantity::kStep, m.priority = 1;
    if (t_td && v.name == "td") m.quantity = Quantity::kDataWait;
    if (t_td && v.name == "t") m.quantity = Quantity::kStep, m.priority = 2;
    if (tts && m.quantity == Quantity::kStep) m.quantity = Quantity::kStepWithoutData;
    if (optimizer_step && v.name == "step") m.quantity = Quantity::kCompute;
    const auto seconds = seconds_of(v);
    if (!seconds) continue;
    const auto avg_seconds = [&]() -> std::optional<double> {
      if (!v.average) return std::nullopt;
      NamedValue a = v;
      a.value = *v.average;
      return seconds_of(a);
    };
    if (m.quantity == Quantity::kStep || m.quantity == Quantity::kStepWithoutData) {
      steps.push_back(*seconds);
    }
    if (m.quantity == Quantity::kDataWait && !r.data) {
      r.data = seconds;
      r.data_name = v.name;
      r.data_has_unit = !v.unit.empty();
      r.data_avg = avg_seconds();
    } else if ((m.quantity == Quantity::kStep || m.quantity == Quantity::kStepWithoutData) &&
               m.priority > r.step_priority) {
      r.step = seconds;
      r.step_avg = avg_seconds();
      r.step_priority = m.priority;
      r.step_without_data = m.quantity == Quantity::kStepWithoutData;
      // CNTK's profiler times the whole "_Minibatch Iteration" above its parts ("__Get
      // Minibatch", "__Forward + Backward", "__Gradient Aggregation").
      r.step_is_total = v.name.starts_with("total") || v.name == "minibatch_iteration";
      r.step_unit = v.unit;
    } else if (m.quantity == Quantity::kRate && m.rate_unit == "iterations" && !iteration) {
      iteration = seconds;
    }
  }
  // "3 it/s, data_time 0.217": beside a wait, a rate of iterations is the step it waits in.
  if (r.data && !r.step && iteration) r.step = iteration;
  // Two steps, one the wait and the other together ("Data time: 20.3755, Train time: 2.3035,
  // Iter time: 22.6790"): the larger is the whole step, whatever the names' order of trust.
  if (r.data && r.step && steps.size() >= 2) {
    for (const double whole : steps) {
      for (const double part : steps) {
        if (whole > part && std::abs(part + *r.data - whole) <= 0.02 * whole && whole > *r.step) {
          r.step = whole;
          r.step_avg.reset();
          r.step_without_data = false;
        }
      }
    }
  }
  // A step beside its compute alone (ROMP's "Time 2.87 RUN 0.87", "compute_time"): what is
  // left is the time outside the model, the wait for data and the loop's own host work.
  // tinygrad's step beside the time its device took ("326.49 ms run, 1.85 ms python, 324.64 ms
  // METAL"): the same, where the device took most of the step; a large rest is its Python's
  // dispatch as much as any wait (tinygrad#3150: 264 of 265 ms in python on 6 GPUs), no bound
  // worth stating.
  static constexpr std::array<std::string_view, 8> kDevices = {"metal", "hip", "cuda",   "nv",
                                                               "amd",   "gpu", "opencl", "webgpu"};
  if (r.step && !r.data) {
    for (const NamedValue& v : values) {
      if (std::find(kDevices.begin(), kDevices.end(), v.name) != kDevices.end() &&
          duration_scale(v.unit)) {
        if (const auto device = seconds_of(v);
            device && *device <= *r.step && *device >= 0.85 * *r.step) {
          r.data = *r.step - *device;
          r.data_is_remainder = true;
        }
        break;
      }
      if (v.name != "run" && v.name != "run_time" && v.name != "compute" &&
          v.name != "compute_time" && v.name != "model_time" && v.name != "gpu_time") {
        continue;
      }
      // "run 2 | epoch 1": a run's number, not its time.
      if (v.name == "run" && v.unit.empty() && v.value == std::floor(v.value)) break;
      if (const auto compute = seconds_of(v); compute && *compute > 0 && *compute <= *r.step) {
        r.data = *r.step - *compute;
        r.data_is_remainder = true;
      }
      break;
    }
  }
  // A step beside the phases it is made of (verl's "timing_s/gen", "timing_s/update_actor"
  // under "timing_s/step"): when they account for most of it, the step is theirs and the rest
  // bounds what else it waited on. Phases that explain less say nothing of the rest, which
  // may be an untimed backward as well as data.
  // Timers that nest ("forward_backward" beside "forward" and "backward", two "forward"
  // timers) would be counted twice, and Megatron's forward-backward holds its batch fetch:
  // such a line bounds nothing.
  if (r.step && !r.data && !r.step_without_data) {
    double phases = 0;
    bool nested = false;
    std::set<std::string> leads;
    for (const NamedValue& v : values) {
      if (meaning_of(v).quantity != Quantity::kCompute) continue;
      phases += seconds_of(v).value_or(0);
      std::string_view name = v.name;
      if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) {
        name.remove_prefix(slash + 1);  // verl's "timing_s/gen": the phase is "gen"
      }
      nested = nested || (name.find("forward") != std::string_view::npos &&
                          name.find("backward") != std::string_view::npos);
      nested = nested || !leads.insert(std::string(name.substr(0, name.find('_')))).second;
    }
    constexpr double kMostOfTheStep = 0.8;
    if (!nested && phases >= kMostOfTheStep * *r.step && phases <= 1.02 * *r.step) {
      r.data = std::max(0.0, *r.step - phases);
      r.data_is_remainder = true;
    }
  }
  return r;
}

// Whose rate a name says it is: the loader's timed alone ("T_loader", "dataloader_alone",
// "data_loading_speed") or the model's, or the training's, that it feeds ("T_model",
// "training", "model_throughput"). Neither: a name saying both ("train_loader"), a whole
// pipeline measured end to end ("full pipeline", "with the real dataset": the job on real data,
// not the loader alone), parallelism's "pipeline"/"model parallel", a model called "directly".
enum class RateSide { kNone, kLoader, kModel };
RateSide rate_side(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kLoader = {
      "loader", "dataloader", "loading", "decoding", "reader", "dataloaders"};
  static constexpr std::array<std::string_view, 6> kModel = {"model",   "training", "train",
                                                             "trainer", "compute",  "forward"};
  static constexpr std::array<std::string_view, 8> kNeither = {
      "parallel", "directly", "full", "end", "with", "real", "pipeline", "total"};
  bool loader = false, model = false;
  size_t from = 0;
  while (from <= name.size()) {
    size_t end = name.find_first_of("_/-. ", from);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view word = name.substr(from, end - from);
    if (std::find(kNeither.begin(), kNeither.end(), word) != kNeither.end()) {
      return RateSide::kNone;
    }
    loader = loader || std::find(kLoader.begin(), kLoader.end(), word) != kLoader.end();
    model = model || std::find(kModel.begin(), kModel.end(), word) != kModel.end();
    from = end + 1;
  }
  if (loader == model) return RateSide::kNone;
  return loader ? RateSide::kLoader : RateSide::kModel;
}

bool mentions(std::string_view text, std::string_view word) {
  return lower(text).find(word) != std::string::npos;
}

// Words saying the job spans machines, shards its model or runs TensorFlow's distributed runtime
// (a parameter server's and its workers' jobs), whose every step exchanges parameters or
// gradients across them ("multi-node", FSDP, ZeRO-3, tf_cnn_benchmarks' "Devices:
// ['/job:worker/task:0/gpu:0']"; a node count, "2 nodes", is read with the line's GPU count; a
// parameter server on the job's own machine, "--variable_update=parameter_server" alone, is not).
// `low`: the line lower-cased.
bool spans_nodes_or_shards(std::string_view low) {
  // fairseq names FSDP "fully_sharded" (--ddp-backend=fully_sharded).
  for (const std::string_view word :
       {"multi-node", "multinode", "multi node", "machines", "fsdp", "fully_sharded", "zero-3",
        "zero3", "zero stage 3", "stage 3", "stage3", "/job:worker", "/job:ps", "--ps_hosts"}) {
    // A TPU's devices are named under /job:worker too, with no parameter server.
    if (word == "/job:worker" && low.find("tpu") != std::string_view::npos) continue;
    if (low.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// Whether `word` occurs in `text` between non-alphanumeric neighbours ("ddp", not "ddpm").
bool has_whole_word(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    const auto inside = [&](size_t k) { return is_alpha(text[k]) || is_digit(text[k]); };
    if ((at == 0 || !inside(at - 1)) && (end == text.size() || !inside(end))) return true;
  }
  return false;
}

// Words of a sentence saying its rate is wished for or aimed at, not measured, lower case.
constexpr std::string_view kWished[] = {"would be great", "would be nice", "would like to",
                                        "hope to",        "our goal",      "the goal",
                                        "target of",      "aim for",       "aim to"};

// Words of a sentence citing a figure as someone else's claim, not the paste's measurement,
// lower case.
constexpr std::string_view kClaimedByOthers[] = {"readme",   "claim",    "paper",
                                                 "official", "advertis", "promise"};

// Whether the figure at `column` of lower-case `low` is aimed at or expected (its clause's
// words before it: "The goal is to get 90% ...", "we expected 90%") or cited from someone else
// (its sentence's: "From the horovod's README.md, horovod achieves 90% ..."); words after it
// ("62.5% (expected >90% per the paper)") are about another figure.
bool aimed_at_or_cited(std::string_view low, size_t column) {
  const std::string_view before = low.substr(0, std::min(column, low.size()));
  const size_t sentence = before.rfind(". ");
  const std::string_view in_sentence =
      sentence == std::string_view::npos ? before : before.substr(sentence + 2);
  size_t clause = in_sentence.find_last_of(",;");
  if (const size_t but = in_sentence.rfind(" but ");
      but != std::string_view::npos && (clause == std::string_view::npos || but > clause)) {
    clause = but;
  }
  const std::string_view in_clause =
      clause == std::string_view::npos ? in_sentence : in_sentence.substr(clause + 1);
  const auto has = [](std::string_view text, std::string_view w) {
    return text.find(w) != std::string_view::npos;
  };
  return std::any_of(std::begin(kWished), std::end(kWished),
                     [&](std::string_view w) { return has(in_clause, w); }) ||
         has(in_clause, "expect") ||
         std::any_of(std::begin(kClaimedByOthers), std::end(kClaimedByOthers),
                     [&](std::string_view w) { return has(in_sentence, w); });
}

// Words after a rate saying it is one machine's of several, lower case.
constexpr std::string_view kOneMachine[] = {"each machine", "each node", "each host",
                                            "per machine",  "per node",  "per host"};

// Words naming a data-parallel engine or its gradient exchange (Telemetry::data_parallel),
// lower case.
constexpr std::string_view kDataParallelWords[] = {"ddp",
                                                   "distributeddataparallel",
                                                   "deepspeed",
                                                   "horovod",
                                                   "nccl",
                                                   "allreduce",
                                                   "all-reduce",
                                                   "all_reduce",
                                                   "sync gradients",
                                                   "multi-gpu",
                                                   "multiple gpus",
                                                   "torchrun"};

// A job summary's lines (Slurm's jobstats and seff) read as whole-run means.
bool is_job_summary(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (l.text.size() > kMaxPastedLineBytes) continue;
    if (mentions(l.text, "slurm job statistics") || mentions(l.text, "cpu efficiency:") ||
        mentions(l.text, "job wall-clock time")) {
      return true;
    }
  }
  return false;
}

// A sentence of prose rather than a tool's line: many words, few of them numbers ("For 2
// nodes, I got 2.35 steps/sec, while for a single node I got 2.94").
bool is_prose(std::string_view text) {
  const auto words = split_whitespace(text);
  if (words.size() < 12) return false;
  size_t numeric = 0;
  for (const std::string_view w : words) {
    if (std::any_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; })) ++numeric;
  }
  return 4 * numeric < words.size();
}

// A prose line parted into clauses where a sentence compares (". ", "; ", ", but", " while ",
// " whereas ", " compared to ", " vs "), so that each clause is read as a line of its own: its
// GPU or node count starts a run, its numbers belong to that run.
std::vector<Line> clauses_of(const Line& line) {
  static constexpr std::array<std::string_view, 12> kBreaks = {
      ". ",       "; ",        ", but ",        " but ",           ", while ",
      " while ",  " whereas ", " compared to ", " compared with ", " vs ",
      " versus ", " or "};
  std::vector<Line> out;
  const std::string low = lower(line.text);
  size_t start = 0;
  size_t i = 0;
  while (i < low.size()) {
    size_t hit = std::string::npos, length = 0;
    for (const std::string_view b : kBreaks) {
      if (low.compare(i, b.size(), b) == 0) {
        hit = i, length = b.size();
        break;
      }
    }
    // "4 or 8 GPUs", "two or three nodes": alternatives of one number, not two clauses.
    if (hit != std::string::npos && length == 4 && low.compare(hit, 4, " or ") == 0) {
      const size_t word_begin = low.find_last_of(' ', hit == 0 ? 0 : hit - 1);
      const std::string_view before = std::string_view(low).substr(
          word_begin == std::string::npos ? 0 : word_begin + 1,
          hit - (word_begin == std::string::npos ? 0 : word_begin + 1));
      const char next = hit + 4 < low.size() ? low[hit + 4] : ' ';
      static constexpr std::string_view kNumberWords[] = {
          "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "a"};
      if ((!before.empty() && is_digit(before.back())) || is_digit(next) ||
          std::find(std::begin(kNumberWords), std::end(kNumberWords), before) !=
              std::end(kNumberWords)) {
        hit = std::string::npos;
      }
    }
    if (hit == std::string::npos) {
      ++i;
      continue;
    }
    if (hit > start) out.push_back(Line{line.number, line.text.substr(start, hit - start), true});
    start = i = hit + length;
  }
  if (start < line.text.size()) out.push_back(Line{line.number, line.text.substr(start), true});
  return out;
}

// A header naming columns of bare numbers below it ("Here is the (data_time_, batch_time_)",
// "data_time  batch_time"): the names of a wait and of a step, in order; empty when the line
// names no wait and no step, or when its own values carry those names.
std::vector<std::string> column_names(std::string_view text,
                                      const std::vector<NamedValue>& values) {
  std::vector<std::string> names;
  bool wait = false, step = false;
  std::string word;
  const auto flush = [&] {
    while (!word.empty() && word.back() == '_') word.pop_back();
    if (!word.empty()) {
      NamedValue probe;
      probe.name = word;
      const Quantity q = meaning_of(probe).quantity;
      if (q == Quantity::kDataWait || q == Quantity::kStep) {
        wait = wait || q == Quantity::kDataWait;
        step = step || q == Quantity::kStep;
        names.push_back(word);
      }
    }
    word.clear();
  };
  for (const char c : text) {
    const char l = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '_' || l == '-') {
      word.push_back(l == '-' ? '_' : l);
    } else {
      flush();
    }
  }
  flush();
  const bool own = std::any_of(values.begin(), values.end(), [&](const NamedValue& v) {
    return std::find(names.begin(), names.end(), v.name) != names.end();
  });
  if (!(wait && step) || own) names.clear();
  return names;
}

RunInfo new_run(const std::string& source, int64_t line) {
  RunInfo r;
  r.source = source;
  r.line = line;
  return r;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// A step's wait for data cannot exceed the step that contains it. When a log's data column
// does on some lines, either the column is no wait at all (a rate or a count: it is above the
// step on most lines) or the log's step is timed without its wait (the wait spikes above a
// steady step: the step is the two together). Decided once per log, from all its lines; a
// column whose every value states its duration unit ("64.61 ms fetch data") is a wait.
void settle_data_column(Telemetry& out, size_t first, int file, bool waits_have_units) {
  std::vector<double> steps, waits;
  int64_t over = 0;
  Origin at;
  for (size_t i = first; i < out.steps.size(); ++i) {
    const StepSample& s = out.steps[i];
    if (!s.has_data || s.average) continue;
    steps.push_back(s.step_seconds);
    waits.push_back(s.data_seconds);
    if (s.data_seconds > s.step_seconds * 1.001 + 1e-9) {
      if (over++ == 0) at = s.origin;
    }
  }
  if (over == 0) return;
  const bool not_a_wait = !waits_have_units && median_of(waits) > median_of(steps);
  for (size_t i = first; i < out.steps.size(); ++i) {
    StepSample& s = out.steps[i];
    if (!s.has_data) continue;
    if (not_a_wait) {
      s.has_data = false;
      s.data_seconds = 0;
    } else {
      s.step_seconds += s.data_seconds;
    }
  }
  out.notes.push_back(TelemetryNote{
      {file, at.line},
      not_a_wait ? "the data column is larger than the step on most lines: not read as seconds "
                   "of waiting for data (a rate or a count in that column?)"
                 : "the data wait exceeds the step on some lines: the step is timed without its "
                   "wait, so each step is read as the two together"});
}

// What a loader setting tells of the run it labels, beside the label the caller chooses: its
// threads (and whether of CPU work), its workers, and synthetic data.
void take_setting(RunInfo& run, const LoaderSetting& setting) {
  run.loader_threads = setting.threads;
  run.compute_threads = setting.compute_threads;
  run.loader_workers = setting.workers;
  run.synthetic = run.synthetic || setting.synthetic;
}

}  // namespace

// A duration as people type it in a table: "7m", "36 mins", "1 h 45 mins", "100 s",
// "69d 23h", "15:17" (mm:ss), "1:02:03"; nullopt for anything else.
std::optional<double> parse_duration(std::string_view cell) {
  cell = trim(cell);
  if (cell.empty()) return std::nullopt;
  if (cell.find(':') != std::string_view::npos) {
    double seconds = 0;
    int parts = 0;
    for (const std::string_view p : split_char(cell, ':')) {
      const auto v = parse_number(trim(p));
      if (!v || *v < 0) return std::nullopt;
      seconds = seconds * 60 + *v;
      ++parts;
    }
    return parts <= 3 ? std::optional<double>(seconds) : std::nullopt;
  }
  double seconds = 0;
  size_t i = 0;
  bool any = false;
  while (i < cell.size()) {
    while (i < cell.size() && cell[i] == ' ') ++i;
    size_t j = i;
    while (j < cell.size() && ((cell[j] >= '0' && cell[j] <= '9') || cell[j] == '.')) ++j;
    const auto v = parse_number(cell.substr(i, j - i));
    if (!v) return std::nullopt;
    while (j < cell.size() && cell[j] == ' ') ++j;
    size_t k = j;
    while (k < cell.size() && cell[k] != ' ' && !(cell[k] >= '0' && cell[k] <= '9')) ++k;
    const std::string unit = lower(cell.substr(j, k - j));
    double scale = 0;
    if (unit == "d" || unit == "day" || unit == "days") {
      scale = 86400;
    } else if (unit == "h" || unit == "hr" || unit == "hrs" || unit == "hour" || unit == "hours") {
      scale = 3600;
    } else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" ||
               unit == "minutes" || unit == "mn") {  // "30mn", French usage
      scale = 60;
    } else if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" ||
               unit == "seconds" || unit.empty()) {
      scale = 1;
    } else {
      return std::nullopt;
    }
    seconds += *v * scale;
    any = true;
    i = k;
  }
  return any ? std::optional<double>(seconds) : std::nullopt;
}

std::optional<double> bytes_of(std::string_view number, std::string_view unit) {
  const auto v = parse_number(number);
  if (!v) return std::nullopt;
  const std::string u = lower(unit);
  if (u == "b" || u.empty()) return *v;
  if (u == "kb" || u == "kib") return *v * 1024;
  if (u == "mb" || u == "mib") return *v * 1024 * 1024;
  if (u == "gb" || u == "gib") return *v * 1024 * 1024 * 1024;
  if (u == "tb" || u == "tib") return *v * 1024 * 1024 * 1024 * 1024;
  return std::nullopt;
}

namespace {

// A text without the author's note in parentheses that ends it ("+ 8x 3090 (headless)", "11.27
// (β 45% faster)"): the text as it is where it ends otherwise.
std::string_view without_trailing_note(std::string_view text) {
  if (const size_t open = text.find(" ("); open != std::string_view::npos && text.ends_with(')')) {
    return trim(text.substr(0, open));
  }
  return text;
}

// Whether `unit` is that of a duration of a minute or longer ("min", "hours", "d"; not
// "seconds", "ms"): seconds alone are as often a step's.
bool minutes_or_longer(std::string_view unit) {
  if (unit.empty()) return false;
  const auto one = parse_duration(fmt::format("1 {}", unit));
  return one && *one >= 60;
}

// Words that hedge or compare before a duration ("about 21 seconds", "also ~70 s", "on an avg
// 55 s", "an average of 2 h"), each a word of its own.
constexpr std::string_view kHedges[] = {
    "around", "about",  "approximately", "approx.", "roughly", "nearly", "almost", "even",
    "a",      "little", "bit",           "higher",  "longer",  "up",     "to",     "over",
    "still",  "only",   "just",          "now",     "already", "also",   "~",      "on",
    "an",     "avg",    "average",       "of"};

// The number of `words` from the first that hedge (kHedges), at most six.
size_t hedging_words(const std::vector<std::string_view>& words) {
  size_t k = 0;
  while (k < words.size() && k < 6) {
    std::string_view w = words[k];
    while (!w.empty() && (w.back() == ',' || w.back() == '.')) w.remove_suffix(1);
    if (std::find(std::begin(kHedges), std::end(kHedges), w) == std::end(kHedges)) break;
    ++k;
  }
  return k;
}

// The duration right after `at` in `text`, a few words of hedging first ("about 21 seconds",
// "also ~70 s", "only 1 h 5 min"); `any_unit` allows seconds alone. nullopt when none.
std::optional<double> duration_after(std::string_view text, size_t at, bool any_unit) {
  const std::vector<std::string_view> words = split_whitespace(text.substr(at));
  const size_t k = hedging_words(words);
  std::string cell;
  for (size_t m = k; m < words.size() && m < k + 2; ++m) {
    std::string_view w = words[m];
    if (w.starts_with('~')) w.remove_prefix(1);
    // "50+ mn": at least, read as said.
    while (!w.empty() &&
           (w.back() == ',' || w.back() == '.' || w.back() == ')' || (w.back() == '+' && m == k))) {
      w.remove_suffix(1);
    }
    cell += (cell.empty() ? "" : " ") + std::string(w);
  }
  // A unit is needed ("takes 21" is a count); minutes, hours or days unless `any_unit`.
  if (cell.empty() || !is_digit(cell[0])) return std::nullopt;
  size_t u = 0;
  while (u < cell.size() && (is_digit(cell[u]) || cell[u] == '.' || cell[u] == ' ')) ++u;
  const std::string_view unit = std::string_view(cell).substr(u, cell.find(' ', u) - u);
  if (unit.empty() || !(any_unit || minutes_or_longer(unit))) return std::nullopt;
  return parse_duration(cell);
}

// A timer's row of statistics, "allreduce : min_elapsed 0.505 avg_elapsed 0.592 max_elapsed
// 0.640" (jax#1009's benchmark of its phases), read as one timer under the row's label at its
// average; nullopt for any other line. Values without a unit are seconds (milliseconds when
// their names end in "_ms").
std::optional<NamedValue> timer_statistics_row(std::string_view line,
                                               const std::vector<NamedValue>& values) {
  if (values.size() < 2) return std::nullopt;
  const NamedValue* average = nullptr;
  for (const NamedValue& v : values) {
    const std::string_view n = v.name;
    // "min", "min_elapsed", not "minibatch" or "minutes".
    const auto stat_named = [&](std::string_view w) {
      return n.starts_with(w) && (n.size() == w.size() || n[w.size()] == '_');
    };
    const bool stat = stat_named("min") || stat_named("max") || stat_named("avg") ||
                      stat_named("mean") || stat_named("std") || stat_named("median") ||
                      stat_named("minimum") || stat_named("maximum") || stat_named("stddev") ||
                      stat_named("average");
    const bool timed =
        duration_scale(v.unit) ||
        (v.unit.empty() && (n.find("elapsed") != n.npos || n.find("time") != n.npos));
    if (!stat || !timed) return std::nullopt;
    if (!average && (stat_named("avg") || stat_named("mean") || stat_named("average"))) {
      average = &v;
    }
  }
  const size_t colon = line.find(':');
  if (!average || colon == std::string_view::npos || colon >= values.front().column) {
    return std::nullopt;
  }
  const std::string_view label = trim(line.substr(0, colon));
  if (label.empty() || label.size() > 40 || !std::all_of(label.begin(), label.end(), [](char c) {
        return is_alpha(c) || is_digit(c) || c == '_';
      })) {
    return std::nullopt;
  }
  std::string unit = average->unit;
  if (unit.empty()) unit = average->name.ends_with("_ms") ? "ms" : "s";
  return NamedValue{lower(label), std::move(unit), average->value, std::nullopt, colon + 1};
}

// Words that name what is left of a run ("Remaining time", "eta", "time left"), not its length.
bool names_time_left(std::string_view text) {
  for (const std::string& w : alnum_words(lower(text), false)) {
    if (w.starts_with("remain") || w == "eta" || w == "left") return true;
  }
  return false;
}

// A log record's message, after its logger's prefix: loguru's "2022-07-02 07:42:09.937 | INFO
// | __main__:train:68 - time : 0:00:10.7" and Python logging's "2022-10-20 15:46:06,536 - INFO -
// ..." (a date, a level, then " - "); the line itself when it has no such prefix.
std::string_view log_message(std::string_view line) {
  if (line.size() < 20 || !is_digit(line[0]) || line[4] != '-' || line[7] != '-') return line;
  const std::string_view head = line.substr(0, 64);
  for (const std::string_view level : {" INFO ", " WARNING ", " DEBUG ", " ERROR ", " WARN "}) {
    const size_t at = head.find(level);
    if (at == std::string_view::npos) continue;
    const size_t dash = line.find(" - ", at + level.size() - 1);
    return dash == std::string_view::npos ? line : line.substr(dash + 3);
  }
  return line;
}

// Names of a whole run's wall-clock time.
// (A lone "elapse" is PaddleClas's step time; a "total elapsed" is as often a running total.)
constexpr std::string_view kWholeRunTimes[] = {"runtime",      "run time",        "elapsed time",
                                               "wall time",    "wall-clock time", "wall clock time",
                                               "train elapse", "training elapse"};

// "Training time: 36 mins", "Total time: 1 h 45 mins": how long a whole run (or an epoch) took,
// a name with "time" before a duration in minutes or hours (seconds alone are a step's time,
// except under a name of a whole run's: "runtime: 152 sec").
// Words of a subject that is not the training run's ("downloading the dataset takes 2 hours",
// "evaluation took 10 min", "the remaining 3 epochs will take"): what a clause's "takes" times.
// Stems of its words.
constexpr std::string_view kOtherPhases[] = {
    "download", "load",  "preprocess", "evaluat", "validat", "test",    "compil",
    "install",  "build", "will",       "would",   "should",  "estimat", "inferenc"};

std::optional<double> run_duration(std::string_view line, bool& epoch) {
  // MLPerf's reference run_and_time.sh prints "RESULT,<benchmark>,<seed>,<seconds>,<user>,<start
  // time>" when a run ends (grep's "file.log:" before it): the run's duration to train.
  if (const size_t at = line.find("RESULT,");
      at != std::string_view::npos && (at == 0 || line[at - 1] == ':')) {
    const std::vector<std::string_view> fields = split_char(line.substr(at + 7), ',');
    if (fields.size() >= 5 && !trim(fields[0]).empty() && is_alpha(trim(fields[0])[0]) &&
        !trim(fields[3]).empty()) {
      if (const auto seconds = parse_number(trim(fields[2])); seconds && *seconds >= 0) {
        epoch = false;
        return seconds;
      }
    }
  }
  // "= approx. 9 min per epoch", "8:30 per epoch", "2 h/epoch", "1x TITAN XP，260s/epoch", "it
  // takes ~70 second for 1 epoch" (fairseq#4452): an epoch's duration.
  const std::string text = lower(in_english(line));
  // "1x V100 (~21 min epoch)" (yolov3#405): a duration right before the word.
  for (const std::string_view per : {" per epoch", "/epoch", " for 1 epoch", " for one epoch",
                                     " for an epoch", " for each epoch", " epoch"}) {
    const size_t at = text.find(per);
    if (at == std::string::npos) continue;
    // Not "epochs" (a count: "10 epochs"), nor another word that starts so.
    const size_t end = at + per.size();
    if (end < text.size() && is_alpha(text[end])) continue;
    // The bare word is an epoch's duration only as "(~21 min epoch)": not "epoch 3" (a counter
    // after a log's time of day, "12:30:01 epoch 3"; "after 2 hours epoch 3 had loss 0.5").
    const bool bare = per == " epoch";
    if (bare) {
      size_t next = end;
      while (next < text.size() && text[next] == ' ') ++next;
      if (next < text.size() && (is_digit(text[next]) || text[next] == '#')) continue;
    }
    const std::vector<std::string_view> words =
        split_whitespace(std::string_view(text).substr(0, at));
    // The longest run of the last few words that is a duration ("1 h 45 min", "9 min", "8:30").
    for (size_t take = std::min<size_t>(words.size(), 4); take >= 1; --take) {
      std::string cell;
      for (size_t k = words.size() - take; k < words.size(); ++k) {
        std::string_view w = words[k];
        // "(~21 min epoch)": the note's parenthesis is not the duration's.
        if (k == words.size() - take && w.starts_with('(')) w.remove_prefix(1);
        // "~70 second": about (a sentence's; a table's cells are read as its columns).
        if (w.starts_with('~') && text.find('|') == std::string::npos) w.remove_prefix(1);
        cell += std::string(w) + (k + 1 < words.size() ? " " : "");
      }
      // A duration has a unit or a clock's colon: "3 per epoch" is a count. Before the bare
      // word, a unit: a clock there is the log's time of day ("12:30:01 epoch done").
      if (std::none_of(cell.begin(), cell.end(),
                       [&](char c) { return is_alpha(c) || (c == ':' && !bare); })) {
        continue;
      }
      if (const auto d = parse_duration(cell)) {
        epoch = true;
        return d;
      }
    }
  }
  // Keras' epoch line at verbose=2, under its "Epoch 1/50": " - 22s - loss: 0.4644 - ...",
  // after a launcher's prefix if any (TF 2's "938/938 - 2s - loss" is read by its counter).
  for (size_t at = text.find(" - "); at != std::string::npos; at = text.find(" - ", at + 1)) {
    size_t end = at + 3;
    while (end < text.size() && (is_digit(text[end]) || text[end] == '.')) ++end;
    if (end == at + 3 || !std::string_view(text).substr(end).starts_with("s - ")) continue;
    const size_t rest = text.find("loss", end);
    if (rest == std::string::npos || rest > end + 24) continue;
    epoch = true;
    return parse_number(std::string_view(text).substr(at + 3, end - at - 3));
  }
  // "At 8 GPUs training time is around 30 minutes", "the estimated running time is even a
  // little higher, up to 18 hours" (mmsegmentation#3170): a time said in a sentence to be a
  // duration of minutes, hours or days, after a few words that hedge or compare.
  for (const std::string_view is : {"time is ", "time was ", "time becomes ", "time goes up to "}) {
    const size_t at = text.find(is);
    if (at == std::string::npos || (at > 0 && is_alpha(text[at - 1]))) continue;
    // The words before "time", within the clause: up to 24 characters back, not past a '.' or
    // a ';' ("I hit a wall. Step time is 0.5 seconds").
    std::string_view before =
        std::string_view(text).substr(at > 24 ? at - 24 : 0, std::min<size_t>(at, 24));
    if (const size_t stop = before.find_last_of(".;"); stop != std::string_view::npos) {
      before.remove_prefix(stop + 1);
    }
    // "WALL training time is 63.598 seconds" (discuss.pytorch 136017): a wall clock's time is
    // the run's, in seconds too — not a step's ("per-step wall time is 0.40 seconds").
    const std::vector<std::string> named = alnum_words(before, false);
    const auto said = [&](std::string_view w) {
      return std::find(named.begin(), named.end(), w) != named.end();
    };
    const bool wall = said("wall") && !said("step") && !said("iteration") && !said("iter") &&
                      !said("batch") && !said("epoch") && !said("per");
    // "the cost time is also 12 days" is the other side of a comparison: read with the side
    // it refers to (compared_duration), not alone.
    if (std::string_view(text).substr(at + is.size()).starts_with("also ")) continue;
    // What is left of a run ("the remaining time is 3 hours", "eta time is") is not its length.
    if (names_time_left(before)) continue;
    if (const auto d = duration_after(text, at + is.size(), wall)) return d;
  }
  // "each epoch takes 21 seconds with 1 GPU" (accelerate#71): an epoch's, in any unit.
  for (const std::string_view takes : {"epoch takes ", "epoch took ", "epoch is taking "}) {
    const size_t at = text.find(takes);
    if (at == std::string::npos) continue;
    if (const auto d = duration_after(text, at + takes.size(), true)) {
      epoch = true;
      return d;
    }
  }
  // "running this on a single GPU takes around 30mn" (tf-slim's users, as a clause of its own
  // beside "while running on 4 GPUs takes 50+ mn"): a run at the scale the clause names, in
  // minutes or longer (seconds are as often a step's).
  if (std::optional<int> nodes; gpu_count_of(text, &nodes).has_value() || nodes) {
    for (const std::string_view takes : {" takes ", " took ", " take "}) {
      const size_t at = text.find(takes);
      if (at == std::string::npos) continue;
      // Not what is left ("the remaining epochs will take"), nor another phase ("downloading
      // the dataset alone takes 2 hours"); an epoch's where the subject is one ("each epoch now
      // takes about 30 minutes").
      const std::string_view subject = std::string_view(text).substr(0, at);
      const std::vector<std::string> words = alnum_words(subject, false);
      if (names_time_left(subject) ||
          std::any_of(words.begin(), words.end(), [](const std::string& w) {
            return std::any_of(std::begin(kOtherPhases), std::end(kOtherPhases),
                               [&](std::string_view stem) { return w.starts_with(stem); });
          })) {
        break;
      }
      if (const auto d = duration_after(text, at + takes.size() - 1, false)) {
        epoch = has_whole_word(subject, "epoch");
        return d;
      }
    }
  }
  line = log_message(line);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  // A run's settings, an arrow, its result ("- batch size = 32, nproc_per_node = 2 => Runtime:
  // 17:11", ignite-examples#75): the name is what follows the arrow.
  std::string_view named = line.substr(0, colon);
  for (const std::string_view arrow : {"=>", "->"}) {
    if (const size_t at = named.rfind(arrow); at != std::string_view::npos) {
      named = named.substr(at + arrow.size());
    }
  }
  // A list's marker and a note in parentheses are not the name ("+ 8x 3090 (headless): ~25
  // hours" names 8x 3090).
  named = trim(named);
  if (named.size() > 2 && (named[0] == '+' || named[0] == '-' || named[0] == '*') &&
      named[1] == ' ') {
    named.remove_prefix(2);
  }
  named = without_trailing_note(named);
  const std::string name = lower(trim(named));
  if (names_time_left(name)) return std::nullopt;
  std::string_view rest = trim(line.substr(colon + 1));
  // "~16 hours", "about 2 h": how long, hedged.
  if (rest.starts_with('~')) rest = trim(rest.substr(1));
  if (const auto words = split_whitespace(rest); const size_t hedges = hedging_words(words)) {
    rest = hedges < words.size()
               ? rest.substr(static_cast<size_t>(words[hedges].data() - rest.data()))
               : std::string_view();
  }
  // "Training time: 1h 45m", and a scale's own line, "2 gpu: 0.203h" (yolov5#282).
  // "duration:  0:03:23.520224" (a clock after "duration") names one too.
  // "runtime: 152 sec" (petastorm#432), "elapsed time: 95 s", "wall time", "1 GPU train elapse"
  // (xgboost#8986): a whole run's by its name, in seconds too.
  const bool whole_run = std::any_of(
      std::begin(kWholeRunTimes), std::end(kWholeRunTimes),
      [&](std::string_view w) { return name == w || name.ends_with(fmt::format(" {}", w)); });
  const bool names_a_time = whole_run || name.find("time") != std::string::npos ||
                            name == "duration" || name.ends_with(" duration");
  const bool names_a_scale =
      !names_a_time && split_whitespace(name).size() <= 3 && gpu_count_of(name).has_value();
  // MXNet's epoch clock, "Epoch[0] Time cost=910.123", as people quote it per scale ("With 2
  // GPU, Time-cost : 924 sec"): an epoch's duration in seconds.
  const bool time_cost = (name.ends_with("time-cost") || name.ends_with("time cost")) &&
                         name.find("iter") == std::string::npos &&
                         name.find("step") == std::string::npos &&
                         name.find("batch") == std::string::npos;
  if (name.size() > 32 || !(names_a_time || names_a_scale) ||
      (!time_cost && !whole_run && rest.find_first_of("hm:") == std::string_view::npos)) {
    return std::nullopt;
  }
  epoch = time_cost || name.find("epoch") != std::string::npos;
  return parse_duration(rest);
}

// "49s per epoch using a single GPU vs. 82s using 4 GPUs" (nnUNet#795), "each epoch takes 21
// seconds with 1 GPU. When using 2 GPUs, it also takes 21 seconds" (accelerate#71): the clause
// after the comparison leaves out the unit its first term named. Its leading duration ("82s", "~70
// seconds", "1 h 5 min"), followed by the scale it ran at ("using 4 GPUs", "with 8 V100s",
// "on 2 nodes"), is the same kind of duration; one that says it times more ("2 hours for all
// 50 epochs using 4 GPUs", "in total") is not.
std::optional<double> compared_duration(std::string_view clause) {
  const std::string text = lower(in_english(clause));
  const std::vector<std::string_view> words = split_whitespace(text);
  for (const std::string_view w : words) {
    if (w.starts_with("epochs") || w == "total" || w == "whole" || w == "all" ||
        w.starts_with("run")) {
      return std::nullopt;
    }
  }
  // "When using 2 GPUs, it also takes 21 seconds": a scale and what it takes.
  if (gpu_count_of(text)) {
    for (const std::string_view takes : {" takes ", " took "}) {
      if (const size_t at = text.find(takes); at != std::string::npos) {
        return duration_after(text, at + takes.size(), true);
      }
    }
  }
  std::string cell;
  for (size_t take = 0; take < words.size() && take < 4; ++take) {
    std::string_view w = words[take];
    if (take == 0 && w.starts_with('~')) w.remove_prefix(1);
    if (take) cell += ' ';
    cell += w;
    const bool unit = std::any_of(cell.begin(), cell.end(), [](char c) { return is_alpha(c); });
    const std::string_view next = take + 1 < words.size() ? words[take + 1] : "";
    if (!unit || (next != "using" && next != "with" && next != "on")) continue;
    std::string scale;  // the few words after the preposition
    for (size_t k = take + 2; k < words.size() && k < take + 6; ++k) {
      scale += std::string(words[k]) + " ";
    }
    return gpu_count_of(scale) ? parse_duration(cell) : std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::pair<size_t, double>> durations_at(std::string_view clause, bool longer);

// A sentence setting the first epoch's speed against a later one's: "on the first epoch, the
// training speed is only about 8 it/s, but it is continuously accelerating and increased to 30
// it/s at the third epoch" (prototypical-networks#15), "the first epoch takes 950 s, the
// following epochs 440 s". Two rates of one unit, or two durations; each value belongs to the
// epoch its clause names (below). nullopt when the sentence does not name both epochs.
std::optional<Telemetry::EpochsCompared> epochs_compared_in(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return std::nullopt;
  // Most lines of a long log say no "first" (many say "Epoch"): passed over without a copy.
  if (line.find("irst") == std::string_view::npos && line.find("IRST") == std::string_view::npos &&
      line.find("1st") == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string text = lower(line);
  // The phrase as words of its own: "21st epoch" is no "1st epoch".
  const auto find_any = [&](std::initializer_list<std::string_view> phrases) {
    for (const std::string_view p : phrases) {
      for (size_t at = text.find(p); at != std::string::npos; at = text.find(p, at + 1)) {
        if (at == 0 || !(is_alpha(text[at - 1]) || is_digit(text[at - 1]))) return at;
      }
    }
    return std::string::npos;
  };
  const size_t first = find_any({"first epoch", "1st epoch"});
  const size_t later = find_any({"second epoch", "third epoch", "2nd epoch", "3rd epoch",
                                 "later epoch", "following epoch", "subsequent epoch", "next epoch",
                                 "other epochs", "remaining epochs"});
  if (first == std::string::npos || later == std::string::npos) return std::nullopt;
  // A first epoch that also compiles, traces or warms up, a checkpoint's save, a benchmark
  // beside the epochs: what the two values time is not the same epoch's work.
  for (const std::string_view other :
       {"compil", "xla", "jit", "warm", "trac", "checkpoint", "saving", "synthetic", "benchmark"}) {
    if (text.find(other) != std::string::npos) return std::nullopt;
  }
  std::vector<NamedValue> rates, durations;
  for (NamedValue& v : named_values(line)) {
    const Meaning m = meaning_of(v);
    if (m.quantity == Quantity::kRate && !m.rate_unit.empty()) {
      v.unit = m.rate_unit;
      rates.push_back(std::move(v));
    } else if (duration_scale(v.unit)) {
      v.value *= *duration_scale(v.unit);
      v.unit = "s";
      durations.push_back(std::move(v));
    }
  }
  // Durations in words that the vocabulary reads as bare numbers ("an epoch in 20-30 minutes on
  // 8 V100", "less than 2 minutes per epoch"): a unit followed by more words.
  if (durations.size() != 2) {
    durations.clear();
    for (const auto& [column, seconds] : durations_at(text, true)) {
      NamedValue v;
      v.value = seconds;
      v.unit = "s";
      v.column = column;
      durations.push_back(std::move(v));
    }
  }
  // A value's epoch: the one its clause names, else the one the clause just before it names
  // ("on the first epoch, the training speed is only about 8 it/s").
  static constexpr std::array<std::string_view, 7> kBreaks = {
      ",", ";", ". ", " but ", " while ", " whereas ", " and "};
  struct Clause {
    size_t from = 0, to = 0;
    size_t break_at = std::string::npos;  // where the break before it starts
  };
  const auto clause_around = [&](size_t column) {
    Clause c{0, text.size()};
    for (const std::string_view b : kBreaks) {
      const size_t before = column == 0 ? std::string::npos : text.rfind(b, column - 1);
      if (before != std::string::npos && before + b.size() <= column &&
          before + b.size() > c.from) {
        c.from = before + b.size();
        c.break_at = before;
      }
      const size_t after = text.find(b, column);
      if (after != std::string::npos && after < c.to) c.to = after;
    }
    return c;
  };
  // Else the sentence around it, when that names one of the two ("my first epoch is extremely
  // slow, i am doing an imagenet epoch in 20-30 minutes. from the second epoch and forth, i am
  // getting much better speeds, less than 2 minutes per epoch": two lines of a paragraph).
  const auto sentence_epoch = [&](size_t column) -> std::optional<bool> {
    size_t from = 0, to = text.size();
    for (const std::string_view end : {". ", "; "}) {
      const size_t before = column == 0 ? std::string::npos : text.rfind(end, column - 1);
      if (before != std::string::npos) from = std::max(from, before + end.size());
      to = std::min(to, text.find(end, column));
    }
    const bool has_first = first >= from && first < to;
    const bool has_later = later >= from && later < to;
    if (has_first == has_later) return std::nullopt;
    return has_first;
  };
  const auto epoch_of = [&](size_t column) -> std::optional<bool> {  // true: the first
    const size_t at = column;
    for (int clause = 0; clause < 2; ++clause) {
      const Clause c = clause_around(column);
      const bool has_first = first >= c.from && first < c.to;
      const bool has_later = later >= c.from && later < c.to;
      if (has_first != has_later) return has_first;
      if (has_first || c.break_at == std::string::npos || c.break_at == 0) break;
      column = c.break_at - 1;  // the clause before
    }
    return sentence_epoch(at);
  };
  for (const std::vector<NamedValue>* values : {&rates, &durations}) {
    if (values->size() != 2 || (*values)[0].unit != (*values)[1].unit) continue;
    const NamedValue& a = (*values)[0];
    const NamedValue& b = (*values)[1];
    if (a.value <= 0 || b.value <= 0) continue;
    const std::optional<bool> a_first = epoch_of(a.column), b_first = epoch_of(b.column);
    if (!a_first || !b_first || *a_first == *b_first) continue;
    const NamedValue& of_first = *a_first ? a : b;
    const NamedValue& of_later = *a_first ? b : a;
    Telemetry::EpochsCompared c;
    c.first = of_first.value;
    c.later = of_later.value;
    c.unit = values == &rates ? of_first.unit + "/s" : "s";
    c.first_slower_by = values == &rates ? c.later / c.first : c.first / c.later;
    return c;
  }
  return std::nullopt;
}

// The number of digits and dots that starts at `from` in `text` ("20.5" of "20.5-30 min"), its
// end in `end`; nullopt where they make no number.
std::optional<double> number_from(std::string_view text, size_t from, size_t& end) {
  end = from;
  while (end < text.size() && (is_digit(text[end]) || text[end] == '.')) ++end;
  return parse_number(text.substr(from, end - from));
}

// A GPU's use said to swing between idle and busy (Telemetry::UtilisationSwing): a line naming
// the GPU's use (its utilisation, usage, load; not its memory, fan, power or temperature, nor a
// loss, an accuracy or the CPU), a word of swinging, and a range of percentages ("from 0% to
// 100%", "between 0 and 100%", "0-100%"), the low at most 30 and the high at least 70. `text`:
// the line lower-cased (the reader's own `low`: not copied again for each line of a long log).
std::optional<std::pair<double, double>> utilisation_swing(std::string_view text) {
  if (text.size() > kMaxPastedLineBytes) return std::nullopt;
  const auto has = [&](std::string_view w) { return text.find(w) != std::string_view::npos; };
  if (!has("gpu") || !(has("util") || has("usage") || has("used") || has("busy") || has("load"))) {
    return std::nullopt;
  }
  for (const std::string_view w : {"cpu", "mem", "fan", "power", "temp", "accuracy", "loss"}) {
    if (has(w)) return std::nullopt;
  }
  static constexpr std::string_view kSwings[] = {
      "oscillat", "fluctuat",    "jumps",          "jumping", "alternat", "swing",
      "bounc",    "up and down", "back and forth", "spikes",  "spiking"};
  if (std::none_of(std::begin(kSwings), std::end(kSwings), has)) return std::nullopt;
  // A range: a number, a word or sign joining it to the next, that one's '%' ("0 to 100%",
  // "0% and 95%", "0-100%").
  for (size_t i = 0; i < text.size(); ++i) {
    if (!is_digit(text[i]) ||
        (i > 0 && (is_alpha(text[i - 1]) || is_digit(text[i - 1]) || text[i - 1] == '.'))) {
      continue;
    }
    size_t end = i;
    const auto low = number_from(text, i, end);
    size_t j = end;
    if (j < text.size() && text[j] == '%') ++j;
    for (const std::string_view joint : {" to ", " and ", "-", " - ", "~", " ~ "}) {
      if (std::string_view(text).substr(j).starts_with(joint)) {
        size_t high_end = 0;
        const size_t from = j + joint.size();
        if (from >= text.size() || !is_digit(text[from])) break;
        const auto high = number_from(text, from, high_end);
        size_t percent = high_end;
        while (percent < text.size() && text[percent] == ' ') ++percent;
        if (low && high && percent < text.size() && text[percent] == '%' && *low <= 30 &&
            *high >= 70 && *high <= 100) {
          return std::make_pair(*low, *high);
        }
        break;
      }
    }
    i = end;
  }
  return std::nullopt;
}

// "GPU: 45%", "my GPU is only at 10-20%", "the GPU is at 15% while ...": a percentage of the
// GPU itself (the filler dropped from its name, "my", "the" or "our" before it) is its use —
// unless words after it make it a comparison ("the GPU is 20% faster") or another quantity
// ("of its memory"). Not "memory of the GPU", nor "dummy GPU".
bool gpu_itself_at(const NamedValue& v, std::string_view low) {
  if (v.unit != "%") return false;
  const std::string_view name = without_filler(v.name);
  if (!(name == "gpu" || name == "my_gpu" || name == "our_gpu" || name.ends_with("_my_gpu") ||
        name.ends_with("_our_gpu"))) {
    return false;
  }
  const size_t percent = low.find('%', v.column);
  if (percent == std::string_view::npos) return false;
  const std::string_view after = trim(low.substr(percent + 1));
  if (after.empty() || !is_alpha(after.front()) || after.starts_with("of the time")) return true;
  const std::string_view word = after.substr(0, after.find_first_of(" ,.;:)"));
  for (const std::string_view w :
       {"but", "and", "while", "when", "during", "most", "all", "util", "utilization",
        "utilisation", "usage", "load", "busy", "in", "on", "at", "with"}) {
    if (word == w) return true;
  }
  return false;
}

// "CPU utilization was full", "the CPUs are maxed out", "CPU usage is always at peak", "100%
// on all CPUs": the CPUs busy, said in words (the reader of a screenshot), read as 100 %.
bool cpu_said_full(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return false;
  const std::string text = lower(line);
  for (const std::string_view cpu : {"cpu utilization", "cpu utilisation", "cpu usage", "cpu util",
                                     "cpu load", "cpus are", "cpu is", "cpu was"}) {
    for (size_t at = text.find(cpu); at != std::string::npos; at = text.find(cpu, at + 1)) {
      // The words up to the end of the clause, at most 24 characters.
      std::string_view after = std::string_view(text).substr(at + cpu.size(), 24);
      after = after.substr(0, std::min(after.find_first_of(",;."), after.find(" but ")));
      // "If the CPU is maxed out, ...", "whether the cpu is full": a condition, not a look.
      const std::string_view before =
          std::string_view(text).substr(at >= 16 ? at - 16 : 0, at >= 16 ? 16 : at);
      const bool negated = after.find(" not") != std::string_view::npos ||
                           after.find("n't") != std::string_view::npos ||
                           after.find(" never") != std::string_view::npos ||
                           after.find('?') != std::string_view::npos ||
                           has_whole_word(before, "if") || has_whole_word(before, "whether") ||
                           has_whole_word(before, "unless");
      // "at peak was around 40%", "rarely at peak", "at peak only during startup": a number
      // or a word that bounds the claim makes it no reading of 100 %.
      const bool bounded =
          std::any_of(after.begin(), after.end(), [](char c) { return is_digit(c); }) ||
          after.find("rarely") != std::string_view::npos ||
          after.find("only") != std::string_view::npos ||
          after.find("seldom") != std::string_view::npos ||
          after.find("during") != std::string_view::npos ||
          after.find("sometimes") != std::string_view::npos;
      for (const std::string_view full :
           {" full", " maxed", " at max", " at peak", " pegged", " saturated"}) {
        if (after.find(full) != std::string_view::npos && !negated && !bounded) return true;
      }
    }
  }
  // "htop shows 100% on all CPUs", "all cores at 100%": every core busy, in numbers — the 100 %
  // right before the phrase (with "on", "across" between) or right after it (with "are", "at"),
  // in a clause that does not call them idle.
  const auto is_full = [](std::string_view t) { return t == "100%" || t == "100 %"; };
  for (const std::string_view all : {"all cpus", "all cores", "all the cpus", "all the cores",
                                     "every cpu", "every core", "all threads"}) {
    for (size_t at = text.find(all); at != std::string::npos; at = text.find(all, at + 1)) {
      const size_t clause_begin = text.find_last_of(",;.", at);
      const size_t clause_end = text.find_first_of(",;.", at);
      const std::string_view clause = std::string_view(text).substr(
          clause_begin == std::string::npos ? 0 : clause_begin + 1,
          clause_end == std::string::npos ? std::string::npos : clause_end - clause_begin);
      if (clause.find("idle") != std::string_view::npos ||
          clause.find("not ") != std::string_view::npos ||
          clause.find("n't") != std::string_view::npos ||
          clause.find("never") != std::string_view::npos) {
        continue;
      }
      std::string_view before = trim(std::string_view(text).substr(0, at));
      for (const std::string_view w : {" on", " across", " for", " in"}) {
        if (before.ends_with(w)) {
          before = trim(before.substr(0, before.size() - w.size()));
          break;
        }
      }
      const bool before_full = (before.size() >= 4 && is_full(before.substr(before.size() - 4))) ||
                               (before.size() >= 5 && is_full(before.substr(before.size() - 5)));
      std::string_view after = trim(std::string_view(text).substr(at + all.size()));
      for (const std::string_view w :
           {"are at ", "were at ", "are ", "were ", "at ", "running at "}) {
        if (after.starts_with(w)) {
          after = trim(after.substr(w.size()));
          break;
        }
      }
      const bool after_full = is_full(after.substr(0, 4)) || is_full(after.substr(0, 5));
      if (before_full || after_full) return true;
    }
  }
  return false;
}

// fairseq's clocks on a log line: the wall clock since the start, the time spent in training
// steps (cumulative in older releases, per logging interval in newer ones) and the updates.
struct TrainingClock {
  Line line;
  double wall = 0, train_wall = 0, updates = 0;
};

// Between two lines, the wall clock's advance against the training steps' time: what is left
// is the time outside the steps (waiting for data, and validation or checkpoints between
// them), an upper bound of the wait. One sample per interval, each an average over its
// updates, in `run`. The first line's clocks include the start (loading the data set), so only
// intervals count. train_wall is cumulative (older releases) when it never falls and some
// line's exceeds its interval's wall, which a per-interval clock (train_inner) cannot.
bool training_share_of(const std::vector<TrainingClock>& clocks, int run, int64_t& order,
                       PasteFiles& files, Telemetry& out) {
  if (clocks.size() < 2) return false;
  bool never_falls = true, exceeds_interval = false;
  for (size_t i = 1; i < clocks.size(); ++i) {
    if (clocks[i].train_wall < clocks[i - 1].train_wall) never_falls = false;
    if (clocks[i].train_wall > clocks[i].wall - clocks[i - 1].wall + 1) exceeds_interval = true;
  }
  const bool cumulative = never_falls && exceeds_interval;
  bool found = false;
  for (size_t i = 1; i < clocks.size(); ++i) {
    const double wall = clocks[i].wall - clocks[i - 1].wall;
    const double train =
        cumulative ? clocks[i].train_wall - clocks[i - 1].train_wall : clocks[i].train_wall;
    const double updates = clocks[i].updates - clocks[i - 1].updates;
    // Clocks are whole seconds: a step may read a second over the wall.
    if (wall <= 0 || updates <= 0 || train < 0 || train > wall + 1) continue;
    StepSample s;
    s.origin = {files.of(TelemetryKind::kTrainLog), clocks[i].line.number};
    s.step_seconds = wall / updates;
    s.data_seconds = std::max(0.0, wall - train) / updates;
    s.has_data = true;
    s.average = true;
    s.data_upper_bound = true;
    s.run = run;
    s.time = static_cast<double>(order++);
    out.steps.push_back(s);
    found = true;
  }
  return found;
}

// A sentence setting one GPU against the rest: "GPU 0 is at 100 % util while the others are at
// 0 %", "rank=0的卡GPU利用率为0，其余卡利用率100%" (rank 0's card at 0, the other cards at
// 100 %) — the picture of one nvidia-smi table, told in words.
struct OneAgainstRest {
  int gpu = 0;
  double util = 0;       // the named GPU's
  double rest_util = 0;  // each other GPU's
  int rest_count = 1;    // the GPU count stated, else "the others" two, "the other GPU" one
  bool counted = false;  // the line states the GPU count
};

// The first utilisation in text[from, to): a percentage, or a bare number a few characters
// after a utilisation word ("utilization is 0").
std::optional<double> utilisation_in(std::string_view text, size_t from, size_t to) {
  for (size_t i = from; i < to && i < text.size(); ++i) {
    if (!is_digit(text[i]) || (i > 0 && (is_digit(text[i - 1]) || text[i - 1] == '.'))) continue;
    size_t e = i;
    while (e < text.size() && (is_digit(text[e]) || text[e] == '.')) ++e;
    size_t k = e;
    while (k < text.size() && text[k] == ' ') ++k;
    const bool percent = k < text.size() && text[k] == '%';
    const size_t look = i >= 24 ? i - 24 : 0;
    const std::string_view before = text.substr(look, i - look);
    const bool named = before.find("util") != std::string_view::npos ||
                       before.find("usage") != std::string_view::npos;
    if (percent || (named && (k >= text.size() || !is_alpha(text[k])))) {
      const auto v = parse_number(text.substr(i, e - i));
      if (v && *v >= 0 && *v <= 100) return v;
    }
    i = e;
  }
  return std::nullopt;
}

// One sentence of a paragraph (lower case, in English); `count` is the GPU count the paragraph
// states.
std::optional<OneAgainstRest> one_against_rest(std::string_view text, std::optional<int> count) {
  if (text.find("util") == std::string::npos && text.find("usage") == std::string::npos) {
    return std::nullopt;
  }
  // The named GPU: a device word, then its index ("gpu 0", "gpu0", "rank=0", "cuda:1"), or
  // "the first GPU".
  size_t named_end = std::string::npos, named_at = std::string::npos;
  int gpu = 0;
  for (const std::string_view first : {"first gpu", "first card", "first rank"}) {
    if (const size_t at = text.find(first); at != std::string::npos && at < named_at) {
      named_at = at, named_end = at + first.size();
    }
  }
  for (const std::string_view word : {"gpu", "rank", "card", "device", "cuda"}) {
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
      size_t k = at + word.size();
      while (k < text.size() && (text[k] == ' ' || text[k] == ':' || text[k] == '=' ||
                                 text[k] == '#' || text[k] == '_')) {
        ++k;
      }
      size_t e = k;
      while (e < text.size() && is_digit(text[e])) ++e;
      if (e == k || e - k > 3 || (e < text.size() && (text[e] == '%' || text[e] == '.'))) {
        continue;
      }
      if (named_at == std::string::npos || at < named_at) {
        named_at = at, named_end = e;
        gpu = std::stoi(std::string(text.substr(k, e - k)));
      }
      break;
    }
  }
  if (named_end == std::string::npos) return std::nullopt;
  size_t rest_at = std::string::npos;
  bool plural = true;
  for (const std::string_view word : {" other", " rest", " remaining"}) {
    const size_t at = text.find(word, named_end);
    if (at < rest_at) rest_at = at, plural = word != " other";
  }
  if (rest_at == std::string::npos) return std::nullopt;
  if (!plural) {
    const size_t after = rest_at + 6;
    plural = text.compare(after, 1, "s") == 0 || text.compare(after, 5, " gpus") == 0 ||
             text.compare(after, 6, " cards") == 0 || text.compare(after, 6, " ranks") == 0;
  }
  // "GPU 0 memory usage is 100 % while the others are at 10 %": memory, not utilisation.
  for (const std::string_view memory : {"mem", "vram"}) {
    if (text.substr(0, rest_at).find(memory) != std::string_view::npos) return std::nullopt;
  }
  const auto util = utilisation_in(text, named_end, rest_at);
  const auto rest = utilisation_in(text, rest_at, rest_at + 80);
  if (!util || !rest) return std::nullopt;
  OneAgainstRest told{gpu, *util, *rest, plural ? 2 : 1, !plural};
  if (count && *count > 1 && gpu < *count) {
    told.rest_count = *count - 1;
    told.counted = true;
  }
  return told;
}

// The first sentence of a paragraph that sets one GPU against the rest; `text` is the line
// lower-cased and in English.
std::optional<OneAgainstRest> one_against_rest(std::string_view line, std::string_view text) {
  if (text.find("util") == std::string_view::npos && text.find("usage") == std::string_view::npos) {
    return std::nullopt;
  }
  const std::optional<int> count = gpu_count_of(line);
  for (const std::string_view sentence : sentences_of(text)) {
    if (const auto told = one_against_rest(sentence, count)) return told;
  }
  return std::nullopt;
}

// A step's time and its wait for data told in a sentence: "Each iteration takes about 1.2s, of
// which 0.9s is spent waiting for data", "data loading takes 2s per iteration while
// forward/backward takes 0.5s", "a step takes a total of 55 seconds, of which the model
// calculation time is 42 seconds, but before that, 13 seconds will be consumed in the
// dataloader". Each duration belongs to the subject of its clause: the data (loading, the
// loader, reading, fetching, waiting for data), the step's compute (forward, backward, the
// model's calculation, the GPU's compute, a training step) or the whole step (a total, or a
// step "of which" parts follow). The step is the total, else the data and the compute
// together.
struct ProseTiming {
  double step = 0, data = 0;
};

enum class Subject { kNone, kData, kCompute, kTotal };

bool has_word(std::string_view clause, std::string_view word) {
  for (size_t at = clause.find(word); at != std::string_view::npos;
       at = clause.find(word, at + 1)) {
    const bool start = at == 0 || !is_alpha(clause[at - 1]);
    const size_t end = at + word.size();
    if (start && (end == clause.size() || !is_alpha(clause[end]) || clause[end] == 's' ||
                  clause.substr(end, 2) == "er" || clause.substr(end, 3) == "ing")) {
      return true;
    }
  }
  return false;
}

Subject subject_of(std::string_view clause) {
  static constexpr std::array<std::string_view, 12> kData = {
      "data",    "dataload", "loader", "loading", "fetch",    "fetching",
      "reading", "i/o",      "io",     "decode",  "decoding", "waiting for the batch"};
  // "the network only takes 0.6s": the model's pass, beside the data's.
  static constexpr std::array<std::string_view, 9> kCompute = {
      "forward", "backward", "compute",       "computation", "calculation",
      "fwd",     "bwd",      "training step", "network"};
  const bool data = std::any_of(kData.begin(), kData.end(),
                                [&](std::string_view w) { return has_word(clause, w); });
  if (data) return Subject::kData;
  if (has_word(clause, "total") || has_word(clause, "whole") || has_word(clause, "overall")) {
    return Subject::kTotal;
  }
  if (std::any_of(kCompute.begin(), kCompute.end(),
                  [&](std::string_view w) { return has_word(clause, w); })) {
    return Subject::kCompute;
  }
  if (has_word(clause, "iteration") || has_word(clause, "step") || has_word(clause, "iter") ||
      has_word(clause, "epoch")) {
    return Subject::kTotal;
  }
  return Subject::kNone;
}

// The durations of a clause ("1.2s", "42 seconds", "800 ms"), in seconds, each with the column
// of its first digit; with `longer`, minutes, hours and days too ("2 minutes per epoch"). A range
// ("20-30 minutes", "20 to 30 minutes") is its middle. A unit glued to a digit is a name ("8
// H100"), no unit.
std::vector<std::pair<size_t, double>> durations_at(std::string_view clause, bool longer) {
  std::vector<std::pair<size_t, double>> out;
  for (size_t i = 0; i < clause.size(); ++i) {
    if (!is_digit(clause[i]) ||
        (i > 0 && (is_digit(clause[i - 1]) || clause[i - 1] == '.' || is_alpha(clause[i - 1])))) {
      continue;
    }
    size_t e = i;
    auto value = number_from(clause, i, e);
    // A range's upper end: "-30", " to 30".
    for (const std::string_view to : {"-", " to "}) {
      if (clause.substr(e).starts_with(to) && e + to.size() < clause.size() &&
          is_digit(clause[e + to.size()])) {
        size_t upper_end = 0;
        const auto upper = number_from(clause, e + to.size(), upper_end);
        if (value && upper && *upper > *value) {
          value = (*value + *upper) / 2;
          e = upper_end;
        }
        break;
      }
    }
    size_t u = e;
    while (u < clause.size() && clause[u] == ' ') ++u;
    size_t v = u;
    while (v < clause.size() && is_alpha(clause[v])) ++v;
    const std::string_view unit = clause.substr(u, v - u);
    auto scale = duration_scale(unit);
    for (const std::string_view word :
         {"min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours", "day", "days"}) {
      if (longer && unit == word) {
        scale = word.starts_with('m') ? 60.0 : word.starts_with('d') ? 86400.0 : 3600.0;
      }
    }
    if (v < clause.size() && is_digit(clause[v])) scale.reset();
    // "0.5s/it" is a step's rate, read by the vocabulary.
    if (scale && value && *value > 0 && (v >= clause.size() || clause[v] != '/')) {
      out.emplace_back(i, *value * *scale);
    }
    i = std::max(v, i + 1) - 1;
  }
  return out;
}

std::vector<double> durations_in(std::string_view clause) {
  std::vector<double> out;
  for (const auto& [column, seconds] : durations_at(clause, false)) out.push_back(seconds);
  return out;
}

// `text`: the line lower-cased and in English.
std::optional<ProseTiming> prose_timing(std::string_view text) {
  for (const std::string_view sentence : sentences_of(text)) {
    // Clauses: a total's parts follow "of which"; others are parted by commas and conjunctions.
    std::optional<double> total, data, compute;
    bool parts_follow = false;
    size_t from = 0;
    // Each break's next place, found again only once passed: one pass over the sentence.
    static constexpr std::array<std::string_view, 6> kBreaks = {", ",        "; ",    " while ",
                                                                " whereas ", " but ", " and "};
    std::array<size_t, kBreaks.size()> next{};
    for (size_t b = 0; b < kBreaks.size(); ++b) next[b] = sentence.find(kBreaks[b]);
    while (from < sentence.size()) {
      size_t cut = sentence.size(), skip = 0;
      for (size_t b = 0; b < kBreaks.size(); ++b) {
        if (next[b] != std::string_view::npos && next[b] < from) {
          next[b] = sentence.find(kBreaks[b], from);
        }
        if (next[b] < cut) cut = next[b], skip = kBreaks[b].size();
      }
      std::string_view clause = sentence.substr(from, cut - from);
      from = cut + skip;
      const bool of_which = clause.starts_with("of which") || clause.starts_with("which");
      const std::vector<double> found = durations_in(clause);
      if (found.size() != 1) continue;
      Subject subject = subject_of(clause);
      if (subject == Subject::kNone && of_which) subject = Subject::kData;
      if (subject == Subject::kNone) continue;
      if (of_which && !total && compute && !data) total = compute, compute.reset();
      parts_follow = parts_follow || of_which;
      std::optional<double>& slot = subject == Subject::kData      ? data
                                    : subject == Subject::kCompute ? compute
                                                                   : total;
      if (!slot) slot = found[0];
    }
    if (!data) continue;
    // A step named without "total" before parts "of which" is the total; one beside a wait is
    // its compute.
    if (total && !parts_follow && !compute && *total < *data) compute = total, total.reset();
    double step = 0;
    if (total && *total >= *data) {
      step = *total;
    } else if (compute) {
      step = *compute + *data;
    } else if (total) {
      step = *total + *data;
    } else {
      continue;
    }
    return ProseTiming{step, *data};
  }
  return std::nullopt;
}

// A progress bar's count and total ("| 0/46617 [00:00<?, ?it/s]", tqdm's "n/total [elapsed"),
// the first on the line; nullopt when the line has none.
std::optional<std::pair<int64_t, int64_t>> bar_count(std::string_view text) {
  for (size_t slash = text.find('/'); slash != std::string_view::npos;
       slash = text.find('/', slash + 1)) {
    size_t begin = slash;
    while (begin > 0 && is_digit(text[begin - 1])) --begin;
    size_t end = slash + 1;
    while (end < text.size() && is_digit(text[end])) ++end;
    if (begin == slash || end == slash + 1 || !text.substr(end).starts_with(" [")) continue;
    if (begin > 0 && text[begin - 1] != ' ' && text[begin - 1] != '|') continue;
    const auto n = parse_index(text.substr(begin, slash - begin));
    const auto total = parse_index(text.substr(slash + 1, end - slash - 1));
    if (n && total) return std::make_pair(*n, *total);
  }
  return std::nullopt;
}

// A sentence saying the job scales on synthetic data ("with synthetic data i see good
// scalability", "synthetic data scales linearly"), not that it does not ("synthetic data doesn't
// scale well either"). `low`: the line lower-cased.
bool synthetic_scales_said(std::string_view low) {
  static constexpr std::array<std::string_view, 7> kScales = {
      "good scal",   "scales well", "scale well",        "scales linearly",
      "linear scal", "scales fine", "scales as expected"};
  // Negations, and expectations ("expected linear scaling"; not "scales as expected"): no
  // statement that it scaled.
  static constexpr std::array<std::string_view, 9> kNot = {
      "not ", "n't", " no ", "never", "neither", "expect", "should", "hope", "want"};
  std::string text(low);
  for (size_t at = text.find("as expected"); at != std::string::npos;
       at = text.find("as expected")) {
    text.erase(at, 11);
  }
  const auto any = [](const auto& words, std::string_view in) {
    return std::any_of(words.begin(), words.end(),
                       [&](std::string_view w) { return in.find(w) != std::string_view::npos; });
  };
  return any(kScales, low) && !any(kNot, text);
}

// A sentence about how synthetic data scales, whatever it says of it (synthetic_scales_said
// decides whether it did): no label of a run.
bool synthetic_scaling_told(std::string_view low) {
  for (const std::string_view w : {"scal", "speedup", "speed-up", "linear"}) {
    if (low.find(w) != std::string_view::npos) return true;
  }
  return false;
}

// A log line's clock and its step counter, for logs that time nothing but print when
// ("2022-04-12 17:36:17,986 INFO [train.py:794] (0/8) Epoch 0, batch 50, ...", jiant's
// "06/26 12:38:54 PM: Update 340556: task record, ..."): the time between two such lines over
// the steps between them is the step.
struct StampedCount {
  double seconds = 0;   // since 1970, from the line's date and time
  int64_t count = 0;    // the number after "batch", "step", "iter" or "iteration" (or "epoch")
  std::string message;  // the line without its digits: lines of one message print it alike
};

// The counter words of a step's line, and of an epoch's.
// Kaldi's DDP trainer counts "Device (1) processing 1100/4724(23.28%)" (only beside "Device (").
constexpr std::string_view kStepCounters[] = {"batch",  "iteration", "iter",      "step",
                                              "update", "minibatch", "processing"};
constexpr std::string_view kEpochCounter[] = {"epoch"};

std::optional<StampedCount> stamped_count(
    std::string_view text, std::span<const std::string_view> counters = kStepCounters) {
  // "YYYY-MM-DD HH:MM:SS[,.fff]" within the first 40 characters.
  std::optional<double> when;
  for (size_t i = 0; i + 19 <= text.size() && i < 40 && !when; ++i) {
    if ((i > 0 && is_digit(text[i - 1])) || text[i + 4] != '-' || text[i + 7] != '-' ||
        (text[i + 10] != ' ' && text[i + 10] != 'T')) {
      continue;
    }
    const auto y = parse_index(text.substr(i, 4));
    const auto mo = parse_index(text.substr(i + 5, 2));
    const auto d = parse_index(text.substr(i + 8, 2));
    const auto days = y && mo && d ? days_from_civil(*y, *mo, *d) : std::nullopt;
    const auto clock = parse_clock(text.substr(i + 11, 8));
    if (!days || !clock) continue;
    double t = static_cast<double>(*days) * 86400 + *clock;
    // The fraction: Python logging's ",986", ISO's ".986".
    if (size_t k = i + 19; k < text.size() && (text[k] == ',' || text[k] == '.')) {
      size_t e = k + 1;
      while (e < text.size() && is_digit(text[e])) ++e;
      if (e > k + 1)
        t += parse_number("0." + std::string(text.substr(k + 1, e - k - 1))).value_or(0);
    }
    when = t;
  }
  // Days since 1970 of a month and day printed without a year: differences of a few lines do
  // not need one (a leap year, for 02/29).
  const auto days_without_year = [](std::string_view month,
                                    std::string_view day) -> std::optional<int64_t> {
    const auto mo = parse_index(month);
    const auto d = parse_index(day);
    return mo && d ? days_from_civil(2000, *mo, *d) : std::nullopt;
  };
  // glog's prefix at the line's start, "I0511 19:26:57.251538" (Caffe's solver, MXNet's and
  // Paddle's C++ logs): a severity letter, month and day without a year, the clock.
  if (!when && text.size() >= 21 &&
      (text[0] == 'I' || text[0] == 'W' || text[0] == 'E' || text[0] == 'F') && text[5] == ' ' &&
      text[8] == ':' && text[11] == ':' && text[14] == '.') {
    const auto days = days_without_year(text.substr(1, 2), text.substr(3, 2));
    size_t e = 15;
    while (e < text.size() && is_digit(text[e])) ++e;
    const auto clock = parse_clock(text.substr(6, e - 6));
    if (days && clock) when = static_cast<double>(*days) * 86400 + *clock;
  }
  // "MM/DD HH:MM:SS AM|PM" at the line's start, after any quoting (jiant's logger) or a
  // bracket (SuperPoint's "[06/13/2020 07:27:10 INFO] Iter 1000: ...").
  const size_t start = std::min(text.find_first_not_of("> ["), text.size());
  if (const std::string_view t = text.substr(start);
      !when && t.size() >= 17 && t[2] == '/' && t[5] == ' ' &&
      (t.substr(14, 3) == " AM" || t.substr(14, 3) == " PM")) {
    const auto days = days_without_year(t.substr(0, 2), t.substr(3, 2));
    const auto clock = parse_clock(t.substr(6, 8));
    if (days && clock && *clock < 13 * 3600) {
      // 12 AM is midnight, 12 PM noon.
      const double hour = std::floor(*clock / 3600);
      const bool pm = t[15] == 'P';
      const double shift = (hour == 12 ? -12 * 3600 : 0) + (pm ? 12 * 3600 : 0);
      when = static_cast<double>(*days) * 86400 + *clock + shift;
    }
  }
  // "04/04/2021 15:34:47" at the line's start: the month first unless the first part cannot be
  // one (a day over 12 first: "25/04/2021"). Differences of a few lines on one day, which is what
  // is read, do not depend on it.
  if (const std::string_view t = text.substr(start);
      !when && t.size() >= 19 && t[10] == ' ' && t[13] == ':') {
    const auto days = slashed_date_days(t.substr(0, 10));
    const auto clock = parse_clock(t.substr(11, 8));
    if (days && clock) when = static_cast<double>(*days) * 86400 + *clock;
  }
  if (!when) return std::nullopt;
  const std::string low = lower(text);
  for (const std::string_view word : counters) {
    // "processing 100/5000 utterances" counts a data preparation's items: only Kaldi's DDP
    // trainer's "Device (1) processing" counts steps.
    if (word == "processing" && low.find("device (") == std::string::npos) continue;
    for (size_t at = low.find(word); at != std::string::npos; at = low.find(word, at + 1)) {
      if (at > 0 && is_alpha(low[at - 1])) continue;
      size_t k = at + word.size();
      while (k < low.size() &&
             (low[k] == ' ' || low[k] == ':' || low[k] == '=' || low[k] == '[' || low[k] == '#')) {
        ++k;
      }
      size_t e = k;
      while (e < low.size() && is_digit(low[e])) ++e;
      if (e == k || e - k > 12 || (e < low.size() && (low[e] == '.' || is_alpha(low[e])))) {
        continue;
      }
      // A duration is no counter: Caffe's "Prefetch batch: 5348 ms."
      size_t u = e;
      while (u < low.size() && low[u] == ' ') ++u;
      size_t v = u;
      while (v < low.size() && is_alpha(low[v])) ++v;
      if (v > u && duration_scale(std::string_view(low).substr(u, v - u))) continue;
      std::string message;
      std::copy_if(low.begin(), low.end(), std::back_inserter(message),
                   [](char c) { return !is_digit(c); });
      return StampedCount{*when, std::stoll(low.substr(k, e - k)), std::move(message)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<double> speedups_over_one(std::string_view line) {
  std::vector<double> out;
  if (line.size() > kMaxPastedLineBytes) return out;
  const std::string text = lower(line);
  // The baseline a sentence names, "gpu" or "node"; a later sentence of the line without one
  // keeps it ("On 16 nodes, it's 14.4x").
  std::string baseline;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find(". ", from);
    if (end == std::string::npos) end = text.size();
    const std::string_view sentence = std::string_view(text).substr(from, end - from);
    from = end + 2;
    // A speedup wished for or cited from someone else is none of the paste's job.
    const auto says = [&](std::string_view w) {
      return sentence.find(w) != std::string_view::npos;
    };
    if (std::any_of(std::begin(kWished), std::end(kWished), says) ||
        std::any_of(std::begin(kClaimedByOthers), std::end(kClaimedByOthers), says)) {
      continue;
    }
    for (const std::string_view over : {"over ", "than ", "vs ", "vs. ", "relative to "}) {
      for (const std::string_view one : {"one ", "a single ", "1 ", "a "}) {
        for (const std::string_view unit : {"gpu", "node"}) {
          if (sentence.find(std::string(over) + std::string(one) + std::string(unit)) !=
              std::string_view::npos) {
            baseline = unit;
          }
        }
      }
    }
    if (baseline.empty()) continue;
    // The scale: a number before the baseline's unit, other than one; the speedup: a number
    // glued to an "x" ("3.9x", "14.4×"), not a count of GPUs ("4x V100", "8x A100").
    std::set<double> scales, speedups;
    for (size_t i = 0; i < sentence.size(); ++i) {
      if (!is_digit(sentence[i]) ||
          (i > 0 &&
           (is_digit(sentence[i - 1]) || sentence[i - 1] == '.' || is_alpha(sentence[i - 1])))) {
        continue;
      }
      size_t e = i;
      const auto v = number_from(sentence, i, e);
      if (!v) continue;
      const std::string_view after = sentence.substr(e);
      const size_t glued = after.starts_with("x") ? 1 : after.starts_with("\xc3\x97") ? 2 : 0;
      if (glued > 0 && (after.size() == glued || !is_alpha(after[glued]))) {
        const auto next = split_whitespace(after.substr(glued));
        const bool counts_gpus =
            !next.empty() && (gpu_word(next[0]) || (is_alpha(next[0][0]) && next[0].size() <= 5 &&
                                                    is_digit(next[0].back())));
        if (!counts_gpus) speedups.insert(*v);
      } else if (after.starts_with(" " + baseline) && *v >= 2 && *v == std::floor(*v)) {
        scales.insert(*v);
      }
      i = e;
    }
    // One speedup at one scale: with several of either, which goes with which is unsaid.
    if (scales.size() == 1 && speedups.size() == 1) {
      const double scale = *scales.begin(), speedup = *speedups.begin();
      if (speedup > 0 && speedup <= 2 * scale) out.push_back(100 * speedup / scale);
    }
  }
  return out;
}

std::optional<Verdict> cause_said_in_words(std::string_view line) {
  // A sentence of the person's, not a tool's label ("COMPUTE-BOUND" over one of several runs).
  if (line.size() > kMaxPastedLineBytes || !is_prose(line)) return std::nullopt;
  const std::string text = lower(line);
  static constexpr std::pair<std::string_view, Verdict> kSaid[] = {
      {"cpu-bottlenecked", Verdict::kInputBoundCpu},
      {"cpu bottlenecked", Verdict::kInputBoundCpu},
      {"cpu-bound", Verdict::kInputBoundCpu},
      {"cpu bound", Verdict::kInputBoundCpu},
      {"bottlenecked by the cpu", Verdict::kInputBoundCpu},
      {"bottlenecked on the cpu", Verdict::kInputBoundCpu},
      {"cpu is the bottleneck", Verdict::kInputBoundCpu},
      {"cpu was the bottleneck", Verdict::kInputBoundCpu},
      {"preprocessing is the bottleneck", Verdict::kInputBoundCpu},
      {"decoding is the bottleneck", Verdict::kInputBoundCpu},
      {"augmentation is the bottleneck", Verdict::kInputBoundCpu},
      {"io-bound", Verdict::kIoBound},
      {"io bound", Verdict::kIoBound},
      {"i/o bound", Verdict::kIoBound},
      {"i/o-bound", Verdict::kIoBound},
      {"disk is the bottleneck", Verdict::kIoBound},
      {"storage is the bottleneck", Verdict::kIoBound},
      {"i/o is the bottleneck", Verdict::kIoBound},
      {"bottlenecked by the disk", Verdict::kIoBound},
      {"bottlenecked by i/o", Verdict::kIoBound},
      {"bottlenecked by io", Verdict::kIoBound},
      {"bottlenecked on i/o", Verdict::kIoBound},
      {"bottlenecked by storage", Verdict::kIoBound},
      {"communication-bound", Verdict::kCommunicationBound},
      {"communication bound", Verdict::kCommunicationBound},
      {"communication is the bottleneck", Verdict::kCommunicationBound},
      {"network is the bottleneck", Verdict::kCommunicationBound},
      {"bottlenecked by communication", Verdict::kCommunicationBound},
      {"bottlenecked by the network", Verdict::kCommunicationBound},
      {"bottlenecked by the interconnect", Verdict::kCommunicationBound},
      {"dataloader bottlenecked", Verdict::kInputBound},
      {"data loader bottlenecked", Verdict::kInputBound},
      {"dataloader-bottlenecked", Verdict::kInputBound},
      {"input-bound", Verdict::kInputBound},
      {"input bound", Verdict::kInputBound},
      {"dataloader is the bottleneck", Verdict::kInputBound},
      {"data loader is the bottleneck", Verdict::kInputBound},
      {"data loading is the bottleneck", Verdict::kInputBound},
      {"input pipeline is the bottleneck", Verdict::kInputBound},
      {"data pipeline is the bottleneck", Verdict::kInputBound},
      {"bottlenecked by the dataloader", Verdict::kInputBound},
      {"bottlenecked by the data loader", Verdict::kInputBound},
      {"bottlenecked by data loading", Verdict::kInputBound},
      {"bottlenecked by the input pipeline", Verdict::kInputBound},
      {"this dataloader bottleneck", Verdict::kInputBound},
      {"the dataloader bottleneck", Verdict::kInputBound},
      {"gpu-bound", Verdict::kHealthy},
      {"gpu bound", Verdict::kHealthy},
      {"compute-bound", Verdict::kHealthy},
      {"compute bound", Verdict::kHealthy},
      {"gpu is the bottleneck", Verdict::kHealthy},
  };
  // Words that ask, doubt, negate or make a condition of what a sentence says.
  // Or that says it is gone, was so before, or holds in general, not of this job now.
  static constexpr std::string_view kNotFound[] = {
      "?",        " not ",      "n't",      "no longer",  "never",     "if ",      "whether",
      "when ",    "unless",     "maybe",    "might",      "may be",    "could",    "wonder",
      "suspect",  "guess",      "assume",   "think",      "should",    "avoid",    "expect",
      "possible", "likely",     "perhaps",  "probably",   "instead",   "rather",   "seem",
      "appear",   "looks like", "either",   "tell",       "check",     "whenever", "removed",
      "fixed",    "solved",     "resolved", "gone",       "eliminat",  "before",   "used to",
      "usually",  "typically",  "often",    "in general", "experience"};
  std::optional<Verdict> found;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find_first_of(".!;", from);
    if (end == std::string::npos) end = text.size();
    const std::string sentence = " " + text.substr(from, end - from) + " ";
    from = end + 1;
    if (std::any_of(std::begin(kNotFound), std::end(kNotFound),
                    [&](std::string_view w) { return sentence.find(w) != std::string::npos; })) {
      continue;
    }
    // Every cause the sentence names ("the T4 box is input bound while the A100 box is compute
    // bound" names two, so none); whole words: "cpu bound" but not "gpu bounding box".
    for (const auto& [words, verdict] : kSaid) {
      if (!has_whole_word(sentence, words)) continue;
      if (found && *found != verdict) return std::nullopt;  // two causes: none said
      found = verdict;
    }
  }
  return found;
}

bool one_core_said_full(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return false;
  const std::string text = lower(line);
  for (const std::string_view one :
       {"one of my cpu cores", "one of the cpu cores", "one of my cores", "one of the cores",
        "one cpu core", "one core", "a single core", "a single cpu core", "single-core",
        "one cpu thread", "one thread"}) {
    for (size_t at = text.find(one); at != std::string::npos; at = text.find(one, at + 1)) {
      if (at > 0 && is_alpha(text[at - 1])) continue;  // "someone core", a word's end
      // The clause after it: "one of my CPU Cores is at its max", "one core at 100%"; not a
      // cap ("uses one thread max") nor a use ("on one core for the full validation set").
      std::string_view after = std::string_view(text).substr(at + one.size(), 32);
      after = after.substr(0, std::min({after.find_first_of(",;"), after.find(". "),
                                        after.find(" but "), after.find(" while ")}));
      const std::string_view before =
          std::string_view(text).substr(at >= 24 ? at - 24 : 0, at >= 24 ? 24 : at);
      // A condition, a question, a denial; or one core of each worker ("each worker takes one
      // core at 100%"), which is many.
      if (after.find(" not") != std::string_view::npos ||
          after.find("n't") != std::string_view::npos ||
          after.find('?') != std::string_view::npos || has_whole_word(before, "if") ||
          has_whole_word(before, "whether") || has_whole_word(before, "each") ||
          has_whole_word(before, "every") || has_whole_word(before, "per")) {
        continue;
      }
      for (const std::string_view full :
           {"100%", "100 %", "at its max", "at max", " maxed", "is full", "at full", " pegged",
            " saturated", "fully used", "fully loaded"}) {
        if (after.find(full) != std::string_view::npos) return true;
      }
    }
  }
  return false;
}

std::string collective_with_bandwidth(std::string_view text) {
  const std::string low = lower(text);
  const size_t bw = low.find("bandwidth");
  if (bw == std::string::npos) return {};
  for (const std::string_view c :
       {"allreduce", "all_reduce", "all-reduce", "allgather", "all_gather", "reducescatter",
        "reduce_scatter", "sendrecv", "broadcast", "alltoall", "all_to_all"}) {
    if (const size_t at = low.find(c); at != std::string::npos && at < bw) return std::string(c);
  }
  return {};
}

// A line comparing scales with an arrow ("1GPU: 111 im/s -> 4GPU: 432 im/s"), parted at it
// when every part states a GPU or node count of its own; empty otherwise.
std::vector<Line> arrow_parts(const Line& line) {
  if (line.text.find(" -> ") == std::string_view::npos &&
      line.text.find(" \xe2\x86\x92 ") == std::string_view::npos) {
    return {};
  }
  std::vector<Line> parts;
  size_t start = 0;
  for (size_t at = 0; at <= line.text.size();) {
    size_t width = 0;
    if (at < line.text.size()) {
      if (line.text.substr(at).starts_with(" -> ")) width = 4;
      if (line.text.substr(at).starts_with(" \xe2\x86\x92 ")) width = 5;  // " → "
    }
    if (at == line.text.size() || width > 0) {
      const std::string_view part = line.text.substr(start, at - start);
      std::optional<int> nodes;
      if (!gpu_count_of(part, &nodes, nullptr) && !nodes) return {};
      parts.push_back(Line{line.number, part, true});
      if (at == line.text.size()) break;
      start = at = at + width;
      continue;
    }
    ++at;
  }
  return parts.size() >= 2 ? parts : std::vector<Line>{};
}

// A line giving rates at two scales or more, each beside its own ("1200 images/sec on 1 GPU and
// 3000 images/sec on 4 GPUs", open_lm#21's "~2.5K tokens/sec/GPU on 256 A100s for OpenLM-7B,
// and ~9.5K tokens/sec/GPU on 128 A100s for OpenLM-1B"), parted after each scale where a
// clause ends (". ", "; ", ", ", " and "), so that each part is read as a line of its own;
// empty when the line is not one such.
std::vector<Line> rate_scale_parts(const Line& line) {
  const std::string low = lower(line.text);
  if (low.find('|') != std::string::npos) return {};  // a table's row: its columns say it
  static constexpr std::string_view kEnds[] = {". ", "; ", ", ", " and "};
  struct Piece {
    size_t begin, end;
  };
  std::vector<Piece> pieces;
  size_t start = 0;
  for (size_t i = 0; i < low.size(); ++i) {
    for (const std::string_view e : kEnds) {
      if (low.compare(i, e.size(), e) == 0) {  // "1,200" is one number: a blank follows a break
        pieces.push_back({start, i});
        start = i + e.size();
        i = start - 1;
        break;
      }
    }
  }
  pieces.push_back({start, low.size()});
  if (pieces.size() < 2) return {};
  std::vector<Line> parts;
  std::set<std::pair<int, int>> scales;
  size_t part_begin = 0;
  for (const Piece& p : pieces) {
    // The rate and its scale in one piece ("I got 2.94 steps/sec" after "For 2 nodes," is
    // another shape, read clause by clause).
    const std::string_view text = line.text.substr(p.begin, p.end - p.begin);
    const std::vector<NamedValue> values = named_values(text);
    std::optional<int> nodes;
    const std::optional<int> gpus = gpu_count_of(text, &nodes, nullptr);
    if ((gpus || nodes) && std::any_of(values.begin(), values.end(), [](const NamedValue& v) {
          return meaning_of(v).quantity == Quantity::kRate;
        })) {
      parts.push_back(Line{line.number, line.text.substr(part_begin, p.end - part_begin), true});
      scales.insert({gpus.value_or(0), nodes.value_or(0)});
      part_begin = p.end;
    }
  }
  if (parts.size() < 2 || scales.size() < 2) return {};
  // Not the same job at each scale: ranks of one run ("rank 0 (1 GPU): 300 img/s, rank 1 ..."),
  // or models named otherwise than by their size ("ResNet-50 on 8 GPUs: 2400 img/s; ResNet-152
  // on 4 GPUs: 500 img/s"; a size keeps its runs in a series of their own).
  std::optional<std::set<std::string>> first_models;
  for (const Line& part : parts) {
    const std::string low_part = lower(part.text);
    if (has_whole_word(low_part, "rank") || has_whole_word(low_part, "ranks")) return {};
    std::set<std::string> models;
    for (std::string_view w : split_whitespace(low_part)) {
      while (!w.empty() && std::string_view(".,;:()[]").find(w.back()) != std::string_view::npos) {
        w.remove_suffix(1);
      }
      while (!w.empty() && std::string_view("([").find(w.front()) != std::string_view::npos) {
        w.remove_prefix(1);
      }
      if (w.empty() || !is_alpha(w.front()) || std::none_of(w.begin(), w.end(), is_digit) ||
          gpu_word(w) || gpu_word(w.substr(0, w.size() - 1)) ||
          !model_sizes_named(w).billions.empty()) {
        continue;
      }
      models.insert(std::string(w));
    }
    if (models.empty()) continue;
    if (first_models && *first_models != models) return {};
    if (!first_models) first_models = std::move(models);
  }
  // What follows the last scale is a line of its own (a remark, or a scale said otherwise).
  if (part_begin < line.text.size()) {
    parts.push_back(Line{line.number, line.text.substr(part_begin), true});
  }
  return parts;
}

namespace {

// A list of two numbers or more in prose ("1, 2, and 4 GPUs", "(60, 36, 20 min"), with the
// word right after its last number; [begin, end) in the text it was found in.
struct NumberList {
  size_t begin = 0, end = 0;
  std::vector<double> values;
  std::string word;
};

std::vector<NumberList> number_lists(std::string_view low) {
  std::vector<NumberList> out;
  const size_t n = low.size();
  const auto number_at = [&](size_t i, size_t& e) -> std::optional<double> {
    if (i >= n || !is_digit(low[i]) || (i > 0 && (is_alpha(low[i - 1]) || low[i - 1] == '.'))) {
      return std::nullopt;
    }
    e = i;
    while (e < n && (is_digit(low[e]) || (low[e] == '.' && e + 1 < n && is_digit(low[e + 1])))) {
      ++e;
    }
    return parse_number(low.substr(i, e - i));
  };
  for (size_t i = 0; i < n;) {
    size_t e = 0;
    auto first = number_at(i, e);
    if (!first) {
      ++i;
      continue;
    }
    NumberList list;
    list.begin = i;
    list.values.push_back(*first);
    for (;;) {
      // ", ", " and ", ", and ", " & ", "/" between the numbers of a list.
      size_t k = e;
      bool joined = false;
      for (const std::string_view sep : {", and ", ", ", " and ", " & ", "/"}) {
        if (low.substr(k, sep.size()) == sep) {
          k += sep.size();
          joined = true;
          break;
        }
      }
      size_t next_end = 0;
      const auto next = joined ? number_at(k, next_end) : std::nullopt;
      if (!next) break;
      list.values.push_back(*next);
      e = next_end;
    }
    list.end = e;
    size_t w = e;
    while (w < n && low[w] == ' ') ++w;
    size_t we = w;
    while (we < n && (is_alpha(low[we]) || low[we] == '/' || low[we] == '%')) ++we;
    list.word = std::string(low.substr(w, we - w));
    if (list.values.size() >= 2) out.push_back(std::move(list));
    i = std::max(e, i + 1);
  }
  return out;
}

// A sentence giving the measures of several scales in one list, "respectively" ("Training
// time for 1, 2, and 4 GPUs decreases. (60, 36, 20 min respectively)", yolov5#1860): one part
// per scale, "1 gpu: 60 min" (the way a scale's own line says it), written into `store`; then
// the line's clauses outside the two lists. Empty when the line has no such pair of lists.
std::vector<Line> respectively_parts(const Line& line, std::deque<std::string>& store) {
  const std::string low = lower(line.text);
  const size_t said = low.find("respectively");
  if (said == std::string::npos) return {};
  const std::vector<NumberList> lists = number_lists(low);
  const NumberList* scales = nullptr;
  const NumberList* measures = nullptr;
  std::string scale_word;
  for (const NumberList& l : lists) {
    std::optional<int> nodes;
    const auto gpus = gpu_count_of(fmt::format("{} {}", l.values.back(), l.word), &nodes);
    if ((gpus || nodes) && scales == nullptr) {
      scales = &l;
      scale_word = gpus ? "gpu" : "node";
      continue;
    }
    const bool duration = minutes_or_longer(l.word);
    const bool rate =
        !l.word.empty() &&
        meaning_of(NamedValue{"", l.word, 1, std::nullopt, 0}).quantity == Quantity::kRate;
    if ((duration || rate) && measures == nullptr && l.end <= said + 16) measures = &l;
  }
  if (scales == nullptr || measures == nullptr ||
      scales->values.size() != measures->values.size()) {
    return {};
  }
  std::vector<Line> parts;
  for (size_t k = 0; k < scales->values.size(); ++k) {
    store.push_back(fmt::format("{:g} {}: {:g} {}", scales->values[k], scale_word,
                                measures->values[k], measures->word));
    parts.push_back(Line{line.number, store.back(), true});
  }
  // The line's other clauses ("At 8 GPUs training time is around 30 minutes.").
  const size_t from = std::min(scales->begin, measures->begin);
  const size_t to = std::max(scales->end, measures->end);
  for (const Line& c : clauses_of(line)) {
    const size_t begin = static_cast<size_t>(c.text.data() - line.text.data());
    const size_t end = begin + c.text.size();
    if (end <= from || begin >= to) parts.push_back(c);
  }
  return parts;
}

// "I use 74000 iterations", "trained for 40k iters": a count of a thousand iterations or more
// that a run is said to use or train for.
bool runs_iterations(std::string_view low) {
  for (const std::string_view unit : {" iterations", " iters", "k iterations", "k iters"}) {
    for (size_t at = low.find(unit); at != std::string_view::npos; at = low.find(unit, at + 1)) {
      size_t b = at;
      while (b > 0 && (is_digit(low[b - 1]) || low[b - 1] == ',')) --b;
      if (b == at) continue;
      std::string digits(low.substr(b, at - b));
      std::erase(digits, ',');
      const auto n = parse_number(digits);
      const double count = unit.starts_with('k') ? n.value_or(0) * 1000 : n.value_or(0);
      const std::string_view before = low.substr(0, b);
      const bool run = before.ends_with("use ") || before.ends_with("for ") ||
                       before.ends_with("train ") || before.ends_with("run ") ||
                       before.ends_with("total of ");
      if (count >= 1000 && run) return true;
    }
  }
  return false;
}

// PaddlePaddle v1's timers (Stat.cpp, glog): "Stat=TrainBatch  TID=15120  total=22172.9
// avg=221.728  max=432.781  min=145.168  count=100", in milliseconds.
struct PaddleStat {
  std::string name;
  double total = 0, avg = 0, max = 0;
  int64_t count = 0;
};

std::optional<PaddleStat> paddle_stat(std::string_view line) {
  const size_t at = line.find("Stat=");
  if (at == std::string_view::npos || line.size() > kMaxPastedLineBytes) return std::nullopt;
  const std::vector<std::string_view> fields = split_whitespace(line.substr(at + 5));
  if (fields.empty()) return std::nullopt;
  PaddleStat stat;
  stat.name = std::string(fields[0]);
  std::optional<double> total, avg, max, count;
  for (const std::string_view f : fields) {
    const size_t eq = f.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = f.substr(0, eq);
    const auto value = parse_number(f.substr(eq + 1));
    if (key == "total") total = value;
    if (key == "avg") avg = value;
    if (key == "max") max = value;
    if (key == "count") count = value;
  }
  if (!total || !avg || !max || !count || *count < 1) return std::nullopt;
  stat.total = *total, stat.avg = *avg, stat.max = *max;
  stat.count = static_cast<int64_t>(*count);
  return stat;
}

// PyTorch-BigGraph's line for each bucket of an epoch: "( 3 , 3 ): bucket 1 / 16 : Trained
// 16170701 edges in 94.40 s ( 0.17 M/sec ); Eval 2*0 edges in 0.00 s ( 0 M/sec ); io: 2.04 s
// for 5,539,194,424 bytes ( 2716.74 MB/sec )" (PyTorch-BigGraph#233): the training's seconds and
// the seconds spent reading and swapping the bucket's embedding partitions, the bucket's wait
// for its data.
std::optional<std::pair<double, double>> biggraph_bucket(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes || line.find("bucket") == std::string_view::npos) {
    return std::nullopt;
  }
  const auto seconds_after = [&](std::string_view marker) -> std::optional<double> {
    const size_t at = line.find(marker);
    if (at == std::string_view::npos) return std::nullopt;
    const std::vector<std::string_view> words = split_whitespace(line.substr(at + marker.size()));
    if (words.size() < 2 || words[1] != "s") return std::nullopt;
    return parse_number(words[0]);
  };
  const size_t trained = line.find("Trained ");
  if (trained == std::string_view::npos) return std::nullopt;
  const auto train = seconds_after(" edges in ");
  const auto io = seconds_after("io: ");
  if (!train || !io || *train <= 0 || *io < 0 || line.find(" edges in ") < trained) {
    return std::nullopt;
  }
  return std::make_pair(*train, *io);
}

// PyTorch Lightning's warning that a loader has few workers (Telemetry::FewWorkersWarning), in
// both of its wordings: "The dataloader, train dataloader, does not have many workers ...
// (try 8 which is the number of cpus on this machine)" and "The 'train_dataloader' does not
// have many workers ... to `num_workers=31`".
std::optional<Telemetry::FewWorkersWarning> few_workers_warning(std::string_view line) {
  constexpr std::string_view kWarning = "does not have many workers which may be a bottleneck";
  const size_t at = line.find(kWarning);
  if (at == std::string_view::npos || line.size() > kMaxPastedLineBytes) return std::nullopt;
  Telemetry::FewWorkersWarning w;
  std::string_view before = trim(line.substr(0, at));
  if (before.ends_with(',')) before.remove_suffix(1);  // "The dataloader, train dataloader,"
  if (const size_t comma = before.rfind(", "); comma != std::string_view::npos) {
    w.loader = printable(trim(before.substr(comma + 2)));  // quoted in the verdict as it is
  } else if (before.ends_with('\'')) {                     // "The 'train_dataloader'"
    before.remove_suffix(1);
    if (const size_t open = before.rfind('\''); open != std::string_view::npos) {
      w.loader = printable(before.substr(open + 1));
    }
  }
  const std::string_view rest = line.substr(at + kWarning.size());
  for (const std::string_view suggests : {"(try ", "`num_workers="}) {
    if (const size_t s = rest.find(suggests); s != std::string_view::npos) {
      size_t end = s + suggests.size();
      while (end < rest.size() && is_digit(rest[end])) ++end;
      w.suggested = parse_index(rest.substr(s + suggests.size(), end - s - suggests.size()));
      break;
    }
  }
  return w;
}

// A TPU or TensorFlow profiler's own share of the step spent waiting for input:
// capture_tpu_profile's monitor ("Infeed percentage: 0.008% (avg), 0.008% (min), ..." beside
// "Step time: 342ms (avg)") and the profiler's overview ("Your program is HIGHLY input-bound
// because 68.8% of the total step time sampled is waiting for input"). Searched for in the
// whole line (lower-cased: the reader's own `low`): a monitor's output is often pasted as one
// line with literal "\n".
struct ProfilerInputShare {
  double share = 0;                    // of the step, 0 to 1
  std::optional<double> step_seconds;  // the monitor's average step, when the line gives it
};

std::optional<ProfilerInputShare> profiler_input_share(std::string_view t) {
  if (t.size() > kMaxPastedLineBytes) return std::nullopt;
  // The number that ends right before `end` (a percentage's digits).
  const auto number_before = [&](size_t end) -> std::optional<double> {
    while (end > 0 && t[end - 1] == ' ') --end;  // "68.8 % of the total"
    size_t begin = end;
    while (begin > 0 && (is_digit(t[begin - 1]) || t[begin - 1] == '.')) --begin;
    return parse_number(t.substr(begin, end - begin));
  };
  // The number that starts at the first digit after `from`, and where it ends.
  const auto number_after = [&](size_t from, size_t* end) -> std::optional<double> {
    size_t begin = from;
    while (begin < t.size() && t[begin] == ' ') ++begin;
    size_t stop = begin;
    while (stop < t.size() && (is_digit(t[stop]) || t[stop] == '.')) ++stop;
    *end = stop;
    return parse_number(t.substr(begin, stop - begin));
  };
  std::optional<double> percent;
  constexpr std::string_view kInfeed = "infeed percentage:";
  // DLIO's "[METRIC] Training Accelerator Utilization [AU] (%): 94.4286 (0.4908)": the emulated
  // compute's share of the run; DLIO exchanges no gradients, so the rest waits for input.
  constexpr std::string_view kDlio = "accelerator utilization [au] (%):";
  constexpr std::string_view kOverview = "% of the total step time sampled is waiting for input";
  if (const size_t at = t.find(kInfeed); at != std::string::npos) {
    size_t end = 0;
    percent = number_after(at + kInfeed.size(), &end);
    while (end < t.size() && t[end] == ' ') ++end;  // "45.2 % (avg)"
    if (end >= t.size() || t[end] != '%') percent.reset();
  } else if (const size_t at = t.find(kOverview); at != std::string::npos) {
    percent = number_before(at);
  } else if (const size_t at = t.find(kDlio); at != std::string::npos) {
    size_t end = 0;
    const auto au = number_after(at + kDlio.size(), &end);
    if (au && *au >= 0 && *au <= 100) percent = 100 - *au;
  }
  if (!percent || *percent < 0 || *percent > 100) return std::nullopt;
  ProfilerInputShare found{*percent / 100, std::nullopt};
  // The monitor's "Step time: 342ms (avg)", in milliseconds as it prints them.
  constexpr std::string_view kStep = "step time:";
  if (const size_t at = t.find(kStep); at != std::string::npos) {
    size_t end = 0;
    const auto ms = number_after(at + kStep.size(), &end);
    if (ms && *ms > 0 && t.compare(end, 2, "ms") == 0) found.step_seconds = *ms / 1000;
  }
  return found;
}

// The wait's share of the step (0.001 for "data 0.1%") when every value of a line is a
// percentage, one of them names the wait, two or more the model's phases (forward, backward,
// optimizer), and together they make at most the whole step.
// ST-GCN's processor and the skeleton recognisers built on it (2s-AGCN, MS-G3D, CTR-GCN) print
// at each epoch's end "[ Mon Jun 11 04:18:30 2018 ] \tTime consumption: [Data]07%,
// [Network]93%": the epoch's share of time fetching batches against running the model (the
// neural network, not an interconnect). The wait's share; nullopt for any other line.
std::optional<double> st_gcn_share(std::string_view low) {
  const size_t at = low.find("time consumption: [data]");
  if (at == std::string_view::npos || low.find("[network]", at) == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view number = low.substr(at + 24, low.find('%', at) - at - 24);
  const auto share = parse_number(trim(number));
  if (!share || *share < 0 || *share > 100) return std::nullopt;
  return *share / 100;
}

// The wait's share of the time said in words (lower case): "70% of the time is spent in data
// loading", "nearly half of the time spent on preparation the train_iter" (discuss.mxnet#107),
// "data loading takes 60% of each iteration": a share (a percentage, "half", "a third", "a
// quarter", "two thirds", "three quarters") of the time, the step or the iteration, in a clause
// that says the time is spent and names loading data, before the share or after it. nullopt for
// any other line.
std::optional<double> data_share_said(std::string_view low) {
  if (low.size() > kMaxPastedLineBytes) return std::nullopt;
  static constexpr std::string_view kData[] = {
      "data loading",        "loading data",     "load data",     "loading the data",
      "dataloader",          "data loader",      "data_loader",   "train_iter",
      "data pipeline",       "input pipeline",   "reading data",  "data reading",
      "preparing data",      "data preparation", "fetching data", "waiting for data",
      "waiting for the data"};
  const auto names_data = [&](std::string_view part) {
    return std::any_of(std::begin(kData), std::end(kData),
                       [&](std::string_view w) { return part.find(w) != std::string_view::npos; });
  };
  static constexpr std::pair<std::string_view, double> kWords[] = {
      {"three quarters", 0.75}, {"two thirds", 2.0 / 3}, {"half", 0.5},        {"a third", 1.0 / 3},
      {"one third", 1.0 / 3},   {"a quarter", 0.25},     {"one quarter", 0.25}};
  for (const std::string_view of :
       {" of the time", " of the training time", " of training time", " of the total time",
        " of total time", " of each iteration", " of each step", " of the step",
        " of the iteration", " of every iteration", " of every step", " of the runtime"}) {
    const size_t at = low.find(of);
    if (at == std::string_view::npos) continue;
    // The share right before: "70%", "70 %", "nearly half".
    std::optional<double> share;
    const std::string_view before = trim(low.substr(0, at));
    if (before.ends_with('%')) {
      size_t start = before.size() - 1;
      while (start > 0 && before[start - 1] == ' ') --start;
      size_t digits = start;
      while (digits > 0 && (is_digit(before[digits - 1]) || before[digits - 1] == '.')) --digits;
      if (const auto v = parse_number(before.substr(digits, start - digits)); v && *v <= 100) {
        share = *v / 100;
      }
    }
    for (const auto& [word, value] : kWords) {
      if (!share && before.ends_with(word) &&
          (before.size() == word.size() || before[before.size() - word.size() - 1] == ' ')) {
        share = value;
      }
    }
    if (!share) continue;
    // What the share is spent on: after it ("is spent in data loading"), within the clause; or
    // before it ("data loading takes 60% of each iteration"). The clause must say the time is
    // spent, not how often something happens ("the dataloader crashes half of the time").
    std::string_view after = low.substr(at + of.size(), 80);
    std::string_view ahead = low.substr(0, at);
    for (const std::string_view b : {",", ";", ".", " and ", " but ", " while "}) {
      after = after.substr(0, after.find(b));
      if (const size_t clause = ahead.rfind(b); clause != std::string_view::npos) {
        ahead = ahead.substr(clause + b.size());
      }
    }
    const auto spends = [](std::string_view part) {
      for (const std::string_view w : {"spent", "spend", "takes", "took", "taken", "goes to",
                                       "consum", "waiting", "occup", "account"}) {
        if (part.find(w) != std::string_view::npos) return true;
      }
      return false;
    };
    if ((names_data(after) || names_data(ahead)) && (spends(after) || spends(ahead))) {
      return share;
    }
  }
  return std::nullopt;
}

std::optional<double> wait_share_of_phases(const std::vector<NamedValue>& values) {
  std::optional<double> wait;
  int phases = 0;
  double sum = 0;
  for (const NamedValue& v : values) {
    if (v.unit != "%" || v.name.empty() || !(v.value >= 0 && v.value <= 100)) return std::nullopt;
    sum += v.value;
    // What its name times, read as a duration ("time stat: data" is the line's label and the
    // wait's name).
    NamedValue timed = v;
    timed.unit = "s";
    if (const size_t colon = timed.name.rfind(':'); colon != std::string::npos) {
      timed.name.erase(0, colon + 1);
      while (!timed.name.empty() && timed.name.front() == '_') timed.name.erase(0, 1);
    }
    const Quantity q = meaning_of(timed).quantity;
    if (q == Quantity::kDataWait) {
      if (wait) return std::nullopt;
      wait = v.value / 100;
    }
    phases += q == Quantity::kCompute;
  }
  if (!wait || phases < 2 || sum > 101) return std::nullopt;
  return wait;
}

// Megatron-LM's block of timers, one a line with their "(min, max)" across ranks in ms
// (named_values reads each: a wait's minimum, any other's maximum). The timers nest:
// batch-generator (and its data-iterator and broadcast-data) runs inside forward-backward,
// the optimizer's parts inside "optimizer"; grads-all-reduce and the optimizer follow
// forward-backward. So the step is forward-backward + grads-all-reduce + optimizer, and
// batch-generator its wait, not the sum of the rows.
struct MinMaxBlock {
  int64_t first = 0, last = 0;  // the block's lines
  int64_t cited = 0;            // the wait's line
  double step_seconds = 0, data_seconds = 0;
};

std::vector<MinMaxBlock> min_max_blocks(const std::vector<Line>& lines) {
  std::vector<MinMaxBlock> out;
  for (size_t k = 0; k < lines.size();) {
    std::map<std::string, std::pair<double, int64_t>> timers;  // seconds, line
    size_t end = k;
    for (; end < lines.size() && lines[end].text.size() <= kMaxPastedLineBytes; ++end) {
      if (end > k && lines[end].number != lines[end - 1].number + 1) break;
      const auto v = min_max_timer(lines[end].text);
      if (v.empty()) break;
      timers.emplace(v[0].name, std::pair{*seconds_of(v[0]), lines[end].number});
    }
    if (end == k) {
      ++k;
      continue;
    }
    const auto fb = timers.find("forward_backward");
    const auto wait = timers.find("batch_generator");
    if (fb != timers.end() && wait != timers.end() && fb->second.first > 0) {
      MinMaxBlock b{lines[k].number, lines[end - 1].number, wait->second.second, fb->second.first,
                    wait->second.first};
      for (const std::string_view after : {"grads_all_reduce", "optimizer"}) {
        if (const auto t = timers.find(std::string(after)); t != timers.end()) {
          b.step_seconds += t->second.first;
        }
      }
      out.push_back(b);
    }
    k = end;
  }
  return out;
}

// A table's first cell that names a step's phase or the whole step ("Data loading", "Forward",
// "Iteration total"), read as a timer's name would be.
bool names_step_phase(std::string_view cell) {
  const auto named = named_values(fmt::format("{}: 1 s", trim(cell)));
  if (named.size() != 1) return false;
  const Quantity q = meaning_of(named[0]).quantity;
  return q == Quantity::kDataWait || q == Quantity::kStep || q == Quantity::kCompute ||
         q == Quantity::kCommunication || q == Quantity::kStepWithoutData;
}

// A table whose header gives its column's unit ("| Type | Time (ms) |" over "| Data loading |
// 300 |", or a rate's, "img/s"): each row that names a step's phase gets the unit in its bare
// number's cell, so the row reads as the line a logger would have printed ("Data loading 300
// ms"). Other rows (runs, models, settings) are left to the table readers.
std::vector<Line> with_header_units(const std::vector<Line>& lines,
                                    std::deque<std::string>& store) {
  std::vector<Line> out = lines;
  std::vector<std::string> units;  // of the current table's columns; empty outside a table
  for (size_t k = 0; k < out.size(); ++k) {
    const std::string_view text = out[k].text;
    if (text.find('|') == std::string_view::npos) {
      units.clear();
      continue;
    }
    if (k + 1 < out.size() && rule_line(out[k + 1].text) && !rule_line(text)) {
      units.clear();
      for (const std::string_view cell : table_cells(text)) {
        std::string unit;
        const std::string low = lower(cell);
        // "(ms)", "[s]"; not "img/s", a rate's unit.
        for (const std::string_view u : {"ms", "s", "sec", "us"}) {
          for (const std::string& written : {fmt::format("({})", u), fmt::format("[{}]", u)}) {
            if (low.ends_with(written) && low.size() > written.size()) unit = u == "sec" ? "s" : u;
          }
        }
        // A rate's header ("Throughput img/s"): its numbers are rates, whatever a row is named
        // ("| Data loading | 5000 |" is no 5000-second wait).
        if (const auto words = split_whitespace(low);
            unit.empty() && !words.empty() && words.back().find("/s") != std::string_view::npos &&
            !words.back().starts_with("/")) {
          unit = std::string(words.back());
        }
        units.push_back(unit);
      }
      continue;
    }
    if (units.empty() || rule_line(text)) continue;
    const auto cells = table_cells(text);
    if (cells.size() > units.size() || cells.size() < 2) continue;
    if (!names_step_phase(cells[0])) continue;
    std::string row = "|";
    bool changed = false;
    for (size_t c = 0; c < cells.size(); ++c) {
      row += fmt::format(" {}", cells[c]);
      if (c > 0 && !units[c].empty() && parse_number(cells[c])) {
        row += fmt::format(" {}", units[c]);
        changed = true;
      }
      row += " |";
    }
    if (!changed) continue;
    store.push_back(std::move(row));
    out[k].text = store.back();
  }
  return out;
}

}  // namespace

namespace {

// The ranks Horovod's stall warning lists in brackets after `at` ("[missing ranks: 1, 3]",
// "[ready ranks: 5, 1, 4]"), below 4096 each.
std::vector<int> bracketed_ranks(std::string_view low, size_t at) {
  const size_t colon = low.find(':', at);
  if (colon == std::string_view::npos) return {};
  const size_t close = low.find(']', colon);
  std::vector<int> ranks;
  for (const auto part :
       split_char(low.substr(colon + 1, close == std::string_view::npos ? std::string_view::npos
                                                                        : close - colon - 1),
                  ',')) {
    if (const auto r = parse_index(trim(part)); r && *r < 4096)
      ranks.push_back(static_cast<int>(*r));
  }
  return ranks;
}

// A paste's list of runs timed by how long they took, then a list of runs by their rate
// (deep-learning-models#2: "training took 6 hrs" on 8, 16 and 64 GPUs, then "740 img/sec" on 1
// GPU up to 64): two series, even where the second starts at scales the first did not have.
// Runs labelled by a model keep their model's series.
void separate_durations_from_rates(Telemetry& out, size_t first_run, size_t first_rate) {
  std::map<size_t, bool> durations;  // run -> whether its first rate is a whole duration
  for (size_t k = first_rate; k < out.rates.size(); ++k) {
    durations.emplace(static_cast<size_t>(out.rates[k].run), whole_durations(out.rates[k].unit));
  }
  const auto kinds =
      std::count_if(durations.begin(), durations.end(), [](const auto& d) { return d.second; });
  if (kinds == 0 || kinds == static_cast<std::ptrdiff_t>(durations.size()) ||
      std::any_of(out.runs.begin() + static_cast<std::ptrdiff_t>(first_run), out.runs.end(),
                  [](const RunInfo& r) { return !r.model.empty(); })) {
    return;
  }
  // The series again, in order: the next starts where the kind changes or a scale repeats.
  int group = out.runs[first_run].group;
  std::set<std::pair<int, int>> scales;
  std::optional<bool> kind;
  for (size_t r = first_run; r < out.runs.size(); ++r) {
    RunInfo& run = out.runs[r];
    if (const auto k = durations.find(r); k != durations.end()) {
      // As heading() does, a run without a scale repeats none.
      const bool scaled = run.gpus || run.nodes;
      const std::pair<int, int> scale{run.gpus.value_or(0), run.nodes.value_or(1)};
      if ((kind && *kind != k->second) || (scaled && scales.contains(scale))) {
        ++group, scales.clear();
      }
      kind = k->second;
      if (scaled) scales.insert(scale);
    }
    run.group = group;
  }
}

}  // namespace

bool scan_named_values(const std::vector<Line>& pasted, PasteFiles& files, Telemetry& out) {
  std::deque<std::string> written;  // the text of parts a line's "respectively" spells out
  std::vector<Line> lines;
  lines.reserve(pasted.size());
  for (const Line& l : pasted) {
    if (l.text.size() <= kMaxPastedLineBytes) {
      auto parts = arrow_parts(l);
      if (parts.empty()) parts = respectively_parts(l, written);
      if (parts.empty()) parts = rate_scale_parts(l);
      if (!parts.empty()) {
        for (Line& p : parts) lines.push_back(p);
        continue;
      }
    }
    // ", but " parts a sentence dense with numbers too ("Trainning on RTX3090 0.5s / it, but
    // with 2x RTX 3090 with 1.2s /it"); no tool prints it.
    if (l.text.size() <= kMaxPastedLineBytes &&
        (is_prose(l.text) || lower(l.text).find(", but ") != std::string::npos)) {
      for (Line& c : clauses_of(l)) lines.push_back(c);
    } else {
      lines.push_back(l);
    }
  }
  lines = with_header_units(lines, written);
  const bool summary = is_job_summary(lines);
  const size_t first_step = out.steps.size();
  const size_t first_run = out.runs.size(), first_rate = out.rates.size();
  bool found = false;
  int64_t epoch_clause_line = -1;  // the line whose last clause read an epoch's duration
  for (size_t k = 0; k < pasted.size(); ++k) {
    const Line& l = pasted[k];
    auto c = epochs_compared_in(l.text);
    // A line naming the first epoch and the next line a later one: one paragraph comparing
    // them, read as its two sentences.
    const auto sentence = [](std::string_view text) {
      return text.find('|') == std::string_view::npos && split_whitespace(text).size() >= 4;
    };
    if (!c && k + 1 < pasted.size() && pasted[k + 1].number == l.number + 1 && sentence(l.text) &&
        sentence(pasted[k + 1].text) &&
        l.text.size() + pasted[k + 1].text.size() <= kMaxPastedLineBytes) {
      std::string paragraph = std::string(trim(l.text));
      while (!paragraph.empty() && paragraph.back() == '.') paragraph.pop_back();
      paragraph += ". " + std::string(trim(pasted[k + 1].text));
      if (!epochs_compared_in(l.text) && !epochs_compared_in(pasted[k + 1].text)) {
        c = epochs_compared_in(paragraph);
      }
    }
    if (c) {
      c->origin = {files.of(TelemetryKind::kThroughput), l.number};
      out.epochs_compared.push_back(std::move(*c));
      found = true;
    }
    // Read from the whole line: its sentences name the loader, then the count it suggests.
    if (auto warned = few_workers_warning(l.text)) {
      warned->origin = {files.of(TelemetryKind::kTrainLog), l.number};
      out.few_workers_warnings.push_back(std::move(*warned));
      found = true;
    }
  }
  // PaddlePaddle v1's timers: its data provider fills batches on a thread of its own
  // (PyDP2.getNextBatchInternal, its own TID) while the trainer runs TrainBatch, so the
  // provider's time per batch is the loader timed alone beside the model. Its first call
  // starts the provider (54 s of 54.5 in Paddle#713's 102 calls): left out, as a loader's start,
  // where it is ten times the other calls' mean or more.
  {
    std::optional<std::pair<PaddleStat, int64_t>> provider, train;
    for (const Line& l : pasted) {
      const auto stat = paddle_stat(l.text);
      if (!stat) continue;
      const std::string name = lower(stat->name);
      if (name.find("getnextbatch") != std::string::npos ||
          name.find("dataprovider") != std::string::npos) {
        provider.emplace(*stat, l.number);
      } else if (name == "trainbatch") {
        train.emplace(*stat, l.number);
      }
    }
    if (train && !provider) {
      // The trainer's batch without its provider's row: a duration no rule places.
      out.unplaced.emplace_back(Origin{files.of(TelemetryKind::kTrainLog), train->second},
                                "duration");
      found = true;
    }
    if (provider && train && train->first.avg > 0) {
      const PaddleStat& p = provider->first;
      const double rest = p.count > 1 ? (p.total - p.max) / static_cast<double>(p.count - 1) : 0;
      // The provider's start: a first call ten times the others' mean or more.
      const double per_batch = p.count > 1 && p.max > 10 * rest ? rest : p.avg;
      if (per_batch > 0) {
        out.loader_against_model.push_back({{files.of(TelemetryKind::kTrainLog), provider->second},
                                            1000 / per_batch,
                                            1000 / train->first.avg,
                                            "iterations"});
        found = true;
      }
    }
  }
  struct LoneWait {
    int64_t line;
    double seconds;
    std::string name;
  };
  std::vector<LoneWait> lone_waits;  // waits on lines without their step
  int steps_file = -1, rates_file = -1, util_file = -1;
  std::set<int64_t> told_in_words;  // lines whose utilisation one_against_rest read
  // Steps and waits told in sentences: read from the whole line, once, instead of its numbers.
  std::map<int64_t, ProseTiming> told_timing;
  const std::vector<MinMaxBlock> timer_blocks = min_max_blocks(lines);
  std::set<std::string> nccl_hosts;  // "host:pid:tid [0] NCCL INFO ...": the hosts named
  for (const Line& l : pasted) {
    if (l.text.size() > kMaxPastedLineBytes) continue;
    const std::string text = lower(in_english(l.text));
    if (const auto timing = prose_timing(text)) told_timing.emplace(l.number, *timing);
    // NCCL's transport between machines, and whether the job spans machines.
    if (const size_t nccl = text.starts_with("nccl ") ? 0 : text.find(" nccl ");
        nccl != std::string::npos) {
      // INFO lines only: a WARN's "NET/Socket : peer ... shutdown" is a failure, not a choice.
      if (text.find("nccl info", nccl) != std::string::npos &&
          (text.find("net/socket", nccl) != std::string::npos ||
           text.find("using network socket", nccl) != std::string::npos)) {
        if (!out.nccl_over_sockets) {
          out.nccl_over_sockets = Origin{files.of(TelemetryKind::kTrainLog), l.number};
        }
        found = true;
      }
      if (text.find("failed to open libibverbs", nccl) != std::string::npos) {
        out.nccl_without_verbs = true;
      }
      // A channel through the network joins ranks of two machines.
      if (text.find(" via net/", nccl) != std::string::npos) out.spans_machines = true;
      const auto prefix = split_whitespace(std::string_view(text).substr(0, nccl));
      const auto head = split_char(prefix.empty() ? std::string_view() : prefix.front(), ':');
      // A host's name has a letter ("10:15:01" is a time of day).
      if (head.size() == 3 && std::any_of(head[0].begin(), head[0].end(), is_alpha) &&
          parse_index(head[1]) && parse_index(head[2])) {
        nccl_hosts.insert(std::string(head[0]));
      }
    }
    // Words that span machines, on a line that does not deny it ("a single-node job, not
    // multi-node"); looked for until one line has them.
    if (!out.spans_machines && text.find("single-node") == std::string::npos &&
        text.find("single node") == std::string::npos &&
        text.find("single machine") == std::string::npos &&
        text.find("one machine") == std::string::npos &&
        text.find("not multi") == std::string::npos) {
      for (const std::string_view words :
           {"cross-node", "cross node", "multi-node", "multinode", "multi node", "inter-node",
            "internode", "across nodes", "between nodes", "two nodes", "2 nodes", "two machines",
            "2 machines", "multiple nodes", "multiple machines"}) {
        if (text.find(words) != std::string::npos) out.spans_machines = true;
      }
    }
    if (out.job_gpus.empty() && (text.find("gpu") != std::string::npos ||
                                 text.find("cuda_visible_devices") != std::string::npos)) {
      out.job_gpus = job_gpus_of(l.text);
    }
    // The GPUs' utilisation at two scales, falling at the larger: the GPUs added wait more.
    if (const auto at = utilisation_at_scales(l.text); at && at->larger <= at->smaller - 10) {
      out.claims.push_back(
          ScalingClaim{.origin = {files.of(TelemetryKind::kThroughput), l.number},
                       .larger_is_slower = true,
                       .across_nodes = at->kind == ScaleKind::kNodes,
                       .utilisation = ScalingClaim::Utilisation{at->smaller_scale, at->larger_scale,
                                                                at->smaller, at->larger}});
      told_in_words.insert(l.number);
      found = true;
      continue;
    }
    const auto told = one_against_rest(l.text, text);
    if (!told) continue;
    if (util_file < 0) util_file = files.of(TelemetryKind::kGpuPanel);
    const auto look = [&](int gpu, double util) {
      GpuSample g;
      g.origin = {util_file, l.number};
      g.gpu = gpu;
      g.util = util;
      out.gpus.push_back(g);
    };
    look(told->gpu, told->util);
    for (int g = 0, added = 0; added < told->rest_count; ++g) {
      if (g == told->gpu) continue;
      look(g, told->rest_util);
      ++added;
    }
    told_in_words.insert(l.number);
    found = true;
    out.notes.push_back(TelemetryNote{
        {util_file, l.number},
        fmt::format("said in words: GPU {} at {:.0f} %, {} at {:.0f} %{}", told->gpu, told->util,
                    told->rest_count == 1 ? "the other GPU" : "the other GPUs", told->rest_util,
                    told->counted ? "" : " (how many others is not said: read as two)")});
  }
  // Two host names span machines. A name that ends another is that host cut short: a paste
  // cut at its start turns "lufee:19773" into "ufee:19773" (DPTNet#1).
  const auto cut_short = [&](const std::string& h) {
    return std::any_of(nccl_hosts.begin(), nccl_hosts.end(), [&](const std::string& other) {
      return other.size() > h.size() && other.ends_with(h);
    });
  };
  const auto whole_hosts = std::count_if(nccl_hosts.begin(), nccl_hosts.end(),
                                         [&](const std::string& h) { return !cut_short(h); });
  if (whole_hosts >= 2) out.spans_machines = true;
  // Runs: the first starts with the text; a heading stating another GPU count starts the next
  // once the current one has samples.
  int run = -1;
  bool run_has_samples = false;
  int group = 0;
  // The model size the line names beside its scale ("on 256 A100s for OpenLM-7B"), and the
  // series of each size: runs of one model are compared with each other only.
  std::string line_model, last_model;
  std::map<std::string, int> model_groups;
  std::set<std::pair<int, int>> group_scales;  // (GPUs, nodes); 0 where unstated, 1 node
  const auto scale_key = [](std::optional<int> gpus, std::optional<int> nodes) {
    return std::pair<int, int>{gpus.value_or(0), nodes.value_or(1)};
  };
  std::set<int> named_in_words;  // runs whose GPU count a heading stated in words
  const auto current_run = [&](const Line& at) {
    if (run < 0) {
      out.runs.push_back(new_run(files.name(), at.number));
      run = static_cast<int>(out.runs.size()) - 1;
    }
    return run;
  };
  const auto heading = [&](const Line& line, std::optional<int> gpus, std::optional<int> nodes,
                           bool flag) {
    if (!gpus && !nodes) return;
    const int r = current_run(line);
    RunInfo& info = out.runs[static_cast<size_t>(r)];
    const bool other = (gpus && info.gpus && *gpus != *info.gpus) ||
                       (nodes && info.nodes && *nodes != *info.nodes) ||
                       (!line_model.empty() && !info.model.empty() && line_model != info.model);
    if (run_has_samples && (other || (!info.gpus && gpus))) {
      out.runs.push_back(new_run(files.name(), line.number));
      run = static_cast<int>(out.runs.size()) - 1;
      run_has_samples = false;
      // A scale this series has already had starts the next series; the same GPUs on more
      // nodes are a scale of their own ("Single node with 2 GPUs", "Two node with 1 GPUs
      // each").
      if (group_scales.contains(scale_key(gpus, nodes))) ++group, group_scales.clear();
      out.runs[static_cast<size_t>(run)].group = group;
    }
    // Before its first sample, the latest heading names the run (a machine's "4x V100" in the
    // first line, then "1 GPU = 5148 img/sec").
    RunInfo& now = out.runs[static_cast<size_t>(run)];
    if (gpus && (!now.gpus || (!run_has_samples && !(flag && named_in_words.contains(run))))) {
      now.gpus = gpus;
      if (!flag) named_in_words.insert(run);
    }
    if (nodes && (!now.nodes || !run_has_samples)) now.nodes = nodes;
    // A run its line names no model for belongs to the series of the last one named ("for
    // OpenLM-1B. ~11.5K tokens/sec/GPU on 32 A100s for 1B": a bare size is no model's name).
    const std::string& model = line_model.empty() ? last_model : line_model;
    if (!model.empty() && now.model.empty()) {
      const auto [at, added] = model_groups.emplace(model, group);
      if (added && model_groups.size() > 1) at->second = ++group, group_scales.clear();
      now.model = model;
      now.group = at->second;
    }
    if (!line_model.empty()) last_model = line_model;
  };
  // The run a setting's heading labels: the current one, or — once the current one has
  // samples — a new run at the same scale (the same GPUs, nodes and series).
  const auto run_at_same_scale = [&](const Line& line) -> RunInfo& {
    const int r = current_run(line);
    if (run_has_samples) {
      RunInfo next = new_run(files.name(), line.number);
      const RunInfo& before = out.runs[static_cast<size_t>(r)];
      next.gpus = before.gpus;
      next.nodes = before.nodes;
      next.group = before.group;
      next.exchange_heavy = before.exchange_heavy;
      out.runs.push_back(std::move(next));
      run = static_cast<int>(out.runs.size()) - 1;
      run_has_samples = false;
    }
    return out.runs[static_cast<size_t>(run)];
  };
  // A loader setting heading what follows ("-- Persistent worker", "num_workers=2 :") or
  // labelling its own line ("PyTorch, num_workers=0: 22 samples/s") starts a run at the same
  // scale once the current one, labelled otherwise, has samples.
  const auto setting_heading = [&](const Line& line, const LoaderSetting& setting) {
    if (out.runs[static_cast<size_t>(current_run(line))].loader_setting == setting.label) return;
    RunInfo& now = run_at_same_scale(line);
    now.loader_setting = setting.label;
    take_setting(now, setting);
  };
  // A strategy of exchange heading what follows ("DDP Mode", "Distributed Strategy: fsdp",
  // "sharding_strategy: SHARD_GRAD_OP"): like a loader setting, a run at the same scale.
  const auto exchange_heading = [&](const Line& line, const std::string& strategy) {
    if (out.runs[static_cast<size_t>(current_run(line))].exchange_setting == strategy) return;
    run_at_same_scale(line).exchange_setting = strategy;
  };
  // A link between the GPUs on or off heading what follows ("DDP w/o NVLink:"), with the
  // strategy the heading also names.
  const auto link_heading = [&](const Line& line, std::string_view text, const std::string& link) {
    const RunInfo& now = out.runs[static_cast<size_t>(current_run(line))];
    if (now.link_setting == link) return;
    // A heading that names the link alone ("w/o NVLink:") keeps the strategy of the run before.
    const std::string strategy = exchange_setting_of(text).value_or(now.exchange_setting);
    RunInfo& r = run_at_same_scale(line);
    r.link_setting = link;
    r.exchange_setting = strategy;
  };
  int64_t order = 0;
  // A sample of the current run: the run has begun (a heading after it starts the next).
  const auto has_samples = [&] {
    if (!run_has_samples && run >= 0) {
      const RunInfo& r = out.runs[static_cast<size_t>(run)];
      if (r.gpus || r.nodes) group_scales.insert(scale_key(r.gpus, r.nodes));
    }
    run_has_samples = true;
    found = true;
  };
  const auto add_step = [&](const Line& at, double step_s, std::optional<double> data,
                            std::optional<double> step_avg, std::optional<double> data_avg) {
    std::optional<int> nodes;
    bool flag = false;
    const std::optional<int> gpus = gpu_count_of(at.text, &nodes, &flag);
    // A data value above its step is sorted out once the whole log is read (below).
    if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
    heading(at, gpus, nodes, flag);
    StepSample s;
    s.origin = {steps_file, at.number};
    s.time = static_cast<double>(order++);
    s.step_seconds = step_s;
    s.data_seconds = data.value_or(0.0);
    s.has_data = data.has_value();
    s.run = current_run(at);
    out.steps.push_back(s);
    if (data && step_avg && data_avg && *step_avg > 0) {
      StepSample a = s;
      a.step_seconds = *step_avg;
      a.data_seconds = *data_avg;
      a.average = true;
      out.steps.push_back(a);
    }
  };
  int64_t waits_without_unit = 0;      // step lines whose wait states no unit ("data 0.2")
  std::vector<std::string> header;     // the names of the columns of bare numbers below
  std::optional<double> pending_data;  // a wait on a line of its own, before its step's line
  std::optional<std::pair<int64_t, NamedValue>> gpu_time;  // TorchBench's, before its wall time
  std::optional<StampedCount> last_stamp;  // the last line that printed its clock and its step
  std::optional<StampedCount> last_epoch_stamp;  // ... its clock and its epoch
  int64_t pending_line = 0;
  Line pending_at;
  std::vector<TrainingClock> clocks;
  // out.steps index of a step read from a "total" line whose parts may follow; npos when none
  size_t total_step = std::string::npos;
  int64_t total_line = 0;
  std::string total_unit;           // the unit its step was printed in
  bool total_without_data = false;  // the step above waits in addition to its time
  int64_t total_reach = 6;          // how many lines below it its wait may come
  int64_t last_timer_line = 0;      // the last row of a table of timers below the wait
  int timed_phases = 0;             // compute timers (forward, backward, optimizer) below the wait
  double timers_seconds = 0;        // the seconds of every timer below the wait
  // A table of timers closed by its total row once: the log's later tables end with theirs too,
  // and one that ends without it was cut short (a paste's last table): its sum is no step.
  bool timer_tables_have_total = false;
  // A step's phases timed on rows of their own, one timer a row ("compute : ... avg 0.024",
  // "allreduce : ... avg 0.592"): summed over the rows that follow one another, a phase sample
  // when the block ends with both kinds timed.
  PhaseSample phase_block;
  int64_t phase_block_line = -1;  // the block's last row
  const auto flush_phase_block = [&] {
    if (phase_block.communication_seconds > 0 && phase_block.compute_seconds > 0) {
      if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
      phase_block.origin = {steps_file, phase_block_line};
      out.phases.push_back(phase_block);
      has_samples();
    }
    phase_block = PhaseSample{};
    phase_block_line = -1;
  };
  const auto flush_timer_table = [&] {
    if (!pending_data || timed_phases == 0) return;
    if (!timer_tables_have_total) {
      add_step(pending_at, *pending_data + timers_seconds, pending_data, std::nullopt,
               std::nullopt);
      has_samples();
    }
    pending_data.reset();
    timed_phases = 0;
    timers_seconds = 0;
  };
  std::pair<int64_t, double> last_forward{0, 0.0}, last_backward{0, 0.0};  // line, seconds
  const size_t first_forward_backward = out.forward_backward.size();
  bool bare_forward_backward = false;  // the pair being read has a value without a unit
  std::vector<bool> pair_split;     // per pair of this text: its forward and backward on two lines
  bool rates_said_per_gpu = false;  // the text said the rates below are per GPU
  bool share_table = false;         // a header said its rows' percentages are of a total
  bool bar_moved = false;           // a progress bar has counted past 0
  std::string previous_text;  // a panel's name line ("GPU Utilization"), before its value line
  // What the whole paste says, wherever it says it (one pass, before the lines are read): that
  // its workers are machines or GPUs (Ray Train's ScalingConfig, parameter servers: its
  // "workers=4" lines are no loader's), and the steps between TensorFlow's hook lines where its
  // code states them ("every_n_iter=200"; 0: not stated).
  bool workers_are_machines = false;
  int every_n_iter = 0;
  // The storage media its lines name one at a time: two or more, and each such line labels the
  // runs it heads with where their data is read from ("from fast NVME disks, these are the
  // results:" ... "via a MinIO server, the results are:"). One alone is where every run reads.
  std::set<std::string> media;
  for (const Line& l : pasted) {
    if (l.text.size() > kMaxPastedLineBytes) continue;
    if (auto m = storage_medium_of(l.text)) media.insert(std::move(*m));
    workers_are_machines = workers_are_machines || names_worker_machines(l.text);
    if (const size_t at = l.text.find("every_n_iter="); at != std::string_view::npos) {
      size_t end = at + 13;
      while (end < l.text.size() && is_digit(l.text[end])) ++end;
      every_n_iter = parse_index(l.text.substr(at + 13, end - at - 13)).value_or(0);
    }
  }
  std::vector<int64_t> caffe_waits;    // lines of Caffe's "Waiting for data" after it iterated
  bool caffe_iterating = false;        // the solver has logged an iteration past 0 in this run
  std::optional<double> last_counter;  // TensorFlow's highest "step = N" so far that timed
  double last_interval_steps = 0;      // the steps between its last two lines
  std::string listed_rate;             // the unit a heading gave the list of scales below it
  bool listed_total = false;           // ... and whether it said the rates are the job's total
  bool listed_per_gpu = false;         // ... or each GPU's
  std::optional<int> panel_gpu;
  // The rates of the last few lines by the text before them (Telemetry::repeated_rates), and
  // the group each joined once printed again.
  struct RecentRate {
    std::string_view key;  // into `lines`, which outlive the scan
    Origin origin;
    double value = 0;
    int run = 0;
    int64_t order = 0;   // the keyed rates before this one
    int64_t copies = 0;  // copies of it since
    std::optional<size_t> group;
  };
  std::vector<RecentRate> recent_rates;
  int64_t keyed_rates = 0;
  constexpr int64_t kCopiesWithin = 24;  // lines from the first copy to the last
  for (const Line& line : lines) {
    if (line.text.size() > kMaxPastedLineBytes) continue;
    if (!collective_with_bandwidth(line.text).empty()) continue;  // a benchmark's collective
    const std::string low = lower(line.text);
    line_model = model_size_of(low);  // before any sample of the line heads its run
    const auto says = [&](std::string_view word) { return low.find(word) != std::string::npos; };
    // A heading in words ("Before the fix:", "After:") starts another excerpt: the same counters
    // below it are another run's, not another process's.
    if (const std::string_view t = trim(line.text); !recent_rates.empty() && t.size() <= 60 &&
                                                    t.ends_with(':') &&
                                                    std::none_of(t.begin(), t.end(), is_digit)) {
      recent_rates.clear();
    }
    // Caffe's multi-GPU data layer: "blocking_queue.cpp:50] Waiting for data", logged at the
    // first wait and then once in 1,000 (LOG_EVERY_N): one line is the queue filling at the
    // start; read where it comes twice or more.
    if (says("blocking_queue.cpp") && says("waiting for data")) {
      if (caffe_iterating) caffe_waits.push_back(line.number);
      continue;
    }
    // The waits that count come after the solver's first iterations, in the same run.
    if (says("solving ") || says("starting optimization")) caffe_iterating = false;
    if (says("solver.cpp") && says("iteration ") && !says("iteration 0,") &&
        !says("iteration 0 ")) {
      caffe_iterating = true;
    }
    // A reader's own complaint on a short line, its name before a colon, not a sentence about
    // one: snmn's "data reader: waiting  for data loading (IO slow)" — not a question ("Is it
    // still waiting for data loading?") nor a start ("waiting for data loading workers to
    // start").
    const size_t waits_at = line.text.size() > 80 ? std::string::npos
                                                  : std::min(low.find("waiting for data loading"),
                                                             low.find("waiting  for data loading"));
    const bool reader_waits = waits_at != std::string::npos && waits_at >= 2 &&
                              low.rfind(": ", waits_at) != std::string::npos && !says("?") &&
                              !says("start") && !says("begin");
    if (says("performance bottleneck on cpu or disk") || says("prefetch queue empty") ||
        reader_waits) {
      if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
      out.loader_warnings.push_back(Origin{steps_file, line.number});
      found = true;
    }
    if (const auto block = std::find_if(
            timer_blocks.begin(), timer_blocks.end(),
            [&](const MinMaxBlock& b) { return b.first <= line.number && line.number <= b.last; });
        block != timer_blocks.end()) {
      if (line.number == block->cited) {
        add_step(line, block->step_seconds, block->data_seconds, std::nullopt, std::nullopt);
        has_samples();
      }
      continue;
    }
    if (const auto told = told_timing.find(line.number); told != told_timing.end()) {
      if (told->second.step > 0) {
        add_step(line, told->second.step, told->second.data, std::nullopt, std::nullopt);
        has_samples();
        told->second.step = 0;  // its other clauses are passed over
      }
      continue;
    }
    if (const auto bar = bar_count(line.text)) {
      // A bar at 0 of its total with no rate yet ("?it/s"), before any bar moved or any step
      // was read, waits for the job's first step; a later line of a bar moved on clears it. (A
      // new epoch's or a validation's bar at 0 after steps ran is no first batch.)
      if (bar->first == 0 && says("<?") && says("?it/s") && !bar_moved &&
          out.steps.size() == first_step) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.first_batch_pending = Origin{steps_file, line.number};
        found = true;
      } else if (bar->first > 0) {
        bar_moved = true;
        out.first_batch_pending.reset();
      }
    }
    std::vector<NamedValue> values = named_values(line.text);
    if (auto row = timer_statistics_row(line.text, values)) values = {std::move(*row)};
    // VietOCR's "load time: 0.39 - gpu time: 38.92": beside a wait for data, the GPU's time is
    // the rest of the step (alone, TorchBench's "GPU Time", it is not).
    if (std::any_of(values.begin(), values.end(), [](const NamedValue& v) {
          return meaning_of(v).quantity == Quantity::kDataWait;
        })) {
      for (NamedValue& v : values) {
        if (v.name == "gpu_time" && seconds_of(v)) v.name = "iteration_without_data";
      }
    }
    // "my GPU is only at 10-20%": a range's low end takes the percent its high end carries.
    for (size_t k = 0; k + 1 < values.size(); ++k) {
      NamedValue& from = values[k];
      const NamedValue& to = values[k + 1];
      if (!from.unit.empty() || !(to.name.empty() || to.name == "to") || to.unit != "%" ||
          to.column <= from.column) {
        continue;
      }
      std::string_view between = std::string_view(line.text).substr(from.column);
      between = between.substr(0, to.column - from.column);
      while (!between.empty() && (is_digit(between.front()) || between.front() == '.')) {
        between.remove_prefix(1);
      }
      if (trim(between) == "-" || trim(between) == "~" || trim(between) == "to") from.unit = "%";
    }
    // PyTorch/XLA's training examples: "| Training Device=xla:0/4 Epoch=1 Step=780 Loss=0.00152
    // Rate=545.11 GlobalRate=406.16 Time=01:54:23", Rate the device's samples a second over the
    // last steps (GlobalRate, the mean since the start, is left unread).
    if (says("device=xla") && says(" rate=")) {
      for (NamedValue& v : values) {
        if (v.name == "rate" && v.unit.empty()) {
          v.name = "rate_per_device";
          v.unit = "samples/s";
        }
      }
    }
    // TorchBench's "GPU Time: 32.600 milliseconds" and, on the next line, "CPU Total Wall Time:
    // 32.625 milliseconds" (Telemetry::gpu_time_against_wall), in the same unit.
    if (values.size() == 1 && values[0].name == "gpu_time" && values[0].value > 0) {
      gpu_time.emplace(line.number, values[0]);
      continue;
    }
    if (gpu_time && values.size() == 1 && values[0].name == "cpu_total_wall_time" &&
        line.number - gpu_time->first <= 2 && values[0].unit == gpu_time->second.unit &&
        values[0].value >= gpu_time->second.value) {
      if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
      out.gpu_time_against_wall.push_back(Telemetry::GpuTimeAgainstWall{
          Origin{steps_file, line.number}, gpu_time->second.value, values[0].value});
      gpu_time.reset();
      found = true;
      continue;
    }
    // TensorFlow's "step = 25 (1.798 sec)": the time since the previous line over the steps
    // since it is the step (the first line, and a rank's repeat of a counter, time none).
    {
      const auto counter = std::find_if(values.begin(), values.end(), [](const NamedValue& v) {
        return v.name == "step_counter";
      });
      const auto interval = std::find_if(values.begin(), values.end(), [](const NamedValue& v) {
        return v.name == "interval_time";
      });
      if (counter != values.end() && interval != values.end()) {
        // Each line times the steps since the previous one, which its code may state instead
        // (every_n_iter=200) where the counters repeat.
        double steps = last_counter ? counter->value - *last_counter : 0;
        if (steps < 1 && every_n_iter > 0) steps = every_n_iter;
        // A jump far past the interval so far is another run's excerpt, not its steps.
        if (last_interval_steps > 0 && steps > 10 * last_interval_steps) steps = 0;
        if (steps >= 1) last_interval_steps = steps;
        const double seconds = interval->value;
        // Ranks printing out of order ("r0 300, r1 200"): the highest counter so far.
        last_counter = std::max(last_counter.value_or(counter->value), counter->value);
        if (steps >= 1 && steps <= 100000) {
          values.push_back(NamedValue{"step_time", "s", seconds / steps, std::nullopt, 0});
        }
      }
    }
    // Tacotron's feeder: "Generated 32 batches of size 32 in 126.923 sec" (also "64 train
    // batches"): its seconds per batch, against the steps that consume them.
    if (const size_t at = low.find("generated ");
        at != std::string::npos && says("batches of size") && says(" sec")) {
      const auto words = split_whitespace(std::string_view(low).substr(at));
      const auto batches = words.size() > 1 ? parse_index(words[1]) : std::nullopt;
      std::optional<double> seconds;
      for (size_t k = 1; k + 2 < words.size(); ++k) {  // "... in 126.923 sec"
        if (words[k] == "in" && words[k + 2].starts_with("sec")) {
          seconds = parse_number(words[k + 1]);
        }
      }
      if (batches && *batches > 0 && seconds && *seconds > 0) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.feeder_batch_seconds.emplace_back(Origin{steps_file, line.number}, *seconds / *batches);
        found = true;
        continue;
      }
    }
    // Horovod's stall warning lists each stalled op with the ranks that have not submitted it:
    // "HorovodAllreduce_gradients_..._0 [missing ranks: 0]", "[missing ranks: 1, 3]".
    if (const size_t at = low.find("[missing ranks:"); at != std::string::npos) {
      std::vector<int> ranks = bracketed_ranks(low, at);
      if (!ranks.empty()) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.missing_ranks.emplace_back(Origin{steps_file, line.number}, std::move(ranks));
        found = true;
      }
      continue;
    }
    // Later releases list the ranks that have submitted instead: "allreduce.layer1.0.conv1.weight
    // [ready ranks: 5, 1, 4, 7, 2, 3]" (horovod#334). The missing are those below the highest
    // ready rank that are not ready (one above it would not show).
    if (const size_t at = low.find("[ready ranks:"); at != std::string::npos) {
      const std::vector<int> listed = bracketed_ranks(low, at);
      const std::set<int> ready(listed.begin(), listed.end());
      std::vector<int> missing;
      for (int r = 0; !ready.empty() && r < *ready.rbegin(); ++r) {
        if (!ready.contains(r)) missing.push_back(r);
      }
      if (!missing.empty()) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.missing_ranks.emplace_back(Origin{steps_file, line.number}, std::move(missing));
        found = true;
      }
      continue;
    }
    // PaddlePaddle v1's timers are read together, above: no line of them is a step.
    if (paddle_stat(line.text)) continue;
    // PyTorch-BigGraph's bucket line: the bucket's training and its partitions' reads.
    if (const auto bucket = biggraph_bucket(line.text)) {
      add_step(line, bucket->first + bucket->second, bucket->second, std::nullopt, std::nullopt);
      has_samples();
      found = true;
      continue;
    }
    // Detectron's json_stats: "mb_qsize": 0, its minibatch queue empty when the step asks.
    if (says("\"mb_qsize\": 0,") || says("\"mb_qsize\": 0}") || says("mb_qsize: 0 ")) {
      if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
      out.loader_warnings.push_back(Origin{steps_file, line.number});
      found = true;
    }
    if (const auto swing = utilisation_swing(low)) {
      if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
      out.utilisation_swings.push_back(
          {Origin{steps_file, line.number}, swing->first, swing->second});
      found = true;
    }
    // The same queue's fill (Telemetry::loader_queue_fill), against its default capacity:
    // Detectron's MINIBATCH_QUEUE_SIZE of 64, tensorpack's QueueInput of 50.
    for (const NamedValue& v : values) {
      const double capacity = v.name == "mb_qsize"                ? 64
                              : v.name == "queueinput/queue_size" ? 50
                                                                  : 0;
      if (capacity > 0 && v.unit.empty() && v.value >= 0 && v.value <= capacity) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.loader_queue_fill.emplace_back(Origin{steps_file, line.number}, v.value / capacity);
        found = true;
        break;
      }
    }
    if (std::none_of(values.begin(), values.end(),
                     [](const NamedValue& v) {
                       return meaning_of(v).quantity == Quantity::kCpuUtilisation;
                     }) &&
        (cpu_said_full(line.text) || one_core_said_full(line.text))) {
      values.push_back(NamedValue{"cpu_utilization", "%", 100, std::nullopt, 0});
    }
    // "The numbers below show the **per-GPU** training throughput": the rates that follow
    // without a unit of their own saying so are per GPU.
    if ((says("per-gpu") || says("per gpu")) && says("below") &&
        (says("throughput") || says("rate") || says("speed")) && is_prose(line.text)) {
      rates_said_per_gpu = true;
    }
    // The line's GPU and node counts, read once: they head runs (below) and say the job spans
    // nodes.
    std::optional<int> nodes;
    bool flag = false;
    const std::optional<int> gpus = gpu_count_of(line.text, &nodes, &flag);
    // "Total images/sec result:" above "1 GPU : 3861.48", "2 GPU : 7831.85": a heading naming a
    // rate, then a line per scale with its bare number, read in the heading's unit.
    if (values.empty() && trim(line.text).ends_with(':') && trim(line.text).size() <= 64) {
      listed_rate.clear();
      for (const std::string_view w : split_whitespace(low)) {
        const Meaning m = meaning_of(NamedValue{"", std::string(w), 1, std::nullopt, 0});
        if (m.quantity == Quantity::kRate && m.rate_unit != "iterations") {
          listed_rate = std::string(w);
          listed_total = says("total");
          // "images/sec per GPU:", not "images/sec, same batch per GPU:".
          listed_per_gpu = says(std::string(w) + " per gpu") || says(std::string(w) + " per-gpu") ||
                           w.find("/gpu") != w.npos;
        }
      }
    } else if (!listed_rate.empty() && !trim(line.text).empty()) {
      const bool listed = (gpus || nodes) && values.size() == 2 && values[1].unit.empty() &&
                          meaning_of(values[1]).quantity == Quantity::kNone &&
                          values[1].name.starts_with(nodes && !gpus ? "node" : "gpu");
      if (listed) {
        values[1].name = listed_total ? "total_rate" : listed_per_gpu ? "rate_per_gpu" : "rate";
        values[1].unit = listed_rate;
        values.erase(values.begin());  // the count
      } else {
        listed_rate.clear();
      }
    }
    // A line naming one of the paste's two storage media or more labels the runs it heads,
    // sentence or not (media, above).
    if (media.size() >= 2) {
      if (const auto medium = storage_medium_of(line.text);
          medium && out.runs[static_cast<size_t>(current_run(line))].storage != *medium) {
        run_at_same_scale(line).storage = *medium;
      }
    }
    // A tool's line or a short heading, not a sentence about the job ("For synthetic data,
    // scaling efficiency can not hit 90 % ..."); a longer one when it holds its run's measure
    // too ("Setup 1: `python loop.py --num_threads=1` leads to `per_iter_time: 2.317s`, ...").
    if (trim(line.text).size() <= (values.empty() ? 100 : 160)) {
      if (const auto setting = loader_setting_of(line.text); setting && !is_prose(line.text)) {
        setting_heading(line, *setting);
      }
      // A strategy labelling its own line's measures ("horovod-bert:  global_step/sec: 1.03",
      // byteps#32): the label before the first value.
      const std::string_view label =
          values.empty() ? line.text
                         : line.text.substr(0, std::min(values[0].column, line.text.size()));
      // A short heading whose one number is the strategy's own ("ZeRO Stage=1:"): the whole
      // line.
      const bool short_heading = values.size() <= 1 && trim(line.text).size() <= 40;
      if (const auto strategy = exchange_setting_of(short_heading ? line.text : label);
          strategy && !is_prose(line.text)) {
        exchange_heading(line, *strategy);
      }
      // Only a short heading names a link: NCCL's own lines name P2P at every channel.
      if (const auto link = short_heading ? link_setting_of(line.text) : std::nullopt;
          link && !is_prose(line.text)) {
        link_heading(line, line.text, *link);
      }
    }
    if ((says("per gpu") || says("per-gpu")) && says("batch")) out.batch_per_gpu_stated = true;
    if (says("max_iters") || says("max_iter=") || runs_iterations(low)) {
      out.run_in_iterations = true;
    }
    if (says_synthetic_data(low)) {
      // "However, with synthetic data i see good scalability": the paste's runs are on its
      // data, set against synthetic runs it does not show.
      if (synthetic_scales_said(low)) {
        out.synthetic_scales = true;
      } else if (!synthetic_scaling_told(low)) {
        out.runs[static_cast<size_t>(current_run(line))].synthetic = true;
      }
    }
    if (!out.data_parallel) {
      out.data_parallel = gpus.value_or(1) > 1 || nodes.value_or(1) > 1 ||
                          std::any_of(std::begin(kDataParallelWords), std::end(kDataParallelWords),
                                      [&](std::string_view w) { return has_whole_word(low, w); });
    }
    if (spans_nodes_or_shards(low) || nodes.value_or(1) > 1) {
      out.runs[static_cast<size_t>(current_run(line))].exchange_heavy = true;
    }
    // "TITAN X (Pascal) (#0)": the panel's GPU.
    if (const size_t hash = line.text.find("(#"); hash != std::string_view::npos) {
      const size_t close = line.text.find(')', hash);
      if (close != std::string_view::npos) {
        if (const auto i = parse_index(line.text.substr(hash + 2, close - hash - 2))) {
          panel_gpu = *i;
        }
      }
    }
    // A value alone on its line takes the name of the line before ("GPU Utilization" / "99%").
    if (values.size() == 1 && values[0].name.empty() && !previous_text.empty() &&
        trim(line.text).size() <= 16) {
      const auto probe = named_values(previous_text + ": 0");
      if (!probe.empty()) values[0].name = probe.back().name;
    }
    previous_text = values.empty() ? std::string(trim(line.text)) : std::string();
    // Rows of bare numbers under a header that names them take its names.
    if (!header.empty() && !values.empty() && values.size() == header.size() &&
        std::all_of(values.begin(), values.end(),
                    [](const NamedValue& v) { return v.name.empty() && v.unit.empty(); })) {
      for (size_t k = 0; k < values.size(); ++k) values[k].name = header[k];
    } else if (!trim(line.text).empty()) {
      header = column_names(line.text, values);
    }
    if (previous_text.size() > 40) previous_text.clear();

    {
      // fairseq's clocks: "num_updates=198, ..., wall=951, train_wall=182".
      const auto wall = value_named(values, "wall");
      const auto train = value_named(values, "train_wall");
      const auto updates = value_named(values, "num_updates");
      if (wall && train && updates) clocks.push_back({line, *wall, *train, *updates});
    }
    // darknet's iteration line, "13528: 6.374037, 6.661028 avg loss, 0.001000 rate, 0.762016
    // seconds, 865792 images": its nameless seconds train the batch; the wait for it is the
    // "Loaded: 2.078771 seconds" line below.
    if (says("avg loss,") && says(" rate,")) {
      for (NamedValue& v : values) {
        if (v.unit == "seconds" || v.unit == "second") {  // named by the comma's "rate"
          v.name = "iteration_without_data";
        }
      }
    }
    // A profile of sections, each with its seconds and its share of the total ("## Section
    // Time  % of total" over "Read data  41.36  84.89%", Blocks' timing): the data row's share
    // is the wait's, against the whole it is a part of.
    if (says("% of total")) share_table = true;
    if (share_table && values.size() == 2 && values[1].name.empty() && values[1].unit == "%" &&
        values[1].value > 0 && values[1].value <= 100 && values[0].unit.empty() &&
        meaning_of(values[0]).quantity == Quantity::kDataWait && values[0].value > 0) {
      add_step(line, values[0].value * 100 / values[1].value, values[0].value, std::nullopt,
               std::nullopt);
      has_samples();
      continue;
    }
    if (const auto profiled = profiler_input_share(low)) {
      if (profiled->share == 1 && low.find("[au]") != std::string::npos) {
        // DLIO's utilisation of exactly 0: nothing was timed (a run whose statistics were not
        // collected prints 0 for every metric), no run that waited throughout.
        out.unplaced.emplace_back(Origin{files.of(TelemetryKind::kInputProfile), line.number},
                                  std::string(kDlioZeroUtilisation));
        found = true;
        continue;
      }
      // The profiler's own average over the steps it sampled: a profile's totals.
      StepSample s;
      s.origin = {files.of(TelemetryKind::kInputProfile), line.number};
      s.time = static_cast<double>(order++);
      s.step_seconds = profiled->step_seconds.value_or(1);
      s.data_seconds = profiled->share * s.step_seconds;
      s.average = true;
      s.shares = !profiled->step_seconds;
      s.run = current_run(line);
      out.steps.push_back(s);
      has_samples();
      continue;
    }
    // The TPU monitor's idle time without its infeed share (its level 1, or a paste of its
    // first lines): a TPU waiting in infeed counts as busy, so idle time cannot say whether the
    // step waits for input. A measurement the verdict names, with the line that would decide.
    if (const size_t idle = low.find("tpu idle time");
        idle != std::string::npos && low.find('%', idle) != std::string::npos &&
        std::any_of(low.begin() + static_cast<std::ptrdiff_t>(idle), low.end(), is_digit)) {
      out.unplaced.emplace_back(Origin{files.of(TelemetryKind::kInputProfile), line.number},
                                std::string(kTpuIdleTime));
      found = true;
      continue;
    }
    // The step's phases as percentages of it, the wait among them ("time stat: data 0.1%,
    // preproc 0.3%, forward 0.9%, loss 33.5%, backward 49.7%", sudo_rm_rf#27): the wait's share
    // of a step whose seconds the line does not give.
    std::optional<double> share = wait_share_of_phases(values);
    if (!share) share = st_gcn_share(low);
    if (!share) share = data_share_said(low);
    if (share) {
      add_step(line, 1, *share, std::nullopt, std::nullopt);
      out.steps.back().shares = true;
      has_samples();
      continue;
    }
    LineReading step = read_step(values);
    std::optional<double> epoch_clock;  // this line's epoch's duration from its clock, if any
    // A line that times nothing but prints its clock and its step: the step from the last
    // such line.
    if (!step.step && !step.data &&
        std::none_of(values.begin(), values.end(), [](const NamedValue& v) {
          return meaning_of(v).quantity == Quantity::kRate;
        })) {
      if (const auto stamp = stamped_count(line.text)) {
        if (last_stamp && stamp->count > last_stamp->count &&
            stamp->seconds > last_stamp->seconds && stamp->seconds - last_stamp->seconds < 86400) {
          step.step = (stamp->seconds - last_stamp->seconds) /
                      static_cast<double>(stamp->count - last_stamp->count);
          step.step_priority = 0;
        }
        last_stamp = stamp;
      } else if (const auto epoch = stamped_count(line.text, kEpochCounter)) {
        // An epoch's line with the log's clock and nothing timed ("2023-01-25 19:57:01,392
        // paimon INFO ====> Epoch: 561", VITS): from the same message for the epoch before,
        // that epoch's duration. Of several lines per epoch, each epoch's first is the one
        // kept ("Epoch 1 [100/500]" ... "Epoch 1 [500/500]", then "Epoch 2 [100/500]").
        if (last_epoch_stamp && epoch->count == last_epoch_stamp->count + 1 &&
            epoch->message == last_epoch_stamp->message &&
            epoch->seconds > last_epoch_stamp->seconds &&
            epoch->seconds - last_epoch_stamp->seconds < 7 * 86400) {
          epoch_clock = epoch->seconds - last_epoch_stamp->seconds;
        }
        if (!last_epoch_stamp || epoch->count != last_epoch_stamp->count) last_epoch_stamp = epoch;
      }
    }
    // A wait on a line without its step belongs to the step on a line just below: a table of
    // named times, one per row ("Load batch | 0.744" ... "Iteration total | 0.913"), or
    // Megatron's timers ("batch-generator: 1.2") before its "elapsed time per iteration".
    // A breakdown below its total ("Total step time: 0.33s", "policy_training: 0.32s (99.5%)",
    // "data_processing: 0.00s (0.4%)", NeMo-RL): the wait is part of the step above.
    // Below a step that is no total, a wait alone on the next line (or beside the step's
    // phases only) is that step's unless a step follows it at once: a log printing each wait
    // before its step ("data_time" then "step_time"), cut to start at a step line.
    const auto step_follows = [&] {
      const auto at = static_cast<size_t>(&line - lines.data());
      for (size_t k = at + 1; k < lines.size(); ++k) {
        if (trim(lines[k].text).empty()) continue;
        if (lines[k].text.size() > kMaxPastedLineBytes) return false;
        const auto next = named_values(lines[k].text);
        return std::any_of(next.begin(), next.end(), [](const NamedValue& v) {
          const Quantity q = meaning_of(v).quantity;
          return q == Quantity::kStep || q == Quantity::kStepWithoutData;
        });
      }
      return false;
    };
    // Megatron's and DeepSpeed's timers line prints below its iteration's line ("time (ms) |
    // forward: 656.14 | ... | batch generator: 1.22"): its wait beside the step's phases.
    const bool beside_phases = std::all_of(values.begin(), values.end(), [](const NamedValue& v) {
      const Quantity q = meaning_of(v).quantity;
      return q == Quantity::kDataWait || q == Quantity::kCompute || q == Quantity::kCommunication;
    });
    if (step.data && !step.step && total_step != std::string::npos &&
        line.number - total_line <= total_reach &&
        (total_reach > 1 || ((values.size() == 1 || beside_phases) && !step_follows())) &&
        !out.steps[total_step].has_data) {
      // A wait printed without a unit below a total with one is in the total's unit (a paste
      // cut off after CNTK's "__Get Minibatch :  0.044", its "ms" lost).
      if (!step.data_has_unit && !total_unit.empty()) {
        if (const auto scale = duration_scale(lower(total_unit))) *step.data *= *scale;
      }
      out.steps[total_step].data_seconds = *step.data;
      out.steps[total_step].has_data = true;
      if (total_without_data) out.steps[total_step].step_seconds += *step.data;
      total_step = std::string::npos;
      continue;
    }
    if (step.data && !step.step) {
      // A bare "load: 0.2" or "wait: 3" is as likely a load average or a count: a lone wait
      // needs a unit or a name that says it times the loading ("LoaderTime", "data_time").
      const bool ambiguous = step.data_name == "load" || step.data_name == "wait" ||
                             step.data_name == "fetch" || step.data_name == "dl" ||
                             step.data_name == "data";
      if ((step.data_has_unit || !ambiguous) && std::isfinite(*step.data) && *step.data < 1e6) {
        lone_waits.push_back({line.number, *step.data, step.data_name});
      }
      flush_timer_table();
      pending_data = step.data;
      pending_line = last_timer_line = line.number;
      pending_at = line;
      timed_phases = 0;
      timers_seconds = 0;
    } else if (step.step && !step.data && pending_data &&
               (line.number - pending_line <= 4 ||
                (timed_phases > 0 && line.number == last_timer_line + 1))) {
      step.data = pending_data;
      timer_tables_have_total = timer_tables_have_total || timed_phases > 0;
    }
    if (step.step) {
      pending_data.reset();
      timed_phases = 0;
      timers_seconds = 0;
    }
    bool meaningful = false;
    bool epoch = false;
    const bool rate_here = std::any_of(values.begin(), values.end(), [](const NamedValue& v) {
      return meaning_of(v).quantity == Quantity::kRate;
    });
    // A line of step or rate values times steps; a duration beside them is an estimate.
    // "workers=4: 0.46s": a loader setting's own line timing the same work (a loader
    // benchmark's loop), read like a run's duration.
    const bool setting_took = !workers_are_machines && values.size() == 2 &&
                              values[0].name.find("worker") != std::string::npos &&
                              values[1].name.empty() && duration_scale(values[1].unit);
    std::optional<double> took;
    if (epoch_clock) {
      took = epoch_clock;
      epoch = true;
    } else if (!step.step && !rate_here) {
      took = setting_took ? seconds_of(values[1]) : run_duration(line.text, epoch);
      const bool own = took.has_value();
      if (!took && line.number == epoch_clause_line) {
        took = compared_duration(line.text);
        epoch = took.has_value();
      }
      // Only a clause that names its epoch opens a comparison: no chain of them.
      epoch_clause_line = own && epoch ? line.number : -1;
    } else {
      epoch_clause_line = -1;
    }
    if (took && *took > 0) {
      // The same work at each scale: read as its rate, like a table's duration column.
      if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
      heading(line, gpus, nodes, flag);
      ThroughputSample r;
      r.origin = {rates_file, line.number};
      r.per_second = 1 / *took;
      r.unit = epoch ? "epochs" : "runs";
      r.run = current_run(line);
      out.rates.push_back(std::move(r));
      meaningful = true;
    }
    // Speedups said of synthetic data and of the job's own: each the data that the words
    // nearest before it name.
    if (says("speedup") || says("speed-up") || says("speed up")) {
      for (const NamedValue& v : values) {
        if (v.unit != "x" || !(v.value > 1 && v.value < 1000)) continue;
        const std::string_view before = std::string_view(low).substr(0, v.column);
        size_t synthetic_at = 0, real_at = 0;
        for (const std::string_view w : kSyntheticDataWords) {
          if (const size_t at = before.rfind(w); at != std::string_view::npos) {
            synthetic_at = std::max(synthetic_at, at + 1);
          }
        }
        for (const std::string_view w : {"real", "own data", "actual data", "imagenet"}) {
          if (const size_t at = before.rfind(w); at != std::string_view::npos) {
            real_at = std::max(real_at, at + 1);
          }
        }
        if (synthetic_at == 0 && real_at == 0) continue;
        if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
        out.speedups.push_back({{rates_file, line.number}, v.value, synthetic_at > real_at});
        found = true;
      }
    }
    if (const auto slower = larger_scale_slower(line.text)) {
      if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
      out.claims.push_back(ScalingClaim{{rates_file, line.number}, *slower});
      found = true;
    } else if (const auto unchanged_with = speed_unchanged_with(line.text)) {
      if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
      out.claims.push_back(ScalingClaim{.origin = {rates_file, line.number},
                                        .larger_is_slower = true,
                                        .unchanged = true,
                                        .across_nodes = *unchanged_with == ScaleKind::kNodes});
      found = true;
    }
    // A table of timers with a data row and the compute's rows but no total ("data loading:
    // 7402.723s", "forward pass: 35.420s", "backward pass: 190.336s", ...): the step is the
    // rows' sum, read where the table ends.
    if (pending_data && !step.step) {
      // A row may time its phase twice, by two clocks in columns ("forward:  97.38 ms  266.44
      // ms", VISSL's host and CUDA-event times): its first value is the row's.
      const Quantity q = values.empty() ? Quantity::kNone : meaning_of(values[0]).quantity;
      const bool one_timer =
          !values.empty() && !values[0].name.empty() && duration_scale(values[0].unit) &&
          (q == Quantity::kCompute || q == Quantity::kCommunication || q == Quantity::kNone) &&
          std::all_of(values.begin() + 1, values.end(),
                      [](const NamedValue& v) { return v.name.empty() && duration_scale(v.unit); });
      // The table's rows follow one another from the wait's row down.
      if (one_timer && line.number == last_timer_line + 1) {
        timed_phases += q == Quantity::kCompute;
        timers_seconds += *seconds_of(values[0]);
        last_timer_line = line.number;
        continue;
      }
      flush_timer_table();
    }
    // Step lines.
    if (step.step && *step.step > 0) {
      double step_s = *step.step;
      std::optional<double> step_avg = step.step_avg;
      if (step.data && step.step_without_data) {
        step_s += *step.data;
        if (step_avg && step.data_avg) *step_avg += *step.data_avg;
      }
      add_step(line, step_s, step.data, step_avg, step.data_avg);
      waits_without_unit += step.data && !step.data_has_unit;
      if (step.data_is_remainder) out.steps.back().data_upper_bound = true;
      total_step = std::string::npos;
      // A step without its wait (darknet's) takes the wait on a line just below as well; any
      // other step a wait alone on the very next line (Coqui TTS's "| > step_time: 1.23120"
      // over "| > loader_time: 0.00170", one value a line; not Megatron's timers line, whose
      // batch-generator belongs to the iteration below it).
      if (!step.data) {
        total_step = out.steps.size() - 1;
        total_line = line.number;
        total_unit = step.step_unit;
        total_without_data = step.step_without_data;
        total_reach = step.step_is_total || step.step_without_data ? 6 : 1;
      }
      meaningful = true;
    }
    // A step's phases: gradient exchange against compute.
    {
      PhaseSample p;
      bool paired_here = false;
      for (const NamedValue& v : values) {
        const Quantity q = meaning_of(v).quantity;
        if (q == Quantity::kCommunication) p.communication_seconds += *seconds_of(v);
        if (q == Quantity::kCompute) p.compute_seconds += *seconds_of(v);
        // The forward and the backward, the first of each (a row's other clocks are columns),
        // paired when both are read within a few lines. Without a unit, a fraction only: rows
        // under "the different times (in seconds)" ("Forward Pass: 0.2936246395111084,").
        const bool timed = q == Quantity::kCompute ||
                           (v.unit.empty() && v.value > 0 && v.value != std::floor(v.value));
        if (timed && !paired_here &&
            (v.name.starts_with("forward") || v.name.starts_with("backward"))) {
          const bool forward = v.name.starts_with("forward");
          auto& [at, seconds] = forward ? last_forward : last_backward;
          if (at != line.number) {
            at = line.number;
            seconds = *seconds_of(v);
            bare_forward_backward = bare_forward_backward || v.unit.empty();
          }
          if (last_forward.first > 0 && last_backward.first > 0 &&
              std::abs(last_forward.first - last_backward.first) <= 6) {
            // Its file is named once the pairs are kept (below).
            out.forward_backward.push_back(ForwardBackward{{-1, line.number},
                                                           last_forward.second,
                                                           last_backward.second,
                                                           !bare_forward_backward});
            pair_split.push_back(last_forward.first != last_backward.first);
            last_forward = last_backward = {0, 0.0};
            bare_forward_backward = false;
            paired_here = true;  // the line's later timers ("backward_inner") are its parts
          }
        }
      }
      if (p.communication_seconds > 0 && p.compute_seconds > 0) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        p.origin = {steps_file, line.number};
        out.phases.push_back(p);
        meaningful = true;
      } else if (values.size() == 1 && !values[0].name.empty() && duration_scale(values[0].unit)) {
        // One timer on the row: part of a block of rows, each a phase.
        if (phase_block_line >= 0 && line.number != phase_block_line + 1) flush_phase_block();
        phase_block.communication_seconds += p.communication_seconds;
        phase_block.compute_seconds += p.compute_seconds;
        phase_block_line = line.number;
      } else if (phase_block_line >= 0) {
        flush_phase_block();
      }
    }
    // Rates and utilisation.
    for (const NamedValue& v : values) {
      // "mfu: 74.13", "mfu 0.96%": in percent (a bare fraction, "mfu: 0.42", is not read: it
      // may be either).
      if ((v.name == "mfu" || v.name.ends_with("_mfu") || v.name.ends_with("/mfu")) &&
          (v.unit == "%" || (v.unit.empty() && v.value > 1)) && v.value > 0 && v.value <= 100) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.mfu.emplace_back(Origin{steps_file, line.number}, v.value);
        meaningful = true;
        continue;
      }
      // "4nodes total 8cards, speed up ratio is 5.46(idea 8)" (pytorch#74148): a speedup beside
      // the ideal one, the GPUs' count, states the efficiency: 5.46 of 8.
      if (const std::string_view name = without_filler(v.name);
          (name.ends_with("speedup") || name.ends_with("speed_up") ||
           name.ends_with("speedup_ratio") || name.ends_with("speed_up_ratio")) &&
          (v.unit.empty() || v.unit == "x") && v.value > 0) {
        const NamedValue* const end = values.data() + values.size();
        const NamedValue* const ideal = std::find_if(&v + 1, end, [](const NamedValue& w) {
          // "idea" is how the thread spells it.
          return (w.name == "ideal" || w.name == "idea" || w.name == "ideal_speedup") &&
                 (w.unit.empty() || w.unit == "x") && w.value >= 2 &&
                 w.value == std::floor(w.value);
        });
        // The ideal a count of the line's GPUs or nodes: not a precision's ("AMP speedup: 1.3x
        // (ideal 2x)").
        const auto counted = [&](double n) {
          return (gpus && *gpus == n) || (nodes && *nodes == n);
        };
        if (ideal != end && v.value <= 2 * ideal->value && counted(ideal->value)) {
          if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
          out.stated_scaling_efficiency.emplace_back(Origin{steps_file, line.number},
                                                     100 * v.value / ideal->value);
          meaningful = true;
          continue;
        }
      }
      // Not one aimed at or someone else's claim ("The goal is to get 90% scaling efficiency",
      // "From the horovod's README.md, horovod achieves 90% scaling efficiency").
      if ((v.name == "scaling_efficiency" || v.name.ends_with("_scaling_efficiency")) &&
          v.unit == "%" && v.value > 0 && v.value <= 200 && !aimed_at_or_cited(low, v.column)) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.stated_scaling_efficiency.emplace_back(Origin{steps_file, line.number}, v.value);
        meaningful = true;
        continue;
      }
      // "TFLOP/s/GPU: 243.6", "Estimates: 129.32TFLOPs", "tflops=93.48", "tflops_per_gpu":
      // the model's arithmetic per GPU. A total, a peak or a theoretical figure is not.
      if (names_model_tflops(v) && v.value > 0 && v.value < 10000) {
        if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
        out.model_tflops.emplace_back(Origin{steps_file, line.number}, v.value);
        meaningful = true;
        // At a scale the line names, said per GPU ("32 nodes -> 413 TFLOP/s per GPU"): a rate
        // per GPU of the run at that scale, which runs at other scales are compared with.
        if ((gpus || nodes) && (says("per gpu") || says("/gpu") || says("per_gpu") ||
                                says("per device") || says("/device"))) {
          if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
          heading(line, gpus, nodes, flag);
          ThroughputSample r;
          r.origin = {rates_file, line.number};
          r.per_second = v.value;
          r.unit = "TFLOP";
          r.per_gpu = true;
          r.run = current_run(line);
          out.rates.push_back(std::move(r));
        }
        continue;
      }
      Meaning m = meaning_of(v);
      // "GPU的利用率 ... 利用率最多到12左右" (the GPU's utilization ... at most about 12): a
      // utilization named alone, on a line about the GPU and not the CPU, is the GPU's.
      if (m.quantity == Quantity::kNone && (v.name == "utilization" || v.name == "utilisation") &&
          (v.unit.empty() || v.unit == "%") && says("gpu") && !says("cpu")) {
        m.quantity = Quantity::kGpuUtilisation;
      }
      if (m.quantity == Quantity::kNone && gpu_itself_at(v, low)) {
        m.quantity = Quantity::kGpuUtilisation;
      }
      if (m.quantity == Quantity::kRate && !(step.step && m.rate_unit == "iterations")) {
        // "Would be great to get to >12000 w/s on 3 GPUs" (marian-dev#31): a rate wished for,
        // not measured.
        {
          const std::string_view before = std::string_view(low).substr(0, v.column);
          const size_t clause = before.find_last_of(",;.");
          const std::string_view own =
              clause == std::string_view::npos ? before : before.substr(clause + 1);
          if (std::any_of(std::begin(kWished), std::end(kWished), [&](std::string_view w) {
                return own.find(w) != std::string_view::npos;
              })) {
            continue;
          }
        }
        // iostat's "r/s ... w/s" are reads and writes a second, not Marian's words.
        if (lower(v.unit) == "w/s" && (says("r/s") || says("rkb/s") || says("rmb/s"))) continue;
        // "111 samples/sec on each machine = 222 samples/sec" (mxnet#10247): one machine's
        // rate before the job's; the job's is read.
        if (const NamedValue* later = &v + 1; later != values.data() + values.size() &&
                                              meaning_of(*later).quantity == Quantity::kRate &&
                                              later->column > v.column) {
          const std::string_view between =
              std::string_view(low).substr(v.column, later->column - v.column);
          // Right after the rate and its unit ("111 samples/sec on each machine"), not in the
          // next scale's label ("| 2 nodes with 8 GPUs per node: 1500 img/s").
          if (std::any_of(std::begin(kOneMachine), std::end(kOneMachine), [&](std::string_view w) {
                const size_t at = between.find(w);
                return at != std::string_view::npos && at <= 32 &&
                       between.substr(0, at).find_first_of(":|=") == std::string::npos;
              })) {
            continue;
          }
        }
        if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
        heading(line, gpus, nodes, flag);
        ThroughputSample r;
        r.origin = {rates_file, line.number};
        r.per_second = v.value;
        r.unit = m.rate_unit;
        r.per_gpu = m.per_gpu || (rates_said_per_gpu && !m.total);
        r.total = m.total;
        if (m.total) r.gpus = gpus;
        r.run = current_run(line);
        // The same text up to the rate, with two counters in it (an epoch's and a batch's: one
        // process prints "Epoch 1 | ..." again and again), printed again within a few lines:
        // another process at the same point of the loop.
        if (v.column > 0 && v.column <= 200) {
          const std::string_view key = std::string_view(line.text).substr(0, v.column);
          int counters = 0;
          for (size_t k = 0; k < key.size(); ++k) {
            counters += is_digit(key[k]) && (k == 0 || !is_digit(key[k - 1])) &&
                        (k == 0 || key[k - 1] != '.');
          }
          if (counters >= 2) {
            std::erase_if(recent_rates, [&](const RecentRate& e) {
              return line.number - e.origin.line > kCopiesWithin;
            });
            // In one run: the same counters under another heading are another run's.
            const auto seen =
                std::find_if(recent_rates.begin(), recent_rates.end(),
                             [&](const RecentRate& e) { return e.key == key && e.run == r.run; });
            const int64_t this_line = keyed_rates++;
            if (seen == recent_rates.end()) {
              recent_rates.push_back({key, r.origin, v.value, r.run, this_line, 0, std::nullopt});
            } else if (const int64_t others = this_line - seen->order - 1 - seen->copies;
                       others <= 2) {
              // Processes print one point of the loop about together (at most two other points'
              // lines between the copies); a run's whole progression between them (the same
              // counters pasted twice, "Iter #0" ... "Iter #5" of two set-ups) is another run.
              ++seen->copies;
              if (!seen->group) {
                seen->group = out.repeated_rates.size();
                out.repeated_rates.push_back({seen->origin, {{seen->origin, seen->value}}});
              }
              out.repeated_rates[*seen->group].copies.emplace_back(r.origin, v.value);
            }
          }
        }
        out.rates.push_back(std::move(r));
        meaningful = true;
      } else if (m.quantity == Quantity::kGpuUtilisation && v.value >= 0 && v.value <= 100 &&
                 !told_in_words.contains(line.number)) {
        if (util_file < 0) {
          util_file = files.of(summary ? TelemetryKind::kJobSummary : TelemetryKind::kGpuPanel);
          out.files[static_cast<size_t>(util_file)].run_means = summary;
        }
        GpuSample g;
        g.origin = {util_file, line.number};
        g.gpu = m.gpu ? *m.gpu : panel_gpu.value_or(0);
        g.round = static_cast<int64_t>(std::count_if(
            out.gpus.begin(), out.gpus.end(),
            [&](const GpuSample& o) { return o.origin.file == util_file && o.gpu == g.gpu; }));
        g.time = static_cast<double>(g.round);
        g.util = v.value;
        out.gpus.push_back(g);
        meaningful = true;
      } else if (m.quantity == Quantity::kCpuUtilisation && v.value >= 0) {
        if (util_file < 0) {
          util_file = files.of(summary ? TelemetryKind::kJobSummary : TelemetryKind::kGpuPanel);
          out.files[static_cast<size_t>(util_file)].run_means = summary;
        }
        if (v.value > 100) {
          // A process's CPU counts cores (DIGITS, top's %CPU): not the machine's share.
          out.notes.push_back(TelemetryNote{
              {util_file, line.number},
              fmt::format("a process at {:.0f} % CPU uses about {:.1f} cores: that is not the "
                          "machine's share of its CPUs",
                          v.value, v.value / 100)});
          meaningful = true;
          continue;
        }
        CpuSample c;
        c.origin = {util_file, line.number};
        c.time = 0;
        c.cpu = -1;
        c.busy = v.value;
        c.idle = 100 - v.value;
        out.cpus.push_back(c);
        meaningful = true;
      }
    }
    // The loader timed alone beside the model it feeds, on one line.
    {
      std::optional<std::pair<double, std::string>> loader, model;
      for (const NamedValue& v : values) {
        const Meaning m = meaning_of(v);
        if (m.quantity != Quantity::kRate || m.per_gpu || m.total) continue;
        const RateSide side = rate_side(v.name);
        auto& slot = side == RateSide::kLoader ? loader : model;
        if (side != RateSide::kNone && !slot) slot.emplace(v.value, m.rate_unit);
      }
      // One process's loader against the whole job's training would compare unlike rates:
      // a line that counts GPUs or says per process, per rank or total is passed over.
      const bool unlike = gpus.has_value() || says("per process") || says("per rank") ||
                          says("per worker") || says("total") || says("per gpu");
      if (loader && model && loader->second == model->second && !unlike) {
        if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
        out.loader_against_model.push_back(
            {{rates_file, line.number}, loader->first, model->first, loader->second});
        meaningful = true;
      }
    }
    if (meaningful) {
      has_samples();
    } else {
      heading(line, gpus, nodes, flag);
    }
  }
  flush_timer_table();
  flush_phase_block();
  // Pairs each on two lines, one pair right after another, time the layers of one step
  // (Caffe's "conv1 forward: 31.2 ms", "conv1 backward: 49.8 ms", "relu1 forward: ..."), not
  // steps; a pair on one line each ("forward: 207.71 | backward: 3509.10") is one step a line.
  for (size_t k = first_forward_backward + 1; k < out.forward_backward.size(); ++k) {
    if (pair_split[k - first_forward_backward] &&
        out.forward_backward[k].origin.line - out.forward_backward[k - 1].origin.line <= 2) {
      out.forward_backward.resize(first_forward_backward);
      break;
    }
  }
  if (out.forward_backward.size() > first_forward_backward) {
    if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
    for (size_t k = first_forward_backward; k < out.forward_backward.size(); ++k) {
      out.forward_backward[k].origin.file = steps_file;
    }
    found = true;
  }
  // A series of waits with no step lines beside them is a reading of its own: a few of them, a wait
  // whose share of the step is unknown; more, waits that may spike (waits_that_spike). One
  // series: the waits of the name most lines print (a sentence's "busy around 120 seconds per
  // step" is not one of the log's lines).
  std::map<std::string, size_t> names;
  for (const LoneWait& w : lone_waits) ++names[w.name];
  const auto series = std::max_element(
      names.begin(), names.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  // Steps timed apart from the waits (a sentence's "per-batch time is ~15s" above the wait
  // lines) do not pair with them: the waits are read beside them (waits_beside_steps).
  const bool steps_without_data =
      std::none_of(out.steps.begin() + static_cast<std::ptrdiff_t>(first_step), out.steps.end(),
                   [](const StepSample& s) { return s.has_data; });
  if (steps_without_data && series != names.end()) {
    if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
    for (const LoneWait& w : lone_waits) {
      if (w.name == series->first)
        out.lone_waits.emplace_back(Origin{steps_file, w.line}, w.seconds);
    }
    found = true;
  }
  if (steps_file >= 0) settle_data_column(out, first_step, steps_file, waits_without_unit == 0);
  if (caffe_waits.size() >= 2) {
    if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
    for (const int64_t n : caffe_waits) out.loader_warnings.push_back(Origin{steps_file, n});
    found = true;
  }
  // After the data column is settled: these waits are bounds, not a column to settle.
  if (!clocks.empty() &&
      training_share_of(clocks, current_run(clocks.front().line), order, files, out)) {
    found = true;
  }
  separate_durations_from_rates(out, first_run, first_rate);
  return found;
}

bool rule_line(std::string_view t) {
  t = trim(t);
  return !t.empty() && t.find_first_not_of("-|:+= \t") == std::string_view::npos &&
         t.find_first_of("-=") != std::string_view::npos;
}

// A line of a table that holds no cells: a rule, or only bars, colons and blanks ("| | |").
bool cell_free(std::string_view t) {
  return t.find_first_not_of("-|: \t") == std::string_view::npos || rule_line(t);
}

std::vector<std::string_view> table_cells(std::string_view row) {
  row = trim(row);
  std::vector<std::string_view> out;
  if (row.find('|') != std::string_view::npos) {
    if (!row.empty() && row.front() == '|') row.remove_prefix(1);
    if (!row.empty() && row.back() == '|') row.remove_suffix(1);
    for (auto c : split_char(row, '|')) out.push_back(trim(c));
    return out;
  }
  size_t start = 0;
  for (size_t k = 0; k <= row.size(); ++k) {
    const bool end = k == row.size() || row[k] == '\t' ||
                     (row[k] == ' ' && k + 1 < row.size() && row[k + 1] == ' ');
    if (!end) continue;
    if (k > start) out.push_back(trim(row.substr(start, k - start)));
    while (k + 1 < row.size() && (row[k + 1] == ' ' || row[k + 1] == '\t')) ++k;
    start = k + 1;
  }
  return out;
}

namespace {

// What a scale's count counts in a table cell ("8 GPUs", "Single device", "Two nodes").
bool counted_unit(std::string_view w) {
  for (const std::string_view unit :
       {"gpu", "gpus", "card", "cards", "device", "devices", "node", "nodes"}) {
    if (w == unit) return true;
  }
  return false;
}

// "Single GPU", "Dual GPU", "Two nodes": a count in a word before what it counts; nullopt for
// any other cell.
std::optional<int> count_in_words(std::string_view cell) {
  const std::string low = lower(trim(cell));
  const auto words = split_whitespace(low);
  if (words.size() != 2) return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, int>, 8> kCounts = {{{"single", 1},
                                                                               {"one", 1},
                                                                               {"dual", 2},
                                                                               {"two", 2},
                                                                               {"quad", 4},
                                                                               {"four", 4},
                                                                               {"eight", 8},
                                                                               {"sixteen", 16}}};
  for (const auto& [word, n] : kCounts) {
    if (words[0] == word && counted_unit(words[1])) return n;
  }
  return std::nullopt;
}

// Words of a lower-case header naming a measure of each GPU or node (its batch, memory, use or
// rate), not a count of them.
bool names_a_measure(std::string_view header) {
  for (const std::string_view w : {"batch", "mem", "util", "/s", "token", "image", "sample"}) {
    if (header.find(w) != std::string_view::npos) return true;
  }
  return false;
}

// A header cell naming how many GPUs (or processes, one a GPU) each node of a row runs ("num
// of GPU per node", "GPUs/node", "Process per Machine").
bool gpus_per_node_header(std::string_view cell) {
  const std::string c = lower(cell);
  if (c.size() > 32) return false;
  // Not a measure of each node's ("GPU util per node", "img/s per node (8 GPUs)").
  if (names_a_measure(c)) return false;
  for (const std::string_view other : {"img", "speed", "throughput", "time", "rate"}) {
    if (c.find(other) != std::string::npos) return false;
  }
  const bool counts = c.find("gpu") != std::string::npos || c.find("card") != std::string::npos ||
                      c.find("proc") != std::string::npos;
  const bool per_node =
      c.find("per node") != std::string::npos || c.find("/node") != std::string::npos ||
      c.find("per machine") != std::string::npos || c.find("per host") != std::string::npos;
  return counts && per_node;
}

// A header cell naming the GPU (or node) count of each row.
bool count_header(std::string_view cell, bool& nodes) {
  const std::string c = lower(cell);
  if (c.empty() || c.size() > 24) return false;
  if (count_in_words(c)) return false;  // "Single GPU": one scale, not a column of counts
  for (char ch : c) {
    if (ch >= '0' && ch <= '9') return false;
  }
  // "Batch size per gpu", "GPU memory", "GPU util": about each GPU, not how many.
  if (names_a_measure(c)) return false;
  for (const std::string_view other : {"per", "model", "type"}) {
    if (c.find(other) != std::string::npos) return false;
  }
  // "Machine Num" (Horovod's CPU benchmarks): machines are nodes.
  nodes = c.find("node") != std::string::npos || c.find("machine") != std::string::npos;
  // "card" is how BytePS's and Chinese tables count GPUs (卡); "-na" is mlpstorage's flag for
  // the DLIO benchmark's simulated accelerators.
  return nodes || c.find("gpu") != std::string::npos || c.find("nproc") != std::string::npos ||
         c.find("world") != std::string::npos || c.find("ranks") != std::string::npos ||
         c.find("card") != std::string::npos || c.find("accelerator") != std::string::npos ||
         c == "-na";
}

// The count a row's count cell states: "4", "4 GPU", "8 GPUs", "2 nodes", "8x"; nullopt for
// anything else (the table has ended). `names_gpu`, when given, says whether the cell names
// the GPU it counts ("8 GPUs", "8xA10G", "2*RTX4090"), not a bare number or nodes.
std::optional<int> count_cell(std::string_view cell, bool* names_gpu = nullptr) {
  if (names_gpu != nullptr) *names_gpu = false;
  if (const auto n = count_in_words(cell)) {
    if (names_gpu != nullptr) *names_gpu = lower(cell).find("node") == std::string::npos;
    return n;
  }
  // "A100单机8卡（1x8）" (FlagPerf's configuration column: A100s, one machine, 8 cards): the
  // count its words give, of the cards they name.
  if (!cell.empty() && !is_digit(cell.front()) && cell.size() <= 48 &&
      lower(in_english(cell)).find(" card") != std::string::npos) {
    if (const auto g = gpu_count_of(cell)) {
      if (names_gpu != nullptr) *names_gpu = true;
      return g;
    }
  }
  size_t end = 0;
  while (end < cell.size() && is_digit(cell[end])) ++end;
  const auto n = parse_index(cell.substr(0, end));
  if (!n || *n < 1) return std::nullopt;
  std::string rest = lower(trim(cell.substr(end)));
  if (rest.starts_with('-')) rest.erase(0, 1);  // "1-GPU" (accelerate#192's column)
  if (rest.empty() || rest == "x" || counted_unit(rest)) {
    if (names_gpu != nullptr) *names_gpu = gpu_word(rest);
    return n;
  }
  // "2*RTX4090", "8x A100", "4×V100": the count times its GPU's model.
  std::string_view model = rest;
  for (const std::string_view times : {"*", "x", "\xc3\x97"}) {
    if (model.starts_with(times)) {
      model = trim(model.substr(times.size()));
      const auto words = split_whitespace(model);
      if (!words.empty() && gpu_word(words[0])) {
        if (names_gpu != nullptr) *names_gpu = true;
        return n;
      }
    }
  }
  // "8 A100(40GB)", "4 * 8 A100(40GB)" (openfold#198's hardware column), "4x8 A100": a count
  // before the GPU's model, or nodes times it.
  const auto words = split_whitespace(rest);
  if (std::any_of(words.begin(), words.end(),
                  [](std::string_view w) { return gpu_word(w.substr(0, w.find('('))); })) {
    if (const auto g = gpu_count_of(cell)) {
      if (names_gpu != nullptr) *names_gpu = true;
      return g;
    }
  }
  return std::nullopt;
}

// What a measure column holds, from its header: a rate ("img/sec", "samples/s", "throughput")
// or a step time ("sec/batch", "s/it", "step time", "time per batch"); empty when neither.
struct ColumnKind {
  bool rate = false, step = false, per_gpu = false, ms = false;
  bool duration = false;  // the time a fixed amount of work took ("Time", "epoch time")
  std::string unit;
  double multiplier = 1;  // "Speed (K samples/sec)": the cells count thousands
};

// A cell without the words people put before an estimate ("about 990 images/s", "~30").
std::string_view without_about(std::string_view cell) {
  cell = trim(cell);
  // GitHub's emoji after the number ("15 :fire:", "2.1x :rocket:").
  while (cell.size() > 2 && cell.back() == ':') {
    const size_t open = cell.find_last_of(": ", cell.size() - 2);
    if (open == std::string_view::npos || cell[open] != ':' || open + 2 >= cell.size() ||
        open == 0 || cell[open - 1] != ' ') {
      break;
    }
    const std::string_view code = cell.substr(open + 1, cell.size() - open - 2);
    if (!std::all_of(code.begin(), code.end(),
                     [](char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '+'; })) {
      break;
    }
    cell = trim(cell.substr(0, open));
  }
  for (const std::string_view w :
       {"about ", "approximately ", "approx. ", "approx ", "around ", "roughly ", "~", "≈"}) {
    if (cell.size() > w.size() && lower(cell.substr(0, w.size())) == w) {
      return trim(cell.substr(w.size()));
    }
  }
  return cell;
}

// The number a cell starts with ("2.713 ± 4.199", "about 990 images/s"), and the rest of it.
std::optional<double> leading_number(std::string_view cell, std::string_view* rest = nullptr) {
  cell = without_about(cell);
  size_t end = 0;
  while (end < cell.size() && (is_digit(cell[end]) || cell[end] == '.')) ++end;
  if (rest != nullptr) *rest = trim(cell.substr(end));
  return parse_number(cell.substr(0, end));
}

// A cell of a bare number, or of one with its spread ("2.8 +-0.1", "2.713 ± 4.199"): the
// number; nullopt for anything else ("100%", "3.1x", "n/a").
std::optional<double> number_with_spread(std::string_view cell) {
  if (const auto v = parse_number(trim(cell))) return v;
  std::string_view rest;
  const auto v = leading_number(cell, &rest);
  return v && (rest.starts_with("+-") || rest.starts_with("\xc2\xb1")) ? v : std::nullopt;
}

// Words of a speedup's header that say it sets one thing against another, not scales.
constexpr std::string_view kComparedWords[] = {"to", "vs", "over", "precision", "amp", "fp16"};

ColumnKind column_kind(std::string_view cell) {
  ColumnKind k;
  const std::string c = lower(cell);
  NamedValue probe;
  probe.name = c;
  probe.value = 1;  // a rate is positive: the header's name, read as one
  const Meaning m = meaning_of(probe);
  // "Speed (K samples/sec)": a rate's cells count thousands ("(M " millions).
  const double thousands = c.find("(k ") != std::string::npos   ? 1e3
                           : c.find("(m ") != std::string::npos ? 1e6
                                                                : 1;
  // "Speed per process (MPI)": Horovod's processes are one a GPU.
  k.per_gpu = c.find("/gpu") != std::string::npos || c.find("per gpu") != std::string::npos ||
              c.find("per_gpu") != std::string::npos || c.find("per process") != std::string::npos;
  const bool speedup =
      c.find("speedup") != std::string::npos || c.find("speed-up") != std::string::npos ||
      c.find("speed up") != std::string::npos || c.find("acceleration") != std::string::npos;
  // A speedup of one thing over another ("Speedup (TF32 to mixed precision)") is no scaling's.
  if (speedup && std::any_of(std::begin(kComparedWords), std::end(kComparedWords),
                             [&](std::string_view w) { return has_whole_word(c, w); })) {
    return k;
  }
  if (speedup) {
    // "Speedup", "Acceleration Rate" over "1.98 X": each run's rate as a multiple of the
    // reference run's — a rate in a unit of its own.
    k.rate = true;
    k.unit = "speedup";
  } else if (!m.rate_unit.empty()) {
    k.rate = true;
    k.unit = m.rate_unit;
    k.multiplier = thousands;
  } else if (c.find("/s") != std::string::npos || c.find("throughput") != std::string::npos ||
             c == "speed" || c.starts_with("speed (") || c.starts_with("speed(") ||
             c.starts_with("speed per ") || c.starts_with("speed total") || c == "sps" ||
             c.ends_with(" sps")) {
    // "tokens/s/gpu", "image per gpu/s": the unit its words name, else samples (MXNet's
    // "Speed" is its samples/sec; a "speedup" is a ratio).
    k.rate = true;
    k.multiplier = thousands;
    const auto has = [&](std::string_view w) { return c.find(w) != std::string::npos; };
    k.unit = has("token")                 ? "tokens"
             : has("image") || has("img") ? "images"
             : has("step") || has("iter") ? "iterations"
                                          : "samples";
  } else if (c.find("sec/") != std::string::npos || c.find("s/it") != std::string::npos ||
             c.find("s/batch") != std::string::npos || c.find("step time") != std::string::npos ||
             (c.find("time per") != std::string::npos &&
              c.find("time per epoch") == std::string::npos) ||
             c.find("iter time") != std::string::npos || c.find("ms/") != std::string::npos ||
             c == "step ms" || c == "step (ms)" || c == "iter ms" || c == "iter (ms)") {
    k.step = true;
    k.ms = c.find("ms") != std::string::npos;
  } else if (c.find("time") != std::string::npos || c.find("duration") != std::string::npos) {
    // "Time", "Epoch Time (mm:ss)", "training time": the same work at every count.
    k.duration = true;
    k.unit = c.find("epoch") != std::string::npos ? "epochs" : "runs";
    // "Time (minutes)", "training time (h)": the bare cells below count minutes or hours.
    for (const auto& [word, seconds] :
         {std::pair{"(min", 60.0}, {"(hour", 3600.0}, {"(h)", 3600.0}, {"(hrs)", 3600.0}}) {
      if (c.find(word) != std::string::npos) k.multiplier = seconds;
    }
  }
  return k;
}

// The measure columns of a table, by their header ("img/sec", "Training Speed(images / second)"),
// or by the unit their first row's cell states ("Speed" over "11.4 samples/sec"); column `skip`
// (the count) is none.
std::vector<std::pair<size_t, ColumnKind>> measure_columns(
    const std::vector<std::string_view>& head, const std::vector<std::string_view>& first_row,
    size_t skip) {
  std::vector<std::pair<size_t, ColumnKind>> measures;
  for (size_t k = 0; k < head.size(); ++k) {
    if (k == skip) continue;
    // "images / second" reads as "images/second": blanks beside a '/' are dropped.
    std::string header;
    for (size_t c = 0; c < head[k].size(); ++c) {
      const bool beside_slash = (c + 1 < head[k].size() && head[k][c + 1] == '/') ||
                                (!header.empty() && header.back() == '/');
      if (head[k][c] == ' ' && beside_slash) continue;
      header.push_back(head[k][c]);
    }
    ColumnKind kind = column_kind(header);
    // "Mean throughput" over "27,941 tok/s (1,746/GPU)": a header that names no unit, a cell
    // whose first value does.
    if (kind.rate && kind.unit == "samples" && lower(header).find("sample") == std::string::npos &&
        first_row.size() > k) {
      // Read as a rate's value, so that its thousands read whole.
      if (const auto values = named_values(fmt::format("rate: {}", without_about(first_row[k])));
          !values.empty()) {
        if (const Meaning m = meaning_of(values[0]);
            m.quantity == Quantity::kRate && !m.rate_unit.empty()) {
          kind.unit = m.rate_unit;
        }
      }
    }
    if (!(kind.rate || kind.step || kind.duration) && first_row.size() > k) {
      const auto values = named_values(without_about(first_row[k]));
      if (values.size() == 1) {
        const Meaning m = meaning_of(values[0]);
        if (m.quantity == Quantity::kRate) {
          kind.rate = true;
          kind.unit = m.rate_unit;
          kind.per_gpu = m.per_gpu;
        }
      }
    }
    if (kind.rate || kind.step || kind.duration) measures.emplace_back(k, kind);
  }
  // A speedup beside a measure of its own is that measure's ratio: the measure is read. Alone,
  // it is over the table's first run, which must then show 1x.
  const bool other_measure = std::any_of(measures.begin(), measures.end(),
                                         [](const auto& m) { return m.second.unit != "speedup"; });
  std::erase_if(measures, [&](const auto& m) {
    if (m.second.unit != "speedup") return false;
    const auto first =
        m.first < first_row.size() ? leading_number(first_row[m.first]) : std::optional<double>();
    return other_measure || !first || *first < 0.95 || *first > 1.05;
  });
  return measures;
}

// The rate unit a sentence says a table's numbers are in: "the numbers in the table mean
// examples/sec", "all values are images/sec"; empty when none says so.
std::string stated_rate_unit(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    // A sentence: words, no table cells.
    if (l.text.size() > kMaxPastedLineBytes || l.text.find('|') != std::string_view::npos ||
        split_whitespace(l.text).size() < 5) {
      continue;
    }
    std::string low = lower(l.text);
    // "(Performance metric: number of processed images per second ...)", "Benchmark with MPI
    // (Matric: processing image per second ...)": what a benchmark's table measures.
    if (low.find("table") == std::string::npos && low.find("numbers") == std::string::npos &&
        low.find("values") == std::string::npos && low.find("metric") == std::string::npos &&
        low.find("benchmark") == std::string::npos) {
      continue;
    }
    for (const std::string_view per : {" per second", " per sec"}) {
      for (size_t at = low.find(per); at != std::string::npos; at = low.find(per, at)) {
        low.replace(at, per.size(), "/s");
      }
    }
    for (const std::string_view word : split_whitespace(low)) {
      NamedValue probe;
      probe.unit = std::string(word);
      while (!probe.unit.empty() && (probe.unit.back() == '.' || probe.unit.back() == ',')) {
        probe.unit.pop_back();
      }
      probe.value = 1;
      const Meaning m = meaning_of(probe);
      if (m.quantity == Quantity::kRate && !m.rate_unit.empty() &&
          probe.unit.find('/') != std::string::npos) {
        return m.rate_unit;
      }
    }
  }
  return {};
}

// The number a measure cell holds: a rate or step time as written ("150", "11.4 samples/sec"),
// a duration of the same work as its rate (that work per second); nullopt for anything else.
std::optional<double> cell_measure(std::string_view cell, const ColumnKind& kind) {
  if (kind.duration) {
    // A note in parentheses after the duration ("11.27 (β 45% faster)") is the author's.
    cell = without_trailing_note(cell);
    auto d = parse_duration(without_about(cell));
    if (d && parse_number(without_about(cell))) *d *= kind.multiplier;  // a bare count
    return d && *d > 0 ? std::optional<double>(1 / *d) : std::nullopt;
  }
  std::string_view rest;
  auto v = leading_number(cell, &rest);
  // "27,941 tok/s": thousands parted by commas, a whole number of one to three digits not led
  // by a zero ("0,512" is no number with thousands), then groups of exactly three digits.
  const bool leads_thousands = v && *v >= 1 && *v < 1000 && *v == std::floor(*v);
  while (leads_thousands && rest.size() >= 4 && rest[0] == ',' && is_digit(rest[1]) &&
         is_digit(rest[2]) && is_digit(rest[3]) && (rest.size() == 4 || !is_digit(rest[4]))) {
    *v = *v * 1000 + (rest[1] - '0') * 100 + (rest[2] - '0') * 10 + (rest[3] - '0');
    rest = trim(rest.substr(4));
  }
  // "1.8k": thousands.
  if (v && (rest == "k" || rest == "K")) *v *= 1e3;
  // "1.58s/ite" among "1.26ite/s" (accelerate#192): a step's time where the others are rates
  // of iterations, as tqdm switches when a step takes over a second; its inverse is the rate.
  if (v && *v > 0 && kind.rate && kind.unit == "iterations") {
    if (const auto scale = per_iteration_scale(lower(trim(rest)))) return 1 / (*v * *scale);
  }
  // "12037.3 * 4": a rate per GPU times the GPUs, the whole run's rate.
  if (v && kind.rate) {
    if (rest.starts_with('*') || rest.starts_with("x ") || rest.starts_with("\xc3\x97")) {
      rest = trim(rest.substr(rest.starts_with("\xc3\x97") ? 2 : 1));
      if (const auto times = parse_index(rest); times && *times >= 1) *v *= *times;
    }
  }
  return v && *v > 0 ? std::optional<double>(*v * kind.multiplier) : std::nullopt;
}

// One run of a table row: its measure in `kind`'s column.
void add_table_run(RunInfo run, const ColumnKind& kind, double value, int file, int64_t line,
                   Telemetry& out) {
  out.runs.push_back(std::move(run));
  const int r = static_cast<int>(out.runs.size()) - 1;
  if (kind.rate || kind.duration) {
    ThroughputSample s;
    s.origin = {file, line};
    s.per_second = value;
    s.unit = kind.unit;
    s.per_gpu = kind.per_gpu;
    s.run = r;
    out.rates.push_back(std::move(s));
  } else {
    StepSample s;
    s.origin = {file, line};
    s.step_seconds = kind.ms ? value / 1000 : value;
    s.has_data = false;
    s.run = r;
    out.steps.push_back(s);
  }
}

// The rows of a table below its header line `i` (a separator line, "---|---", is skipped) up to
// the first that `keep` refuses; `end` gets the index after the last line read. Under a header
// without a leading bar, a row's leading bar is an empty first cell ("  |   | 2 | 9908.78"); an
// empty cell before `fill_before` repeats the one above it (merged cells pasted as blanks).
template <typename Keep>
std::vector<std::pair<const Line*, std::vector<std::string_view>>> table_rows(
    const std::vector<Line>& lines, size_t i, Keep keep, size_t& end, size_t fill_before = 0) {
  std::vector<std::pair<const Line*, std::vector<std::string_view>>> rows;
  const bool bordered = trim(lines[i].text).starts_with('|');
  size_t j = i + 1;
  for (; j < lines.size(); ++j) {
    const std::string_view t = trim(lines[j].text);
    if (!t.empty() && cell_free(t)) {
      continue;
    }
    auto c = table_cells(t);
    if (!bordered && t.starts_with('|')) c.insert(c.begin(), std::string_view());
    for (size_t k = 0; k < fill_before && k < c.size() && !rows.empty(); ++k) {
      if (c[k].empty() && k < rows.back().second.size()) c[k] = rows.back().second[k];
    }
    // A paste that ends inside a table's last row ("| 4  | 87  |" under four columns): the
    // row keeps the cells it has, the rest empty.
    if (!keep(c)) {
      const size_t columns = table_cells(trim(lines[i].text)).size();
      const bool last = std::all_of(lines.begin() + static_cast<std::ptrdiff_t>(j) + 1, lines.end(),
                                    [](const Line& l) { return trim(l.text).empty(); });
      // Only a row whose last cell was closed ("| 4  | 87  |"): a number cut short ("| 4 | 6")
      // is no number.
      if (!(last && t.ends_with('|') && c.size() >= 2 && c.size() < columns && !rows.empty())) {
        break;
      }
      c.resize(columns);
      if (!keep(c)) break;
    }
    rows.emplace_back(&lines[j], std::move(c));
  }
  end = j;
  return rows;
}

// A table whose columns time each row's wait for data and its step ("| Waiting time | Train
// time | Iteration time", "| data time | iter time |"): each row a step line of its own (a run
// under the row's label), read like a log's. The step is the step column with the largest
// value in the first row (the total beside its parts: "Iteration time" = waiting + "Train
// time"); a step named as timed without the wait ("updt_s") gets the wait added. Cells may
// carry a spread ("2.713 ± 4.199"). Returns false unless two rows time both.
bool read_timer_table(
    const std::vector<std::string_view>& head,
    const std::vector<std::pair<const Line*, std::vector<std::string_view>>>& rows,
    PasteFiles& files, Telemetry& out) {
  if (rows.size() < 2) return false;
  // Rows of ranks ("rank  data_time  step_time", a GPU's index in each row: "0", "GPU0",
  // "cuda:1") are one step seen from each rank: no series of steps. A GPU column that names the
  // machine ("T4 * 4") is no rank's.
  const auto index_cell = [](std::string_view cell) {
    std::string c = lower(trim(cell));
    for (const std::string_view prefix : {"cuda:", "gpu", "rank", "device"}) {
      if (c.starts_with(prefix)) {
        c.erase(0, prefix.size());
        break;
      }
    }
    return parse_index(trim(c)).has_value();
  };
  for (size_t k = 0; k < head.size(); ++k) {
    const std::string c = lower(trim(head[k]));
    const bool ranks = c == "rank" || c == "ranks" || c == "gpu" || c == "device";
    const auto& first = rows.front().second;
    if (ranks && (c.starts_with("rank") || k >= first.size() || index_cell(first[k]))) {
      return false;
    }
  }
  std::optional<size_t> wait;
  std::vector<std::pair<size_t, Meaning>> steps;
  double scale_of_wait = 1;
  std::vector<double> scale(head.size(), 1);
  for (size_t k = 0; k < head.size(); ++k) {
    // "Data Loading Time /s", "step time (ms)": the name, and its unit as a duration.
    std::string name(head[k]);
    for (const std::string_view unit : {"/s", "(s)", "(sec)", "/ms", "(ms)"}) {
      if (const size_t at = lower(name).rfind(unit); at != std::string::npos && at > 0) {
        if (unit.find("ms") != std::string_view::npos) scale[k] = 1e-3;
        name.erase(at);
      }
    }
    const auto named = named_values(fmt::format("{}: 1 s", trim(name)));
    if (named.size() != 1) continue;
    const Meaning m = meaning_of(named[0]);
    if (m.quantity == Quantity::kDataWait && !wait) {
      wait = k;
      scale_of_wait = scale[k];
    } else if (m.quantity == Quantity::kStep || m.quantity == Quantity::kStepWithoutData) {
      steps.emplace_back(k, m);
    }
  }
  if (!wait || steps.empty()) return false;
  // The total: the step column with the largest first value.
  const auto& first = rows.front().second;
  std::optional<std::pair<size_t, Meaning>> step;
  double largest = -1;
  for (const auto& [k, m] : steps) {
    if (k >= first.size()) continue;
    if (const auto v = leading_number(first[k]); v && *v * scale[k] > largest) {
      largest = *v * scale[k];
      step = std::make_pair(k, m);
    }
  }
  if (!step) return false;
  const auto [step_column, step_meaning] = *step;
  std::vector<StepSample> read;
  const int file = files.of(TelemetryKind::kTrainLog);
  for (const auto& [line, c] : rows) {
    if (c.size() <= std::max(*wait, step_column)) continue;
    const auto w = leading_number(c[*wait]);
    const auto t = leading_number(c[step_column]);
    if (!w || !t || *t <= 0) continue;
    StepSample s;
    s.origin = {file, line->number};
    s.data_seconds = *w * scale_of_wait;
    s.step_seconds = *t * scale[step_column];
    if (step_meaning.quantity == Quantity::kStepWithoutData) s.step_seconds += s.data_seconds;
    read.push_back(s);
  }
  if (read.size() < 2) return false;
  for (StepSample& s : read) out.steps.push_back(s);
  return true;
}

// Words of a table row's name that say it times one step.
constexpr std::string_view kStepRowWords[] = {"per step",      "training step",  "step time",
                                              "per iteration", "iteration time", "per iter",
                                              "per batch",     "batch time"};

// Words of a table row that describe the setup, not a measure of it.
constexpr std::string_view kSetupWords[] = {"batch",  "size", "param",   "lr",    "learning rate",
                                            "memory", "mem",  "workers", "accum", "seq"};

// A table of timers turned on its side: each row names what it times in its first cell, each
// column after it is a run (a setting tried: "OMP_NUM_THREADS | None | 1 | 1" over "time1 |
// 0.816 | 0.75 | 0.711" and "datatime1 | 0.025 | 0.019 | 0.005", mmagic#707). Read as its
// transpose by read_timer_table; a name's trailing digits number its row ("time1", "time2").
bool read_timer_rows(const std::vector<std::string_view>& head,
                     const std::vector<std::pair<const Line*, std::vector<std::string_view>>>& rows,
                     PasteFiles& files, Telemetry& out) {
  if (head.size() < 3 || rows.empty()) return false;
  std::vector<std::string> names;  // the first cells, without their trailing digits
  std::vector<const std::vector<std::string_view>*> named_rows;
  std::vector<const Line*> row_lines;
  for (const auto& [line, c] : rows) {
    if (c.empty()) continue;
    std::string_view name = trim(c[0]);
    while (!name.empty() && is_digit(name.back())) name.remove_suffix(1);
    // A row of the setup ("batch | 64 | 128", "workers | 4 | 8") times nothing, whatever its
    // name means on a log's line ("Batch 0.5" is ImageNet's step): not read as a timer.
    const std::string low = lower(name);
    const bool setup =
        low.find("time") == std::string::npos &&
        std::any_of(std::begin(kSetupWords), std::end(kSetupWords),
                    [&](std::string_view w) { return low.find(w) != std::string::npos; });
    names.emplace_back(setup ? std::string() : std::string(name));
    named_rows.push_back(&c);
    row_lines.push_back(line);
  }
  const std::vector<std::string_view> side(names.begin(), names.end());
  // Column k of the table is row k of its transpose, cited at the first row that times.
  std::vector<std::pair<const Line*, std::vector<std::string_view>>> columns;
  for (size_t k = 1; k < head.size(); ++k) {
    std::vector<std::string_view> cells;
    for (const auto* c : named_rows) cells.push_back(k < c->size() ? (*c)[k] : std::string_view());
    columns.emplace_back(row_lines.front(), std::move(cells));
  }
  // The row that times the step is the one to cite. The timers' cells are bare numbers: a unit
  // in them ("133.48 ms  134.55 ms", VISSL's timers by host and CUDA event) is a table of
  // named lines, which the vocabulary reads.
  bool cited = false;
  for (size_t r = 0; r < names.size(); ++r) {
    const auto named = named_values(fmt::format("{}: 1 s", names[r]));
    if (named.size() != 1 || meaning_of(named[0]).quantity == Quantity::kNone) continue;
    for (size_t k = 1; k < named_rows[r]->size(); ++k) {
      const std::string_view cell = trim((*named_rows[r])[k]);
      if (!cell.empty() && !parse_number(cell)) return false;
    }
    if (!cited) {
      for (auto& column : columns) column.first = row_lines[r];
      cited = true;
    }
  }
  return read_timer_table(side, columns, files, out);
}

// What a caption right above a table says its bare numbers are ("**Training time per epoch on
// 100k samples**", "**QPS** (the higher, the better)"): durations of the same work, or a rate;
// neither when the lines above say no such thing. Up to three non-blank lines above the header,
// stopping at another table's row.
ColumnKind caption_kind(const std::vector<Line>& lines, size_t header) {
  ColumnKind k;
  int seen = 0;
  for (size_t j = header; j-- > 0 && seen < 3;) {
    const std::string_view text = trim(lines[j].text);
    if (text.empty()) continue;
    if (text.find('|') != std::string_view::npos || text.size() > 400) break;
    ++seen;
    const std::string low = lower(text);
    const auto has = [&](std::string_view w) { return low.find(w) != std::string::npos; };
    if (has("qps") || has("throughput") || has("samples/s") || has("images/s") || has("img/s") ||
        has("higher is better") || has("the higher, the better")) {
      k.rate = true;
      k.unit = has("token") ? "tokens" : has("image") || has("img") ? "images" : "samples";
      return k;
    }
    if (has("time per epoch") || has("epoch time") || has("training time") || has("time taken") ||
        has("time per iteration") || has("seconds per epoch") || has("minutes per epoch") ||
        has("lower is better") || has("the lower, the better")) {
      k.duration = true;
      k.unit = has("epoch") ? "epochs" : "runs";
      return k;
    }
  }
  return k;
}

// Whether a table's cell names a change to the model's compute rather than to its input, in
// whole words or their leading part: precision, a batch size, gradient accumulation or
// checkpointing, a compiler, quantisation, an attention kernel ("Mixed Precision", "Gradient
// Accumulation", "torch.compile", "Flash attention", "Larger batch size").
bool changes_the_compute(std::string_view cell) {
  static constexpr std::array<std::string_view, 7> kWhole = {"fp16", "bf16",  "fp8",  "amp",
                                                             "xla",  "batch", "flash"};
  static constexpr std::array<std::string_view, 6> kLeading = {
      "precision", "accumulat", "checkpointing", "compil", "quantiz", "quantis"};
  for (const std::string& w : alnum_words(lower(cell), false)) {
    if (std::find(kWhole.begin(), kWhole.end(), w) != kWhole.end()) return true;
    for (const std::string_view lead : kLeading) {
      if (w.starts_with(lead)) return true;
    }
  }
  return false;
}

// A table of one job under loader settings, a row each ("PyTorch, num_workers=2 | 150",
// "| B | 2 | false | 3 | 1159 | 138.77 |" under "num_workers"): each row a run labelled by the
// setting its other cells name (the row's first cell when it names none). Needs two rows that
// name a setting; returns false otherwise.
bool read_setting_table(
    const std::vector<std::string_view>& head,
    const std::vector<std::pair<const Line*, std::vector<std::string_view>>>& rows,
    PasteFiles& files, int group, Telemetry& out, const ColumnKind& caption) {
  if (rows.size() < 2) return false;
  // "workers | gpus per worker" (TensorFlow's parameter-server strategy), "Workers | speed |
  // ... | allreduce time" (ElasticDL's): the workers are machines or trainers exchanging
  // gradients, not a loader's processes.
  if (std::any_of(head.begin(), head.end(), [](std::string_view h) {
        const std::string low = lower(h);
        return low.find("per worker") != std::string::npos ||
               low.find("allreduce") != std::string::npos ||
               low.find("all-reduce") != std::string::npos ||
               low.find("all_reduce") != std::string::npos;
      })) {
    return false;
  }
  auto measures = measure_columns(head, rows.front().second, head.size());
  // Columns of bare numbers under a caption that says what they are: each a measure (the
  // first is compared).
  if (measures.empty() && (caption.rate || caption.duration)) {
    for (size_t k = 0; k < head.size(); ++k) {
      const auto& first = rows.front().second;
      if (k < first.size() && parse_number(without_about(first[k])) &&
          !loader_setting_of(fmt::format("{}={}", head[k], first[k]))) {
        measures.emplace_back(k, caption);
      }
    }
  }
  if (measures.empty()) return false;
  const auto is_measure = [&](size_t k) {
    return std::any_of(measures.begin(), measures.end(),
                       [&](const auto& m) { return m.first == k; });
  };
  // The storage columns: a header or a cell that names where or how the data is read
  // ("readtype", "data cached", "NFS"). Each row's storage is its cells in them; the rest of
  // the row is its loader setting, so that a storage column the same in every row is no
  // comparison of storage.
  std::vector<bool> storage_column(head.size(), false);
  bool storage_by_cells = false;  // a storage column whose header names none
  for (size_t k = 0; k < head.size(); ++k) {
    if (is_measure(k)) continue;
    storage_column[k] = names_storage(head[k]);
    for (const auto& row : rows) {
      const auto& c = row.second;
      if (k < c.size()) storage_column[k] = storage_column[k] || names_storage(c[k]);
    }
    storage_by_cells = storage_by_cells || (storage_column[k] && !names_storage(head[k]));
  }
  std::vector<std::string> labels, storage;
  std::vector<std::optional<LoaderSetting>> settings;  // per row: the setting it names, if any
  // A storage column found by some of its cells only ("Technique": "Caching + Prefetching"
  // beside "Mixed Precision" and "Gradient Accumulation"): a row whose cell there names no
  // storage and no loader setting but a change to the compute is another comparison, left out.
  std::vector<bool> other_change(rows.size(), false);
  // Per row, its cells in columns that size a step's work ("batch-size=32, grad-acc=4"): what
  // else the row's run was.
  const auto sizes_work = [](std::string_view h) {
    const std::string low = lower(h);
    for (const std::string_view p : {"seq_len", "seqlen", "seq len", "sequence length"}) {
      if (low.find(p) != std::string::npos) return true;
    }
    // Words of the header, whole or leading: not "upgrade", nor a "seq" column of run ids.
    for (const std::string& w : alnum_words(low, false)) {
      if (w.starts_with("batch") || w == "bs" || w.starts_with("grad") || w.starts_with("accum") ||
          w.starts_with("length")) {
        return true;
      }
    }
    return false;
  };
  // A column whose header names a change to the compute ("Compile + fused AdamW": On, Off)
  // beside the loader's settings: rows are compared with the change off only ("Off", "No",
  // "False", "0", "-"), the others changed the compute as well (nanopath#18's GPU augmentations
  // with and without compiling); without an off value among rows that differ there, nothing.
  // (A batch size's column is a step's work, checked below.)
  const auto is_off = [](std::string_view cell) {
    const std::string v = lower(trim(cell));
    return v == "off" || v == "no" || v == "false" || v == "0" || v == "-" || v == "none" ||
           v == "disabled" || v == "n";
  };
  for (size_t k = 0; k < head.size(); ++k) {
    if (is_measure(k) || storage_column[k] || !changes_the_compute(head[k]) ||
        sizes_work(head[k])) {
      continue;
    }
    const auto& top = rows.front().second;
    const std::string_view first = k < top.size() ? trim(top[k]) : std::string_view();
    bool differ = false, any_off = false;
    for (const auto& row : rows) {
      const auto& c = row.second;
      if (k >= c.size()) continue;
      any_off = any_off || is_off(c[k]);
      differ = differ || trim(c[k]) != first;
    }
    if (!differ) continue;
    if (!any_off) return false;
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto& c = rows[r].second;
      if (k < c.size() && !is_off(c[k])) other_change[r] = true;
    }
  }
  std::vector<std::string> others;
  int named = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<std::string_view>& c = rows[r].second;
    // "num_workers=2" from a "num_workers" column's "2"; a label cell as it is.
    std::string text, where, other;
    for (size_t k = 0; k < c.size() && k < head.size(); ++k) {
      if (is_measure(k)) continue;
      std::string& into = storage_column[k] ? where : text;
      if (!into.empty()) into += ", ";
      const std::string cell =
          head[k].empty() ? std::string(c[k]) : fmt::format("{}={}", head[k], c[k]);
      into += cell;
      if (!storage_column[k] && sizes_work(head[k]) && !loader_setting_of(cell)) {
        other += cell + ", ";
      }
    }
    others.push_back(std::move(other));
    const auto setting = loader_setting_of(text);
    bool storage_named = false, compute_named = false;
    for (size_t k = 0; k < c.size() && k < head.size(); ++k) {
      if (!storage_column[k]) continue;
      storage_named = storage_named || names_storage(head[k]) || names_storage(c[k]);
      compute_named = compute_named || changes_the_compute(c[k]);
    }
    other_change[r] =
        other_change[r] || (storage_by_cells && !storage_named && !setting && compute_named);
    named += (setting.has_value() || !where.empty()) && !other_change[r];
    // Beside a storage cell, the rest of the row as it is ("Batch size=64"): the judge compares
    // storage only where the rest is the same.
    labels.push_back(setting          ? setting->label
                     : !where.empty() ? printable(text)
                     : c.empty()      ? std::string()
                                      : printable(c[0]));
    storage.push_back(printable(where));
    settings.push_back(setting);
  }
  // Two rows, one of them naming its setting ("Unoptimized (workers=0) | 117", "Optimized |
  // 15"): the other is the same job without it — when its label says only that (another GPU
  // count, GPU, data set, model or precision would be another comparison).
  const auto before_or_after = [](std::string_view label) {
    static constexpr std::array<std::string_view, 14> kWords = {
        "optimized", "optimised", "ours",     "after",    "new",     "fixed",   "patched",
        "improved",  "before",    "baseline", "original", "default", "current", "old"};
    const std::string low = lower(trim(label));
    return std::any_of(kWords.begin(), kWords.end(), [&](std::string_view w) {
      return low == w || low == fmt::format("{} version", w);
    });
  };
  const bool one_named_pair =
      named == 1 && rows.size() == 2 && (before_or_after(labels[0]) || before_or_after(labels[1]));
  if (named < 2 && !one_named_pair) return false;
  // Each setting's rows must do the same work a step (the same batches, lengths, gradient
  // accumulation; in any order, any number of times): a table that changes the work along with its
  // setting (transformers#9345's TPU cores, one at batch 1 and the other at gradient accumulation
  // 4) compares no setting.
  if (!one_named_pair) {
    std::map<std::string, std::set<std::string>> runs_of;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (settings[r] && !other_change[r]) runs_of[labels[r]].insert(others[r]);
    }
    if (std::any_of(runs_of.begin(), runs_of.end(),
                    [&](const auto& s) { return s.second != runs_of.begin()->second; })) {
      return false;
    }
  }
  const auto& [column, kind] = measures.front();
  const int file = files.of(kind.step ? TelemetryKind::kTrainLog : TelemetryKind::kThroughput);
  bool found = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& [line, c] = rows[r];
    if (c.size() <= column || other_change[r]) continue;
    const auto v = cell_measure(c[column], kind);
    if (!v) continue;
    RunInfo run;
    run.source = files.name();
    run.line = line->number;
    run.group = group;
    run.loader_setting = labels[r];
    if (settings[r]) take_setting(run, *settings[r]);
    run.storage = storage[r];
    add_table_run(std::move(run), kind, *v, file, line->number, out);
    found = true;
  }
  return found;
}

// A table's first header cell naming the models its rows run ("Model", "Backbone").
bool names_models(std::string_view header) {
  static constexpr std::array<std::string_view, 6> kModels = {"model",    "models", "network",
                                                              "backbone", "arch",   "architecture"};
  const std::string h = lower(trim(header));
  return std::find(kModels.begin(), kModels.end(), h) != kModels.end();
}

// A table comparing models, under a header whose first cell names them ("Model | Input size |
// Batch size per gpu | MMPose (s/iter)"): each row a run of its model, with the first measure
// column (a rate or a step time before a duration); rows whose other cells are the same (one
// setup: input size, batch) are one group. Returns false for any other table.
bool read_model_table(
    const std::vector<std::string_view>& head,
    const std::vector<std::pair<const Line*, std::vector<std::string_view>>>& rows,
    PasteFiles& files, int& next_group, Telemetry& out) {
  if (rows.size() < 3 || head.empty()) return false;
  const std::string first = lower(head[0]);
  // The first cell names what each row runs: a model, or a configuration of one job (its
  // compiler, framework, backend: lightning-thunder's benchmark tables). Configurations at one
  // pace are what a compute-bound job looks like: only models are compared for it
  // (judge_models_at_one_pace reads RunInfo::model).
  static constexpr std::array<std::string_view, 16> kConfigurations = {
      "compiler", "framework", "backend",    "executor",      "executors", "implementation",
      "method",   "library",   "config",     "configuration", "strategy",  "setup",
      "cell",     "variant",   "experiment", "type"};
  const bool models = names_models(first);
  // Rows that name a step's phases ("| Type | Time (ms) |" over "Forward", "Data loading"): one
  // step's breakdown, not configurations to compare.
  if (!models && std::any_of(rows.begin(), rows.end(), [](const auto& row) {
        return !row.second.empty() && names_step_phase(row.second[0]);
      })) {
    return false;
  }
  if (!models &&
      std::find(kConfigurations.begin(), kConfigurations.end(), first) == kConfigurations.end()) {
    return false;
  }
  const auto measures = measure_columns(head, rows.front().second, 0);
  if (measures.empty()) return false;
  // A rate or a step time before a duration ("runtime" beside "sample/sec"): it states itself.
  const auto stated = std::find_if(measures.begin(), measures.end(),
                                   [](const auto& m) { return !m.second.duration; });
  const auto& [column, kind] = stated != measures.end() ? *stated : measures.front();
  const int file = files.of(kind.step ? TelemetryKind::kTrainLog : TelemetryKind::kThroughput);
  bool found = false;
  std::map<std::string, int> setups;
  // A paste that said its job reads synthetic data ("fake image and fake label") said it of the
  // rows its table compares too.
  const bool synthetic =
      std::any_of(out.runs.begin(), out.runs.end(), [](const RunInfo& r) { return r.synthetic; });
  for (const auto& [line, c] : rows) {
    if (c.size() <= column || c[0].empty()) continue;
    const auto v = cell_measure(c[column], kind);
    if (!v) continue;
    std::string setup;
    for (size_t k = 1; k < c.size(); ++k) {
      const bool measure = std::any_of(measures.begin(), measures.end(),
                                       [&](const auto& m) { return m.first == k; });
      if (!measure) setup += std::string(c[k]) + "|";
    }
    RunInfo run;
    run.source = files.name();
    run.line = line->number;
    run.group =
        setups.try_emplace(setup, next_group + static_cast<int>(setups.size())).first->second;
    if (models) run.model = printable(c[0]);  // quoted in the verdict as it is
    // A configuration named by how the GPUs exchange ("ZeRO-3 leaf, TP1/EP1"): the strategies
    // compared (judge_exchange_settings).
    if (!models) run.exchange_setting = exchange_setting_of(c[0]).value_or("");
    if (!models) run.link_setting = link_setting_of(c[0]).value_or("");
    run.synthetic = synthetic;
    add_table_run(std::move(run), kind, *v, file, line->number, out);
    found = true;
  }
  next_group += static_cast<int>(setups.size());
  return found;
}

// "96s/epoch", "35 s per epoch": the duration before the "per epoch"; nullopt for other cells.
std::optional<std::string> epoch_duration(std::string_view cell) {
  const std::string c = lower(without_about(cell));
  for (const std::string_view per : {"/epoch", " per epoch", "/ epoch"}) {
    if (c.ends_with(per)) {
      std::string d = c.substr(0, c.size() - per.size());
      if (parse_duration(d)) return d;
    }
  }
  return std::nullopt;
}

// What a cell of a table says it measures, when its column's header is a scale and not a
// measure: "~96s/epoch" (an epoch's duration), "69d 23h" (the whole run's), "405 img/s" (a
// rate); with bare numbers, what the caption above says; empty when none of these.
ColumnKind cell_kind(std::string_view cell, const ColumnKind& caption) {
  ColumnKind k;
  const std::string c = lower(without_about(cell));
  if (epoch_duration(c)) {
    k.duration = true;
    k.unit = "epochs";
    return k;
  }
  // "69d 23h", "8:16": a duration by its units or its clock's colons, not a bare number, nor
  // one with a lone "m" ("25.6M" counts millions as often as it times minutes).
  const bool lone_m = !c.empty() && c.back() == 'm' && c.size() >= 2 &&
                      (is_digit(c[c.size() - 2]) || c[c.size() - 2] == ' ') &&
                      c.find_first_of("abcdefghijklnopqrstuvwxyz:") == std::string::npos;
  if (!lone_m && c.find_first_of("abcdefghijklmnopqrstuvwxyz:") != std::string::npos &&
      parse_duration(c)) {
    k.duration = true;
    k.unit = "runs";
    return k;
  }
  if (const auto values = named_values(c); values.size() == 1) {
    if (const Meaning m = meaning_of(values[0]); m.quantity == Quantity::kRate) {
      k.rate = true;
      k.unit = m.rate_unit;
      k.per_gpu = m.per_gpu;
      return k;
    }
  }
  if (parse_number(c) && (caption.rate || caption.duration)) return caption;
  return k;
}

// The scale a header cell names, when a table puts its scales in columns: a GPU or node count
// ("1 GPU", "8 GPUs", "2 nodes") or a loader setting ("# worker=8", "num_workers=0").
struct ColumnScale {
  std::optional<int> gpus, nodes;
  std::string loader_setting;
  std::string link_setting;  // "DDP (Ethernet)" | "DDP (InfiniBand)": the link between machines
};
// `counted`: what the table's first header cell says its other header cells count ("#workers
// | 1 | 2 | 4", "GPUs | 1 | 8"), empty when it says nothing.
std::optional<ColumnScale> column_scale(std::string_view cell, std::string_view counted) {
  cell = trim(cell);
  ColumnScale s;
  // A bare number counts what the first header cell names ("#workers"); alone it is no scale.
  if (!counted.empty() && !cell.empty() && is_digit(cell[0])) {
    size_t end = 0;
    while (end < cell.size() && is_digit(cell[end])) ++end;
    const std::string_view note = trim(cell.substr(end));
    if (note.empty()) {
      bool nodes = false;
      if (count_header(counted, nodes)) {
        if (const auto n = count_cell(cell)) {
          (nodes ? s.nodes : s.gpus) = *n;
          return s;
        }
      }
      const auto setting = loader_setting_of(fmt::format("{}={}", counted, cell));
      if (setting && setting->workers) {
        s.loader_setting = setting->label;
        return s;
      }
    }
  }
  bool names_gpu = false;
  if (const auto n = count_cell(cell, &names_gpu);
      n && cell.find_first_not_of("0123456789") != cell.npos) {
    // "8 GPUs (1 node)" counts GPUs; "2 nodes" nodes.
    const bool nodes = !names_gpu && lower(cell).find("node") != std::string::npos;
    (nodes ? s.nodes : s.gpus) = *n;
    return s;
  }
  if (const auto setting = loader_setting_of(cell); setting && setting->workers) {
    s.loader_setting = setting->label;
    return s;
  }
  if (const auto link = link_setting_of(cell)) {
    s.link_setting = *link;
    return s;
  }
  return std::nullopt;
}

// "4 workers", "1 worker": the count, nullopt for any other cell.
std::optional<int> workers_counted(std::string_view cell) {
  const std::string low = lower(cell);  // the words are views into it
  const auto words = split_whitespace(low);
  if (words.size() != 2 || (words[1] != "worker" && words[1] != "workers")) return std::nullopt;
  return parse_index(words[0]);
}

// The DLIO benchmark's accelerator utilisation by accelerator count, a row each ("-na | AU% |
// ... | min CPU idle %" over "32 | 85.5 | ... | 0.00"): the AU column's header is "AU", "AU%",
// "AU (%)" or names the accelerators' utilisation; a column whose header names the CPUs' idle
// share gives it for the row. A row whose AU is no number (a run that failed, "?") is left out.
bool read_utilisation_table(
    const std::vector<std::string_view>& head,
    const std::vector<std::pair<const Line*, std::vector<std::string_view>>>& rows,
    std::optional<size_t> count_column, PasteFiles& files, Telemetry& out) {
  size_t au = head.size(), idle = head.size();
  for (size_t k = 0; k < head.size(); ++k) {
    std::string h;
    for (const char c : lower(head[k])) {
      if (c != ' ') h.push_back(c);
    }
    if (h == "au" || h == "au%" || h == "au(%)" ||
        h.find("acceleratorutili") != std::string::npos) {
      au = k;
    } else if (h.find("cpu") != std::string::npos && h.find("idle") != std::string::npos) {
      idle = k;
    }
  }
  if (au == head.size()) return false;
  bool found = false;
  for (const auto& [line, c] : rows) {
    if (c.size() <= std::max(au, count_column.value_or(0))) continue;
    const auto percent = leading_number(c[au]);
    // Without a count column ("Without patch, 1x H100 | ... | 59.37"), one accelerator's run
    // each, or as many as a "1x H100" in the row's first cell says.
    std::optional<int> count = 1;
    if (count_column) {
      count = count_cell(c[*count_column]);
    } else if (const size_t comma = c[0].rfind(','); comma != std::string_view::npos) {
      if (const auto n = count_cell(trim(c[0].substr(comma + 1)))) count = n;
    }
    if (!percent || *percent > 100 || !count) continue;
    Telemetry::UtilisationAtScale u;
    u.origin = {files.of(TelemetryKind::kInputProfile), line->number};
    u.accelerators = *count;
    u.percent = *percent;
    if (idle < c.size()) {
      if (const auto v = leading_number(c[idle]); v && *v <= 100) u.cpu_idle = v;
    }
    // "| 1 | resnet50 | 60.0 |", "| 1 | unet3d | 99.0 |": a series per workload.
    for (size_t k = 0; k < c.size(); ++k) {
      if (k == au || k == count_column || k == idle || c[k].empty() || is_digit(c[k][0])) continue;
      // Without a count column the first cell names the run, not a series of counts.
      if (!count_column && k == 0) continue;
      u.series += std::string(c[k]) + "|";
    }
    out.accelerator_utilisation.push_back(u);
    found = true;
  }
  return found;
}

// A scale's header cell with the unit of its column in parentheses ("1 GPU (img/s)", "4卡(img/s)",
// "4卡(img/s)[优化后]", Paddle#18892): the scale's words, and what the column's bare numbers
// measure; the cell as it is and nothing where the parentheses hold no unit ("8 GPUs (1 node)").
std::pair<std::string, ColumnKind> scale_with_unit(std::string_view cell) {
  const std::string text = in_english(cell);
  const size_t open = text.find('(');
  const size_t close = text.find(')', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos || open == 0) {
    return {std::string(cell), ColumnKind{}};
  }
  const ColumnKind unit =
      column_kind(trim(std::string_view(text).substr(open + 1, close - open - 1)));
  if (!unit.rate && !unit.duration) return {std::string(cell), ColumnKind{}};
  std::string words;  // "单卡" is " single  card ": its words, one space apart
  for (const std::string_view w : split_whitespace(std::string_view(text).substr(0, open))) {
    words += (words.empty() ? "" : " ") + std::string(w);
  }
  return {words, unit};
}

// A table with its scales as columns ("Configuration | Resolution | 1 GPU | 2 GPUs | 4 GPUs",
// "| | # worker=0 | # worker=8 |"): each row a series of its own (a group, named by its other
// cells), each scale column a run of it, measured by what its cells say (cell_kind). Needs two
// scale columns; returns false unless a row measures two of them.
bool read_transposed_table(
    const std::vector<std::string_view>& head,
    const std::vector<std::pair<const Line*, std::vector<std::string_view>>>& rows,
    PasteFiles& files, int& next_group, Telemetry& out, const ColumnKind& caption,
    bool workers_are_machines) {
  std::vector<std::pair<size_t, ColumnScale>> scales;
  std::map<size_t, ColumnKind> column_units;  // a scale column's unit in its header
  for (size_t k = 0; k < head.size(); ++k) {
    const auto [scale_text, unit] = scale_with_unit(head[k]);
    if (auto s = column_scale(scale_text, k == 0 ? std::string_view() : head[0])) {
      scales.emplace_back(k, std::move(*s));
      if (unit.rate || unit.duration) column_units[k] = unit;
    } else if (const auto n = caption.unit == "epochs" && !workers_are_machines
                                  ? workers_counted(head[k])
                                  : std::nullopt) {
      // "filter type | 1 worker | 4 workers" under "avg. seconds per epoch" (kge#70): a loader's
      // workers, which an epoch's time is taken over (Horovod's and a parameter server's
      // workers are machines, counted beside images a second).
      ColumnScale setting;
      setting.loader_setting = fmt::format("num_workers={}", *n);
      scales.emplace_back(k, std::move(setting));
    }
  }
  if (scales.size() < 2 || rows.empty()) return false;
  bool found = false;
  for (const auto& [line, c] : rows) {
    // A row of the setup beside the measured ones ("batch size per GPU | 256 | 256", "params |
    // 25.6M"): its bare numbers are no measure, whatever the caption says.
    std::string label;
    for (size_t k = 0; k < c.size(); ++k) {
      if (std::none_of(scales.begin(), scales.end(), [&](const auto& s) { return s.first == k; })) {
        label += lower(c[k]) + " ";
      }
    }
    // A note in parentheses names the row's setup, not what the row is ("resnet(batch_size=64)",
    // "ResNet-50 (90 epochs)").
    std::string named;
    int depth = 0;
    for (const char ch : in_english(label)) {
      depth += ch == '(' ? 1 : ch == ')' && depth > 0 ? -1 : 0;
      if (depth == 0 && ch != ')') named.push_back(ch);
    }
    const bool setup_row =
        std::any_of(std::begin(kSetupWords), std::end(kSetupWords),
                    [&](std::string_view w) { return named.find(w) != std::string::npos; });
    // Cells that state what they measure ("8:16", "35 s/epoch") before bare numbers under the
    // caption: a table with each scale twice ("# Batch/Epoch" counts, then "Epoch Time (mm:ss)"
    // under "1 GPU | 2 GPU | 1 GPU | 2 GPU") measures by its stated cells.
    const bool stated = std::any_of(scales.begin(), scales.end(), [&](const auto& s) {
      const ColumnKind k = cell_kind(s.first < c.size() ? c[s.first] : "", ColumnKind{});
      return k.rate || k.duration;
    });
    // A row named as one step's time ("time per training step | 0.725 seconds | 0.741
    // seconds") times a step, each GPU's batch in it; one named as an epoch's times epochs.
    const bool step_row =
        std::any_of(std::begin(kStepRowWords), std::end(kStepRowWords),
                    [&](std::string_view w) { return named.find(w) != std::string::npos; });
    const bool epoch_row = !step_row && named.find("epoch") != std::string::npos;
    std::vector<std::pair<const ColumnScale*, std::pair<ColumnKind, double>>> measured;
    for (const auto& [k, scale] : scales) {
      if (k >= c.size()) continue;
      const auto own = column_units.find(k);
      ColumnKind kind = cell_kind(c[k], stated || setup_row         ? ColumnKind{}
                                        : own != column_units.end() ? own->second
                                                                    : caption);
      if (kind.duration && epoch_row) kind.unit = "epochs";
      // One kind of measure along the row (an epoch's time beside a whole run's is no series),
      // one cell per scale.
      const auto same_scale = [&](const auto& m) {
        return m.first->gpus == scale.gpus && m.first->nodes == scale.nodes &&
               m.first->loader_setting == scale.loader_setting &&
               m.first->link_setting == scale.link_setting;
      };
      ColumnKind as_read = kind;
      if (kind.duration && step_row) as_read = ColumnKind{.step = true};
      if (!(kind.rate || kind.duration) ||
          (!measured.empty() && (measured.front().second.first.unit != as_read.unit ||
                                 measured.front().second.first.step != as_read.step)) ||
          std::any_of(measured.begin(), measured.end(), same_scale)) {
        continue;
      }
      const auto epoch = epoch_duration(c[k]);
      if (const auto v = cell_measure(epoch ? std::string_view(*epoch) : c[k], kind)) {
        // A step's time is kept as its seconds (cell_measure gives a duration's rate).
        measured.push_back({&scale, {as_read, as_read.step ? 1 / *v : *v}});
      }
    }
    if (measured.size() < 2) continue;
    const int file = files.of(TelemetryKind::kThroughput);
    for (const auto& [scale, m] : measured) {
      RunInfo run;
      run.source = files.name();
      run.line = line->number;
      run.group = next_group;
      run.gpus = scale->gpus;
      run.nodes = scale->nodes;
      run.loader_setting = scale->loader_setting;
      run.link_setting = scale->link_setting;
      if (!head.empty() && names_models(head[0]) && !c.empty()) run.model = printable(c[0]);
      add_table_run(std::move(run), m.first, m.second, file, line->number, out);
    }
    ++next_group;
    found = true;
  }
  return found;
}

// One run of a row that sets runs side by side: a cell naming its GPU (or node) count, then the
// cell that measures it.
struct ScalePair {
  std::string label;  // the scale cell's first word, lower case, unless it is the count
  std::optional<int> gpus, nodes;
  ColumnKind kind;
  double value = 0;
};

// The runs of a row that sets them side by side, a cell naming each run's scale before the
// cell measuring it ("K80 GPU (8 GPUs on single node | 3h 23 mins | K80 (16 GPUS across nodes)
// | 2h 52 mins | 30 mins speed gain"); empty unless two such pairs measure alike.
std::vector<ScalePair> scale_pairs(const std::vector<std::string_view>& c) {
  std::vector<ScalePair> pairs;
  for (size_t k = 0; k + 1 < c.size(); ++k) {
    ScalePair p;
    bool flag = false;
    p.gpus = gpu_count_of(c[k], &p.nodes, &flag);
    if (!p.gpus && !p.nodes) continue;
    if (const auto words = split_whitespace(c[k]); !words.empty()) {
      p.label = lower(words.front());
      const size_t cut = p.label.find('(');
      if (cut != std::string::npos) p.label.resize(cut);
      // A count in words leads it as a number does ("single node (8 GPUs)").
      static constexpr std::array<std::string_view, 10> kCountWords = {
          "single", "one", "two", "three", "four", "five", "six", "seven", "eight", "dual"};
      if (!p.label.empty() &&
          (is_digit(p.label.front()) ||
           std::find(kCountWords.begin(), kCountWords.end(), p.label) != kCountWords.end())) {
        p.label.clear();
      }
    }
    if (const ColumnKind own = cell_kind(c[k], ColumnKind{}); own.rate || own.duration) continue;
    p.kind = cell_kind(c[k + 1], ColumnKind{});
    if (!(p.kind.rate || p.kind.duration)) continue;
    const auto epoch = epoch_duration(c[k + 1]);
    const auto v = cell_measure(epoch ? std::string_view(*epoch) : c[k + 1], p.kind);
    if (!v || (!pairs.empty() && pairs.front().kind.unit != p.kind.unit)) continue;
    p.value = *v;
    pairs.push_back(std::move(p));
    ++k;
  }
  if (pairs.size() < 2) pairs.clear();
  return pairs;
}

// A table whose rows set runs side by side (scale_pairs): each row a series of its own, by GPU
// count where every run states one and they differ, else by node count. Returns false unless a
// row holds two runs at different scales.
bool read_paired_scale_table(
    const std::vector<std::pair<const Line*, std::vector<std::string_view>>>& rows,
    PasteFiles& files, int& next_group, Telemetry& out) {
  bool found = false;
  for (const auto& [line, c] : rows) {
    const std::vector<ScalePair> pairs = scale_pairs(c);
    // One job at each scale: the cells name it alike ("K80 GPU (8 GPUs ..." beside "K80 (16
    // GPUS ..."), not "ResNet-50 (8 GPUs)" beside "BERT-large (16 GPUs)".
    if (std::any_of(pairs.begin(), pairs.end(),
                    [&](const ScalePair& p) { return p.label != pairs.front().label; })) {
      continue;
    }
    const auto differ = [&](std::optional<int> ScalePair::*count) {
      std::set<int> seen;
      for (const ScalePair& p : pairs) {
        if (!(p.*count)) return false;
        seen.insert(*(p.*count));
      }
      return seen.size() == pairs.size();
    };
    const bool by_gpus = differ(&ScalePair::gpus);
    if (!by_gpus && !differ(&ScalePair::nodes)) continue;
    const int file = files.of(TelemetryKind::kThroughput);
    for (const ScalePair& p : pairs) {
      RunInfo run;
      run.source = files.name();
      run.line = line->number;
      run.group = next_group;
      (by_gpus ? run.gpus : run.nodes) = by_gpus ? p.gpus : p.nodes;
      if (by_gpus) run.nodes = p.nodes;
      add_table_run(std::move(run), p.kind, p.value, file, line->number, out);
    }
    ++next_group;
    found = true;
  }
  return found;
}

}  // namespace

namespace {

// pandas aligns its columns with spaces.
bool is_space(char c) { return c == ' '; }

// Where each space-separated word of a line ends (one past its last character).
std::vector<size_t> word_ends(std::string_view text) {
  std::vector<size_t> ends;
  for (size_t k = 0; k < text.size(); ++k) {
    if (!is_space(text[k]) && (k + 1 == text.size() || is_space(text[k + 1]))) {
      ends.push_back(k + 1);
    }
  }
  return ends;
}

}  // namespace

// Words of a column's header that name a quantity other than a rate (whole words: "steps/s"
// and "Accelerate" name none).
constexpr std::string_view kNotRates[] = {
    "eff", "efficiency", "loss", "acc", "accuracy", "speedup", "ratio", "scaling", "mem",  "memory",
    "err", "error",      "time", "lr",  "batch",    "size",    "len",   "length",  "step", "epoch"};

std::vector<Line> pandas_as_pipes(const std::vector<Line>& lines, std::deque<std::string>& store) {
  std::vector<Line> out = lines;
  for (size_t i = 0; i + 2 < lines.size(); ++i) {
    const std::string_view header = lines[i].text;
    const std::string_view first_word = trim(header).substr(0, 1);
    if (first_word.empty() || is_digit(first_word[0]) ||
        header.find('|') != std::string_view::npos || header.size() > 1000) {
      continue;
    }
    // Rows numbered 0, 1, 2, ... whose words end where the first row's do.
    std::vector<size_t> ends;
    size_t end = i + 1;
    for (; end < lines.size(); ++end) {
      const std::string_view row = lines[end].text;
      const auto words = split_whitespace(row);
      if (words.empty() || parse_index(words[0]) != static_cast<int64_t>(end - i - 1)) break;
      const std::vector<size_t> row_ends = word_ends(row);
      if (end == i + 1) {
        ends = row_ends;
      } else if (row_ends != ends) {
        break;
      }
    }
    if (end - i - 1 < 2 || ends.size() < 3) continue;
    // Over the index, nothing (a default RangeIndex), or the columns' own name reaching past it
    // ("compiler model_name"): a table whose first column has a header of its own, ending where
    // its values do ("num_workers  epoch_time" over "          0       120.3"), is no
    // DataFrame's.
    const size_t first_label = header.find_first_not_of(' ');
    if (first_label < ends[0]) {
      const size_t name_end = header.find(' ', first_label);
      if (name_end == std::string_view::npos || name_end <= ends[0]) continue;
    }
    // The header's words end where the columns do (past the index's), and none past the last.
    const auto ends_word = [&](size_t e) {
      return e <= header.size() && !is_space(header[e - 1]) &&
             (e == header.size() || is_space(header[e]));
    };
    if (!std::all_of(ends.begin() + 1, ends.end(), ends_word) ||
        header.find_last_not_of(' ') + 1 != ends.back()) {
      continue;
    }
    const auto pipe_row = [&](std::string_view text, bool is_header) {
      std::string pipe = "|";
      for (size_t c = 1; c < ends.size(); ++c) {
        size_t from = ends[c - 1];
        // A header's first label may start over the index ("compiler model_name": the columns'
        // own name before the first label): the word cut by the index's edge is not the label.
        if (is_header && c == 1 && from < text.size() && !is_space(text[from - 1])) {
          while (from < ends[c] && !is_space(text[from])) ++from;
        }
        const std::string_view cell =
            from < text.size() ? trim(text.substr(from, ends[c] - from)) : std::string_view();
        pipe += fmt::format(" {} |", cell);
      }
      return pipe;
    };
    store.push_back(pipe_row(header, true));
    out[i].text = store.back();
    for (size_t r = i + 1; r < end; ++r) {
      store.push_back(pipe_row(lines[r].text, false));
      out[r].text = store.back();
    }
    i = end - 1;
  }
  return out;
}

namespace {

// A table cell's positive percentage ("95.4%"; with `bare`, a bare number over 1 too, "42");
// nullopt for anything else.
std::optional<double> percent_cell(std::string_view cell, bool bare) {
  cell = trim(cell);
  const bool percent = cell.ends_with('%');
  if (percent) cell = trim(cell.substr(0, cell.size() - 1));
  const auto v = parse_number(cell);
  if (!v || *v <= 0 || (!percent && !(bare && *v > 1))) return std::nullopt;
  return v;
}

// Each pipe table of `lines` (a header, its rule, then rows with '|'): `head(cells)` says which
// columns the table is read for (an empty vector: not read); `row(line, cells, columns)` reads
// each row, true where it found something. True when any row did.
template <typename Head, typename Row>
bool for_each_pipe_table(const std::vector<Line>& lines, Head head, Row row) {
  bool found = false;
  for (size_t i = 0; i + 2 < lines.size(); ++i) {
    if (lines[i].text.size() > kMaxPastedLineBytes || !rule_line(lines[i + 1].text) ||
        rule_line(lines[i].text)) {
      continue;
    }
    const std::vector<size_t> columns = head(table_cells(lines[i].text));
    if (columns.empty()) continue;
    for (size_t j = i + 2; j < lines.size(); ++j) {
      if (lines[j].text.size() > kMaxPastedLineBytes ||
          lines[j].text.find('|') == std::string_view::npos) {
        break;
      }
      found = row(lines[j], table_cells(lines[j].text), columns) || found;
    }
  }
  return found;
}

}  // namespace

bool scan_stated_efficiency(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  const auto head = [](const std::vector<std::string_view>& cells) {
    std::vector<size_t> columns;
    for (size_t k = 0; k < cells.size(); ++k) {
      const std::string h = lower(cells[k]);
      if (h.find("efficiency") == std::string::npos) continue;
      // A scaling's: the header says so or names the scale ("8 GPU efficiency"); a CPU's,
      // memory's, a kernel's ("Warp Execution Efficiency") or the FLOPs' are not.
      bool other = false;
      for (const std::string_view w : {"cpu", "mem", "mfu", "flop", "energy", "power", "compute",
                                       "warp", "load", "store", "kernel"}) {
        other = other || h.find(w) != std::string::npos;
      }
      bool scaling = false;
      for (const std::string_view w : {"scal", "parallel", "weak", "strong", "gpu", "node"}) {
        scaling = scaling || h.find(w) != std::string::npos;
      }
      if (!other && scaling) columns.push_back(k);
    }
    return columns;
  };
  const auto row = [&](const Line& line, const std::vector<std::string_view>& cells,
                       const std::vector<size_t>& columns) {
    bool found = false;
    for (const size_t k : columns) {
      const auto v = k < cells.size() ? percent_cell(cells[k], false) : std::nullopt;
      if (!v || *v > 200) continue;
      out.stated_scaling_efficiency.emplace_back(
          Origin{files.of(TelemetryKind::kThroughput), line.number}, *v);
      found = true;
    }
    return found;
  };
  return for_each_pipe_table(lines, head, row);
}

bool scan_stated_speedups(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  bool found = false;
  for (const Line& line : lines) {
    if (!is_prose(line.text)) continue;
    for (const double e : speedups_over_one(line.text)) {
      out.stated_scaling_efficiency.emplace_back(
          Origin{files.of(TelemetryKind::kThroughput), line.number}, e);
      found = true;
    }
  }
  return found;
}

bool scan_core_throughput(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  // The p_train and p_core columns, in that order; none unless the header has both.
  const auto head = [](const std::vector<std::string_view>& cells) {
    std::optional<size_t> train, core;
    for (size_t k = 0; k < cells.size(); ++k) {
      const std::string h = lower(trim(cells[k]));
      if (h == "p_train") train = k;
      if (h == "p_core") core = k;
    }
    return train && core ? std::vector<size_t>{*train, *core} : std::vector<size_t>{};
  };
  const auto row = [&](const Line& line, const std::vector<std::string_view>& cells,
                       const std::vector<size_t>& columns) {
    if (std::max(columns[0], columns[1]) >= cells.size()) return false;
    const auto p_train = parse_number(trim(cells[columns[0]]));
    const auto p_core = parse_number(trim(cells[columns[1]]));
    // FlagPerf's own runs: p_core at least p_train, as it leaves out time p_train counts.
    if (!p_train || !p_core || *p_train <= 0 || *p_core < *p_train) return false;
    StepSample s;
    s.origin = {files.of(TelemetryKind::kTrainLog), line.number};
    s.time = static_cast<double>(line.number);
    // Shares, not seconds: a sample's time is no step's.
    s.shares = true;
    s.step_seconds = 1;
    s.data_seconds = 1 - *p_train / *p_core;
    // The row's run, where a reader of run tables made one of it.
    for (size_t r = 0; r < out.runs.size(); ++r) {
      if (out.runs[r].line == line.number) s.run = static_cast<int>(r);
    }
    out.steps.push_back(s);
    return true;
  };
  return for_each_pipe_table(lines, head, row);
}

bool scan_mfu_table(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  // A table with a step (or iteration, epoch) column is a trainer's lines, one after another.
  bool steps = false;
  const auto head = [&](const std::vector<std::string_view>& cells) {
    std::vector<size_t> columns;
    steps = false;
    for (size_t k = 0; k < cells.size(); ++k) {
      // "MFU", "MFU (%)", "Train Step MFU"; not a target, an expectation, a change or a
      // comparison ("Target MFU", "MFU gain", "HFU vs MFU").
      const std::string h = lower(trim(cells[k]));
      steps =
          steps || h == "step" || h == "steps" || h == "iter" || h == "iteration" || h == "epoch";
      const bool names =
          h == "mfu" || h.starts_with("mfu ") || h.starts_with("mfu(") || h.ends_with(" mfu");
      bool other = false;
      for (const std::string_view w : {"target", "expect", "theoretical", "paper", "gain", "delta",
                                       "diff", "change", "improve", "vs", "hfu"}) {
        other = other || h.find(w) != std::string::npos;
      }
      if (names && !other) columns.push_back(k);
    }
    return columns;
  };
  const auto row = [&](const Line& line, const std::vector<std::string_view>& cells,
                       const std::vector<size_t>& columns) {
    bool found = false;
    for (const size_t k : columns) {
      // A bare fraction ("0.42") may be a share or a percent, as for the named figure.
      const auto v = k < cells.size() ? percent_cell(cells[k], true) : std::nullopt;
      if (!v || *v > 100) continue;
      (steps ? out.mfu : out.mfu_configurations)
          .emplace_back(Origin{files.of(TelemetryKind::kThroughput), line.number}, *v);
      found = true;
    }
    return found;
  };
  return for_each_pipe_table(lines, head, row);
}

// Tables of runs: a header with a GPU (or node) count column and measure columns, then one row
// per count ("nproc/ngpu | sec/batch/gpu" then "1 | 0.323", "4 | 0.381", "8 | 0.609"). Each row
// is a run, each measure column a series of its own. Without a count column, a table whose rows
// name loader settings (read_setting_table).
bool scan_run_tables(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  std::optional<bool> workers_are_machines;  // looked for once, when a table needs it
  bool found = false;
  int next_group = 0;
  for (const RunInfo& r : out.runs) next_group = std::max(next_group, r.group + 1);
  std::optional<std::string> stated_unit;  // stated_rate_unit, read when first needed
  size_t paired_scanned_to = 0;            // lines before it were scanned for runs side by side
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].text.size() > kMaxPastedLineBytes) continue;
    auto head = table_cells(lines[i].text);
    // "  | Waiting time | Train time" over "PyTorch baseline | 2.713 | 0.266": a rendered table
    // pasted without its left border, whose first header cell is empty.
    if (const std::string_view t = trim(lines[i].text); t.starts_with('|') && !t.ends_with('|')) {
      for (size_t j = i + 1; j < lines.size() && j <= i + 2; ++j) {
        const std::string_view r = trim(lines[j].text);
        if (r.empty() || cell_free(r)) {
          continue;
        }
        if (!r.starts_with('|') && table_cells(r).size() == head.size() + 1) {
          head.insert(head.begin(), std::string_view());
        }
        break;
      }
    }
    if (head.size() < 2) continue;
    // Runs side by side in each row, whatever the header says; rows once scanned for it are not
    // scanned again (other readers still read them).
    if (i >= paired_scanned_to) {
      size_t paired_end = i + 1;
      const auto rows = table_rows(
          lines, i, [](const auto& c) { return !scale_pairs(c).empty(); }, paired_end);
      if (read_paired_scale_table(rows, files, next_group, out)) {
        found = true;
        i = paired_end - 1;
        continue;
      }
      paired_scanned_to = paired_end;
    }
    // The count column: the first whose header names GPUs or nodes ("GPUs", "No. of GPUs",
    // "#GPUS" after a "Name" column).
    // A table with both ("node_num | gpu_num | samples/s", DLPerf) counts its runs by GPUs, the
    // nodes they are spread over beside them.
    // A GPU column whose first row names the GPU, not a count ("nodes | GPU | img/s" over "1 |
    // V100 | 2900"), is no scale.
    std::vector<std::string_view> first_row;
    for (size_t j = i + 1; j < lines.size() && j <= i + 3 && first_row.empty(); ++j) {
      if (!rule_line(lines[j].text)) first_row = table_cells(lines[j].text);
    }
    bool by_nodes = false;
    size_t count_column = head.size(), node_column = head.size();
    for (size_t k = 0; k < head.size(); ++k) {
      bool nodes = false;
      if (!count_header(head[k], nodes)) continue;
      if (nodes && node_column == head.size()) node_column = k;
      const bool counts = first_row.size() != head.size() || count_cell(first_row[k]).has_value();
      if (!nodes && counts && (count_column == head.size() || by_nodes)) {
        count_column = k;
        by_nodes = false;
      } else if (count_column == head.size() && (nodes || counts)) {
        count_column = k;
        by_nodes = nodes;
      }
    }
    if (!by_nodes && node_column == count_column) node_column = head.size();
    // "num of nodes | num of GPU per node" (Horovod's benchmarks): the GPUs of a row are its
    // nodes times its GPUs (or processes) per node.
    std::optional<size_t> per_node_column;
    if (by_nodes) {
      for (size_t k = 0; k < head.size() && !per_node_column; ++k) {
        if (k != count_column && gpus_per_node_header(head[k]) && first_row.size() == head.size() &&
            count_cell(first_row[k])) {
          per_node_column = k;
        }
      }
    }
    // "GPUs | 1 | 8": the first cell names what the bare numbers of the others count, the
    // scales as columns (read_transposed_table), not a column of counts.
    if (count_column == 0 && head.size() >= 3 &&
        std::all_of(head.begin() + 1, head.end(), [](std::string_view h) {
          return !h.empty() && std::all_of(h.begin(), h.end(), is_digit);
        })) {
      count_column = head.size();
    }
    // A column with an empty header whose rows count with a unit and not all alike ("| |
    // Speed (K samples/sec) |" over "| 1 GPU | 10.8 |", "| 2 GPU | 24.1 |"): the rows say what
    // it counts. One count in every row is a label, not the table's scale. Under a header of
    // its own, the rows must name the GPU they count ("hardware setup" over "8xA10G").
    for (size_t k = 0; k < head.size() && count_column == head.size(); ++k) {
      const bool headed = !head[k].empty();
      std::set<int> counts;
      int rows_seen = 0;
      bool nodes = false;
      for (size_t r = i + 1; r < lines.size() && r <= i + 4; ++r) {
        if (rule_line(lines[r].text)) continue;
        const auto row = table_cells(lines[r].text);
        if (row.size() != head.size()) break;
        const std::string_view cell = row[k];
        if (cell.find_first_not_of("-: ") == std::string_view::npos) continue;  // a separator
        bool names_gpu = false;
        const auto n = count_cell(cell, &names_gpu);
        if (!n || cell.find_first_not_of("0123456789 ") == std::string_view::npos) break;
        if (headed && !names_gpu) break;
        counts.insert(*n);
        ++rows_seen;
        nodes = lower(cell).find("node") != std::string::npos;
      }
      if (rows_seen >= 2 && counts.size() >= 2) {
        count_column = k;
        by_nodes = nodes;
      }
    }
    size_t end = i + 1;
    if (count_column == head.size()) {
      // Rows of as many cells as the header, for a table of settings. Whatever they hold, the
      // scan goes on after them: a row is no header of another table (and each line is read
      // once: a long log of aligned columns is one "table").
      // A row that is itself a count table's header ends it (a caption of two cells above
      // "GPUs  img/sec"): the scan resumes there.
      // A first cell left blank under a filled one is a merged cell ("develop" over two rows).
      const auto rows = table_rows(
          lines, i,
          [&](const auto& c) {
            bool nodes = false;
            return c.size() == head.size() &&
                   std::none_of(c.begin(), c.end(),
                                [&](std::string_view cell) { return count_header(cell, nodes); });
          },
          end, 1);
      const ColumnKind caption = caption_kind(lines, i);
      // A paste about a parameter server's or Horovod's workers counts machines by them.
      if (!workers_are_machines) {
        workers_are_machines = std::any_of(lines.begin(), lines.end(), [](const Line& l) {
          return names_worker_machines(l.text);
        });
      }
      // Machines counted in columns ("1 worker | 2 workers") beside a parameter server: no
      // setting of a loader, and no scale the table states in GPUs.
      if (*workers_are_machines && std::any_of(head.begin(), head.end(), [](std::string_view h) {
            return workers_counted(h).has_value();
          })) {
        i = end - 1;
        continue;
      }
      if (read_transposed_table(head, rows, files, next_group, out, caption,
                                *workers_are_machines)) {
        found = true;
      } else if (read_utilisation_table(head, rows, std::nullopt, files, out)) {
        found = true;
      } else if (read_setting_table(head, rows, files, next_group, out, caption)) {
        found = true;
        ++next_group;
      } else if (read_timer_table(head, rows, files, out) ||
                 read_timer_rows(head, rows, files, out)) {
        found = true;
      } else if (read_model_table(head, rows, files, next_group, out)) {
        found = true;
      }
      i = end - 1;
      continue;
    }
    // The table ends at the first line whose count cell is not a count.
    const auto rows = table_rows(
        lines, i,
        [&](const auto& c) { return c.size() > count_column && count_cell(c[count_column]); }, end,
        count_column);
    if (rows.size() < 2) continue;
    if (read_utilisation_table(head, rows, count_column, files, out)) {
      found = true;
      i = end - 1;
      continue;
    }
    auto measures = measure_columns(head, rows.front().second, count_column);
    std::erase_if(measures, [&](const auto& m) { return m.first == per_node_column; });
    // A "Speed" column's rate counts samples unless the paste says what it counts ("Performance
    // metric: number of processed images per second").
    for (auto& [k, kind] : measures) {
      if (kind.rate && kind.unit == "samples" &&
          lower(head[k]).find("sample") == std::string::npos) {
        if (!stated_unit) stated_unit = stated_rate_unit(lines);
        if (!stated_unit->empty()) kind.unit = *stated_unit;
      }
    }
    // Columns of bare numbers whose unit a sentence of the paste states ("the numbers in the
    // table mean examples/sec"): each a rate in it.
    if (measures.empty()) {
      if (!stated_unit) stated_unit = stated_rate_unit(lines);  // once per paste: it reads all
      if (const std::string& unit = *stated_unit; !unit.empty()) {
        for (size_t k = 0; k < head.size(); ++k) {
          if (k == count_column || k == per_node_column || rows.front().second.size() <= k ||
              !number_with_spread(rows.front().second[k])) {
            continue;
          }
          // "MPI per Process" beside "MPI Total": a process's rate, one process a GPU.
          ColumnKind kind;
          kind.rate = true;
          kind.unit = unit;
          kind.per_gpu = column_kind(head[k]).per_gpu;
          measures.emplace_back(k, kind);
        }
      }
    }
    // Columns of bare fractions under a caption that names a rate ("THROUGHPUT (tokens/s)" over
    // pandas' "Num GPUS ... eager  inductor", lightning-thunder#21): each a rate in it. Whole
    // numbers beside them are the runs' settings ("Seq Len", "Global BS").
    if (measures.empty()) {
      if (const ColumnKind caption = caption_kind(lines, i); caption.rate) {
        for (size_t k = 0; k < head.size(); ++k) {
          if (k == count_column || rows.front().second.size() <= k) continue;
          const std::string_view cell = trim(rows.front().second[k]);
          // A column named for another quantity ("efficiency", "loss", "speedup") is no rate.
          const std::vector<std::string> words = alnum_words(lower(head[k]), false);
          const bool other = head[k].find('%') != std::string_view::npos ||
                             std::any_of(words.begin(), words.end(), [](const std::string& w) {
                               return std::find(std::begin(kNotRates), std::end(kNotRates), w) !=
                                      std::end(kNotRates);
                             });
          if (!other && parse_number(cell) && cell.find('.') != std::string_view::npos) {
            measures.emplace_back(k, caption);
          }
        }
      }
    }
    // A column of clock times under a word ("train" over "11:35", "1:25:29"): how long each
    // run took.
    if (measures.empty()) {
      for (size_t k = 0; k < head.size(); ++k) {
        if (k == count_column || rows.front().second.size() <= k || head[k].empty()) continue;
        const std::string_view cell = trim(rows.front().second[k]);
        if (cell.find(':') != std::string_view::npos && parse_duration(cell)) {
          ColumnKind kind;
          kind.duration = true;
          kind.unit = "runs";
          measures.emplace_back(k, kind);
          break;  // the first: training before validation
        }
      }
    }
    if (measures.empty()) continue;
    const int file = files.of(measures.front().second.step ? TelemetryKind::kTrainLog
                                                           : TelemetryKind::kThroughput);
    for (const auto& [column, kind] : measures) {
      // Rows named in columns before the count ("SSD in GluonCV | 1 | 30", "mxnet-ssd | 4 |
      // 120", "256 | device | float16 | 1 | 6982.74") are a series per name; so are rows
      // named in words after it when the table repeats its scales for two names or more
      // ("8xA10G | llama2-7b | nf4 | 14:26": each backbone at 1, 2, 4 and 8 GPUs) — not a
      // caption that changes with the scale ("single machine" up to 8 GPUs, "two workers" at
      // 16) or setups tried at one count each.
      std::vector<size_t> named_after;
      for (size_t k = count_column + 1; k < head.size(); ++k) {
        if (std::any_of(measures.begin(), measures.end(),
                        [&](const auto& m) { return m.first == k; })) {
          continue;
        }
        std::map<std::string, std::set<int>> counts_of;
        for (const auto& [line, c] : rows) {
          if (c.size() <= k || c[k].empty() || is_digit(trim(c[k]).front())) continue;
          if (const auto n = count_cell(c[count_column])) counts_of[std::string(c[k])].insert(*n);
        }
        // The table repeats its scales for two names or more.
        if (std::count_if(counts_of.begin(), counts_of.end(),
                          [](const auto& v) { return v.second.size() >= 2; }) >= 2) {
          named_after.push_back(k);
        }
      }
      std::map<std::string, int> series;
      for (const auto& [line, c] : rows) {
        if (c.size() <= column) continue;
        std::string name;
        for (size_t k = 0; k < count_column; ++k) {
          if (k != node_column) name += std::string(c[k]) + "|";  // nodes are part of the scale
        }
        for (const size_t k : named_after) {
          if (k < c.size()) name += std::string(c[k]) + "|";
        }
        if (!series.contains(name)) series.emplace(name, next_group++);
        const auto v = cell_measure(c[column], kind);
        if (!v) continue;
        RunInfo run;
        run.source = files.name();
        run.line = line->number;
        run.group = series.at(name);
        const int count = *count_cell(c[count_column]);
        (by_nodes ? run.nodes : run.gpus) = count;
        if (!by_nodes && node_column < c.size()) run.nodes = count_cell(c[node_column]);
        if (per_node_column && *per_node_column < c.size()) {
          // A node holds a few GPUs (or processes), not thousands.
          if (const auto per_node = count_cell(c[*per_node_column]);
              per_node && *per_node <= 256 && count <= 100000) {
            run.gpus = count * *per_node;
          }
        }
        add_table_run(std::move(run), kind, *v, file, line->number, out);
        found = true;
      }
    }
    i = end - 1;
  }
  return found;
}

namespace {

// What a table's header cell says its bare numbers measure: "rate" ("Training example processed
// per second", "img/s", "throughput"), "duration" ("Average epoch time", "Run时间", "(ms)"), or
// nullptr.
const char* header_measure(std::string_view cell) {
  const std::string c = lower(cell);
  if (c.empty() || c.size() > 60) return nullptr;
  // A word of the header, whole: "time" but not "timestep" or "times"; "speed" but not
  // "speedup".
  const auto word = [&](std::string_view w) {
    for (size_t at = c.find(w); at != std::string::npos; at = c.find(w, at + 1)) {
      const size_t end = at + w.size();
      // "/s" follows the thing it counts ("samples/s"): its end alone is checked.
      const bool starts = w.front() == '/' || at == 0 || !is_alpha(c[at - 1]);
      if (starts && (end == c.size() || !is_alpha(c[end]))) {
        return true;
      }
    }
    return false;
  };
  // Dates and counts of times are no measures ("Release time", "Timestamp", "Times called").
  for (const std::string_view w : {"release", "date", "timestamp", "timestep", "created"}) {
    if (c.find(w) != std::string::npos) return nullptr;
  }
  for (const std::string_view w : {"/s", "/sec", "per second", "per sec", "throughput", "speed",
                                   "fps", "qps", "it/s", "/min", "per minute"}) {
    if (word(w)) return "rate";
  }
  // A unit in parentheses ("total(sec)", "epoch time (s)", "(ms)"); "(s)" only after a space
  // or a word of time, not a plural's ("GPU(s)", "Node(s)").
  for (const std::string_view w : {" (s)", "time(s)", "(sec", "(ms)", "(min", "(h)", "(hour"}) {
    if (c.find(w) != std::string::npos) return "duration";
  }
  for (const std::string_view w : {"time", "latency", "duration", "elapsed", "seconds"}) {
    if (word(w)) return "duration";
  }
  for (const std::string_view w : {"时间", "耗时"}) {
    if (c.find(w) != std::string::npos) return "duration";
  }
  return nullptr;
}

// PyTorch/XLA's metrics report times in one token of parts, "07m50s335ms265.522us",
// "03s913ms699.706us" (its metric's Accumulator, the total over its TotalSamples): the seconds;
// nullopt for any other text. (duration_scale reads one unit after a number; these glue several,
// "m" among them.)
std::optional<double> xla_duration(std::string_view token) {
  double seconds = 0;
  size_t i = 0, parts = 0;
  bool seconds_or_less = false;  // the last part's unit
  while (i < token.size()) {
    size_t end = i;
    const auto v = number_from(token, i, end);
    if (!v) return std::nullopt;
    double scale = 0;
    size_t unit = 0;
    for (const auto& [u, s] : {std::pair<std::string_view, double>{"ms", 1e-3},
                               {"us", 1e-6},
                               {"ns", 1e-9},
                               {"h", 3600},
                               {"m", 60},
                               {"s", 1}}) {
      if (token.substr(end, u.size()) == u) {
        scale = s;
        unit = u.size();
        break;
      }
    }
    if (unit == 0) return std::nullopt;
    seconds += *v * scale;
    seconds_or_less = scale <= 1;
    i = end + unit;
    ++parts;
  }
  // One part in minutes or hours ("30m") is as often a size or a name: XLA writes such a time
  // with its seconds ("30m00s...").
  return parts > 1 || (parts == 1 && seconds_or_less) ? std::optional<double>(seconds)
                                                      : std::nullopt;
}

// Whether a unit (lower case) counts bytes or bits a second: "gb/s", "mib/s", "gbps" — a size's
// unit (bytes_of's) over a second.
bool is_bandwidth_unit(std::string_view unit) {
  for (const std::string_view per : {"/s", "/sec", "ps"}) {
    if (!unit.ends_with(per)) continue;
    const std::string_view size = unit.substr(0, unit.size() - per.size());
    if (!size.empty() && bytes_of("1", size)) return true;
  }
  return false;
}

// How many durations of a minute or longer a line of prose states, a number before its unit's
// word ("taking 4 hours an epoch", "2.85 days for 90 epoch", "| 23.97 mins |"): a run's or an
// epoch's time said in a sentence or a cell, where named_values takes the word after the number
// for the name of what follows. Not a time since ("3 days ago"), one left ("2 hours left") nor a
// limit ("24 hours limit on Colab").
int prose_long_durations(std::string_view line) {
  const std::string text = lower(line);
  int found = 0;
  for (const auto& [column, seconds] : durations_at(text, true)) {
    const std::string_view after = std::string_view(text).substr(column, 32);
    if (seconds >= 60 && after.find(" ago") == std::string_view::npos &&
        after.find(" left") == std::string_view::npos &&
        after.find(" remaining") == std::string_view::npos &&
        after.find(" limit") == std::string_view::npos) {
      ++found;
    }
  }
  return found;
}

}  // namespace

bool scan_unplaced(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  std::vector<std::pair<int64_t, std::string>> found;
  size_t count = 0, with_units = 0;
  // The columns of the table being read whose header names a measure, and its cell count.
  std::vector<const char*> measured;
  for (const Line& line : lines) {
    if (line.text.empty()) continue;
    // A table's bare numbers under a header that names what they measure ("| Implementation |
    // Average epoch time | Training example processed per second |" over "| NodeFlow | 33.72 |
    // 6508 |").
    if (line.text.size() <= kMaxPastedLineBytes &&
        (line.text.find('|') != std::string::npos || line.text.find('\t') != std::string::npos)) {
      if (cell_free(line.text)) {
        continue;  // a rule
      }
      const auto cells = table_cells(line.text);
      if (cells.size() == measured.size()) {
        bool placed = false;
        for (size_t k = 0; k < cells.size(); ++k) {
          const auto v = parse_number(cells[k]);
          if (measured[k] == nullptr || !v || *v <= 0) continue;
          ++count;
          placed = true;
          if (found.size() < kMaxUnplaced) found.emplace_back(line.number, measured[k]);
        }
        if (placed) continue;  // else its cells may name their own ("3 s")
      }
      // A header: no cell a bare number.
      const bool header =
          cells.size() >= 2 && std::none_of(cells.begin(), cells.end(), [](std::string_view c) {
            return c.find_first_of("0123456789") != std::string_view::npos &&
                   c.find_first_not_of("0123456789.,+-x ") == std::string_view::npos;
          });
      if (header) {
        measured.clear();
        for (const std::string_view c : cells) measured.push_back(header_measure(c));
        if (std::all_of(measured.begin(), measured.end(), [](const char* m) { return !m; })) {
          measured.clear();
        }
      } else if (cells.size() != measured.size()) {
        measured.clear();
      }
    } else if (line.text.find_first_not_of("-: \t") != std::string::npos) {
      measured.clear();
    }
    // PyTorch/XLA's metrics report: "  Accumulator: 07m50s335ms265.522us" under "Metric:
    // CompileTime", a total time of its metric.
    if (const std::string_view t = trim(line.text); t.starts_with("Accumulator: ")) {
      if (const auto d = xla_duration(trim(t.substr(13))); d && *d > 0) {
        ++count;
        ++with_units;
        if (found.size() < kMaxUnplaced) found.emplace_back(line.number, "duration");
        continue;
      }
    }
    const std::vector<NamedValue> values = named_values(line.text);
    // Durations said in prose where no value of the line has a unit of time ("taking 4 hours
    // an epoch"; not again "2h 42m", which named_values reads). Two are needed, as for bare
    // numbers under a name of time: one alone is as often the prose's ("it got slow after 3
    // days", "loading the data takes 3 hours").
    if (std::none_of(values.begin(), values.end(), [](const NamedValue& v) {
          return minutes_or_longer(v.unit) || (!v.unit.empty() && duration_scale(v.unit));
        })) {
      for (int k = prose_long_durations(line.text); k > 0; --k) {
        ++count;
        if (found.size() < kMaxUnplaced) found.emplace_back(line.number, "duration");
      }
    }
    for (const NamedValue& v : values) {
      if (v.value <= 0) continue;
      if (v.name.empty() && (v.unit.empty() || v.unit == "%")) continue;
      const bool named_time = v.name.find("time") != std::string::npos ||
                              v.name.find("latency") != std::string::npos ||
                              v.name.find("duration") != std::string::npos ||
                              v.name.find("elapsed") != std::string::npos;
      // A GPU's memory in percent ("GPU 0 memory is 100% full") is no utilisation.
      const bool named_utilisation =
          v.name.find("util") != std::string::npos || v.name.find("usage") != std::string::npos;
      const bool utilisation = v.unit == "%" && v.name.find("mem") == std::string::npos &&
                               (named_utilisation || v.name.find("gpu") != std::string::npos ||
                                v.name.find("cpu") != std::string::npos);
      const bool rate = meaning_of(v).quantity == Quantity::kRate;
      // Stated: a duration's or rate's unit, a percentage named a utilisation or usage ("the
      // other GPUs have 10%" may be their memory).
      // A duration in minutes or hours ("ran in 2h 42m", "train_time=75min") is a whole run's
      // or an epoch's: measured, though no rule here weighs it. Not "m", "M" or "d" alone: as
      // often a size ("128M", "1.2M images") or a name ("2.5d-4mp").
      const bool long_duration = v.unit.size() > 1 ? minutes_or_longer(v.unit) : v.unit == "h";
      // Bytes or bits a second ("62.15 GB/s", "600Mb/s", "20Gbps"): a read's, a link's or an
      // exchange's bandwidth.
      const bool bandwidth = is_bandwidth_unit(v.unit);
      const bool with_unit = (!v.unit.empty() && seconds_of(v)) || long_duration || rate ||
                             bandwidth || (utilisation && named_utilisation);
      const bool measure = with_unit || utilisation ||
                           (v.unit.empty() && named_time && v.value != std::floor(v.value));
      if (!measure) continue;
      ++count;
      with_units += with_unit;
      const char* kind = rate          ? "rate"
                         : bandwidth   ? "bandwidth"
                         : utilisation ? "utilisation"
                                       : "duration";
      if (found.size() < kMaxUnplaced) found.emplace_back(line.number, kind);
    }
  }
  // One measurement is enough where its unit says what it is ("500 images per minute",
  // "timing_s/adv: 10751.9"): the paste is read, and the answer says what would decide. A lone
  // bare number under a name of time ("duration: 12.5") may be a count: two are needed.
  if (count < 2 && with_units == 0) return false;
  const int file = files.of(TelemetryKind::kTrainLog);
  for (auto& [number, text] : found)
    out.unplaced.emplace_back(Origin{file, number}, std::move(text));
  return true;
}

}  // namespace stoker::telemetry
