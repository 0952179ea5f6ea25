// Pasted text read by vocabulary (stoker/telemetry.h, read_pasted): training-loop step lines,
// throughput lines, job summaries and monitoring panels, found by the names of their numbers
// (telemetry_vocab.h), and the runs a paste holds (a 1-GPU and an 8-GPU log under their own
// headings).
#include <algorithm>

#include "diagnose/telemetry_parse.h"
#include "diagnose/telemetry_vocab.h"

namespace stoker::telemetry {
namespace {

struct LineReading {
  std::optional<double> step, data, step_avg, data_avg;
  int step_priority = -1;
  bool step_without_data = false;
  bool meaningful = false;  // anything the doctor reads
};

bool named(const std::vector<NamedValue>& values, std::string_view name) {
  return std::any_of(values.begin(), values.end(),
                     [&](const NamedValue& v) { return v.name == name; });
}

// The step and data wait of one line. ESPnet prints the data wait as iter_time beside the
// step's train_time (YOLOX's iter_time is the step): the names next to it decide.
LineReading read_step(const std::vector<NamedValue>& values) {
  LineReading r;
  const bool espnet = named(values, "train_time") && named(values, "iter_time");
  for (const NamedValue& v : values) {
    Meaning m = meaning_of(v);
    if (espnet && v.name == "iter_time") m.quantity = Quantity::kDataWait;
    const auto seconds = seconds_of(v);
    if (!seconds) continue;
    const auto avg_seconds = [&]() -> std::optional<double> {
      if (!v.average) return std::nullopt;
      NamedValue a = v;
      a.value = *v.average;
      return seconds_of(a);
    };
    if (m.quantity == Quantity::kDataWait && !r.data) {
      r.data = seconds;
      r.data_avg = avg_seconds();
    } else if ((m.quantity == Quantity::kStep || m.quantity == Quantity::kStepWithoutData) &&
               m.priority > r.step_priority) {
      r.step = seconds;
      r.step_avg = avg_seconds();
      r.step_priority = m.priority;
      r.step_without_data = m.quantity == Quantity::kStepWithoutData;
    }
  }
  return r;
}

bool mentions(std::string_view text, std::string_view word) {
  return lower(text).find(word) != std::string::npos;
}

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

RunInfo new_run(const std::string& source, int64_t line) {
  RunInfo r;
  r.source = source;
  r.line = line;
  return r;
}

}  // namespace

bool scan_named_values(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  const bool summary = is_job_summary(lines);
  bool found = false;
  int steps_file = -1, rates_file = -1, util_file = -1;
  // Runs: the first starts with the text; a heading stating another GPU count starts the next
  // once the current one has samples.
  int run = -1;
  bool run_has_samples = false;
  const auto current_run = [&](const Line& at) {
    if (run < 0) {
      out.runs.push_back(new_run(files.name(), at.number));
      run = static_cast<int>(out.runs.size()) - 1;
    }
    return run;
  };
  const auto heading = [&](const Line& line, std::optional<int> gpus, std::optional<int> nodes) {
    if (!gpus && !nodes) return;
    const int r = current_run(line);
    RunInfo& info = out.runs[static_cast<size_t>(r)];
    const bool other = (gpus && info.gpus && *gpus != *info.gpus) ||
                       (nodes && info.nodes && *nodes != *info.nodes);
    if (run_has_samples && (other || (!info.gpus && gpus))) {
      out.runs.push_back(new_run(files.name(), line.number));
      run = static_cast<int>(out.runs.size()) - 1;
      run_has_samples = false;
    }
    RunInfo& now = out.runs[static_cast<size_t>(run)];
    if (gpus && !now.gpus) now.gpus = gpus;
    if (nodes && !now.nodes) now.nodes = nodes;
  };
  int64_t order = 0;
  std::string previous_text;  // a panel's name line ("GPU Utilization"), before its value line
  std::optional<int> panel_gpu;
  for (const Line& line : lines) {
    if (line.text.size() > kMaxPastedLineBytes) continue;
    std::vector<NamedValue> values = named_values(line.text);
    if (mentions(line.text, "synthetic")) {
      out.runs[static_cast<size_t>(current_run(line))].synthetic = true;
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
    if (previous_text.size() > 40) previous_text.clear();

    const LineReading step = read_step(values);
    std::optional<int> nodes;
    const std::optional<int> gpus = gpu_count_of(line.text, &nodes);
    bool meaningful = false;
    // Step lines.
    if (step.step && *step.step > 0) {
      double step_s = *step.step;
      std::optional<double> step_avg = step.step_avg;
      if (step.data && step.step_without_data) {
        step_s += *step.data;
        if (step_avg && step.data_avg) *step_avg += *step.data_avg;
      }
      // A "Data" value above the step is not seconds of waiting (a rate, a count): the line
      // times the step only.
      const bool data_ok = step.data && *step.data <= step_s * 1.001 + 1e-9;
      if (step.data && !data_ok && steps_file < 0) {
        out.notes.push_back(TelemetryNote{
            {files.of(TelemetryKind::kTrainLog), line.number},
            "a data value larger than the step time was not read as seconds of waiting for "
            "data (a rate or a count in that column?)"});
      }
      if (steps_file < 0) steps_file = files.of(TelemetryKind::kTrainLog);
      heading(line, gpus, nodes);
      StepSample s;
      s.origin = {steps_file, line.number};
      s.time = static_cast<double>(order++);
      s.step_seconds = step_s;
      s.data_seconds = data_ok ? *step.data : 0.0;
      s.has_data = data_ok;
      s.run = current_run(line);
      out.steps.push_back(s);
      if (data_ok && step_avg && step.data_avg && *step.data_avg <= *step_avg * 1.001 + 1e-9 &&
          *step_avg > 0) {
        StepSample a = s;
        a.step_seconds = *step_avg;
        a.data_seconds = *step.data_avg;
        a.average = true;
        out.steps.push_back(a);
      }
      meaningful = true;
    }
    // Rates and utilisation.
    for (const NamedValue& v : values) {
      const Meaning m = meaning_of(v);
      if (m.quantity == Quantity::kRate && !(step.step && m.rate_unit == "iterations")) {
        if (rates_file < 0) rates_file = files.of(TelemetryKind::kThroughput);
        heading(line, gpus, nodes);
        ThroughputSample r;
        r.origin = {rates_file, line.number};
        r.per_second = v.value;
        r.unit = m.rate_unit;
        r.per_gpu = m.per_gpu;
        r.total = m.total;
        if (m.total) r.gpus = gpus;
        r.run = current_run(line);
        out.rates.push_back(std::move(r));
        meaningful = true;
      } else if (m.quantity == Quantity::kGpuUtilisation && v.value >= 0 && v.value <= 100) {
        if (util_file < 0) {
          util_file = files.of(summary ? TelemetryKind::kJobSummary : TelemetryKind::kGpuPanel);
          out.files[static_cast<size_t>(util_file)].run_means = summary;
        }
        GpuSample g;
        g.origin = {util_file, line.number};
        g.gpu = panel_gpu.value_or(0);
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
    if (meaningful) {
      run_has_samples = true;
      found = true;
    } else {
      heading(line, gpus, nodes);
    }
  }
  // A run of a summary states its GPUs as "GPUs: 8"; runs without samples are dropped only
  // when they were never referenced (the vector keeps indexes stable).
  return found;
}

}  // namespace stoker::telemetry
