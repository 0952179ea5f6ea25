// The doctor's HTML report: one self-contained page (no network, no external files) with the
// verdict, evidence, fixes and charts drawn as SVG by an inline script from embedded JSON.
//
// A chart is JSON, one of:
//   {"kind": "lines", "title": ..., "x_label": ..., "y_label": ..., "y_max": 100 (optional),
//    "x_integer": true (optional: ticks at whole numbers, e.g. GPU counts),
//    "series": [{"name": ..., "x": [...], "y": [...]}, ...]}
//   {"kind": "bars", "title": ..., "x_label": ..., "y_label": ..., "categories": [...],
//    "series": [{"name": ..., "values": [...]}, ...]}     // one group of bars per category
// A series may carry "colour": k (an index into the page's palette), so that one thing (a
// setup) has one colour across charts; without it, series k gets colour k.
// Once drawn, each chart is an <svg class="chart" data-kind=... data-series=N> with one
// <polyline class="series"> (lines) or <rect class="bar"> group per series, and the body gets
// data-rendered="N" (the number of charts drawn).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/json.h"
#include "stoker/diagnose.h"

namespace stoker {

struct Report {
  std::string title;
  Diagnosis diagnosis;
  std::vector<nlohmann::json> charts;
  // The numbers as a table (<table id="numbers">): the first row is the header.
  std::vector<std::vector<std::string>> table;
  // Run metadata (<dl id="metadata">): date, host, CPU model, cores, stoker version, command.
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<std::string> notes;  // lines shown under the charts (data, logs)
};

// The metadata of this run: date (UTC), host, CPU model, cores this process may use, stoker
// version, and `command_line`.
std::vector<std::pair<std::string, std::string>> run_metadata(const std::string& command_line);

std::string render_html(const Report& report);
// Writes render_html to `path` (temp file + rename). A symbolic link is followed (its target
// is replaced, the link stays); a path naming anything but a regular file (a folder, device,
// FIFO) is refused. Throws stoker::Error naming the path.
void write_html(const Report& report, const std::filesystem::path& path);

// The chart of the capacity test (stoker/capacity.h): demand against delivered per GPU count.
struct CapacityReport;
nlohmann::json capacity_chart(const CapacityReport& report);

}  // namespace stoker
