// The _stoker extension module: the C++ core's types, bound thinly. The user-facing API is the
// pure-Python package around it (python/stoker/__init__.py).
#include <pybind11/pybind11.h>

#include <cerrno>
#include <cstring>

#include "bind.h"
#include "stoker/error.h"
#include "stoker/version.h"

namespace py = pybind11;

namespace stoker::python {

// stoker::Error -> a Python exception by its kind, each a stoker.Error (RuntimeError) that
// carries the message without the source location, and the location as `where`:
//   kBadData          stoker.BadSampleError
//   kIo               stoker.StorageError, also an OSError: errno, strerror, filename set
//                     (stoker.MissingFileError, also a FileNotFoundError, for ENOENT)
//   kInvalidArgument  stoker.ArgumentError, also a ValueError
//   kInternal         stoker.Error
namespace {

// Messages and paths may hold bytes that are not UTF-8 (a file named in another encoding): the
// message shows them as \xNN escapes, the filename round-trips to the bytes (os.fsdecode), and
// neither turns the error into a UnicodeDecodeError that loses it.
py::str message_text(const std::string& s) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace"));
}
py::str path_text(const std::string& s) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeFSDefaultAndSize(s.data(), static_cast<Py_ssize_t>(s.size())));
}

}  // namespace

void register_errors(py::module_& m) {
  static py::exception<Error> error_type(m, "Error", PyExc_RuntimeError);
  const py::object base = py::reinterpret_borrow<py::object>(error_type);
  const auto subclass = [&](const char* name, py::tuple bases, const char* doc) {
    py::dict namespace_;
    namespace_["__doc__"] = doc;
    namespace_["__module__"] = m.attr("__name__");
    py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
        name, bases, namespace_);
    m.attr(name) = type;
    return type;
  };
  const auto builtin = [](PyObject* type) { return py::reinterpret_borrow<py::object>(type); };
  static py::object bad_sample = subclass(
      "BadSampleError", py::make_tuple(base),
      "A sample is broken (not an image, truncated, over the limits, a corrupt record): the "
      "only error bad_samples='skip' skips.");
  // OSError first: its constructor and errno/strerror/filename attributes are the OSError's.
  static py::object storage =
      subclass("StorageError", py::make_tuple(builtin(PyExc_OSError), base),
               "The storage failed (after stoker's retries): errno and filename name the call's "
               "failure and the file.");
  static py::object missing =
      subclass("MissingFileError", py::make_tuple(builtin(PyExc_FileNotFoundError), storage),
               "A StorageError for a file that is not there (ENOENT): a FileNotFoundError too.");
  // str() is stoker's message (which names the file and the reason), not OSError's
  // "[Errno N] strerror: 'filename'".
  for (const py::object& type : {storage, missing}) {
    type.attr("__str__") = builtin(PyExc_BaseException).attr("__str__");
  }
  static py::object argument =
      subclass("ArgumentError", py::make_tuple(builtin(PyExc_ValueError), base),
               "An invalid argument, option or configuration value: a ValueError too.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object type = py::reinterpret_borrow<py::object>(error_type);
      if (e.kind() == ErrorKind::kBadData) type = bad_sample;
      if (e.kind() == ErrorKind::kIo) type = e.sys_errno() == ENOENT ? missing : storage;
      if (e.kind() == ErrorKind::kInvalidArgument) type = argument;
      py::object exc = type(message_text(e.message()));
      exc.attr("where") =
          std::string(e.where().file_name()) + ":" + std::to_string(e.where().line());
      exc.attr("kind") = std::string(to_string(e.kind()));
      if (e.kind() == ErrorKind::kIo) {
        exc.attr("errno") = e.sys_errno() != 0 ? py::object(py::int_(e.sys_errno())) : py::none();
        exc.attr("strerror") =
            e.sys_errno() != 0 ? py::object(py::str(std::strerror(e.sys_errno()))) : py::none();
        exc.attr("filename") = e.path().empty() ? py::object(py::none()) : path_text(e.path());
      }
      PyErr_SetObject(type.ptr(), exc.ptr());
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
  stoker::python::register_diagnose(m);
}
