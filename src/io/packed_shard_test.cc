// The shard header and footer on their own: encode/decode round trips, the bytes docs/format.md
// specifies, and a bad-data error naming the offset for each kind of damage.
#include "io/packed_shard.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include "io/packed_format.h"
#include "io/test_util.h"
#include "stoker/error.h"

namespace stoker::io {
namespace {

using ::testing::HasSubstr;
using namespace packed;  // NOLINT: the format's constants

ShardHeader sample_header() {
  return ShardHeader{.options_hash = 0x1122334455667788,
                     .shard_number = 3,
                     .first_record = 7680,
                     .first_source = 7700};
}

// A footer consistent with a file of `file_size` bytes holding `records` records and
// `skipped` skipped entries of 16 + 10 bytes each, the index right before them.
ShardFooter sample_footer(uint64_t file_size, uint64_t records, uint64_t skipped) {
  const uint64_t skipped_bytes = skipped * (kSkippedFixedSize + 10);
  const uint64_t index_offset =
      file_size - kShardFooterSize - skipped_bytes - records * kIndexEntrySize;
  return ShardFooter{.record_count = records,
                     .source_count = records + skipped,
                     .index_offset = index_offset,
                     .skipped_offset = index_offset + records * kIndexEntrySize,
                     .skipped_count = skipped,
                     .tail_checksum = 0xABCDEF};
}

TEST(ShardHeader, RoundTripsAndLaysOutTheBytesOfTheSpec) {
  ShardHeader h = sample_header();
  const auto bytes = h.encode();
  EXPECT_EQ(std::memcmp(bytes.data(), kShardMagic, 8), 0);
  EXPECT_EQ(load_u32(bytes.data() + header::kVersion), kFormatVersion);
  EXPECT_EQ(load_u32(bytes.data() + header::kHeaderSize), kShardHeaderSize);
  EXPECT_EQ(load_u64(bytes.data() + header::kShardNumber), 3u);
  EXPECT_EQ(load_u64(bytes.data() + header::kReserved), 0u);
  EXPECT_EQ(h.checksum, XXH3_64bits(bytes.data(), header::kChecksum));
  EXPECT_EQ(load_u64(bytes.data() + header::kChecksum), h.checksum);

  const ShardHeader back = ShardHeader::decode(bytes, "s");
  EXPECT_EQ(back.options_hash, h.options_hash);
  EXPECT_EQ(back.shard_number, 3u);
  EXPECT_EQ(back.first_record, 7680u);
  EXPECT_EQ(back.first_source, 7700u);
  EXPECT_EQ(back.checksum, h.checksum);
}

TEST(ShardHeader, DamageIsBadDataNamingTheOffset) {
  ShardHeader h = sample_header();
  const auto good = h.encode();
  struct Case {
    size_t at;
    const char* says;
  };
  for (const Case& c : {Case{header::kMagic, "not a stoker shard (bad magic at byte offset 0)"},
                        Case{header::kVersion, "unsupported shard format version"},
                        Case{header::kHeaderSize, "corrupt header: header size"},
                        Case{header::kOptionsHash, "header checksum mismatch"},
                        Case{header::kChecksum, "header checksum mismatch"}}) {
    auto bad = good;
    bad[c.at] ^= 0x40;
    try {
      ShardHeader::decode(bad, "shard-00003.stk");
      ADD_FAILURE() << "byte " << c.at << " changed, decode accepted it";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadData) << c.at;
      EXPECT_THAT(e.message(), HasSubstr(std::string("shard-00003.stk: ") + c.says)) << c.at;
    }
  }
  // A newer version says so, even though its checksum would not match ours either.
  auto newer = good;
  store_u32(newer.data() + header::kVersion, kLatestVersion + 1);
  EXPECT_THAT(test::error_of([&] { ShardHeader::decode(newer, "s"); }),
              HasSubstr("unsupported shard format version 3 at byte offset 8"));
}

TEST(ShardFooter, RoundTripsWithTheHeaderChecksumAsSeed) {
  const uint64_t file_size = 64 + 5 * (32 + 100) + 5 * 24 + 2 * 26 + 64;
  ShardFooter f = sample_footer(file_size, 5, 2);
  const auto bytes = f.encode(0x5EED);
  EXPECT_EQ(std::memcmp(bytes.data() + footer::kMagic, kFooterMagic, 8), 0);
  EXPECT_EQ(f.checksum, XXH3_64bits_withSeed(bytes.data(), footer::kChecksum, 0x5EED));
  const ShardFooter back = ShardFooter::decode(bytes, 0x5EED, file_size, "s");
  EXPECT_EQ(back.record_count, 5u);
  EXPECT_EQ(back.source_count, 7u);
  EXPECT_EQ(back.index_offset, f.index_offset);
  EXPECT_EQ(back.skipped_offset, f.skipped_offset);
  EXPECT_EQ(back.skipped_count, 2u);
  EXPECT_EQ(back.tail_checksum, 0xABCDEFu);
  // Another header's checksum: the footer belongs to another shard.
  EXPECT_THAT(test::error_of([&] { ShardFooter::decode(bytes, 0x5EEE, file_size, "s"); }),
              HasSubstr("footer checksum mismatch (footer at byte offset"));
}

TEST(ShardFooter, OffsetsAndCountsAreCheckedAgainstTheFile) {
  const uint64_t file_size = 64 + 5 * (32 + 100) + 5 * 24 + 64;
  const uint64_t footer_at = file_size - kShardFooterSize;
  struct Case {
    void (*damage)(ShardFooter&);
    const char* says;
  };
  const Case cases[] = {
      {[](ShardFooter& f) { f.index_offset = 10; }, "index offset outside the file"},
      {[](ShardFooter& f) { f.record_count = 6, f.source_count = 6; },
       "record count larger than the index"},
      {[](ShardFooter& f) { f.skipped_offset += 1; },
       "skipped-list offset does not follow the index"},
      {[](ShardFooter& f) { f.skipped_count = 1, f.source_count = 6; },
       "skipped count larger than the skipped list"},
      {[](ShardFooter& f) { f.source_count = 9; }, "source count is not records + skipped"},
      {[](ShardFooter& f) {
         // Five index entries right behind a header: no room for five records before them.
         f.index_offset = kShardHeaderSize;
         f.skipped_offset = f.index_offset + 5 * kIndexEntrySize;
       },
       "more records than the record area holds"},
  };
  for (const Case& c : cases) {
    ShardFooter f = sample_footer(file_size, 5, 0);
    c.damage(f);
    const auto bytes = f.encode(1);
    try {
      ShardFooter::decode(bytes, 1, file_size, "s");
      ADD_FAILURE() << c.says << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadData) << c.says;
      EXPECT_THAT(e.message(), HasSubstr(fmt::format("s: corrupt footer at byte offset {}: {}",
                                                     footer_at, c.says)));
    }
  }
  // A footer that is not one (a file cut short): no magic.
  auto cut = sample_footer(file_size, 5, 0).encode(1);
  cut[footer::kMagic + 3] = 'X';
  EXPECT_THAT(test::error_of([&] { ShardFooter::decode(cut, 1, file_size, "s"); }),
              HasSubstr("no shard footer at byte offset"));
}

}  // namespace
}  // namespace stoker::io

namespace stoker::io {
namespace {

// Version 2's field block (docs/format.md): written by append_field_block, read back field by
// field; every malformed block is a reason, never a read out of bounds.
TEST(FieldBlock, RoundTripsAndNamesEachKindOfDamage) {
  const std::vector<uint8_t> image = {0xff, 0xd8, 1, 2, 3};
  std::vector<uint8_t> payload = image;
  const std::vector<std::string> values = {"a cat", "", std::string("\0\x01{}", 4)};
  append_field_block(payload, values);
  EXPECT_EQ(payload.size(), image.size() + 3 * 4 + 5 + 0 + 4 + 8);
  size_t image_length = 0;
  ASSERT_EQ(field_block_error(payload, 3, image_length), "");
  EXPECT_EQ(image_length, image.size());
  for (size_t k = 0; k < values.size(); ++k) {
    const auto bytes = field_bytes(payload, image_length, k);
    EXPECT_EQ(std::string(bytes.begin(), bytes.end()), values[k]) << k;
  }
  // No fields: the 8-byte end alone.
  std::vector<uint8_t> bare = image;
  append_field_block(bare, {});
  ASSERT_EQ(field_block_error(bare, 0, image_length), "");
  EXPECT_EQ(image_length, image.size());

  EXPECT_THAT(field_block_error(payload, 2, image_length),
              HasSubstr("field_count 3, the manifest lists 2"));
  EXPECT_THAT(field_block_error(std::span(payload).first(5), 3, image_length),
              HasSubstr("no room for its 8-byte end"));
  auto longer = payload;  // fields_length past the payload's start
  store_u32(longer.data() + longer.size() - 4, 1000);
  EXPECT_THAT(field_block_error(longer, 3, image_length), HasSubstr("fields_length 1000"));
  auto overrun = payload;  // the first field's length runs past the block
  store_u32(overrun.data() + image.size(), 0xFFFFFFF0u);
  EXPECT_THAT(field_block_error(overrun, 3, image_length), HasSubstr("field 0 runs past"));
  auto stray = payload;  // a byte between the last field and the end, counted in fields_length
  stray.insert(stray.end() - 8, 0x7f);
  store_u32(stray.data() + stray.size() - 4, load_u32(stray.data() + stray.size() - 4) + 1);
  EXPECT_THAT(field_block_error(stray, 3, image_length), HasSubstr("1 stray bytes"));
}

}  // namespace
}  // namespace stoker::io
