// The doctor's vocabulary: one verdict set for everything stoker says about a job, live (from
// LoaderStats), from a capacity test, from a cross-rank audit, or from monitoring logs.
//
//   input-bound-cpu      the consumer (GPU) waits for batches while the CPUs are saturated
//   io-bound             reading dominates: workers wait on storage; CPUs and GPUs both low
//   rank-imbalance       one rank/GPU does the work while the others idle or repeat it
//                        (unsharded data, a single-GPU funnel, a straggler)
//   communication-bound  GPUs stall together while interconnect traffic is high, CPUs not
//                        pinned
//   healthy              the consumer rarely waits: the GPU is the limit
//   unknown              the evidence is too thin to say
//
// A Diagnosis carries the verdict, a one-line summary with numbers, the evidence (each a
// human-readable line, citing FILE:LINE for logs) and ranked fixes. Its JSON form is the
// contract of `stoker doctor --json` and Python's `diagnose()` (docs/doctor.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace stoker {

enum class Verdict {
  kInputBoundCpu,
  kIoBound,
  kRankImbalance,
  kCommunicationBound,
  kHealthy,
  kUnknown
};
const char* to_string(Verdict verdict);  // "input-bound-cpu", ...
Verdict parse_verdict(const std::string& name);

// A change the user can make, with its effect when it was measured.
struct Fix {
  std::string action;                       // "stoker pack DATA OUT --mode jpeg --max-side 256"
  std::string reason;                       // why it helps this job
  std::optional<double> speedup;            // measured images/s ratio against the current setup
  std::optional<double> images_per_second;  // measured rate with the fix
  std::string measured_on;                  // "200 of your images, 2 threads"; empty: estimate
};

struct Diagnosis {
  Verdict verdict = Verdict::kUnknown;
  std::string summary;                                // one line with the numbers that decided
  std::vector<std::string> evidence;                  // supporting lines
  std::vector<Fix> fixes;                             // best first
  nlohmann::json numbers = nlohmann::json::object();  // the measured values behind the verdict
};

nlohmann::json to_json(const Fix& fix);
nlohmann::json to_json(const Diagnosis& diagnosis);
// Plain-text rendering for the terminal: verdict, summary, evidence, fixes.
std::string format_diagnosis(const Diagnosis& diagnosis);

}  // namespace stoker
