// The _stoker extension module: the C++ core's types, bound thinly. The user-facing API is the
// pure-Python package around it (python/stoker/__init__.py).
#include <pybind11/pybind11.h>

#include "bind.h"
#include "stoker/error.h"
#include "stoker/version.h"

namespace py = pybind11;

namespace stoker::python {

// stoker::Error -> stoker.Error (a RuntimeError) carrying the message without the source
// location; the location is kept on the exception as `where` ("file:line").
void register_errors(py::module_& m) {
  static py::exception<Error> error_type(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      auto type = py::reinterpret_borrow<py::object>(error_type);
      py::object exc = type(e.message());
      exc.attr("where") =
          std::string(e.where().file_name()) + ":" + std::to_string(e.where().line());
      PyErr_SetObject(error_type.ptr(), exc.ptr());
    }
  });
}

}  // namespace stoker::python

PYBIND11_MODULE(_stoker, m) {
  m.doc() = "stoker's C++ core (internal; use the `stoker` package)";
  m.attr("__version__") = STOKER_VERSION_STRING;
  stoker::python::register_errors(m);
  stoker::python::register_dataset(m);
  stoker::python::register_sampler(m);
  stoker::python::register_loader(m);
  stoker::python::register_cuda(m);
}
