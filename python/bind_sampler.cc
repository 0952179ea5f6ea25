// Sampler-level types: ResumeState (as JSON), modes, and rank discovery.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bind.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/sampler.h"
#include "util/check.h"

namespace py = pybind11;

namespace stoker::python {

void register_sampler(py::module_& m) {
  py::enum_<SamplerMode>(m, "SamplerMode")
      .value("exact", SamplerMode::kExact)
      .value("short", SamplerMode::kShort)
      .value("pad", SamplerMode::kPad)
      .value("even", SamplerMode::kEven)
      .value("drop", SamplerMode::kDrop);
  m.def("parse_sampler_mode", &parse_sampler_mode, py::arg("name"));

  py::class_<ResumeState>(m, "ResumeState")
      .def(py::init<>())
      .def_readwrite("fingerprint", &ResumeState::fingerprint)
      .def_readwrite("dataset_size", &ResumeState::dataset_size)
      .def_readwrite("mode", &ResumeState::mode)
      .def_readwrite("shuffle", &ResumeState::shuffle)
      .def_readwrite("seed", &ResumeState::seed)
      .def_readwrite("epoch", &ResumeState::epoch)
      .def_readwrite("consumed", &ResumeState::consumed)
      .def("to_json", &ResumeState::to_json)
      .def_static("from_json", &ResumeState::from_json, py::arg("json"));

  py::class_<RankInfo>(m, "RankInfo")
      .def_readonly("rank", &RankInfo::rank)
      .def_readonly("world_size", &RankInfo::world_size)
      .def_readonly("local_rank", &RankInfo::local_rank)
      .def_readonly("local_world_size", &RankInfo::local_world_size)
      .def_readonly("source", &RankInfo::source);
  m.def("discover_rank", &discover_rank, py::arg("rank") = std::nullopt,
        py::arg("world_size") = std::nullopt);
  m.def("available_cpus", &available_cpus);
  m.def(
      "group_digest",
      [](int64_t dataset_size, int batch_size, int world_size, const std::string& mode,
         bool shuffle, uint64_t seed, int64_t epoch, int64_t consumed, int64_t batches) {
        const SamplerConfig config{.dataset_size = dataset_size,
                                   .batch_size = batch_size,
                                   .rank = 0,
                                   .world_size = world_size,
                                   .mode = parse_sampler_mode(mode),
                                   .shuffle = shuffle,
                                   .seed = seed};
        const SampleDigest d = EpochPlan(config, epoch, consumed).group_digest(batches);
        return py::make_tuple(d.count, d.sum);
      },
      py::arg("dataset_size"), py::arg("batch_size"), py::arg("world_size"), py::arg("mode"),
      py::arg("shuffle"), py::arg("seed"), py::arg("epoch"), py::arg("consumed"),
      py::arg("batches"),
      "(count, sum) of the valid samples of batches [0, batches) of every rank (sampler.h).");
  m.def(
      "index_digest",
      [](const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& indices) {
        SampleDigest d;
        const auto view = indices.unchecked<1>();
        for (py::ssize_t i = 0; i < view.shape(0); ++i) d.add(view(i));
        return py::make_tuple(d.count, d.sum);
      },
      py::arg("indices"),
      "(count, sum) of the sample digest over these dataset indices: what a stoker loader "
      "records for the samples it delivered, for auditing any loader's shards.");
  m.def("default_threads", &default_threads, py::arg("rank_info"));

  py::class_<EpochPlan>(m, "EpochPlan")
      .def(py::init([](int64_t dataset_size, int batch_size, int rank, int world_size,
                       const std::string& mode, bool shuffle, uint64_t seed, int64_t epoch,
                       int64_t consumed) {
             const SamplerConfig config{.dataset_size = dataset_size,
                                        .batch_size = batch_size,
                                        .rank = rank,
                                        .world_size = world_size,
                                        .mode = parse_sampler_mode(mode),
                                        .shuffle = shuffle,
                                        .seed = seed};
             return EpochPlan(config, epoch, consumed);
           }),
           py::arg("dataset_size"), py::arg("batch_size"), py::arg("rank"), py::arg("world_size"),
           py::arg("mode"), py::arg("shuffle"), py::arg("seed"), py::arg("epoch"),
           py::arg("consumed") = 0, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("num_batches", &EpochPlan::num_batches)
      .def("consumed_after", &EpochPlan::consumed_after, py::arg("batches"))
      .def(
          "batch",
          [](const EpochPlan& plan, int64_t j) {
            STOKER_CHECK_ARG(j >= 0 && j < plan.num_batches(), "batch {} not in [0, {})", j,
                             plan.num_batches());
            const auto b = static_cast<size_t>(plan.config().batch_size);
            std::vector<int64_t> indices(b);
            std::vector<uint8_t> valid(b);
            const int64_t global_valid = plan.batch(j, indices, valid);
            // Explicit strides: array_t(count) gets stride 0 from pybind11 3.1 under numpy 2.4
            // here (every element read as the first), as bind.h's arrays avoid too.
            const auto n = static_cast<py::ssize_t>(b);
            py::array out_indices(py::dtype::of<int64_t>(), std::vector<py::ssize_t>{n},
                                  std::vector<py::ssize_t>{sizeof(int64_t)}, indices.data());
            py::array out_valid(py::dtype::of<uint8_t>(), std::vector<py::ssize_t>{n},
                                std::vector<py::ssize_t>{1}, valid.data());
            return py::make_tuple(out_indices, out_valid, global_valid);
          },
          py::arg("j"), "(indices, valid, global_valid) of this rank's batch j (sampler.h).");
}

}  // namespace stoker::python
