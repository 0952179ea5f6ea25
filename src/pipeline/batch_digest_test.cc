// BatchDigest (stoker/batch_digest.h): the bytes it hashes, in order.
#include "stoker/batch_digest.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <vector>

namespace stoker {
namespace {

// BatchDigest is XXH3-64 of the concatenation, batch after batch, of the image bytes, the
// labels as little-endian int64 and the valid mask: computed here in one buffer by hand.
TEST(BatchDigest, IsXxh3OfImagesLittleEndianLabelsAndMaskInOrder) {
  const std::vector<uint8_t> images1 = {1, 2, 3, 4}, images2 = {9};
  const std::vector<int64_t> labels1 = {0x0102030405060708, -1}, labels2 = {7};
  const std::vector<uint8_t> valid1 = {1, 0}, valid2 = {1};
  std::vector<uint8_t> all = images1;
  for (uint8_t b : {8, 7, 6, 5, 4, 3, 2, 1, 255, 255, 255, 255, 255, 255, 255, 255})
    all.push_back(b);
  all.insert(all.end(), valid1.begin(), valid1.end());
  all.insert(all.end(), images2.begin(), images2.end());
  for (uint8_t b : {7, 0, 0, 0, 0, 0, 0, 0}) all.push_back(b);
  all.insert(all.end(), valid2.begin(), valid2.end());
  BatchDigest digest;
  digest.add(images1, labels1, valid1);
  digest.add(images2, labels2, valid2);
  EXPECT_EQ(digest.value(), XXH3_64bits(all.data(), all.size()));
  EXPECT_EQ(digest.hex(), fmt::format("{:016x}", XXH3_64bits(all.data(), all.size())));
}

}  // namespace
}  // namespace stoker
