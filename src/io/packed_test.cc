// Packed datasets end to end: pack in every mode, read back, determinism across threads and
// resumes, and a clear error for each kind of damage.
#include "stoker/packed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/packed_shard.h"
#include "io/test_util.h"
#include "stoker/dataset.h"
#include "stoker/image.h"
#include "stoker/packed_format.h"
#include "stoker/raw_image.h"

namespace stoker::io {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::TempDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<uint8_t> slurp(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void spit(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A textured picture (gradients, checks and noise), deterministic per seed.
std::vector<uint8_t> picture(int width, int height, int seed) {
  std::vector<uint8_t> p(static_cast<size_t>(width) * height * 3);
  uint32_t state = 977u * seed + 1;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        state = state * 1664525u + 1013904223u;
        const int v = (x * (2 + c) + y * (4 - c) + seed * 31 + (x / 8 + y / 8) % 2 * 50 +
                       static_cast<int>(state >> 29)) %
                      256;
        p[(static_cast<size_t>(y) * width + x) * 3 + c] = static_cast<uint8_t>(v);
      }
    }
  }
  return p;
}

struct Folder {
  TempDir dir;
  fs::path data;  // dir/data: class_0/img_00.jpg, ...
  fs::path out;   // dir/out: where packs go
};

// `count` JPEGs in 3 classes, sizes varying (landscape and portrait), index order = k.
std::unique_ptr<Folder> make_folder(int count, int base = 96) {
  auto f = std::make_unique<Folder>();
  f->data = f->dir.path() / "data";
  f->out = f->dir.path() / "out";
  for (int k = 0; k < count; ++k) {
    const int w = base + 8 * (k % 5), h = base - 16 + 8 * (k % 3);
    const auto pixels = k % 2 == 0 ? picture(w, h, k) : picture(h, w, k);
    const auto jpeg = k % 2 == 0 ? encode_jpeg(pixels.data(), w, h, 3, 90)
                                 : encode_jpeg(pixels.data(), h, w, 3, 90);
    const fs::path file =
        f->data / fmt::format("class_{}", k % 3) / fmt::format("img_{:02d}.jpg", k);
    fs::create_directories(file.parent_path());
    spit(file, jpeg);
  }
  return f;
}

std::shared_ptr<Dataset> open_source(const fs::path& data) {
  return open_image_folder(data, ImageFolderConfig{.cache = "off"});
}

PackResult pack(const fs::path& data, const fs::path& out, PackConfig options) {
  auto source = open_source(data);
  return pack_dataset(*source, data.string(), out, options);
}

// Every file of a folder, by name.
std::map<std::string, std::vector<uint8_t>> files_of(const fs::path& dir) {
  std::map<std::string, std::vector<uint8_t>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    files[e.path().filename().string()] = slurp(e.path());
  }
  return files;
}

// Decodes an encoded payload whole at scale 1.
DecodedRegion decode_all(const std::vector<uint8_t>& bytes) {
  const ImageHeader h = probe_image(bytes, "x");
  DecodedRegion r;
  DecodeConfig options;
  options.dct_scaling = false;
  decode_region(r, bytes, h, Rect{0, 0, h.width, h.height}, h.width, h.height, 3, "x", options);
  return r;
}

TEST(PackedTest, OriginalRoundTripKeepsBytesLabelsAndClasses) {
  auto f = make_folder(12);
  const PackResult r = pack(f->data, f->out, PackConfig{.threads = 3});
  EXPECT_EQ(r.records, 12);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_EQ(r.shards, 1);
  auto source = open_source(f->data);
  auto packed = open_dataset(f->out);  // the open_dataset hook
  ASSERT_EQ(packed->size(), source->size());
  EXPECT_EQ(packed->classes(), source->classes());
  std::vector<uint8_t> a, b;
  for (int64_t i = 0; i < source->size(); ++i) {
    source->read(i, a);
    packed->read(i, b);
    EXPECT_EQ(a, b) << i;
    EXPECT_EQ(packed->label(i), source->label(i));
    EXPECT_EQ(packed->name(i), fmt::format("{}#{}", (f->out / "shard-00000.stk").string(), i));
  }
  EXPECT_EQ(packed->fingerprint().size(), 16u);
  EXPECT_THAT(packed->describe(), HasSubstr("packed"));
  // The manifest file itself opens too, and is recognised; the source folder is not.
  EXPECT_TRUE(is_packed_dataset(f->out / "manifest.json"));
  EXPECT_FALSE(is_packed_dataset(f->data));
  EXPECT_EQ(open_dataset(f->out / "manifest.json")->size(), 12);
  EXPECT_THAT(error_of([&] { packed->read(12, b); }), HasSubstr("out of range"));
  const VerifyReport v = verify_packed(f->out);
  EXPECT_EQ(v.records, 12);
  EXPECT_EQ(v.shards, 1);
  const PackedInfo info = inspect_packed(f->out);
  EXPECT_EQ(info.records, 12);
  EXPECT_EQ(info.class_counts, (std::vector<int64_t>{4, 4, 4}));
  EXPECT_THAT(info.options_json, HasSubstr("\"mode\":\"original\""));
}

TEST(PackedTest, JpegModeResizesLongerOrShorterSide) {
  auto f = make_folder(6, 120);
  pack(f->data, f->out, PackConfig{.mode = PackMode::kJpeg, .max_side = 64, .quality = 85});
  auto source = open_source(f->data);
  auto packed = open_packed(f->out);
  std::vector<uint8_t> bytes;
  for (int64_t i = 0; i < packed->size(); ++i) {
    source->read(i, bytes);
    const ImageHeader s = probe_image(bytes, "src");
    packed->read(i, bytes);
    const ImageHeader p = probe_image(bytes, packed->name(i));
    EXPECT_EQ(p.format, ImageFormat::kJpeg);
    EXPECT_EQ(std::max(p.width, p.height), 64);
    const double scale = 64.0 / std::max(s.width, s.height);
    EXPECT_EQ(p.width, static_cast<int>(std::nearbyint(s.width * scale)));
    EXPECT_EQ(p.height, static_cast<int>(std::nearbyint(s.height * scale)));
    EXPECT_EQ(decode_all(bytes).width, p.width);  // decodes
  }
  const fs::path out2 = f->dir.path() / "short";
  pack(f->data, out2, PackConfig{.mode = PackMode::kJpeg, .short_side = 50});
  packed = open_packed(out2);
  for (int64_t i = 0; i < packed->size(); ++i) {
    packed->read(i, bytes);
    const ImageHeader p = probe_image(bytes, packed->name(i));
    EXPECT_EQ(std::min(p.width, p.height), 50);
  }
  // A max side above the image keeps its size (never upscales).
  const fs::path out3 = f->dir.path() / "big";
  pack(f->data, out3, PackConfig{.mode = PackMode::kJpeg, .max_side = 4096});
  source->read(0, bytes);
  const ImageHeader s0 = probe_image(bytes, "src");
  open_packed(out3)->read(0, bytes);
  const ImageHeader p0 = probe_image(bytes, "packed");
  EXPECT_EQ(p0.width, s0.width);
  EXPECT_EQ(p0.height, s0.height);
}

TEST(PackedTest, RawModeStoresDecodedResizedPixels) {
  // Target side 72 of <= 136: above half the size, so no DCT scaling applies and the expected
  // pixels are a scale-1 decode plus the PIL-like resize of the whole image.
  auto f = make_folder(5, 104);
  pack(f->data, f->out, PackConfig{.mode = PackMode::kRaw, .max_side = 72});
  const fs::path zout = f->dir.path() / "zstd";
  pack(f->data, zout, PackConfig{.mode = PackMode::kRaw, .max_side = 72, .zstd_level = 3});
  auto source = open_source(f->data);
  auto raw = open_packed(f->out);
  auto zraw = open_packed(zout);
  std::vector<uint8_t> bytes, payload, zpayload, scratch;
  for (int64_t i = 0; i < source->size(); ++i) {
    source->read(i, bytes);
    const DecodedRegion full = decode_all(bytes);
    const double scale = 72.0 / std::max(full.width, full.height);
    const int tw = static_cast<int>(std::nearbyint(full.width * scale));
    const int th = static_cast<int>(std::nearbyint(full.height * scale));
    std::vector<uint8_t> expected(static_cast<size_t>(tw) * th * 3);
    const Box box{0, 0, double(full.width), double(full.height)};
    resize_bilinear(expected.data(), tw, th, full.pixels.data(), full.width, full.height, 3, box,
                    box, scratch);

    raw->read(i, payload);
    ASSERT_TRUE(is_raw_image(payload));
    const RawImageInfo info = probe_raw(payload, raw->name(i));
    EXPECT_EQ(info.width, tw);
    EXPECT_EQ(info.height, th);
    EXPECT_EQ(info.compression, 0);
    DecodedRegion got;
    decode_raw_region(got, payload, Rect{0, 0, tw, th}, 3, raw->name(i));
    EXPECT_EQ(got.pixels, expected) << i;

    zraw->read(i, zpayload);
    EXPECT_EQ(probe_raw(zpayload, "z").compression, 1);
    DecodedRegion zgot;
    decode_raw_region(zgot, zpayload, Rect{0, 0, tw, th}, 3, "z");
    EXPECT_EQ(zgot.pixels, expected) << i;
  }
  verify_packed(zout);
}

TEST(PackedTest, SameBytesForAnyThreadCountAndShardsCutBySize) {
  auto f = make_folder(20);
  const fs::path one = f->dir.path() / "one", four = f->dir.path() / "four";
  PackConfig options{.mode = PackMode::kJpeg, .max_side = 48, .shard_size = 6000};
  options.threads = 1;
  const PackResult r1 = pack(f->data, one, options);
  options.threads = 4;
  const PackResult r4 = pack(f->data, four, options);
  EXPECT_GT(r1.shards, 2);
  EXPECT_EQ(r1.shards, r4.shards);
  EXPECT_EQ(files_of(one), files_of(four));
  // Each shard stays within the size unless it holds a single record.
  auto packed = open_packed(one);
  for (const auto& [name, bytes] : files_of(one)) {
    if (name == "manifest.json") continue;
    const ShardFile s = ShardFile::open((one / name).string(), name);
    if (s.record_count() > 1) {
      EXPECT_LE(s.index_offset() + s.record_count() * 24, 6000u) << name;
    }
  }
  EXPECT_EQ(packed->size(), 20);
  verify_packed(one);
}

TEST(PackedTest, InterruptedPackResumesToIdenticalBytes) {
  auto f = make_folder(20);
  const fs::path ref = f->dir.path() / "ref";
  const PackConfig options{.mode = PackMode::kJpeg, .max_side = 48, .shard_size = 6000};
  const PackResult full = pack(f->data, ref, options);
  ASSERT_GT(full.shards, 2);
  const auto expected = files_of(ref);

  // 1. A crash after the last shard was renamed but before the manifest: delete both.
  const fs::path a = f->dir.path() / "a";
  fs::copy(ref, a);
  fs::remove(a / "manifest.json");
  fs::remove(a / shard_file_name(full.shards - 1));
  spit(a / (shard_file_name(full.shards - 1) + ".tmp"), {1, 2, 3});  // a half-written temp
  EXPECT_FALSE(is_packed_dataset(a));
  const PackResult resumed = pack(f->data, a, options);
  EXPECT_EQ(resumed.reused_shards, full.shards - 1);
  EXPECT_EQ(files_of(a), expected);

  // 2. An interruption in the middle (the progress hook throws), then the same command.
  const fs::path b = f->dir.path() / "b";
  PackConfig interrupting = options;
  interrupting.progress = [](const PackProgress& p) {
    if (p.done == 11) throw std::runtime_error("interrupted");
  };
  EXPECT_THROW(pack(f->data, b, interrupting), std::runtime_error);
  EXPECT_FALSE(fs::exists(b / "manifest.json"));
  for (const auto& e : fs::directory_iterator(b)) {
    EXPECT_FALSE(e.path().string().ends_with(".tmp")) << e.path();
  }
  const PackResult second = pack(f->data, b, options);
  EXPECT_GT(second.reused_shards, 0);
  EXPECT_EQ(files_of(b), expected);

  // 3. Running it once more finds a complete pack and writes nothing.
  const PackResult third = pack(f->data, b, options);
  EXPECT_TRUE(third.already_complete);
  EXPECT_EQ(third.records, 20);

  // 4. Other options: nothing is reused; stale shards beyond the new count are removed.
  PackConfig bigger = options;
  bigger.shard_size = 1 << 20;
  const PackResult other = pack(f->data, b, bigger);
  EXPECT_EQ(other.reused_shards, 0);
  EXPECT_EQ(other.shards, 1);
  EXPECT_FALSE(fs::exists(b / shard_file_name(1)));
  EXPECT_EQ(open_packed(b)->size(), 20);
}

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
  future[packed::header::kVersion] = 2;  // little-endian u32: 1 -> 2
  spit(shard, future);
  EXPECT_THAT(error_of([&] { open_packed(f->out); }),
              HasSubstr("unsupported shard format version 2"));
  spit(shard, bytes);
  EXPECT_EQ(open_packed(f->out)->size(), 6);

  // A shard from another pack (other options) under the same name.
  const fs::path other = f->dir.path() / "other";
  pack(f->data, other, PackConfig{.mode = PackMode::kJpeg});
  fs::copy_file(other / "shard-00000.stk", shard, fs::copy_options::overwrite_existing);
  EXPECT_THAT(error_of([&] { open_packed(f->out); }), HasSubstr("shard-00000.stk"));
}

// Records are copied out of the mapped shard (or, with STOKER_PACKED_IO=pread, read with
// preadv): both give the same bytes. A shard cut short while open makes its pages unreadable
// (SIGBUS through the mapping), which must become an error naming the shard and record, not a
// crash, for labels as for records.
TEST(PackedTest, PreadAndMappedReadsAgreeAndAShrunkShardIsAnErrorNotACrash) {
  auto f = make_folder(6);
  pack(f->data, f->out, PackConfig{});
  const fs::path shard = f->out / "shard-00000.stk";
  const auto mapped = open_dataset(f->out);
  ::setenv("STOKER_PACKED_IO", "pread", 1);
  const auto preads = open_dataset(f->out);
  ::unsetenv("STOKER_PACKED_IO");
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

TEST(PackedTest, BadSamplesStopOrAreSkippedAndListed) {
  auto f = make_folder(9);
  // A truncated JPEG (no end of image) and a non-image, both with image extensions.
  const fs::path bad1 = f->data / "class_1" / "img_04.jpg";
  auto jpeg = slurp(bad1);
  spit(bad1, std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + jpeg.size() / 2));
  const fs::path bad2 = f->data / "class_2" / "img_zz.jpg";
  spit(bad2, {'n', 'o', 't'});

  const PackConfig jpeg_mode{.mode = PackMode::kJpeg, .max_side = 48};
  EXPECT_THAT(error_of([&] { pack(f->data, f->out, jpeg_mode); }), HasSubstr(bad1.string()));
  EXPECT_FALSE(fs::exists(f->out / "manifest.json"));

  PackConfig skip = jpeg_mode;
  skip.skip_bad_samples = true;
  skip.shard_size = 5000;
  const PackResult r = pack(f->data, f->out, skip);
  EXPECT_EQ(r.skipped, 2);
  EXPECT_EQ(r.records, 8);
  const PackedInfo info = inspect_packed(f->out);
  ASSERT_EQ(info.skipped.size(), 2u);
  EXPECT_EQ(info.skipped[0].first, bad1.string());
  EXPECT_EQ(info.skipped[1].first, bad2.string());
  EXPECT_EQ(info.source_samples, 10);
  verify_packed(f->out);

  // The skipped list survives a resume (it is kept in the shards too).
  const auto expected = files_of(f->out);
  fs::remove(f->out / "manifest.json");
  fs::remove(f->out / shard_file_name(info.shards.size() - 1));
  pack(f->data, f->out, skip);
  EXPECT_EQ(files_of(f->out), expected);
}

TEST(PackedTest, OptionsAreValidated) {
  auto f = make_folder(2);
  EXPECT_THAT(error_of([&] {
                pack(f->data, f->out, PackConfig{.mode = PackMode::kOriginal, .max_side = 9});
              }),
              HasSubstr("mode original"));
  EXPECT_THAT(error_of([&] {
                pack(f->data, f->out,
                     PackConfig{.mode = PackMode::kJpeg, .max_side = 9, .short_side = 9});
              }),
              HasSubstr("not both"));
  EXPECT_THAT(error_of([&] { pack(f->data, f->out, PackConfig{.zstd_level = 3}); }),
              HasSubstr("mode raw"));
  EXPECT_THAT(error_of([] { parse_pack_mode("png"); }), HasSubstr("unknown pack mode"));
}

}  // namespace
}  // namespace stoker::io
