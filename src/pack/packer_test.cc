// pack_dataset (stoker/packed.h) end to end: every mode read back, the same bytes for any
// thread count and across resumes, shards cut by size, bad samples stopped or skipped and listed.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "image/decoders.h"
#include "io/packed_format.h"
#include "io/packed_shard.h"
#include "pack/test_util.h"
#include "stoker/dataset.h"
#include "stoker/image.h"
#include "stoker/packed.h"
#include "stoker/raw_image.h"
#include "stoker/rng.h"
#include "stoker/transform.h"

namespace stoker::io {
namespace {

namespace fs = std::filesystem;
using test::decode_all;
using test::error_of;
using test::files_of;
using test::make_folder;
using test::open_source;
using test::pack;
using test::slurp;
using test::spit;
using ::testing::HasSubstr;

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
    resize_antialiased(expected.data(), tw, th, full.pixels.data(), full.width, full.height, 3, box,
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

  // 4. Other options over a finished pack: refused, the pack untouched, unless `replace`;
  // then nothing is reused and stale shards beyond the new count are removed.
  PackConfig bigger = options;
  bigger.shard_size = 1 << 20;
  const auto manifest_before = slurp(b / "manifest.json");
  EXPECT_THAT(error_of([&] { pack(f->data, b, bigger); }), HasSubstr("made with other options"));
  EXPECT_EQ(slurp(b / "manifest.json"), manifest_before);
  bigger.replace = true;
  const PackResult other = pack(f->data, b, bigger);
  EXPECT_EQ(other.reused_shards, 0);
  EXPECT_EQ(other.shards, 1);
  EXPECT_FALSE(fs::exists(b / shard_file_name(1)));
  EXPECT_EQ(open_packed(b)->size(), 20);
}

// The packed format holds one label per record: a multi-label list is refused with a
// message, not packed with its labels lost. A label-free list packs (version 2), every label
// -1.
TEST(PackedTest, MultiLabelListsAreRefusedAndLabelFreeListsPackAsVersionTwo) {
  auto f = make_folder(3);
  const fs::path multi = f->dir.path() / "multi.csv";
  const std::string multi_text =
      "path,labels\ndata/class_0/img_00.jpg,1;2\ndata/class_1/img_01.jpg,0\n";
  spit(multi, std::vector<uint8_t>(multi_text.begin(), multi_text.end()));
  EXPECT_THAT(
      error_of([&] { pack_dataset(*open_dataset(multi), multi.string(), f->out, PackConfig{}); }),
      HasSubstr("a multi-label list cannot be packed yet"));
  const fs::path free = f->dir.path() / "free.csv";
  const std::string free_text = "path\ndata/class_0/img_00.jpg\ndata/class_1/img_01.jpg\n";
  spit(free, std::vector<uint8_t>(free_text.begin(), free_text.end()));
  pack_dataset(*open_dataset(free), free.string(), f->out, PackConfig{});
  EXPECT_EQ(verify_packed(f->out).records, 2);
  const PackedInfo info = inspect_packed(f->out);
  EXPECT_EQ(info.version, 2);
  EXPECT_TRUE(info.classes.empty());
  const auto packed = open_packed(f->out);
  const auto source = open_dataset(free);
  std::vector<uint8_t> a, b;
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(packed->label(i), -1);
    packed->read(i, a);
    source->read(i, b);
    EXPECT_EQ(a, b) << "original mode keeps the image bytes, the field block cut off";
  }
}

// Fields (version 2): a caption list's columns are kept per record and read back identical;
// the images are the bytes a pack without fields holds; a version-1 pack of the same source
// is unchanged by the feature (no "fields" in its options, the same bytes).
TEST(PackedTest, FieldsOfAListArePackedAndReadBackIdentical) {
  auto f = make_folder(9);
  const fs::path list = f->dir.path() / "captions.csv";
  std::string text = "path,label,caption,score\n";
  for (int k = 0; k < 9; ++k) {
    text +=
        fmt::format("data/class_{}/img_{:02d}.jpg,{},\"a picture, number {} \u00ab{}\u00bb\",{}\n",
                    k % 3, k, k % 3, k, k * 7, k * 0.125);
  }
  spit(list, std::vector<uint8_t>(text.begin(), text.end()));
  const FileListConfig columns{.field_columns = {"caption", "score"}};
  const auto source = open_dataset(list, columns);
  const fs::path with = f->dir.path() / "with", without = f->dir.path() / "without";
  PackConfig options{.mode = PackMode::kJpeg, .max_side = 64, .shard_size = 4096};
  pack_dataset(*open_dataset(list), list.string(), without, options);
  options.fields = {"caption", "score"};
  pack_dataset(*source, list.string(), with, options);

  EXPECT_EQ(inspect_packed(without).version, 1);
  EXPECT_EQ(inspect_packed(without).options_json.find("fields"), std::string::npos);
  EXPECT_EQ(verify_packed(with).records, 9);
  const PackedInfo info = inspect_packed(with);
  EXPECT_EQ(info.version, 2);
  ASSERT_EQ(info.fields.size(), 2u);
  EXPECT_EQ(info.fields[0], (std::pair<std::string, std::string>{"caption", "text"}));
  EXPECT_EQ(info.first_record_fields[0], "a picture, number 0 \u00ab0\u00bb");
  EXPECT_GT(info.shards.size(), 1u);

  const auto a = open_packed(with), b = open_packed(without);
  EXPECT_TRUE(a->has_field("caption"));
  EXPECT_FALSE(a->has_field("json"));
  EXPECT_EQ(a->field_kind("caption"), FieldKind::kText);
  std::vector<uint8_t> image_a, image_b;
  std::string got, want;
  for (int64_t i = 0; i < 9; ++i) {
    a->read(i, image_a);
    b->read(i, image_b);
    EXPECT_EQ(image_a, image_b) << i;
    EXPECT_EQ(a->label(i), b->label(i));
    for (const char* field : {"caption", "score"}) {
      a->read_field(i, field, got);
      source->read_field(i, field, want);
      EXPECT_EQ(got, want) << i << " " << field;
    }
  }
  // A field read after another sample's image is that sample's own (a thread keeps the last
  // record's fields only for that record), also across two open datasets of one pack.
  const auto again = open_packed(with);
  a->read(0, image_a);
  again->read(3, image_a);
  a->read_field(5, "caption", got);
  source->read_field(5, "caption", want);
  EXPECT_EQ(got, want);
  a->read_field(3, "caption", got);
  source->read_field(3, "caption", want);
  EXPECT_EQ(got, want);
  EXPECT_THAT(error_of([&] { a->read_field(0, "json", got); }), HasSubstr("no per-sample fields"));
  // Another field list is another pack: not resumed from these shards, and refused over them.
  options.fields = {"caption"};
  EXPECT_THAT(error_of([&] { pack_dataset(*source, list.string(), with, options); }),
              HasSubstr("made with other options"));
}

// A sample without a field, or whose text is not UTF-8, is a bad sample: the pack stops naming
// it, or (--bad-samples skip) leaves it out and lists it.
TEST(PackedTest, AMissingOrNonUtf8FieldIsABadSample) {
  auto f = make_folder(4);
  const fs::path list = f->dir.path() / "captions.jsonl";
  const std::string text =
      "{\"path\": \"data/class_0/img_00.jpg\", \"label\": 0, \"caption\": \"zero\"}\n"
      "{\"path\": \"data/class_1/img_01.jpg\", \"label\": 1}\n"
      "{\"path\": \"data/class_2/img_02.jpg\", \"label\": 2, \"caption\": \"two\"}\n";
  spit(list, std::vector<uint8_t>(text.begin(), text.end()));
  const auto source = open_dataset(list, FileListConfig{.field_columns = {"caption"}});
  PackConfig options{.fields = {"caption"}};
  EXPECT_THAT(error_of([&] { pack_dataset(*source, list.string(), f->out, options); }),
              HasSubstr("caption"));
  options.skip_bad_samples = true;
  const PackResult r = pack_dataset(*source, list.string(), f->out, options);
  EXPECT_EQ(r.records, 2);
  EXPECT_EQ(r.skipped, 1);
  const auto skipped = inspect_packed(f->out).skipped;
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_THAT(skipped[0].first, HasSubstr("img_01.jpg"));
  EXPECT_THAT(skipped[0].second, HasSubstr("no 'caption'"));
  std::string got;
  open_packed(f->out)->read_field(1, "caption", got);
  EXPECT_EQ(got, "two");

  const fs::path latin = f->dir.path() / "latin1.csv";
  const std::string latin_text = "path,label,caption\ndata/class_0/img_00.jpg,0,caf\xe9\n";
  spit(latin, std::vector<uint8_t>(latin_text.begin(), latin_text.end()));
  EXPECT_THAT(error_of([&] {
                pack_dataset(*open_dataset(latin, FileListConfig{.field_columns = {"caption"}}),
                             latin.string(), f->dir.path() / "latin",
                             PackConfig{.fields = {"caption"}});
              }),
              HasSubstr("its field 'caption' is not UTF-8 text (byte 3)"));
  EXPECT_THAT(error_of([&] {
                pack_dataset(*source, list.string(), f->dir.path() / "x",
                             PackConfig{.fields = {"nope"}});
              }),
              HasSubstr("has no field 'nope'"));
}

TEST(PackedTest, ASecondWriterOfOneOutFailsAtOnceNamingTheFirst) {
  // Before: two packs into one OUT raced on the same shard names ("wrote" from one, a failed
  // rename or a pack that verify rejects from the other). The lock is an flock on
  // OUT/.pack.lock: held here as another stoker pack would hold it.
  auto f = make_folder(4);
  fs::create_directories(f->out);
  const std::string lock_path = (f->out / ".pack.lock").string();
  const int held = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  auto source = open_source(f->data);
  EXPECT_THAT(error_of([&] { pack_dataset(*source, "data", f->out, PackConfig{}); }),
              HasSubstr("is being written by another stoker pack (it holds " + lock_path +
                        "): wait for it to finish, or give another OUT"));
  EXPECT_FALSE(fs::exists(f->out / packed::kManifestName));
  ::close(held);  // the first writer is done (or died): the next pack goes ahead
  EXPECT_NO_THROW(pack_dataset(*source, "data", f->out, PackConfig{}));
  EXPECT_TRUE(fs::exists(f->out / packed::kManifestName));
  EXPECT_NO_THROW(open_packed(f->out));
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

// jpeg mode writes restart markers (every 2 MCUs by default) so that a training crop
// entropy-decodes only the segments it touches: the records decode to the same pixels as
// without markers (the coefficients are the same), and every RandomResizedCrop of them, at
// every DCT scale the transform picks, gives the same bytes as from a pack without markers.
TEST(PackedTest, JpegRestartMarkersGiveTheSameTrainingBatchBytes) {
  auto f = make_folder(6, 400);
  const fs::path plain_out = f->dir.path() / "plain";
  pack(f->data, f->out, PackConfig{.mode = PackMode::kJpeg, .max_side = 256});
  pack(f->data, plain_out,
       PackConfig{.mode = PackMode::kJpeg, .max_side = 256, .restart_interval = 0});
  auto marked = open_packed(f->out);
  auto plain = open_packed(plain_out);
  EXPECT_NE(marked->fingerprint(), plain->fingerprint());  // the option shapes the bytes
  std::vector<uint8_t> a, b;
  int cuts = 0;
  for (int64_t i = 0; i < marked->size(); ++i) {
    marked->read(i, a);
    plain->read(i, b);
    EXPECT_GT(a.size(), b.size());
    EXPECT_EQ(decode_all(a).pixels, decode_all(b).pixels) << i;
    const ImageHeader h = probe_image(a, "marked");
    for (int size : {224, 96, 40}) {  // 40: DCT scales below 1 for large crops
      TransformConfig config;
      config.size = size;
      config.output = OutputKind::kFloat32;
      TransformScratch scratch;
      std::vector<uint8_t> out_a(config.sample_bytes()), out_b(config.sample_bytes());
      for (uint64_t seed = 0; seed < 30; ++seed) {
        Rng ra(seed), rb(seed), rc(seed);
        transform_sample(out_a.data(), a, "marked", config, ra, scratch);
        transform_sample(out_b.data(), b, "plain", config, rb, scratch);
        ASSERT_EQ(out_a, out_b) << "record " << i << " size " << size << " seed " << seed;
        const CropParams crop = sample_train_crop(rc, h.width, h.height, config);
        if (image::jpeg_restart_cut(a, h, crop.crop, 8).has_value()) ++cuts;
      }
    }
  }
  EXPECT_GT(cuts, 6 * 3 * 30 / 2);  // most crops were decoded from a cut
  EXPECT_THAT(inspect_packed(f->out).options_json, HasSubstr("\"restart_interval\":2"));
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
  EXPECT_THAT(error_of([&] {
                pack(f->data, f->out, PackConfig{.mode = PackMode::kJpeg, .restart_interval = -1});
              }),
              HasSubstr("--restart-interval"));
  EXPECT_THAT(error_of([] { parse_pack_mode("png"); }), HasSubstr("unknown pack mode"));
}

}  // namespace
}  // namespace stoker::io
