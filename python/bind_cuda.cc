// The GPU loader (stoker/cuda.h) for Python, and cuda_available() in every build.
//
// A device batch reaches torch without a copy: `images` is an object exposing
// __cuda_array_interface__ (v3, stream None: the consumer's stream already waits for the
// batch, see GpuLoader::next) that owns a shared_ptr to the batch. torch.as_tensor keeps that
// object alive as long as the tensor's storage; when it goes, the batch's release records an
// event on the stream given to next(), and the device buffer is reused only after it.
// Blocking calls release the GIL. torch is never linked: streams travel as integers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>

#include "bind.h"
#include "stoker/error.h"
#include "stoker/loader.h"
#include "stoker/loader_stats.h"

#ifdef STOKER_HAVE_CUDA
#include "stoker/cuda.h"
#endif

namespace py = pybind11;

namespace stoker::python {
namespace {

#ifdef STOKER_HAVE_CUDA

using DeviceBatchPtr = std::shared_ptr<const cuda::DeviceBatch>;

// The image tensor's owner: __cuda_array_interface__ over the batch's device memory.
struct DeviceImages {
  DeviceBatchPtr batch;

  py::dict interface() const {
    const cuda::DeviceBatch& b = *batch;
    py::tuple shape;
    if (b.output == OutputKind::kUint8) {
      shape = py::make_tuple(b.batch_size, b.height, b.width, b.channels);
    } else {
      shape = py::make_tuple(b.batch_size, b.channels, b.height, b.width);
    }
    // bfloat16 has no array-interface type: its bits travel as int16 (the package views them).
    const char* typestr = b.output == OutputKind::kFloat32   ? "<f4"
                          : b.output == OutputKind::kFloat16 ? "<f2"
                          : b.output == OutputKind::kUint8   ? "|u1"
                                                             : "<i2";
    py::dict d;
    d["shape"] = shape;
    d["typestr"] = typestr;
    d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(b.images), false);
    d["version"] = 3;
    d["strides"] = py::none();  // C-contiguous
    d["stream"] = py::none();   // already ordered before the consumer's stream
    return d;
  }
};

struct DeviceBatchRef {
  DeviceBatchPtr batch;

  // (images, labels, indices, valid): images on the device, the rest numpy on the host.
  py::tuple arrays() const {
    py::capsule owner(new DeviceBatchPtr(batch),
                      [](void* p) { delete static_cast<DeviceBatchPtr*>(p); });
    return batch_arrays(*batch, py::cast(DeviceImages{batch}), owner);
  }
};

class GpuLoaderHandle : public Closable<cuda::GpuLoader> {
 public:
  GpuLoaderHandle(std::shared_ptr<Dataset> dataset, const LoaderConfig& config, int device,
                  const std::string& decode, const std::string& jpeg_backend)
      : Closable(std::make_shared<cuda::GpuLoader>(
            dataset, config, device,
            cuda::GpuDecodeConfig{cuda::parse_decode_on(decode), jpeg_backend})),
        dataset_(dataset),
        sampler_(get()->host()),
        stats_file_(get()->host(), StatsFileConfig{}) {}
  const std::shared_ptr<Dataset>& dataset() const { return dataset_; }

  // The stats line of the host loader (see StatsSampler); the loader held for the call.
  std::string stats_json(bool advance) {
    const std::shared_ptr<cuda::GpuLoader> loader = get();
    return sampler_.sample(advance);
  }

  // Under `stoker monitor`: a stats line to its file when one is due (now, with `force`).
  void write_stats(bool force) {
    const std::shared_ptr<cuda::GpuLoader> loader = get();
    force ? stats_file_.write_now() : stats_file_.tick();
  }

 private:
  std::shared_ptr<Dataset> dataset_;
  // Of the host loader this handle owns; used only while get() succeeds.
  StatsSampler sampler_;
  StatsFileWriter stats_file_;
};

void register_gpu_loader(py::module_& m) {
  using Release = py::call_guard<py::gil_scoped_release>;
  py::class_<DeviceImages>(m, "DeviceImages")
      .def_property_readonly("__cuda_array_interface__", &DeviceImages::interface);
  py::class_<DeviceBatchRef> batch(m, "DeviceBatch");
  def_batch_metadata<DeviceBatchRef>(batch)
      .def_property_readonly("device", [](const DeviceBatchRef& b) { return b.batch->device; })
      .def("arrays", &DeviceBatchRef::arrays);

  py::class_<GpuLoaderHandle>(m, "GpuLoader")
      .def(py::init<std::shared_ptr<Dataset>, const LoaderConfig&, int, const std::string&,
                    const std::string&>(),
           py::arg("dataset"), py::arg("config"), py::arg("device"), py::arg("decode") = "cpu",
           py::arg("jpeg_backend") = "auto", Release())
      .def(
          "next",
          [](const GpuLoaderHandle& h, uintptr_t stream) -> std::optional<DeviceBatchRef> {
            auto loader = h.get();
            DeviceBatchPtr batch;
            {
              py::gil_scoped_release release;
              batch = loader->next(stream);
            }
            if (!batch) return std::nullopt;
            return DeviceBatchRef{std::move(batch)};
          },
          py::arg("stream"),
          "The next batch, ordered before work queued on `stream` (a cudaStream_t as an int, "
          "e.g. torch.cuda.current_stream().cuda_stream) from now on; None at the end.")
      .def(
          "set_epoch", [](const GpuLoaderHandle& h, int64_t e) { h.get()->set_epoch(e); },
          py::arg("epoch"), Release())
      .def(
          "begin_pass", [](const GpuLoaderHandle& h) { return h.get()->host().begin_pass(); },
          Release())
      .def(
          "check_pass",
          [](const GpuLoaderHandle& h, uint64_t pass) { h.get()->host().check_pass(pass); },
          py::arg("pass_id"))
      .def_property_readonly("pass_epoch",
                             [](const GpuLoaderHandle& h) { return h.get()->host().pass_epoch(); })
      .def("num_batches", [](const GpuLoaderHandle& h) { return h.get()->host().num_batches(); })
      .def("size", [](const GpuLoaderHandle& h) { return h.get()->host().size(); })
      .def_property_readonly("rank",
                             [](const GpuLoaderHandle& h) { return h.get()->host().rank(); })
      .def_property_readonly("world_size",
                             [](const GpuLoaderHandle& h) { return h.get()->host().world_size(); })
      .def_property_readonly("config",
                             [](const GpuLoaderHandle& h) { return h.get()->host().config(); })
      .def_property_readonly("device", [](const GpuLoaderHandle& h) { return h.get()->device(); })
      .def_property_readonly("dataset", &GpuLoaderHandle::dataset)
      .def("state", [](const GpuLoaderHandle& h) { return h.get()->host().state(); })
      .def(
          "load_state",
          [](const GpuLoaderHandle& h, const ResumeState& s) { h.get()->host().load_state(s); },
          py::arg("state"), Release())
      .def("stats", [](const GpuLoaderHandle& h) { return h.get()->host().stats(); })
      .def("stats_json", &GpuLoaderHandle::stats_json, py::arg("advance") = true)
      .def("write_stats", &GpuLoaderHandle::write_stats, py::arg("force") = false)
      .def(
          "diagnose",
          [](const GpuLoaderHandle& h, bool measure, int sample) {
            return to_json_text(diagnose_loader(h.get()->host(), measure, sample));
          },
          py::arg("measure") = true, py::arg("sample") = 200, Release())
      .def("augmenter_stats",
           [](const GpuLoaderHandle& h) {
             const cuda::AugmenterStats s = h.get()->augmenter_stats();
             py::dict d;
             d["batches"] = s.batches;
             d["device_buffers"] = s.device_buffers;
             d["staged_bytes"] = s.staged_bytes;
             d["submit_seconds"] = s.submit_seconds;
             d["gpu_decode"] = s.gpu_decode;
             d["hardware_decoder"] = s.hardware_decoder;
             d["decoded_hardware"] = s.decoded_hardware;
             d["decoded_hybrid"] = s.decoded_hybrid;
             d["decoded_fallback"] = s.decoded_fallback;
             return d;
           })
      .def("close", &GpuLoaderHandle::close, Release())
      .def_property_readonly("closed", &GpuLoaderHandle::closed);
}

#endif  // STOKER_HAVE_CUDA

}  // namespace

void register_cuda(py::module_& m) {
  m.def(
      "cuda_available",
      []() -> std::pair<bool, std::string> {
#ifdef STOKER_HAVE_CUDA
        std::string why;
        const bool ok = cuda::available(&why);
        return {ok, why};
#else
        return {false, "stoker was built without CUDA (configure with nvcc, -DSTOKER_CUDA=ON)"};
#endif
      },
      "(usable, why not): whether device='cuda' can work in this process.");
#ifdef STOKER_HAVE_CUDA
  m.attr("built_with_cuda") = true;
  m.attr("built_with_gpu_decode") = cuda::gpu_decode_built();
  m.def(
      "gpu_decode_library",
      [] {
        std::string path_or_why;
        const bool ok = cuda::gpu_decode_library(&path_or_why);
        return py::make_tuple(ok, path_or_why);
      },
      "(found, path or why not): the libnvjpeg that decode='gpu' loads (needs no GPU).");
  register_gpu_loader(m);
#else
  m.attr("built_with_cuda") = false;
  m.attr("built_with_gpu_decode") = false;
#endif
}

}  // namespace stoker::python
