// The loader: its config structs, the Loader itself and the batches it delivers.
//
// Batches reach Python without a copy: each array views the C++ batch's memory and has as
// its base a capsule owning a shared_ptr to the batch, so the buffer goes back to the pool
// only when the last array (or tensor made from one) is gone, even after the loader.
// Blocking calls (construction, next, set_epoch, load_state, close) release the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "bind.h"
#include "stoker/augment_ops.h"
#include "stoker/batch_mix.h"
#include "stoker/capacity.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "stoker/loader.h"
#include "stoker/loader_stats.h"
#include "stoker/rng.h"
#include "stoker/telemetry.h"
#include "stoker/timm_augment.h"
#include "stoker/transform.h"
#include "util/check.h"

namespace py = pybind11;

namespace stoker::python {
namespace {

using BatchPtr = std::shared_ptr<const Batch>;
using Dims = std::vector<py::ssize_t>;

// The numpy form of images of `output`: float32, float16, or bfloat16's bits as int16 (numpy
// has none; the package views them as torch.bfloat16 or ml_dtypes.bfloat16), or uint8; and
// one image's dims, [H, W, C] for uint8 and channels_last floats, else [C, H, W].
py::dtype image_dtype(OutputKind output) {
  switch (output) {
    case OutputKind::kFloat32:
      return py::dtype::of<float>();
    case OutputKind::kFloat16:
      return py::dtype("float16");
    case OutputKind::kBFloat16:
      return py::dtype("int16");
    default:
      return py::dtype::of<uint8_t>();
  }
}

Dims image_dims(OutputKind output, bool channels_last, py::ssize_t c, py::ssize_t h,
                py::ssize_t w) {
  return output == OutputKind::kUint8 || channels_last ? Dims{h, w, c} : Dims{c, h, w};
}

// A delivered batch as Python sees it before the package wraps it in tensors.
struct BatchRef {
  BatchPtr batch;

  // (images, labels, indices, valid): writable numpy views sharing one owner capsule.
  py::tuple arrays() const {
    py::capsule owner(new BatchPtr(batch), [](void* p) { delete static_cast<BatchPtr*>(p); });
    const Batch& b = *batch;
    const auto n = static_cast<py::ssize_t>(b.batch_size);
    const auto c = static_cast<py::ssize_t>(b.channels);
    const auto h = static_cast<py::ssize_t>(b.height);
    const auto w = static_cast<py::ssize_t>(b.width);
    // The batch is const for the pool's sake; the views are writable so that torch can wrap
    // them (consumers own the batch until they drop it).
    auto* pixels = const_cast<uint8_t*>(b.images.data());
    constexpr py::ssize_t kF = sizeof(float);
    Dims dims = image_dims(b.output, b.channels_last, c, h, w);
    dims.insert(dims.begin(), n);
    py::array images(image_dtype(b.output), dims, pixels, owner);  // C-contiguous
    py::tuple arrays = batch_arrays(b, images, owner);
    if (b.num_classes > 0) {  // MixUp/CutMix: the soft labels, float32 [B, num_classes]
      const auto k = static_cast<py::ssize_t>(b.num_classes);
      py::array soft(py::dtype::of<float>(), Dims{n, k}, Dims{k * kF, kF},
                     const_cast<float*>(b.soft_labels.data()), owner);
      arrays = py::make_tuple(arrays[0], soft, arrays[2], arrays[3]);
    }
    return arrays;
  }

  // LoaderConfig::fields: one list per field of its slots' bytes.
  py::list fields() const {
    py::list out;
    for (const std::vector<std::string>& field : batch->fields) {
      py::list values;
      for (const std::string& v : field) values.append(py::bytes(v));
      out.append(values);
    }
    return out;
  }
};

class LoaderHandle : public Closable<Loader> {
 public:
  LoaderHandle(std::shared_ptr<Dataset> dataset, const LoaderConfig& config)
      : Closable(std::make_shared<Loader>(dataset, config)),
        dataset_(dataset),
        sampler_(*get()),
        stats_file_(*get(), StatsFileConfig{}) {}

  const std::shared_ptr<Dataset>& dataset() const { return dataset_; }

  // The stats line (see StatsSampler); the loader held for the call.
  std::string stats_json(bool advance) {
    const std::shared_ptr<Loader> loader = get();
    return sampler_.sample(advance);
  }

  // Under `stoker monitor`: a stats line to its file when one is due (now, with `force`).
  void write_stats(bool force) {
    const std::shared_ptr<Loader> loader = get();
    force ? stats_file_.write_now() : stats_file_.tick();
  }

 private:
  std::shared_ptr<Dataset> dataset_;
  // Of the loader this handle owns; used only while get() succeeds.
  StatsSampler sampler_;
  StatsFileWriter stats_file_;
};

using Release = py::call_guard<py::gil_scoped_release>;

void register_configs(py::module_& m) {
  py::enum_<TransformKind>(m, "TransformKind")
      .value("train", TransformKind::kTrain)
      .value("eval", TransformKind::kEval);
  py::enum_<OutputKind>(m, "OutputKind")
      .value("float32", OutputKind::kFloat32)
      .value("uint8", OutputKind::kUint8)
      .value("float16", OutputKind::kFloat16)
      .value("bfloat16", OutputKind::kBFloat16);
  py::enum_<Interpolation>(m, "Interpolation")
      .value("bilinear", Interpolation::kBilinear)
      .value("bicubic", Interpolation::kBicubic)
      .value("nearest", Interpolation::kNearest);
  py::enum_<BadSamplePolicy>(m, "BadSamplePolicy")
      .value("error", BadSamplePolicy::kError)
      .value("skip", BadSamplePolicy::kSkip);

  py::enum_<AugmentOp::Kind>(m, "AugmentKind")
      .value("trivial_augment_wide", AugmentOp::Kind::kTrivialAugmentWide)
      .value("rand_augment", AugmentOp::Kind::kRandAugment)
      .value("auto_augment", AugmentOp::Kind::kAutoAugment)
      .value("color_jitter", AugmentOp::Kind::kColorJitter)
      .value("vertical_flip", AugmentOp::Kind::kVerticalFlip)
      .value("grayscale", AugmentOp::Kind::kGrayscale)
      .value("gaussian_blur", AugmentOp::Kind::kGaussianBlur)
      .value("random_apply", AugmentOp::Kind::kRandomApply)
      .value("timm", AugmentOp::Kind::kTimm);
  py::enum_<TimmResample>(m, "TimmResample")
      .value("random", TimmResample::kRandom)
      .value("bilinear", TimmResample::kBilinear)
      .value("bicubic", TimmResample::kBicubic);
  py::class_<TimmHparams>(m, "TimmHparams")
      .def(py::init<>())
      .def_readwrite("translate_const", &TimmHparams::translate_const)
      .def_readwrite("translate_pct", &TimmHparams::translate_pct)
      .def_readwrite("fill", &TimmHparams::fill)
      .def_readwrite("resample", &TimmHparams::resample)
      .def_readwrite("magnitude_std", &TimmHparams::magnitude_std)
      .def_readwrite("magnitude_max", &TimmHparams::magnitude_max);
  py::class_<TimmAugment, std::shared_ptr<TimmAugment>>(m, "TimmAugment")
      .def_property_readonly("kind",
                             [](const TimmAugment& a) {
                               return a.kind == TimmAugment::Kind::kRandAugment   ? "rand"
                                      : a.kind == TimmAugment::Kind::kAutoAugment ? "auto"
                                                                                  : "augmix";
                             })
      .def_readonly("config", &TimmAugment::config)
      .def_property_readonly("ops",
                             [](const TimmAugment& a) {
                               py::list out;
                               for (const TimmOpSpec& s : a.ops) {
                                 out.append(py::make_tuple(to_string(s.op), s.prob, s.magnitude));
                               }
                               return out;
                             })
      .def_property_readonly(
          "policy",
          [](const TimmAugment& a) {
            py::list out;
            for (const auto& sub : a.policy) {
              py::list steps;
              for (const TimmOpSpec& s : sub) {
                steps.append(py::make_tuple(to_string(s.op), s.prob, s.magnitude));
              }
              out.append(steps);
            }
            return out;
          })
      .def_readonly("weights", &TimmAugment::weights)
      .def_readonly("num_layers", &TimmAugment::num_layers)
      .def_readonly("width", &TimmAugment::width)
      .def_readonly("depth", &TimmAugment::depth)
      .def_readonly("alpha", &TimmAugment::alpha)
      .def_readonly("blended", &TimmAugment::blended)
      .def_readonly("hparams", &TimmAugment::hparams);
  m.def(
      "parse_timm_augment",
      [](const std::string& config, const TimmHparams& hparams) {
        return std::make_shared<TimmAugment>(parse_timm_augment(config, hparams));
      },
      py::arg("config"), py::arg_v("hparams", TimmHparams{}, "TimmHparams()"),
      "timm's auto_augment string as stoker's ops (stoker/timm_augment.h).");
  m.def(
      "timm_level_to_arg",
      [](const std::string& op, double level, const TimmHparams& hparams, bool negate) {
        return timm_level_to_arg(parse_timm_op(op), level, hparams, negate);
      },
      py::arg("op"), py::arg("level"), py::arg("hparams"), py::arg("negate") = false);
  py::class_<AugmentOp>(m, "AugmentOp")
      .def(py::init<>())
      .def_readwrite("kind", &AugmentOp::kind)
      .def_readwrite("num_magnitude_bins", &AugmentOp::num_magnitude_bins)
      .def_readwrite("num_ops", &AugmentOp::num_ops)
      .def_readwrite("magnitude", &AugmentOp::magnitude)
      .def_readwrite("brightness", &AugmentOp::brightness)
      .def_readwrite("contrast", &AugmentOp::contrast)
      .def_readwrite("saturation", &AugmentOp::saturation)
      .def_readwrite("hue", &AugmentOp::hue)
      .def_readwrite("p", &AugmentOp::p)
      .def_readwrite("kernel_size", &AugmentOp::kernel_size)
      .def_readwrite("sigma", &AugmentOp::sigma)
      .def_readwrite("children", &AugmentOp::children)
      .def_property(
          "timm", [](const AugmentOp& op) { return std::const_pointer_cast<TimmAugment>(op.timm); },
          [](AugmentOp& op, std::shared_ptr<TimmAugment> a) { op.timm = std::move(a); })
      .def("validate", &AugmentOp::validate);
  py::enum_<ErasingConfig::Mode>(m, "ErasingMode")
      .value("const", ErasingConfig::Mode::kConst)
      .value("rand", ErasingConfig::Mode::kRand)
      .value("pixel", ErasingConfig::Mode::kPixel);
  py::class_<ErasingConfig>(m, "ErasingConfig")
      .def(py::init<>())
      .def_readwrite("p", &ErasingConfig::p)
      .def_readwrite("scale", &ErasingConfig::scale)
      .def_readwrite("ratio", &ErasingConfig::ratio)
      .def_readwrite("value", &ErasingConfig::value)
      .def_readwrite("mode", &ErasingConfig::mode)
      .def_readwrite("timm", &ErasingConfig::timm)
      .def_readwrite("min_count", &ErasingConfig::min_count)
      .def_readwrite("max_count", &ErasingConfig::max_count);

  m.attr("IMAGENET_MEAN") = py::cast(kImageNetMean);
  m.attr("IMAGENET_STD") = py::cast(kImageNetStd);
  py::class_<TransformConfig>(m, "TransformConfig")
      .def(py::init<>())
      .def_readwrite("kind", &TransformConfig::kind)
      .def_readwrite("output", &TransformConfig::output)
      .def_readwrite("size", &TransformConfig::size)
      .def_readwrite("channels", &TransformConfig::channels)
      .def_readwrite("scale", &TransformConfig::scale)
      .def_readwrite("ratio", &TransformConfig::ratio)
      .def_readwrite("flip_p", &TransformConfig::flip_p)
      .def_readwrite("crop_fraction", &TransformConfig::crop_fraction)
      .def_readwrite("height", &TransformConfig::height)
      .def_readwrite("width", &TransformConfig::width)
      .def_readwrite("resize", &TransformConfig::resize)
      .def_readwrite("resize_height", &TransformConfig::resize_height)
      .def_readwrite("resize_width", &TransformConfig::resize_width)
      .def_readwrite("interpolation", &TransformConfig::interpolation)
      .def_readwrite("eval_dct_scaling", &TransformConfig::eval_dct_scaling)
      .def_readwrite("channels_last", &TransformConfig::channels_last)
      .def_readwrite("ops", &TransformConfig::ops)
      .def_readwrite("erasing", &TransformConfig::erasing)
      .def_readwrite("mean", &TransformConfig::mean)
      .def_readwrite("std", &TransformConfig::std)
      .def_property(
          "dct_scaling", [](const TransformConfig& c) { return c.decode.dct_scaling; },
          [](TransformConfig& c, bool on) { c.decode.dct_scaling = on; })
      .def("sample_bytes", &TransformConfig::sample_bytes)
      .def("validate", &TransformConfig::validate);

  py::enum_<BatchMixConfig::Mode>(m, "BatchMixMode")
      .value("batch", BatchMixConfig::Mode::kBatch)
      .value("pair", BatchMixConfig::Mode::kPair)
      .value("elem", BatchMixConfig::Mode::kElem);
  py::class_<BatchMixConfig>(m, "BatchMixConfig")
      .def(py::init<>())
      .def_readwrite("mixup_alpha", &BatchMixConfig::mixup_alpha)
      .def_readwrite("cutmix_alpha", &BatchMixConfig::cutmix_alpha)
      .def_readwrite("mixup_p", &BatchMixConfig::mixup_p)
      .def_readwrite("num_classes", &BatchMixConfig::num_classes)
      .def_readwrite("prob", &BatchMixConfig::prob)
      .def_readwrite("label_smoothing", &BatchMixConfig::label_smoothing)
      .def_readwrite("mode", &BatchMixConfig::mode)
      .def("validate", &BatchMixConfig::validate);
  const auto draw_dict = [](const BatchMix& d) {
    const char* kind = d.kind == BatchMix::Kind::kMixUp    ? "mixup"
                       : d.kind == BatchMix::Kind::kCutMix ? "cutmix"
                                                           : "none";
    py::dict out;
    out["kind"] = kind;
    out["lam"] = d.lam;
    out["box"] = py::make_tuple(d.x1, d.y1, d.x2, d.y2);
    out["label_lam"] = d.label_lam;
    return out;
  };
  m.def(
      "draw_batch_mix",
      [draw_dict](const BatchMixConfig& config, uint64_t seed, int64_t epoch, int64_t batch,
                  int rank, int world_size, int height, int width) {
        Rng rng(batch_mix_key(seed, epoch, batch, rank, world_size));
        return draw_dict(draw_batch_mix(config, rng, height, width));
      },
      py::arg("config"), py::arg("seed"), py::arg("epoch"), py::arg("batch"), py::arg("rank"),
      py::arg("world_size"), py::arg("height"), py::arg("width"),
      "The MixUp/CutMix draw of a loader's batch (stoker/batch_mix.h).");
  m.def(
      "slot_mixes",
      [draw_dict](const BatchMixConfig& config, uint64_t seed, int64_t epoch, int64_t batch,
                  int rank, int world_size, int batch_size, int height, int width) {
        Rng rng(batch_mix_key(seed, epoch, batch, rank, world_size));
        const std::vector<BatchMix> draws =
            draw_batch_mixes(config, rng, batch_size, height, width);
        py::list out;
        for (int i = 0; i < batch_size; ++i) out.append(draw_dict(slot_mix(draws, config.mode, i)));
        return out;
      },
      py::arg("config"), py::arg("seed"), py::arg("epoch"), py::arg("batch"), py::arg("rank"),
      py::arg("world_size"), py::arg("batch_size"), py::arg("height"), py::arg("width"),
      "The draw that mixes each slot of a loader's batch, per the config's mode.");

  py::class_<LoaderConfig>(m, "LoaderConfig")
      .def(py::init<>())
      .def_readwrite("batch_size", &LoaderConfig::batch_size)
      .def_readwrite("threads", &LoaderConfig::threads)
      .def_readwrite("prefetch", &LoaderConfig::prefetch)
      .def_readwrite("shard_window_batches", &LoaderConfig::shard_window_batches)
      .def_readwrite("shuffle", &LoaderConfig::shuffle)
      .def_readwrite("seed", &LoaderConfig::seed)
      .def_readwrite("mode", &LoaderConfig::mode)
      .def_readwrite("rank", &LoaderConfig::rank)
      .def_readwrite("world_size", &LoaderConfig::world_size)
      .def_readwrite("bad_samples", &LoaderConfig::bad_samples)
      .def_readwrite("transform", &LoaderConfig::transform)
      .def_readwrite("mix", &LoaderConfig::mix)
      .def_readwrite("fields", &LoaderConfig::fields)
      .def_readwrite("read_retries", &LoaderConfig::read_retries)
      .def_readwrite("close_timeout_seconds", &LoaderConfig::close_timeout_seconds);

  py::class_<StageSeconds>(m, "StageSeconds")
      .def_readonly("read", &StageSeconds::read)
      .def_readonly("decode", &StageSeconds::decode)
      .def_readonly("augment", &StageSeconds::augment)
      .def_readonly("collate", &StageSeconds::collate);
  py::class_<LoaderStats>(m, "LoaderStats")
      .def_readonly("threads", &LoaderStats::threads)
      .def_readonly("prefetch", &LoaderStats::prefetch)
      .def_readonly("batches", &LoaderStats::batches)
      .def_readonly("images", &LoaderStats::images)
      .def_readonly("skipped", &LoaderStats::skipped)
      .def_readonly("pool_buffers", &LoaderStats::pool_buffers)
      .def_readonly("pool_grown", &LoaderStats::pool_grown)
      .def_readonly("wall_seconds", &LoaderStats::wall_seconds)
      .def_readonly("wait_seconds", &LoaderStats::wait_seconds)
      .def_readonly("cpu", &LoaderStats::cpu);
}

}  // namespace

using PixelArray = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

// A copy of an H x W x C uint8 array and the image over it.
std::pair<PixelArray, PixelImage> pixel_copy(const PixelArray& in) {
  STOKER_CHECK_ARG(in.ndim() == 3 && (in.shape(2) == 1 || in.shape(2) == 3),
                   "expected an H x W x C uint8 array with C = 1 or 3");
  PixelArray out({in.shape(0), in.shape(1), in.shape(2)});
  std::copy_n(in.data(), in.size(), out.mutable_data());
  return {out, PixelImage{out.mutable_data(), static_cast<int>(in.shape(1)),
                          static_cast<int>(in.shape(0)), static_cast<int>(in.shape(2))}};
}

void register_augment_ops(py::module_& m) {
  m.def(
      "apply_pixel_op",
      [](const PixelArray& image, const std::string& op, double magnitude) {
        auto [out, view] = pixel_copy(image);
        std::vector<uint8_t> scratch;
        apply_pixel_op(parse_pixel_op(op), magnitude, view, scratch);
        return out;
      },
      py::arg("image"), py::arg("op"), py::arg("magnitude"),
      "One primitive op on an H x W x C uint8 array (a new array): what torchvision's "
      "auto-augment applies for (op, magnitude) (stoker/augment_ops.h).");
  m.def(
      "apply_augment_ops",
      [](const PixelArray& image, const std::vector<AugmentOp>& ops, uint64_t key) {
        auto [out, view] = pixel_copy(image);
        std::vector<uint8_t> scratch;
        std::vector<AppliedOp> trace;
        Rng rng(key);
        for (const AugmentOp& op : ops) {
          op.validate();
          apply_augment_op(op, rng, view, scratch, &trace);
        }
        py::list applied;
        for (const AppliedOp& a : trace)
          applied.append(py::make_tuple(to_string(a.op), a.magnitude));
        return py::make_tuple(out, applied);
      },
      py::arg("image"), py::arg("ops"), py::arg("key"),
      "The ops drawn from Rng(key) on a copy of the image: (image, [(op, magnitude), ...]).");
  m.def(
      "apply_timm_op",
      [](const PixelArray& image, const std::string& op, double arg, std::array<uint8_t, 3> fill,
         const std::string& resample) {
        auto [out, view] = pixel_copy(image);
        std::vector<uint8_t> scratch;
        const TimmResample r =
            resample == "bicubic" ? TimmResample::kBicubic : TimmResample::kBilinear;
        STOKER_CHECK_ARG(resample == "bicubic" || resample == "bilinear",
                         "apply_timm_op: resample must be 'bilinear' or 'bicubic'");
        apply_timm_op(parse_timm_op(op), arg, view, fill, r, scratch);
        return out;
      },
      py::arg("image"), py::arg("op"), py::arg("arg"),
      py::arg("fill") = std::array<uint8_t, 3>{128, 128, 128}, py::arg("resample") = "bicubic",
      "timm's op function with its argument on a copy of an H x W x C uint8 array "
      "(NAME_TO_OP[op](img, arg, fillcolor=fill, resample=...)).");
  m.def(
      "apply_timm_augment",
      [](const PixelArray& image, const std::shared_ptr<TimmAugment>& augment, uint64_t key) {
        auto [out, view] = pixel_copy(image);
        std::vector<uint8_t> scratch;
        std::vector<TimmApplied> trace;
        Rng rng(key);
        apply_timm_augment(*augment, rng, view, scratch, &trace);
        py::list applied;
        for (const TimmApplied& a : trace) {
          applied.append(
              py::make_tuple(to_string(a.op), a.arg,
                             a.resample == TimmResample::kBicubic ? "bicubic" : "bilinear"));
        }
        return py::make_tuple(out, applied);
      },
      py::arg("image"), py::arg("augment"), py::arg("key"),
      "A timm policy drawn from Rng(key) on a copy of the image: (image, [(op, arg, resample)]).");
}

void register_loader(py::module_& m) {
  m.def(
      "diagnose_step_times",
      [](const std::vector<double>& steps, const std::vector<double>& waits,
         const std::string& source) {
        return to_json_text(diagnose_step_times(steps, waits, source));
      },
      py::arg("step_seconds"), py::arg("data_seconds"), py::arg("source"),
      "The verdict (JSON) from a training loop's step times and data waits "
      "(stoker/telemetry.h).");
  register_configs(m);
  register_augment_ops(m);
  m.def(
      "transform_sample",
      [](const Dataset& data, int64_t index, const TransformConfig& transform, uint64_t seed,
         int64_t epoch) {
        STOKER_CHECK_ARG(index >= 0 && index < data.size(), "index {} is outside [0, {})", index,
                         data.size());
        transform.validate();
        // One slot of a batch, shaped and typed as BatchRef::arrays shapes a batch's images.
        py::array out(image_dtype(transform.output),
                      image_dims(transform.output, transform.channels_last, transform.channels,
                                 transform.output_height(), transform.output_width()));
        STOKER_CHECK(static_cast<size_t>(out.nbytes()) == transform.sample_bytes(),
                     "transform_sample: {} bytes for a sample of {}", out.nbytes(),
                     transform.sample_bytes());
        void* pixels = out.mutable_data();
        {
          py::gil_scoped_release release;
          std::vector<uint8_t> bytes;
          data.read(index, bytes);
          // The loader's key for (seed, epoch, sample): the pixels of the sample's batch slot.
          Rng rng(stream_key(seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index)));
          TransformScratch scratch;
          transform_sample(pixels, bytes, data.name(index), transform, rng, scratch);
        }
        return out;
      },
      py::arg("dataset"), py::arg("index"), py::arg("transform"), py::arg("seed"), py::arg("epoch"),
      "Sample `index` of `dataset` read, decoded and transformed as a loader with this "
      "transform and seed does in `epoch`: [C, H, W] (float outputs; bfloat16 as int16 bits) or "
      "[H, W, C] uint8, the bytes of its batch slot.");

  py::class_<BatchRef> batch(m, "Batch");
  def_batch_metadata<BatchRef>(batch)
      .def("arrays", &BatchRef::arrays)
      .def("fields", &BatchRef::fields);

  py::class_<LoaderHandle>(m, "Loader")
      .def(py::init<std::shared_ptr<Dataset>, const LoaderConfig&>(), py::arg("dataset"),
           py::arg("config"), Release())
      .def(
          "next",
          [](const LoaderHandle& h) -> std::optional<BatchRef> {
            auto loader = h.get();
            // Waits in slices of 0.1 s with the GIL released, checking for signals between
            // them, so that Ctrl-C interrupts a wait for a slow batch (or a stuck read) at once
            // rather than when the batch is done.
            while (true) {
              bool ready;
              {
                py::gil_scoped_release release;
                ready = loader->wait_ready(0.1);
              }
              if (ready) break;
              if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            }
            BatchPtr batch;
            {
              py::gil_scoped_release release;
              batch = loader->next();
            }
            if (!batch) return std::nullopt;
            return BatchRef{std::move(batch)};
          },
          "The next batch of this rank, or None at the end of the epoch (GIL released; a "
          "signal such as Ctrl-C interrupts the wait).")
      .def(
          "wait_ready",
          [](const LoaderHandle& h, double seconds) { return h.get()->wait_ready(seconds); },
          py::arg("seconds"), Release(),
          "Waits up to `seconds` for the next batch; True when next() will not block.")
      .def(
          "set_epoch", [](const LoaderHandle& h, int64_t e) { h.get()->set_epoch(e); },
          py::arg("epoch"), Release())
      .def(
          "begin_pass", [](const LoaderHandle& h) { return h.get()->begin_pass(); }, Release(),
          "Starts a pass (iter()): its epoch is started when it needs one; returns its id.")
      .def(
          "check_pass", [](const LoaderHandle& h, uint64_t pass) { h.get()->check_pass(pass); },
          py::arg("pass_id"), "Raises stoker.Error when a newer pass superseded this one.")
      .def_property_readonly("pass_epoch",
                             [](const LoaderHandle& h) { return h.get()->pass_epoch(); })
      .def("num_batches", [](const LoaderHandle& h) { return h.get()->num_batches(); })
      .def("size", [](const LoaderHandle& h) { return h.get()->size(); })
      .def_property_readonly("rank", [](const LoaderHandle& h) { return h.get()->rank(); })
      .def_property_readonly("world_size",
                             [](const LoaderHandle& h) { return h.get()->world_size(); })
      .def_property_readonly("config", [](const LoaderHandle& h) { return h.get()->config(); })
      .def_property_readonly("dataset", &LoaderHandle::dataset)
      .def("state", [](const LoaderHandle& h) { return h.get()->state(); })
      .def(
          "load_state", [](const LoaderHandle& h, const ResumeState& s) { h.get()->load_state(s); },
          py::arg("state"), Release())
      .def(
          "select_steps",
          [](const LoaderHandle& h, int64_t first, int64_t stride) {
            h.get()->select_steps(first, stride);
          },
          py::arg("first"), py::arg("stride"), Release())
      .def("stats", [](const LoaderHandle& h) { return h.get()->stats(); })
      .def("stats_json", &LoaderHandle::stats_json, py::arg("advance") = true)
      .def("write_stats", &LoaderHandle::write_stats, py::arg("force") = false,
           "Under `stoker monitor` (STOKER_STATS_FILE): a stats line to its file every "
           "STOKER_STATS_INTERVAL seconds, or now with force (stoker/loader_stats.h).")
      .def(
          "diagnose",
          [](const LoaderHandle& h, bool measure, int sample) {
            return to_json_text(diagnose_loader(*h.get(), measure, sample));
          },
          py::arg("measure") = true, py::arg("sample") = 200, Release())
      .def("close", &LoaderHandle::close, Release(),
           "Stops and joins the workers; outstanding batches stay valid.")
      .def_property_readonly("closed", &LoaderHandle::closed);
}

}  // namespace stoker::python
