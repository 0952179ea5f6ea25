// The doctor's capacity test: measures this machine's input pipeline on a sample of the user's
// own data, as it is and with each fix (packed jpeg at max side 256, packed raw at max side
// 256), and plans 1..G GPUs against it.
//
//   CapacityConfig options{.gpus = 8, .demand_per_gpu = 2500};
//   CapacityReport report = run_capacity(*open_dataset("/data/train"), options);
//   std::cout << format_capacity(report);
//
// Everything runs in this process (how: docs/doctor.md, "Capacity planning"): the sample is
// packed into `work_dir`, or into a temporary folder that is removed afterwards when it is
// empty; it measures CPU cost, not the storage.
// Throws stoker::Error for bad options or when the sample cannot be read or decoded.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stoker/dataset.h"
#include "stoker/diagnose.h"
#include "stoker/loader.h"

namespace stoker {

// A loader the capacity test drives through epochs; the stats of host() measure the setup.
class MeasuredLoader {
 public:
  virtual ~MeasuredLoader() = default;
  virtual void set_epoch(int64_t epoch) = 0;
  virtual bool next() = 0;  // false after the epoch's last batch
  virtual const Loader& host() const = 0;
};

// Makes the loader of a setup measured with GPU augmentation on CUDA device `gpu`. The diagnose
// layer does not link the CUDA layer: a caller that links it passes this (the stoker command
// does).
using GpuLoaderFactory = std::function<std::unique_ptr<MeasuredLoader>(
    std::shared_ptr<const Dataset> data, const LoaderConfig& config, int gpu)>;

struct CapacityConfig {
  int gpus = 1;                 // plan 1..gpus GPUs
  double demand_per_gpu = 0;    // images/s one GPU consumes (--gpu-rate, or batch / step time)
  int sample = 200;             // images of the data set to measure on
  double seconds = 2.0;         // measuring time per setup
  int threads = 0;              // 0: the cores this process may use
  int batch = 64;               // loader batch size while measuring
  TransformConfig transform;    // the job's transform (RandomResizedCrop 224 by default)
  bool measure_fixes = true;    // also measure the packed setups
  std::string device = "cpu";   // "cuda": every setup with GPU augmentation (gpu_loader)
  int gpu = 0;                  // CUDA device index
  GpuLoaderFactory gpu_loader;  // required for device "cuda"
  // device "cuda" in a build with nvJPEG: the JPEG setups are measured with the GPU decode too
  // (a GpuLoader with decode='gpu'), and recommended where they beat the others.
  GpuLoaderFactory gpu_decode_loader;
  std::filesystem::path work_dir;  // where the sample is packed; empty: a temporary folder
  // > 0: when this machine cannot feed the GPUs, also how many CPU-only nodes of this many
  // cores (stoker.ray producers, docs/ray.md) would make up the difference.
  int cpu_node_cores = 0;
};

// One way of feeding the job, measured.
struct SetupMeasurement {
  std::string name;    // "as is", "packed jpeg 256", "packed raw 256"
  std::string action;  // the command that gives this setup ("" for as is)
  double images_per_second = 0;
  double cpu_ms_per_image = 0;  // worker CPU per image
  double wait_fraction = 0;     // of the measuring consumer (no training step: ~1 = CPU-bound)
  int64_t bytes_per_image = 0;  // stored bytes per image of the sample
};

struct CapacityRow {
  int gpus = 0;
  double demand = 0;              // images/s the GPUs consume
  std::vector<double> delivered;  // per setup: min(demand, setup rate)
  std::vector<double> gpu_idle;   // per setup: 1 - delivered / demand
};

struct CapacityReport {
  std::string data;  // the data set's description
  int threads = 0;
  int cpus = 0;
  int sample = 0;  // images actually measured
  double demand_per_gpu = 0;
  std::vector<SetupMeasurement> setups;  // [0] = as is
  std::vector<CapacityRow> rows;         // gpus = 1..G
  Diagnosis diagnosis;
};

CapacityReport run_capacity(const Dataset& data, const CapacityConfig& options);

// CPU-only nodes of `cores_per_node` cores that make up `demand` images/s beyond the
// `delivered_here` this machine delivers, at `per_core` images/s per core (the rate measured
// here; the same recipe on the same kind of cores). 0 when this machine suffices.
int cpu_nodes_needed(double demand, double delivered_here, double per_core, int cores_per_node);

// Measured fixes for a live diagnosis: runs the capacity test's setups on a sample of `data`
// with `config`'s transform and threads, and replaces the estimated pack fixes of `diagnosis`
// by measured ones (speed-up against the sample as is), best first.
void measure_fixes(Diagnosis& diagnosis, const Dataset& data, const LoaderConfig& config,
                   int sample = 200);

std::string format_capacity(const CapacityReport& report);

}  // namespace stoker
