#include "image/staged_geometry.h"

#include <cstring>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::image {

namespace {

size_t round_up64(size_t n) { return (n + 63) / 64 * 64; }

}  // namespace

std::vector<DecodedSlot> encoded_layout(const StagedView& batch, size_t base, size_t* end) {
  std::vector<DecodedSlot> out;
  size_t at = round_up64(base);
  for (int i = 0; i < batch.batch_size && static_cast<size_t>(i) < batch.slots.size(); ++i) {
    const StagedRegion& s = batch.slots[static_cast<size_t>(i)];
    if (s.width == 0 || s.encoded_bytes == 0) continue;
    out.push_back(DecodedSlot{i, at, s.roi});
    at += round_up64(static_cast<size_t>(s.roi.width) * s.roi.height * batch.channels);
  }
  *end = at;
  return out;
}

int64_t staged_geometry(const StagedView& batch, int size, augment::Geometry* out,
                        std::span<const DecodedSlot> decoded) {
  STOKER_CHECK(batch.slots.size() == static_cast<size_t>(batch.batch_size),
               "staged_geometry: batch {} was not staged", batch.index);
  int64_t tables = 0;
  size_t next_decoded = 0;
  for (int i = 0; i < batch.batch_size; ++i) {
    const StagedRegion& s = batch.slots[static_cast<size_t>(i)];
    augment::Geometry g;
    if (s.width > 0) {
      Box b = s.sample.box;
      Box u = s.sample.bounds;
      int width = s.width, height = s.height;
      size_t pixels = s.offset;
      if (s.encoded_bytes > 0) {
        // Decoded rois come in slot order (encoded_layout's).
        STOKER_CHECK(next_decoded < decoded.size() && decoded[next_decoded].slot == i,
                     "batch {} slot {}: an encoded JPEG with no decoded roi", batch.index, i);
        STOKER_CHECK(s.offset + s.encoded_bytes <= batch.staged_bytes && s.roi.x >= 0 &&
                         s.roi.y >= 0 && s.roi.width > 0 && s.roi.height > 0 &&
                         s.roi.x + s.roi.width <= s.width && s.roi.y + s.roi.height <= s.height,
                     "batch {} slot {}: encoded JPEG past the staging area or roi outside it",
                     batch.index, i);
        const DecodedSlot& d = decoded[next_decoded++];
        b = Box{b.x0 - d.roi.x, b.y0 - d.roi.y, b.x1 - d.roi.x, b.y1 - d.roi.y};
        u = Box{u.x0 - d.roi.x, u.y0 - d.roi.y, u.x1 - d.roi.x, u.y1 - d.roi.y};
        width = d.roi.width;
        height = d.roi.height;
        pixels = d.offset;
      } else {
        STOKER_CHECK(s.offset + static_cast<size_t>(s.width) * s.height * batch.channels <=
                         batch.staged_bytes,
                     "batch {} slot {}: region past the staging area", batch.index, i);
      }
      STOKER_CHECK(augment::make_geometry(g, b.x0, b.y0, b.x1, b.y1, u.x0, u.y0, u.x1, u.y1, width,
                                          height, size),
                   "batch {} slot {}: empty resize box ({}, {}, {}, {}) in a {}x{} region",
                   batch.index, i, b.x0, b.y0, b.x1, b.y1, width, height);
      g.pixels = pixels;
      g.flip = s.sample.flip ? 1 : 0;
      g.coeffs = tables;
      tables += augment::table_ints(g, size);
    }
    out[i] = g;
  }
  return tables;
}

void decode_encoded_on_host(const StagedView& batch, const uint8_t* staging,
                            std::span<const DecodedSlot> decoded, uint8_t* memory,
                            const DecodeConfig& options) {
  DecodeConfig scale1 = options;
  scale1.dct_scaling = false;
  DecodedRegion region;
  for (const DecodedSlot& d : decoded) {
    const StagedRegion& s = batch.slots[static_cast<size_t>(d.slot)];
    const std::span<const uint8_t> jpeg(staging + s.offset, s.encoded_bytes);
    const std::string name = fmt::format("batch {} slot {}", batch.index, d.slot);
    // The worker probed it: its size is the slot's.
    const ImageHeader header{ImageFormat::kJpeg, s.width, s.height};
    decode_region(region, jpeg, header, d.roi, d.roi.width, d.roi.height, batch.channels, name,
                  scale1);
    STOKER_CHECK(region.scale == 1.0 && region.channels == batch.channels && region.x0 <= d.roi.x &&
                     region.y0 <= d.roi.y && region.x0 + region.width >= d.roi.x + d.roi.width &&
                     region.y0 + region.height >= d.roi.y + d.roi.height,
                 "{}: the decoded region does not cover the roi", name);
    // The decoder may deliver more than the roi (iMCU-aligned columns): copy the roi's rows.
    const size_t row = static_cast<size_t>(d.roi.width) * batch.channels;
    for (int y = 0; y < d.roi.height; ++y) {
      const uint8_t* src =
          region.pixels.data() + (static_cast<size_t>(d.roi.y - region.y0 + y) * region.width +
                                  static_cast<size_t>(d.roi.x - region.x0)) *
                                     batch.channels;
      std::memcpy(memory + d.offset + row * y, src, row);
    }
  }
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
