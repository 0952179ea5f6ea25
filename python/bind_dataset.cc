// Datasets: open_dataset() and the read-only Dataset interface.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bind.h"
#include "stoker/dataset.h"

namespace py = pybind11;

namespace stoker::python {

void register_dataset(py::module_& m) {
  py::class_<IoRetryPolicy>(m, "IoRetryPolicy")
      .def(py::init<>())
      .def_readwrite("attempts", &IoRetryPolicy::attempts)
      .def_readwrite("first_backoff_s", &IoRetryPolicy::first_backoff_s)
      .def("validate", &IoRetryPolicy::validate);
  // Built with the C++ defaults, which read the environment (stoker/io_config.h).
  py::class_<IoConfig>(m, "IoConfig")
      .def(py::init<>())
      .def_readwrite("retries", &IoConfig::retries)
      .def_readwrite("connect_timeout_s", &IoConfig::connect_timeout_s)
      .def_readwrite("stall_timeout_s", &IoConfig::stall_timeout_s)
      .def_readwrite("open_timeout_s", &IoConfig::open_timeout_s)
      .def_readwrite("read_ahead_connections", &IoConfig::read_ahead_connections)
      .def_readwrite("read_ahead_bytes", &IoConfig::read_ahead_bytes)
      .def_readwrite("remote_cache_dir", &IoConfig::remote_cache_dir)
      .def_readwrite("remote_cache_bytes", &IoConfig::remote_cache_bytes)
      .def_property(
          "packed_io", [](const IoConfig& c) { return std::string(to_string(c.packed_io)); },
          [](IoConfig& c, const std::string& name) { c.packed_io = parse_packed_io(name); })
      .def_property(
          "s3_addressing",
          [](const IoConfig& c) { return std::string(to_string(c.s3_addressing)); },
          [](IoConfig& c, const std::string& name) { c.s3_addressing = parse_s3_addressing(name); })
      .def("validate", &IoConfig::validate);

  py::class_<Dataset, std::shared_ptr<Dataset>>(m, "Dataset")
      .def("__len__", &Dataset::size)
      .def_property_readonly("size", &Dataset::size)
      .def("label", &Dataset::label, py::arg("index"))
      .def_property_readonly("multi_label", &Dataset::multi_label)
      .def(
          "label_set",
          [](const Dataset& d, int64_t index) {
            const auto set = d.label_set(index);
            return std::vector<int32_t>(set.begin(), set.end());
          },
          py::arg("index"), "A multi-label dataset's class ids of sample `index` (else []).")
      .def("name", &Dataset::name, py::arg("index"))
      .def_property_readonly("classes", &Dataset::classes)
      .def_property_readonly("fingerprint", &Dataset::fingerprint)
      .def_property_readonly("filtered", &Dataset::filtered)
      .def("has_field", &Dataset::has_field, py::arg("field"))
      .def(
          "read_field",
          [](const Dataset& d, int64_t index, const std::string& field) {
            std::string out;
            d.read_field(index, field, out);
            return py::bytes(out);
          },
          py::arg("index"), py::arg("field"), "Sample `index`'s field (Dataset::read_field).")
      .def(
          "field_kind",
          [](const Dataset& d, const std::string& field) { return to_string(d.field_kind(field)); },
          py::arg("field"),
          "How a field is handed over: 'text' (str), 'json' (parsed) or 'bytes' "
          "(Dataset::field_kind).")
      .def("describe", &Dataset::describe)
      .def("__repr__", [](const Dataset& d) { return "<stoker.Dataset " + d.describe() + ">"; });

  // Scanning a large folder or opening remote shards takes a while: the GIL is released
  // meanwhile, and Ctrl-C stops it.
  m.def(
      "open_dataset",
      [](const std::string& path, const std::string& path_column, const std::string& label_column,
         const std::optional<IoConfig>& io, const std::vector<std::string>& field_columns) {
        const IoConfig config = io.value_or(IoConfig{});
        return run_interruptibly([&] {
          return open_dataset(path, FileListConfig{path_column, label_column, field_columns},
                              config);
        });
      },
      py::arg("path"), py::arg("path_column") = "", py::arg("label_column") = "",
      py::arg("io") = std::nullopt, py::arg("field_columns") = std::vector<std::string>{},
      "Opens a packed dataset, an image folder or a file list (CSV/TSV/JSON lines: the path "
      "and label columns by name, or the usual names when empty; `field_columns` kept as "
      "per-sample fields); `io` (None: the defaults) says how it reads its storage.");
  m.def(
      "filter_dataset",
      [](std::shared_ptr<Dataset> base,
         const std::vector<std::tuple<std::string, std::string, std::string>>& where) {
        std::vector<FieldCondition> conditions;
        for (const auto& [field, op, value] : where) conditions.push_back({field, op, value});
        return run_interruptibly(
            [&] { return filter_dataset(std::move(base), std::move(conditions)); });
      },
      py::arg("base"), py::arg("where"),
      "The samples of `base` whose fields pass every (field, op, value) condition "
      "(stoker/dataset.h).");
}

}  // namespace stoker::python
