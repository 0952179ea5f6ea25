// Registration hooks of the _stoker extension module, one per area (spdl style): each
// bind_<area>.cc defines one register_<area>() and holds no logic of its own.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stoker/cancel.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "stoker/loader.h"
#include "util/check.h"

namespace stoker::python {

void register_errors(pybind11::module_& m);    // bind_module.cc
void register_dataset(pybind11::module_& m);   // bind_dataset.cc
void register_sampler(pybind11::module_& m);   // bind_sampler.cc
void register_loader(pybind11::module_& m);    // bind_loader.cc
void register_cuda(pybind11::module_& m);      // bind_cuda.cc (GpuLoader only with CUDA)
void register_diagnose(pybind11::module_& m);  // bind_diagnose.cc

// work() run on a thread of its own under a Cancellation (stoker/cancel.h), waited for with the
// GIL released in slices of 0.1 s: a signal between slices (Ctrl-C) cancels the work, waits for
// it to stop (its remote requests within 0.1 s) and raises the signal's exception.
// The result or C++ exception of work() otherwise. work() must not touch Python objects.
template <typename Work>
auto run_interruptibly(Work&& work) -> decltype(work()) {
  namespace py = pybind11;
  using Result = decltype(work());
  Cancellation cancellation;
  std::promise<Result> promise;
  std::future<Result> result = promise.get_future();
  std::thread thread([&] {
    const CancellationScope scope(cancellation);
    try {
      promise.set_value(work());
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  });
  while (true) {
    bool ready;
    {
      py::gil_scoped_release release;
      ready = result.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready;
    }
    if (ready) break;
    if (PyErr_CheckSignals() != 0) {
      cancellation.cancel("interrupted");
      {
        py::gil_scoped_release release;
        thread.join();
      }
      throw py::error_already_set();
    }
  }
  thread.join();
  return result.get();
}

// Owns a loader (Loader, cuda::GpuLoader) so that close() stops its workers deterministically.
// Calls made while another thread closes it keep their own reference; the last one out joins
// the workers.
template <typename T>
class Closable {
 public:
  explicit Closable(std::shared_ptr<T> object) : object_(std::move(object)) {}

  std::shared_ptr<T> get() const {
    std::lock_guard lock(mu_);
    STOKER_CHECK(object_ != nullptr, "the loader is closed");
    return object_;
  }

  void close() {
    std::shared_ptr<T> object;
    {
      std::lock_guard lock(mu_);
      object = std::move(object_);
    }
    // Destroyed here (workers joined) unless another thread is still inside a call.
  }

  bool closed() const {
    std::lock_guard lock(mu_);
    return object_ == nullptr;
  }

 protected:
  mutable std::mutex mu_;

 private:
  std::shared_ptr<T> object_;
};

// The metadata properties shared by a host batch and a device batch (Ref holds `batch`).
template <typename Ref, typename Class>
Class& def_batch_metadata(Class& cls) {
  return cls.def_property_readonly("epoch", [](const Ref& b) { return b.batch->epoch; })
      .def_property_readonly("index", [](const Ref& b) { return b.batch->index; })
      .def_property_readonly("global_valid", [](const Ref& b) { return b.batch->global_valid; })
      .def_property_readonly("batch_size", [](const Ref& b) { return b.batch->batch_size; })
      .def_property_readonly("skipped", [](const Ref& b) { return b.batch->skipped; })
      .def_property_readonly("output",
                             [](const Ref& b) { return std::string(to_string(b.batch->output)); });
}

// (images, labels, indices, valid) of a host or device batch: `images` as given, the rest
// writable numpy views of the batch's host vectors, kept alive by `owner`. valid is one byte per
// slot, 0 or 1: exactly numpy's bool layout.
template <typename BatchT>
pybind11::tuple batch_arrays(const BatchT& b, pybind11::object images,
                             const pybind11::capsule& owner) {
  namespace py = pybind11;
  using Dims = std::vector<py::ssize_t>;
  const auto n = static_cast<py::ssize_t>(b.batch_size);
  constexpr py::ssize_t kI = sizeof(int64_t);
  py::array labels(py::dtype::of<int64_t>(), Dims{n}, Dims{kI},
                   const_cast<int64_t*>(b.labels.data()), owner);
  py::array indices(py::dtype::of<int64_t>(), Dims{n}, Dims{kI},
                    const_cast<int64_t*>(b.indices.data()), owner);
  py::array valid(py::dtype("bool"), Dims{n}, Dims{1}, const_cast<uint8_t*>(b.valid.data()), owner);
  return py::make_tuple(std::move(images), labels, indices, valid);
}

}  // namespace stoker::python
