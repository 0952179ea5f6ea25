#include "pipeline/finish.h"

#include <algorithm>
#include <span>

#include "stoker/error.h"
#include "stoker/rng.h"
#include "util/check.h"

namespace stoker::pipeline {

PairMix::PairMix(int batch_size)
    : finished(new std::atomic<int>[static_cast<size_t>(batch_size + 1) / 2]()),
      blank(static_cast<size_t>(batch_size), 0) {}

FinishStage::FinishStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup,
                         SkipPolicy& skip)
    : dataset_(std::move(dataset)), setup_(setup), skip_(skip) {}

LabelError FinishStage::label(Batch& batch) {
  LabelError first;
  for (size_t i = 0; i < batch.indices.size(); ++i) {
    try {
      batch.labels[i] = dataset_->label(batch.indices[i]);
    } catch (const Error& e) {
      batch.labels[i] = -1;
      if (!skip_.skips(e)) {
        if (!first.error) {
          first.error = std::current_exception();
          first.slot = static_cast<int>(i);
        }
      } else if (batch.valid[i]) {
        batch.valid[i] = 0;
        ++batch.skipped;
        skip_.warn(batch.indices[i], e.message());
      }
    }
  }
  return first;
}

std::unique_ptr<PairMix> FinishStage::draw(const Batch& batch) const {
  const LoaderConfig& config = setup_.config;
  if (!config.mix.enabled()) return nullptr;
  auto mix = std::make_unique<PairMix>(batch.batch_size);
  Rng rng(batch_mix_key(config.seed, batch.epoch, batch.index, setup_.rank.rank,
                        setup_.rank.world_size));
  mix->draws = draw_batch_mixes(config.mix, rng, batch.batch_size, batch.height, batch.width);
  return mix;
}

void FinishStage::slot_done(Batch& batch, PairMix& mix, int slot, bool blank) const {
  mix.blank[static_cast<size_t>(slot)] = blank ? 1 : 0;
  const int partner = slot ^ 1;
  if (partner >= batch.batch_size) return;  // an odd batch's last slot stays as it is
  if (mix.finished[static_cast<size_t>(slot / 2)].fetch_add(1, std::memory_order_acq_rel) != 1) {
    return;
  }
  if (mix.blank[static_cast<size_t>(slot)] || mix.blank[static_cast<size_t>(partner)]) return;
  const size_t bytes = setup_.sample_bytes;
  auto* a = reinterpret_cast<float*>(batch.storage.get() + static_cast<size_t>(slot & ~1) * bytes);
  auto* b = reinterpret_cast<float*>(batch.storage.get() + static_cast<size_t>(slot | 1) * bytes);
  const BatchMixConfig::Mode mode = setup_.config.mix.mode;
  const int first = slot & ~1;
  if (mode == BatchMixConfig::Mode::kElem) {
    thread_local std::vector<float> scratch;  // the unmixed first image of the pair
    mix_elems(a, b, batch.channels, batch.height, batch.width, slot_mix(mix.draws, mode, first),
              slot_mix(mix.draws, mode, first + 1), scratch);
    return;
  }
  mix_pair(a, b, batch.channels, batch.height, batch.width, slot_mix(mix.draws, mode, first));
}

void FinishStage::finish(Batch& batch, const PairMix* mix) const {
  const int c = setup_.num_classes;
  if (c <= 0) return;
  const auto n = static_cast<size_t>(batch.batch_size);
  const auto width = static_cast<size_t>(c);
  batch.num_classes = c;
  batch.soft_labels.assign(n * width, 0.0f);
  // timm's one_hot(target, num_classes, on_value, off_value) under label smoothing s: the
  // doubles off = s / K and on = 1 - s + off, rounded to float32 (1 and 0 without smoothing).
  const double smoothing = setup_.config.mix.label_smoothing;
  const double off_value = smoothing / c;
  const auto off = static_cast<float>(off_value),
             on = static_cast<float>(1.0 - smoothing + off_value);
  // Slot i's own row: false for a slot without a label (a bad label the skip policy
  // skipped), whose row stays zero.
  const auto hot = [&](size_t i, std::span<float> row) {
    const auto check = [&](int64_t id) {
      STOKER_CHECK_ARG(id < c,
                       "{}: label {} is not below MixUp/CutMix's num_classes = {}: give the "
                       "data set's number of classes",
                       dataset_->name(batch.indices[i]), id, c);
    };
    if (dataset_->multi_label()) {
      std::fill(row.begin(), row.end(), off);
      for (const int32_t id : dataset_->label_set(batch.indices[i])) {
        check(id);
        row[static_cast<size_t>(id)] = on;
      }
      return true;
    }
    const int64_t own = batch.labels[i];
    if (own < 0) return false;
    check(own);
    std::fill(row.begin(), row.end(), off);
    row[static_cast<size_t>(own)] = on;
    return true;
  };
  std::vector<float> own(width), partner(width);
  for (size_t i = 0; i < n; ++i) {
    const std::span<float> row(batch.soft_labels.data() + i * width, width);
    const size_t p = i ^ 1;
    const BatchMix* draw = mix != nullptr
                               ? &slot_mix(mix->draws, setup_.config.mix.mode, static_cast<int>(i))
                               : nullptr;
    const bool pair = draw != nullptr && draw->kind != BatchMix::Kind::kNone && p < n &&
                      !mix->blank[i] && !mix->blank[p];
    if (!pair) {
      hot(i, row);
      continue;
    }
    // hot() writes a whole row (off values and the label) or returns false.
    const bool labelled = hot(i, own);
    if (!labelled) continue;
    if (!hot(p, partner)) partner = own;  // a partner without a label: keep one's own
    mix_label_rows(row, own, partner, draw->label_lam);
  }
}

}  // namespace stoker::pipeline
