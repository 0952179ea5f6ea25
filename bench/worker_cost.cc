// What the CPU workers spend per image for each GPU setup, measured on any machine (no GPU):
// the CPU half of each path runs as it does under the GpuLoader, and the batches are dropped.
//
//   worker_cost --data DIR [--threads 2] [--batch 64] [--size 224] [--images 2000] [--json F]
//
// Setups: `cpu path` (Loader: decode + augment), `GPU augment` (AugmentMode::kDeferred: region
// + DCT-scaled decode, staged), `GPU decode` (kDeferred + stage_encoded_jpegs: the workers only
// read, check and stage JPEG bytes; docs/gpu.md). Reports worker CPU ms per image by stage and
// the process CPU per image, so the GPU decode's CPU-time target (<= 40 % of the CPU path's)
// can be predicted before a GPU run measures it (docs/perf.md, "GPU decode").

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "stoker/dataset.h"
#include "stoker/loader.h"

namespace stoker {
namespace {

struct Options {
  std::string data;
  int threads = 2, batch = 64, size = 224;
  int64_t images = 2000;
  std::string json;
};

nlohmann::json run_setup(const std::shared_ptr<Dataset>& data, const Options& o,
                         const std::string& name, AugmentMode augment, bool encoded) {
  LoaderConfig c;
  c.batch_size = o.batch;
  c.threads = o.threads;
  c.rank = 0;
  c.world_size = 1;
  c.transform.size = o.size;
  c.augment = augment;
  c.stage_encoded_jpegs = encoded;
  if (encoded) c.transform.decode.dct_scaling = false;  // as the GpuLoader sets it
  Loader loader(data, c);
  int64_t delivered = 0;
  int64_t encoded_slots = 0, slots = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t epoch = 0; delivered < o.images; ++epoch) {
    loader.set_epoch(epoch);
    while (auto b = loader.next()) {
      for (const auto& s : b->staged) encoded_slots += s.encoded_bytes > 0 ? 1 : 0;
      slots += b->batch_size;
      delivered += b->batch_size;
      if (delivered >= o.images) break;
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const LoaderStats s = loader.stats();
  const double n = static_cast<double>(std::max<int64_t>(1, s.images));
  const auto ms = [&](double seconds) { return 1e3 * seconds / n; };
  const double worker = s.cpu.read + s.cpu.decode + s.cpu.augment + s.cpu.collate;
  nlohmann::json r = {
      {"setup", name},
      {"images", s.images},
      {"threads", o.threads},
      {"images_per_second", s.images / wall},
      {"worker_ms_per_image", ms(worker)},
      {"read_ms", ms(s.cpu.read)},
      {"decode_ms", ms(s.cpu.decode)},
      {"augment_ms", ms(s.cpu.augment)},
      {"process_cpu_ms_per_image", ms(s.process_cpu_seconds)},
      {"encoded_fraction", static_cast<double>(encoded_slots) / std::max<int64_t>(1, slots)}};
  fmt::print("{:<12} {:>9.0f} {:>10.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>10.3f} {:>8.0f} %\n", name,
             r["images_per_second"].get<double>(), r["worker_ms_per_image"].get<double>(),
             r["read_ms"].get<double>(), r["decode_ms"].get<double>(),
             r["augment_ms"].get<double>(), r["process_cpu_ms_per_image"].get<double>(),
             100 * r["encoded_fraction"].get<double>());
  return r;
}

int run(const Options& o) {
  auto data = open_dataset(o.data);
  fmt::print("worker cost on {} ({} threads, batch {}, size {}, {} images per setup)\n",
             data->describe(), o.threads, o.batch, o.size, o.images);
  fmt::print("{:<12} {:>9} {:>10} {:>8} {:>8} {:>8} {:>10} {:>10}\n", "setup", "images/s",
             "worker ms", "read", "decode", "augment", "process ms", "encoded");
  nlohmann::json out = nlohmann::json::array();
  out.push_back(run_setup(data, o, "cpu path", AugmentMode::kCpu, false));
  out.push_back(run_setup(data, o, "GPU augment", AugmentMode::kDeferred, false));
  out.push_back(run_setup(data, o, "GPU decode", AugmentMode::kDeferred, true));
  const double base = out[0]["process_cpu_ms_per_image"];
  for (size_t i = 1; i < out.size(); ++i) {
    fmt::print("{}: {:.0f} % of the CPU path's process CPU per image\n",
               out[i]["setup"].get<std::string>(),
               100 * out[i]["process_cpu_ms_per_image"].get<double>() / base);
  }
  if (!o.json.empty()) std::ofstream(o.json) << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) {
  stoker::Options o;
  CLI::App app("CPU worker cost of the CPU path, GPU augment and GPU decode (no GPU needed)");
  app.add_option("--data", o.data, "a dataset stoker opens")->required();
  app.add_option("--threads", o.threads, "worker threads")->check(CLI::PositiveNumber);
  app.add_option("--batch", o.batch, "batch size")->check(CLI::PositiveNumber);
  app.add_option("--size", o.size, "output side")->check(CLI::PositiveNumber);
  app.add_option("--images", o.images, "images per setup")->check(CLI::PositiveNumber);
  app.add_option("--json", o.json, "write the results here");
  CLI11_PARSE(app, argc, argv);
  try {
    return stoker::run(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker_cost: error: {}\n", e.what());
    return 1;
  }
}
