#include "image/staged_geometry.h"

#include "stoker/error.h"

namespace stoker::image {

int64_t staged_geometry(const StagedView& batch, int size, augment::Geometry* out) {
  STOKER_CHECK(batch.slots.size() == static_cast<size_t>(batch.batch_size),
               "staged_geometry: batch {} was not staged", batch.index);
  int64_t tables = 0;
  for (int i = 0; i < batch.batch_size; ++i) {
    const StagedRegion& s = batch.slots[static_cast<size_t>(i)];
    augment::Geometry g;
    if (s.width > 0) {
      const Box& b = s.sample.box;
      const Box& u = s.sample.bounds;
      STOKER_CHECK(augment::make_geometry(g, b.x0, b.y0, b.x1, b.y1, u.x0, u.y0, u.x1, u.y1,
                                          s.width, s.height, size),
                   "batch {} slot {}: empty resize box ({}, {}, {}, {}) in a {}x{} region",
                   batch.index, i, b.x0, b.y0, b.x1, b.y1, s.width, s.height);
      STOKER_CHECK(
          s.offset + static_cast<size_t>(s.width) * s.height * batch.channels <= batch.staged_bytes,
          "batch {} slot {}: region past the staging area", batch.index, i);
      g.pixels = s.offset;
      g.flip = s.sample.flip ? 1 : 0;
      g.coeffs = tables;
      tables += augment::table_ints(g, size);
    }
    out[i] = g;
  }
  return tables;
}

augment::OutputSpec output_spec(const TransformConfig& config) {
  augment::OutputSpec spec;
  spec.size = config.size;
  spec.channels = config.channels;
  spec.dtype = static_cast<int32_t>(config.output);
  for (int c = 0; c < 3; ++c) {
    spec.mean[c] = config.mean[c];
    spec.std[c] = config.std[c];
  }
  return spec;
}

}  // namespace stoker::image
