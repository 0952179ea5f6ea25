#include "diagnose/report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <fstream>

#include "diagnose/json.h"
#include "stoker/capacity.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/version.h"
#include "util/check.h"

namespace stoker {
namespace {

std::string escape_html(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON inside <script>: "</script>", "<!--" and the like must not reach the HTML parser, so
// every <, > and & (found only inside JSON strings) becomes a \u escape.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

constexpr const char* kStyle = R"(
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
.verdict { display: inline-block; padding: .25em .7em; border-radius: .4em; color: #fff;
           font-weight: 600; letter-spacing: .02em; }
.v-healthy { background: #2e7d32; } .v-input-bound-cpu, .v-io-bound { background: #c62828; }
.v-rank-imbalance, .v-communication-bound { background: #ef6c00; } .v-unknown { background: #616161; }
.summary { font-size: 1.1em; margin: .6em 0 1em; }
figure { margin: 1.5em 0; } figcaption { font-weight: 600; margin-bottom: .3em; }
svg.chart { width: 100%; height: auto; background: #fafafa; border: 1px solid #ddd; }
svg .axis { stroke: #888; } svg text { font-size: 12px; fill: #444; }
svg .grid { stroke: #e4e4e4; }
ol li { margin-bottom: .4em; } .measured { color: #2e7d32; } .note { color: #666; font-size: .9em; }
.legend span { display: inline-block; margin-right: 1.2em; }
table { border-collapse: collapse; margin: .5em 0 1em; } td, th { padding: .25em .8em;
        border-bottom: 1px solid #ddd; text-align: right; } td:first-child, th:first-child {
        text-align: left; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; color: #444; }
dt { font-weight: 600; } dd { margin: 0; font-family: monospace; }
.v-input-bound { background: #c62828; }
.legend i { display: inline-block; width: .9em; height: .9em; margin-right: .3em; vertical-align: -1px; }
)";

// Draws every chart of the embedded data as SVG. Kept small and dependency-free.
constexpr const char* kScript = R"(
(function () {
  const data = JSON.parse(document.getElementById('stoker-data').textContent);
  const colours = ['#1565c0', '#c62828', '#2e7d32', '#ef6c00', '#6a1b9a', '#00838f', '#5d4037',
                   '#ad1457', '#9e9d24', '#455a64'];
  const NS = 'http://www.w3.org/2000/svg';
  const W = 900, H = 320, L = 60, R = 20, T = 15, B = 45;
  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, anchor) {
    const t = el('text', {x: x, y: y, 'text-anchor': anchor || 'middle'}, parent);
    t.textContent = s;
    return t;
  }
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }
  function axes(svg, chart, xmin, xmax, ymax) {
    for (let i = 0; i <= 4; i++) {
      const y = T + (H - T - B) * (1 - i / 4);
      el('line', {x1: L, x2: W - R, y1: y, y2: y, class: 'grid'}, svg);
      text(svg, L - 6, y + 4, +(ymax * i / 4).toPrecision(3), 'end');
    }
    el('line', {x1: L, x2: L, y1: T, y2: H - B, class: 'axis'}, svg);
    el('line', {x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis'}, svg);
    text(svg, (L + W - R) / 2, H - 8, chart.x_label || '');
    const yl = text(svg, 14, (T + H - B) / 2, chart.y_label || '');
    yl.setAttribute('transform', 'rotate(-90 14 ' + (T + H - B) / 2 + ')');
  }
  function colour(s, k) { return colours[(s.colour !== undefined ? s.colour : k) % colours.length]; }
  function lines(svg, chart) {
    let xmin = Infinity, xmax = -Infinity, ymax = 0;
    for (const s of chart.series) {
      for (const x of s.x) { xmin = Math.min(xmin, x); xmax = Math.max(xmax, x); }
      for (const y of s.y) ymax = Math.max(ymax, y);
    }
    if (!isFinite(xmin)) { xmin = 0; xmax = 1; }
    if (xmax === xmin) xmax = xmin + 1;
    ymax = chart.y_max || niceMax(ymax);
    axes(svg, chart, xmin, xmax, ymax);
    if (chart.x_integer) {  // whole-number ticks (GPU counts), at most ~12 of them
      const step = Math.max(1, Math.ceil((xmax - xmin) / 12));
      for (let xv = Math.ceil(xmin); xv <= xmax; xv += step) {
        text(svg, L + (W - L - R) * (xv - xmin) / (xmax - xmin), H - B + 16, String(xv));
      }
    } else {
      for (let i = 0; i <= 4; i++) {
        const xv = xmin + (xmax - xmin) * i / 4;
        text(svg, L + (W - L - R) * i / 4, H - B + 16, +xv.toPrecision(3));
      }
    }
    chart.series.forEach((s, k) => {
      const pts = s.x.map((x, i) => {
        const px = L + (W - L - R) * (x - xmin) / (xmax - xmin);
        const py = T + (H - T - B) * (1 - Math.min(s.y[i], ymax) / ymax);
        return px.toFixed(1) + ',' + py.toFixed(1);
      });
      el('polyline', {points: pts.join(' '), fill: 'none', stroke: colour(s, k),
                      'stroke-width': 2, class: 'series', 'data-name': s.name}, svg);
    });
  }
  function bars(svg, chart) {
    let ymax = 0;
    for (const s of chart.series) for (const v of s.values) ymax = Math.max(ymax, v);
    ymax = niceMax(ymax);
    axes(svg, chart, 0, 1, ymax);
    const n = chart.categories.length, m = chart.series.length;
    const group = (W - L - R) / n, bw = group * 0.8 / m;
    chart.categories.forEach((c, i) => text(svg, L + group * (i + 0.5), H - B + 16, c));
    chart.series.forEach((s, k) => {
      const g = el('g', {class: 'series', 'data-name': s.name}, svg);
      s.values.forEach((v, i) => {
        const h = (H - T - B) * Math.min(v, ymax) / ymax;
        el('rect', {x: L + group * i + group * 0.1 + bw * k, y: H - B - h, width: bw - 1,
                    height: h, fill: colour(s, k), class: 'bar'}, g);
      });
    });
  }
  const root = document.getElementById('charts');
  let drawn = 0;
  for (const chart of data.charts) {
    const fig = document.createElement('figure');
    const cap = document.createElement('figcaption');
    cap.textContent = chart.title || '';
    fig.appendChild(cap);
    const svg = el('svg', {viewBox: '0 0 ' + W + ' ' + H, class: 'chart', 'data-kind': chart.kind,
                           'data-series': chart.series.length});
    if (chart.kind === 'bars') bars(svg, chart); else lines(svg, chart);
    fig.appendChild(svg);
    const legend = document.createElement('div');
    legend.className = 'legend';
    chart.series.forEach((s, k) => {
      const span = document.createElement('span');
      const sw = document.createElement('i');
      sw.style.background = colour(s, k);
      span.appendChild(sw);
      span.appendChild(document.createTextNode(s.name));
      legend.appendChild(span);
    });
    fig.appendChild(legend);
    root.appendChild(fig);
    drawn++;
  }
  document.body.setAttribute('data-rendered', String(drawn));
})();
)";

}  // namespace

std::string render_html(const Report& r) {
  const Diagnosis& d = r.diagnosis;
  const std::string verdict = to_string(d.verdict);
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{0}</title>\n<style>{1}</style></head>\n<body>\n<h1>{0}</h1>\n"
      "<div><span class=\"verdict v-{2}\" id=\"verdict\">{2}</span></div>\n"
      "<p class=\"summary\">{3}</p>\n",
      escape_html(r.title), kStyle, verdict, escape_html(d.summary));
  if (!d.evidence.empty()) {
    html += "<h2>Evidence</h2>\n<ul id=\"evidence\">\n";
    for (const auto& e : d.evidence) html += fmt::format("<li>{}</li>\n", escape_html(e));
    html += "</ul>\n";
  }
  if (!d.fixes.empty()) {
    html += "<h2>Fixes, best first</h2>\n<ol id=\"fixes\">\n";
    for (const Fix& f : d.fixes) {
      html += fmt::format("<li><code>{}</code>", escape_html(f.action));
      if (f.speedup && f.images_per_second) {
        html += fmt::format(
            " <span class=\"measured\">measured: {:.0f} images/s, {:.1f}&times; ({})</span>",
            *f.images_per_second, *f.speedup, escape_html(f.measured_on));
      } else if (!f.measured_on.empty()) {
        html += fmt::format(" <span class=\"note\">{}</span>", escape_html(f.measured_on));
      }
      if (!f.reason.empty())
        html += fmt::format("<br><span class=\"note\">{}</span>", escape_html(f.reason));
      html += "</li>\n";
    }
    html += "</ol>\n";
  }
  if (!r.table.empty()) {
    html += "<h2>Numbers</h2>\n<table id=\"numbers\">\n";
    for (size_t i = 0; i < r.table.size(); ++i) {
      html += "<tr>";
      for (const auto& cell : r.table[i]) {
        const char* tag = i == 0 ? "th" : "td";
        html += fmt::format("<{0}>{1}</{0}>", tag, escape_html(cell));
      }
      html += "</tr>\n";
    }
    html += "</table>\n";
  }
  html += "<div id=\"charts\"></div>\n";
  for (const auto& note : r.notes) {
    html += fmt::format("<p class=\"note\">{}</p>\n", escape_html(note));
  }
  if (!r.metadata.empty()) {
    html += "<h2>Run</h2>\n<dl id=\"metadata\">\n";
    for (const auto& [key, value] : r.metadata) {
      html += fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape_html(key), escape_html(value));
    }
    html += "</dl>\n";
  }
  const nlohmann::json data = {{"charts", r.charts}, {"diagnosis", to_json(d)}};
  html += fmt::format(
      "<script type=\"application/json\" id=\"stoker-data\">{}</script>\n<script>{}</script>\n"
      "</body></html>\n",
      script_safe(json_text(data)), kScript);
  return html;
}

std::vector<std::pair<std::string, std::string>> run_metadata(const std::string& command_line) {
  std::vector<std::pair<std::string, std::string>> m;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &utc);
  m.emplace_back("date", date);
  char host[256] = "?";
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  m.emplace_back("host", host);
  std::string model = "?";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  m.emplace_back("CPU", model);
  m.emplace_back("cores", std::to_string(available_cpus()));
  m.emplace_back("stoker", STOKER_VERSION_STRING);
  m.emplace_back("command", command_line);
  return m;
}

void write_html(const Report& report, const std::filesystem::path& path) {
  // A symbolic link is followed on purpose: the report replaces the file it points to, and the
  // link stays. What is there must be a regular file (or nothing): a device node, a FIFO or a
  // folder is refused, never replaced by the rename.
  std::filesystem::path target = path;
  std::error_code ec;
  for (int hops = 0; std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec));
       ++hops) {
    STOKER_CHECK_ARG(hops < 40, "{}: too many levels of symbolic links", path.string());
    const std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    STOKER_CHECK_ARG(!ec, "{}: cannot follow the symbolic link: {}", path.string(), ec.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const auto status = std::filesystem::status(target, ec);
  STOKER_CHECK_ARG(!std::filesystem::exists(status) || std::filesystem::is_regular_file(status),
                   "{}: not a regular file (a folder, device or FIFO is never replaced by a "
                   "report): give the path of a file",
                   path.string());
  const std::string html = render_html(report);
  const std::filesystem::path tmp = target.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    STOKER_CHECK_ARG(out.good(), "{}: cannot write the report", tmp.string());
    out.write(html.data(), static_cast<std::streamsize>(html.size()));
    out.close();
    STOKER_CHECK_ARG(out.good(), "{}: write failed", tmp.string());
  }
  std::filesystem::rename(tmp, target, ec);
  STOKER_CHECK_ARG(!ec, "{}: cannot rename to {}: {}", tmp.string(), target.string(), ec.message());
}

nlohmann::json capacity_chart(const CapacityReport& r) {
  nlohmann::json categories = nlohmann::json::array();
  nlohmann::json demand = nlohmann::json::array();
  for (const auto& row : r.rows) {
    categories.push_back(fmt::format("{} GPU{}", row.gpus, row.gpus == 1 ? "" : "s"));
    demand.push_back(row.demand);
  }
  // Setup i has colour i in every chart of the report; the demand is grey (the palette's last).
  nlohmann::json series =
      nlohmann::json::array({{{"name", "demand"}, {"values", demand}, {"colour", 9}}});
  for (size_t i = 0; i < r.setups.size(); ++i) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& row : r.rows) values.push_back(row.delivered[i]);
    series.push_back(
        {{"name", "delivered: " + r.setups[i].name}, {"values", values}, {"colour", i}});
  }
  return {{"kind", "bars"},           {"title", "Demand against delivered images/s per GPU count"},
          {"x_label", "GPUs"},        {"y_label", "images/s"},
          {"categories", categories}, {"series", series}};
}

}  // namespace stoker
