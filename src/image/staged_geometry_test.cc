// staged_geometry (image/staged_geometry.h): a staged batch's regions as the kernels' geometry.
#include "image/staged_geometry.h"

#include <gtest/gtest.h>

#include <vector>

#include "stoker/error.h"
#include "stoker/loader.h"

namespace stoker::image {
namespace {

StagedView view_of(const Batch& b) {
  return StagedView{b.staged, b.batch_size, b.channels, b.staged_bytes, b.index};
}

TEST(StagedGeometry, RefusesBatchesThatWereNotStaged) {
  Batch b;
  b.batch_size = 2;
  augment::Geometry g[2];
  EXPECT_THROW(staged_geometry(view_of(b), 8, g), Error);
  b.staged.resize(2);
  b.staged[0].width = 4;
  b.staged[0].height = 4;
  b.staged[0].sample.box = Box{1, 1, 1, 3};  // empty
  b.staged[0].sample.bounds = b.staged[0].sample.box;
  EXPECT_THROW(staged_geometry(view_of(b), 8, g), Error);
  b.staged[0].sample.box = b.staged[0].sample.bounds = Box{0, 0, 4, 4};
  b.channels = 3;
  b.staged_bytes = 47;  // one byte short of the 4x4x3 region
  EXPECT_THROW(staged_geometry(view_of(b), 8, g), Error);
  b.staged_bytes = 48;
  EXPECT_EQ(staged_geometry(view_of(b), 8, g),
            8 * (2 + 3 + 3));  // 4 -> 8 upscales: 3 taps per axis
  EXPECT_EQ(g[0].taps_x, 3);
  EXPECT_EQ(g[1].width, 0);  // blank
}

}  // namespace
}  // namespace stoker::image
