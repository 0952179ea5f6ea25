// The doctor's judgements that Python composes: the cross-rank audit (stoker/audit.h) and the
// thresholds it and the live verdict read. stoker.torch.analyse_audit converts its records to
// AuditRecords and the JSON report back to a dict; the rules are all in C++.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bind.h"
#include "stoker/audit.h"
#include "stoker/diagnose.h"
#include "stoker/sampler.h"

namespace py = pybind11;

namespace stoker::python {

void register_diagnose(py::module_& m) {
  py::class_<WaitThresholds>(m, "WaitThresholds")
      .def(py::init<>())
      .def_readwrite("healthy_below", &WaitThresholds::healthy_below)
      .def_readwrite("dominant", &WaitThresholds::dominant);
  py::class_<PipelineThresholds>(m, "PipelineThresholds")
      .def(py::init<>())
      .def_readwrite("min_seconds", &PipelineThresholds::min_seconds)
      .def_readwrite("wait", &PipelineThresholds::wait)
      .def_readwrite("busy_saturated", &PipelineThresholds::busy_saturated)
      .def_readwrite("read_dominates", &PipelineThresholds::read_dominates);
  py::class_<StragglerThresholds>(m, "StragglerThresholds")
      .def(py::init<>())
      .def_readwrite("rate", &StragglerThresholds::rate)
      .def_readwrite("wait", &StragglerThresholds::wait)
      .def_readwrite("ahead", &StragglerThresholds::ahead);
  py::class_<AuditThresholds>(m, "AuditThresholds")
      .def(py::init<>())
      .def_readwrite("straggler", &AuditThresholds::straggler)
      .def_readwrite("single_rank_share", &AuditThresholds::single_rank_share)
      .def_readwrite("pipeline", &AuditThresholds::pipeline);

  py::enum_<AuditSource>(m, "AuditSource")
      .value("stoker_loader", AuditSource::kStokerLoader)
      .value("stoker_sampler", AuditSource::kStokerSampler)
      .value("dataloader", AuditSource::kDataLoader);
  m.def("parse_audit_source", &parse_audit_source, py::arg("name"));
  py::class_<SampleDigest>(m, "SampleDigest")
      .def(py::init<>())
      .def_readwrite("count", &SampleDigest::count)
      .def_readwrite("sum", &SampleDigest::sum);
  py::class_<AuditRecord>(m, "AuditRecord")
      .def(py::init<>())
      .def_readwrite("source", &AuditRecord::source)
      .def_readwrite("loader_rank", &AuditRecord::loader_rank)
      .def_readwrite("loader_world_size", &AuditRecord::loader_world_size)
      .def_readwrite("fingerprint", &AuditRecord::fingerprint)
      .def_readwrite("dataset_size", &AuditRecord::dataset_size)
      .def_readwrite("batch_size", &AuditRecord::batch_size)
      .def_readwrite("mode", &AuditRecord::mode)
      .def_readwrite("shuffle", &AuditRecord::shuffle)
      .def_readwrite("seed", &AuditRecord::seed)
      .def_readwrite("epoch", &AuditRecord::epoch)
      .def_readwrite("epoch_start", &AuditRecord::epoch_start)
      .def_readwrite("epoch_batches", &AuditRecord::epoch_batches)
      .def_readwrite("digest", &AuditRecord::digest)
      .def_readwrite("images_per_second", &AuditRecord::images_per_second)
      .def_readwrite("wait_fraction", &AuditRecord::wait_fraction)
      .def_readwrite("busy_fraction", &AuditRecord::busy_fraction);
  // Checking a plan walks its batches (O(batches x batch size x ranks)): without the GIL.
  m.def(
      "audit_ranks",
      [](const std::vector<AuditRecord>& records, const AuditThresholds& thresholds) {
        return to_json_text(audit_ranks(records, thresholds));
      },
      py::arg("records"), py::arg("thresholds"), py::call_guard<py::gil_scoped_release>(),
      "The cross-rank audit's report (JSON) over one record per rank (stoker/audit.h).");
}

}  // namespace stoker::python
