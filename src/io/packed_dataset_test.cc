// Reading packed datasets (src/io/packed_dataset.cc, packed_shard.cc, packed_manifest.cc): a
// clear error naming the file, record and offset for each kind of damage, mapped and pread
// reads agreeing, and a shard that shrinks under an open dataset failing, not crashing.
#include "io/packed_dataset.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/packed_format.h"
#include "io/packed_shard.h"
#include "pack/test_util.h"
#include "stoker/dataset.h"
#include "stoker/image.h"
#include "stoker/packed.h"
#include "stoker/raw_image.h"

namespace stoker::io {
namespace {

namespace fs = std::filesystem;
using test::decode_all;
using test::error_of;
using test::make_folder;
using test::pack;
using test::slurp;
using test::spit;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(PackedTest, FlippedBitIsNamedByVerifyAndRead) {
  auto f = make_folder(20);
  pack(f->data, f->out, PackConfig{.mode = PackMode::kJpeg, .max_side = 48, .shard_size = 6000});
  const fs::path shard = f->out / "shard-00001.stk";
  uint64_t record_offset, first_record;
  {
    const ShardFile s = ShardFile::open(shard.string(), "s");
    ASSERT_GT(s.record_count(), 2u);
    record_offset = s.entry(2).offset;
    first_record = s.first_record();
  }
  auto bytes = slurp(shard);
  bytes[record_offset + packed::kRecordHeaderSize + 100] ^= 0x10;
  spit(shard, bytes);

  const std::string verify = error_of([&] { verify_packed(f->out); });
  EXPECT_THAT(verify, HasSubstr(fmt::format("{}: record 2 at byte offset {}: checksum mismatch",
                                            shard.string(), record_offset)));
  auto packed = open_packed(f->out);  // open checks structure, not every record
  std::vector<uint8_t> out;
  EXPECT_THAT(error_of([&] { packed->read(static_cast<int64_t>(first_record) + 2, out); }),
              HasSubstr("record 2 at byte offset"));
  packed->read(static_cast<int64_t>(first_record) + 1, out);  // neighbours still read

  // A flipped bit in the index or the header fails at open.
  bytes[record_offset + packed::kRecordHeaderSize + 100] ^= 0x10;
  auto index_flip = bytes;
  index_flip[bytes.size() - packed::kShardFooterSize - 3] ^= 1;
  spit(shard, index_flip);
  EXPECT_THAT(error_of([&] { open_packed(f->out); }), HasSubstr("index checksum mismatch"));
  auto header_flip = bytes;
  header_flip[packed::header::kFirstRecord] ^= 1;
  spit(shard, header_flip);
  EXPECT_THAT(error_of([&] { open_packed(f->out); }), HasSubstr("header checksum mismatch"));
  spit(shard, bytes);
  verify_packed(f->out);
}

TEST(PackedTest, TruncatedMissingAndUnknownVersionShardsAreNamed) {
  auto f = make_folder(6);
  pack(f->data, f->out, PackConfig{});
  const fs::path shard = f->out / "shard-00000.stk";
  const auto bytes = slurp(shard);

  spit(shard, std::vector<uint8_t>(bytes.begin(), bytes.end() - 100));
  EXPECT_THAT(error_of([&] { open_packed(f->out); }),
              HasSubstr(shard.string() + ": no shard footer"));
  EXPECT_THAT(error_of([&] { verify_packed(f->out); }), HasSubstr("truncated"));
  spit(shard, std::vector<uint8_t>(bytes.begin(), bytes.begin() + 10));
  EXPECT_THAT(error_of([&] { open_packed(f->out); }), HasSubstr("truncated shard"));

  fs::remove(shard);
  EXPECT_THAT(error_of([&] { open_dataset(f->out); }),
              HasSubstr(shard.string() + ": missing shard"));

  auto future = bytes;
  future[packed::header::kVersion] = 3;  // little-endian u32: 1 -> 3
  spit(shard, future);
  EXPECT_THAT(error_of([&] { open_packed(f->out); }),
              HasSubstr("unsupported shard format version 3"));
  spit(shard, bytes);
  EXPECT_EQ(open_packed(f->out)->size(), 6);

  // A shard from another pack (other options) under the same name.
  const fs::path other = f->dir.path() / "other";
  pack(f->data, other, PackConfig{.mode = PackMode::kJpeg});
  fs::copy_file(other / "shard-00000.stk", shard, fs::copy_options::overwrite_existing);
  EXPECT_THAT(error_of([&] { open_packed(f->out); }), HasSubstr("shard-00000.stk"));
}

// Records are copied out of the mapped shard (or, with IoConfig::packed_io = kPread, read with
// preadv): both give the same bytes. A shard cut short while open makes its pages unreadable
// (SIGBUS through the mapping), which must become an error naming the shard and record, not a
// crash, for labels as for records.
// Past the eager budget (10^9-sample packs) open reads only the manifest and each shard is
// opened and checked on first use: a damaged shard is then an error where it is read, naming
// it as open would, every time it is read (no half-opened shard is kept), while the other
// shards read normally; mended, it reads.
TEST(PackedTest, ShardsPastTheEagerBudgetAreCheckedOnFirstUse) {
  auto f = make_folder(20);
  pack(f->data, f->out, PackConfig{.mode = PackMode::kJpeg, .max_side = 48, .shard_size = 6000});
  const auto eager = open_packed(f->out);
  const fs::path shard = f->out / "shard-00001.stk";
  uint64_t first = 0, count = 0;
  {
    const ShardFile s = ShardFile::open(shard.string(), "s");
    first = s.first_record();
    count = s.record_count();
  }
  ASSERT_GT(first, 0u);
  const auto bytes = slurp(shard);
  spit(shard, std::vector<uint8_t>(bytes.begin(), bytes.end() - 100));
  EXPECT_THAT(error_of([&] { open_packed(f->out); }),
              HasSubstr(shard.string() + ": no shard footer"));

  const auto lazy = open_packed_dataset(f->out, 0);
  EXPECT_EQ(lazy->size(), eager->size());
  EXPECT_EQ(lazy->fingerprint(), eager->fingerprint());
  EXPECT_EQ(lazy->name(0), eager->name(0));
  std::vector<uint8_t> got, want;
  lazy->read(0, got);
  eager->read(0, want);
  EXPECT_EQ(got, want);
  for (int attempt = 0; attempt < 2; ++attempt) {
    EXPECT_THAT(error_of([&] { lazy->read(static_cast<int64_t>(first), got); }),
                HasSubstr(shard.string() + ": no shard footer"));
    EXPECT_THAT(error_of([&] { lazy->label(static_cast<int64_t>(first + count - 1)); }),
                HasSubstr(shard.string() + ": no shard footer"));
  }
  spit(shard, bytes);
  lazy->read(static_cast<int64_t>(first), got);
  eager->read(static_cast<int64_t>(first), want);
  EXPECT_EQ(got, want);
  EXPECT_EQ(lazy->label(static_cast<int64_t>(first)), eager->label(static_cast<int64_t>(first)));
}

TEST(PackedTest, PreadAndMappedReadsAgreeAndAShrunkShardIsAnErrorNotACrash) {
  auto f = make_folder(6);
  pack(f->data, f->out, PackConfig{});
  const fs::path shard = f->out / "shard-00000.stk";
  // pread mode maps nothing, not even the index (a file system that refuses mmap must work):
  // the shard is not in /proc/self/maps until the mapped open.
  const auto maps_shard = [&] {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (line.find(fs::canonical(shard).string()) != std::string::npos) return true;
    }
    return false;
  };
  IoConfig pread_io;
  pread_io.packed_io = PackedIo::kPread;
  const auto preads = open_dataset(f->out, {}, pread_io);
  std::vector<uint8_t> probe;
  preads->read(0, probe);
  EXPECT_FALSE(maps_shard());
  const auto mapped = open_dataset(f->out);
  EXPECT_TRUE(maps_shard());
  std::vector<uint8_t> a, b;
  for (int64_t i = 0; i < mapped->size(); ++i) {
    mapped->read(i, a);
    preads->read(i, b);
    EXPECT_EQ(a, b) << i;
    EXPECT_FALSE(a.empty());
  }

  fs::resize_file(shard, 4096);  // the header page stays; records and index are gone
  for (int64_t i = 0; i < mapped->size(); ++i) {
    EXPECT_THAT(error_of([&] { mapped->read(i, a); }),
                AllOf(HasSubstr(shard.string() + ": record"), HasSubstr("cannot be read")));
    EXPECT_THAT(error_of([&] { mapped->label(i); }), HasSubstr("index entry at byte offset"));
    EXPECT_THAT(error_of([&] { preads->label(i); }), HasSubstr("cannot be read"));
  }
}

TEST(PackedTest, BadManifestsAreNamed) {
  auto f = make_folder(4);
  pack(f->data, f->out, PackConfig{});
  const fs::path manifest = f->out / "manifest.json";
  const auto good = slurp(manifest);
  std::string text(good.begin(), good.end());

  spit(manifest, std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2));
  EXPECT_THAT(error_of([&] { open_packed(f->out); }),
              HasSubstr(manifest.string() + ": not valid JSON"));

  auto edit = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    spit(manifest, std::vector<uint8_t>(t.begin(), t.end()));
    return error_of([&] { open_packed(f->out); });
  };
  EXPECT_THAT(edit("\"version\": 1", "\"version\": 7"), HasSubstr("unsupported format version 7"));
  EXPECT_THAT(edit("\"records\": 4", "\"records\": 5"), HasSubstr("records"));
  EXPECT_THAT(edit("shard-00000.stk", "../x.stk"), HasSubstr("should be \"shard-00000.stk\""));
  EXPECT_THAT(edit("\"fingerprint\": \"", "\"fingerprint\": \"0"), HasSubstr("fingerprint"));
  EXPECT_THAT(edit("\"classes\"", "\"klasses\""), HasSubstr("missing field \"classes\""));
  fs::remove(manifest);
  // Without a manifest the folder is not packed; as an image folder it has no classes.
  EXPECT_FALSE(is_packed_dataset(f->out));
  EXPECT_THAT(error_of([&] { open_packed(f->out); }), HasSubstr("manifest"));
}

// Regression (found while writing the manifest fuzz harness; libFuzzer's inputs are too short
// to reach it): options nesting a million arrays overflowed the stack in the recursive dump()
// of the parsed options (SIGSEGV in `stoker inspect`).
TEST(PackedTest, DeeplyNestedManifestIsAnErrorNotAStackOverflow) {
  auto f = make_folder(2);
  pack(f->data, f->out, PackConfig{});
  const fs::path manifest = f->out / "manifest.json";
  const auto good = slurp(manifest);
  const std::string text(good.begin(), good.end());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    spit(manifest, std::vector<uint8_t>(t.begin(), t.end()));
  };
  const int depth = 1'000'000;
  with("\"options\": {",
       "\"options\": {\"deep\": " + std::string(depth, '[') + std::string(depth, ']') + ", ");
  EXPECT_THAT(error_of([&] { open_packed(f->out); }),
              HasSubstr(manifest.string() + ": JSON nested deeper than 32 levels"));
  // Brackets inside strings (a class name, with an escaped quote) are not nesting.
  auto classes = text.find("\"classes\": [");
  ASSERT_NE(classes, std::string::npos);
  const size_t name = text.find('"', text.find('[', classes)) + 1;
  std::string t = text;
  t.insert(name, "\\\"" + std::string(100, '[') + std::string(50, '{'));
  spit(manifest, std::vector<uint8_t>(t.begin(), t.end()));
  auto data = open_packed(f->out);
  EXPECT_EQ(data->classes()[0].substr(0, 4), "\"[[[");
}

}  // namespace
}  // namespace stoker::io

namespace stoker::io {
namespace {

// Packs written by the version-1 writer, before version 2 existed (tests/fixtures/packed-v1):
// they open, verify and read as they did, each record's bytes exactly those its index points
// at (no field block is cut off a version-1 payload).
TEST(PackedTest, VersionOnePacksStillReadAndVerify) {
  for (const char* mode : {"jpeg", "raw"}) {
    const fs::path dir = fs::path(STOKER_PACKED_V1_FIXTURES) / mode;
    SCOPED_TRACE(dir.string());
    EXPECT_EQ(verify_packed(dir).records, 3);
    const PackedInfo info = inspect_packed(dir);
    EXPECT_EQ(info.version, 1);
    EXPECT_TRUE(info.fields.empty());
    EXPECT_EQ(info.classes, (std::vector<std::string>{"c0", "c1"}));
    const auto data = open_packed(dir);
    ASSERT_EQ(data->size(), 3);
    EXPECT_FALSE(data->has_field("txt"));
    const auto shard = slurp(dir / "shard-00000.stk");
    const uint64_t index_at = packed::load_u64(shard.data() + shard.size() - 64 + 16);
    std::vector<uint8_t> out;
    for (int64_t i = 0; i < 3; ++i) {
      const uint8_t* entry = shard.data() + index_at + 24 * i;
      const uint64_t offset = packed::load_u64(entry);
      const uint32_t length = packed::load_u32(entry + 8);
      data->read(i, out);
      EXPECT_EQ(out, std::vector<uint8_t>(shard.begin() + offset + 32,
                                          shard.begin() + offset + 32 + length));
      EXPECT_EQ(data->label(i), packed::load_u32(entry + 12));
    }
  }
}

}  // namespace
}  // namespace stoker::io
