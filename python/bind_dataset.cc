// Datasets: open_dataset() and the read-only Dataset interface.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <memory>
#include <string>

#include "bind.h"
#include "stoker/dataset.h"

namespace py = pybind11;

namespace stoker::python {

void register_dataset(py::module_& m) {
  py::class_<Dataset, std::shared_ptr<Dataset>>(m, "Dataset")
      .def("__len__", &Dataset::size)
      .def_property_readonly("size", &Dataset::size)
      .def("label", &Dataset::label, py::arg("index"))
      .def("name", &Dataset::name, py::arg("index"))
      .def_property_readonly("classes", &Dataset::classes)
      .def_property_readonly("fingerprint", &Dataset::fingerprint)
      .def("describe", &Dataset::describe)
      .def("__repr__", [](const Dataset& d) { return "<stoker.Dataset " + d.describe() + ">"; });

  // Scanning a large folder takes a while: the GIL is released meanwhile.
  m.def("open_dataset", &open_dataset, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
        "Opens a packed dataset, an image folder or a file list.");
}

}  // namespace stoker::python
