// Datasets: open_dataset() and the read-only Dataset interface.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <memory>
#include <string>
#include <vector>

#include "bind.h"
#include "stoker/dataset.h"

namespace py = pybind11;

namespace stoker::python {

void register_dataset(py::module_& m) {
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
      .def("describe", &Dataset::describe)
      .def("__repr__", [](const Dataset& d) { return "<stoker.Dataset " + d.describe() + ">"; });

  // Scanning a large folder takes a while: the GIL is released meanwhile.
  m.def(
      "open_dataset",
      [](const std::string& path, const std::string& path_column, const std::string& label_column) {
        return open_dataset(path, FileListConfig{path_column, label_column});
      },
      py::arg("path"), py::arg("path_column") = "", py::arg("label_column") = "",
      py::call_guard<py::gil_scoped_release>(),
      "Opens a packed dataset, an image folder or a file list (CSV/TSV/JSON lines: the path "
      "and label columns by name, or the usual names when empty).");
}

}  // namespace stoker::python
