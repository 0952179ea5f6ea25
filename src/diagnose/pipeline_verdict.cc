#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "diagnose/fixes.h"
#include "stoker/diagnose.h"

namespace stoker {

Diagnosis diagnose_pipeline(const PipelineWindow& w, const PipelineThresholds& t) {
  Diagnosis d;
  PipelineNumbers& n =
      d.numbers.pipeline.emplace(PipelineNumbers{.seconds = w.seconds,
                                                 .images_per_second = w.images_per_second(),
                                                 .wait_fraction = w.wait_fraction,
                                                 .busy_fraction = w.busy_fraction,
                                                 .read_fraction = w.read_fraction,
                                                 .cpu_utilisation = w.cpu_utilisation,
                                                 .threads = w.threads,
                                                 .cpus = w.cpus});
  const auto pct = [](double x) { return 100.0 * x; };
  if (w.seconds < t.min_seconds || w.images == 0) {
    d.verdict = Verdict::kUnknown;
    d.summary = fmt::format("too little to judge: {} images in {:.2f} s (need {:.1f} s)", w.images,
                            w.seconds, t.min_seconds);
    return d;
  }
  d.evidence.push_back(
      fmt::format("delivered {:.0f} images/s over {:.1f} s", w.images_per_second(), w.seconds));
  d.evidence.push_back(
      fmt::format("consumer waited {:.0f} % of the time for a batch", pct(w.wait_fraction)));
  d.evidence.push_back(fmt::format(
      "{} worker threads busy {:.0f} %; process CPU {:.0f} % of {} "
      "cores; reading {:.0f} % of the workers' time",
      w.threads, pct(w.busy_fraction), pct(w.cpu_utilisation), w.cpus, pct(w.read_fraction)));
  if (w.wait_fraction < t.wait.healthy_below) {
    d.verdict = Verdict::kHealthy;
    d.summary = fmt::format(
        "the consumer waited only {:.0f} % of the time: the training step, not the input "
        "pipeline, sets the pace ({:.0f} images/s)",
        pct(w.wait_fraction), w.images_per_second());
    return d;
  }
  // The consumer waits: find out what holds the workers back. The step's own pace is what the
  // consumer took between batches; with almost no step (a benchmark) it is not measurable.
  if (w.wait_fraction < 0.95) {
    n.step_images_per_second = w.images_per_second() / (1.0 - w.wait_fraction);
  }
  if (w.read_fraction >= t.read_dominates) {
    d.verdict = Verdict::kIoBound;
    d.summary = fmt::format(
        "input-bound {}on reads: the consumer waited {:.0f} % of the time and the workers spent "
        "{:.0f} % of their time reading (process CPU {:.0f} %)",
        mildly(w.wait_fraction, t.wait), pct(w.wait_fraction), pct(w.read_fraction),
        pct(w.cpu_utilisation));
    d.fixes = fixes::io_bound();
    return d;
  }
  if (w.busy_fraction >= t.busy_saturated) {
    d.verdict = Verdict::kInputBoundCpu;
    d.summary = fmt::format(
        "input-bound {}on CPU: the consumer waited {:.0f} % of the time while the {} worker "
        "threads were {:.0f} % busy; the pipeline gives {:.0f} images/s",
        mildly(w.wait_fraction, t.wait), pct(w.wait_fraction), w.threads, pct(w.busy_fraction),
        w.images_per_second());
    if (n.step_images_per_second) {
      d.summary += fmt::format(", the training step could take {:.0f}", *n.step_images_per_second);
    }
    d.fixes = fixes::input_bound_cpu();
    return d;
  }
  d.verdict = Verdict::kUnknown;
  d.summary = fmt::format(
      "the consumer waited {:.0f} % of the time although the workers were only {:.0f} % busy: "
      "too few batches in flight, or the process is starved by something outside the loader",
      pct(w.wait_fraction), pct(w.busy_fraction));
  d.fixes = {fixes::unmeasured("raise prefetch (batches in flight) and check other CPU users (top)",
                               "idle workers while the consumer waits", "")};
  return d;
}

}  // namespace stoker
