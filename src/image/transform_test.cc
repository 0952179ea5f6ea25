// The per-sample transform: torchvision's crop parameters, eval fidelity, determinism.

#include "stoker/transform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "image/decoders.h"
#include "image/test_util.h"
#include "stoker/error.h"

namespace stoker::test {
namespace {

// Golden parameters from an independent Python implementation of torchvision 0.14's
// RandomResizedCrop.get_params over the same SplitMix64 draws (make_fixtures.py).
TEST(TrainCrop, MatchesGoldenList) {
  std::ifstream list(fixture("crop_golden.txt"));
  ASSERT_TRUE(list.good());
  std::string line;
  int n = 0, fallbacks = 0;
  while (std::getline(list, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    uint64_t key;
    int w, h, top, left, ch, cw, flip;
    TransformConfig config;
    in >> key >> w >> h >> config.scale[0] >> config.scale[1] >> config.ratio[0] >>
        config.ratio[1] >> config.flip_p >> top >> left >> ch >> cw >> flip;
    ASSERT_FALSE(in.fail()) << line;
    Rng rng(key);
    const CropParams p = sample_train_crop(rng, w, h, config);
    EXPECT_EQ(p.crop.y, top) << line;
    EXPECT_EQ(p.crop.x, left) << line;
    EXPECT_EQ(p.crop.height, ch) << line;
    EXPECT_EQ(p.crop.width, cw) << line;
    EXPECT_EQ(p.flip, flip != 0) << line;
    fallbacks += (w == 300 && h == 300 && config.scale[0] > 1);
    ++n;
  }
  EXPECT_GE(n, 90);
  EXPECT_GT(fallbacks, 0);
}

TEST(TrainCrop, InsideTheImageAndDeterministic) {
  TransformConfig config;
  for (uint64_t key = 0; key < 2000; ++key) {
    const int w = 1 + static_cast<int>(mix64(key) % 1500);
    const int h = 1 + static_cast<int>(mix64(key + 99) % 1500);
    Rng a(key), b(key);
    const CropParams p = sample_train_crop(a, w, h, config);
    const CropParams q = sample_train_crop(b, w, h, config);
    ASSERT_GT(p.crop.width, 0);
    ASSERT_GT(p.crop.height, 0);
    ASSERT_GE(p.crop.x, 0);
    ASSERT_GE(p.crop.y, 0);
    ASSERT_LE(p.crop.x + p.crop.width, w);
    ASSERT_LE(p.crop.y + p.crop.height, h);
    ASSERT_EQ(p.crop.x, q.crop.x);
    ASSERT_EQ(p.crop.y, q.crop.y);
    ASSERT_EQ(p.crop.width, q.crop.width);
    ASSERT_EQ(p.flip, q.flip);
  }
}

TEST(TrainCrop, FallsBackToACentreCropAfterTenAttempts) {
  TransformConfig config;
  config.scale = {1.5, 2.0};  // every attempt asks for more than the whole image
  config.flip_p = 0.0;
  Rng rng(7);
  CropParams p = sample_train_crop(rng, 300, 300, config);
  EXPECT_EQ(p.crop.x, 0);
  EXPECT_EQ(p.crop.y, 0);
  EXPECT_EQ(p.crop.width, 300);
  EXPECT_EQ(p.crop.height, 300);
  // Exactly 10 x 2 draws, then the flip draw.
  Rng counted(7);
  for (int i = 0; i < 21; ++i) counted.next();
  EXPECT_EQ(rng.next(), counted.next());
  // Too wide for the ratio range: full height, width = round(h * max ratio), centred.
  p = sample_train_crop(rng, 3000, 200, config);
  EXPECT_EQ(p.crop.height, 200);
  EXPECT_EQ(p.crop.width, 267);
  EXPECT_EQ(p.crop.x, (3000 - 267) / 2);
  // Too tall: full width, height = round(w / min ratio).
  p = sample_train_crop(rng, 200, 3000, config);
  EXPECT_EQ(p.crop.width, 200);
  EXPECT_EQ(p.crop.height, 267);
  EXPECT_EQ(p.crop.y, (3000 - 267) / 2);
}

TEST(Config, ParseAndValidate) {
  EXPECT_EQ(parse_transform_kind("train"), TransformKind::kTrain);
  EXPECT_EQ(parse_transform_kind("eval"), TransformKind::kEval);
  EXPECT_EQ(parse_output_kind("float32"), OutputKind::kFloat32);
  EXPECT_EQ(parse_output_kind("uint8"), OutputKind::kUint8);
  try {
    parse_transform_kind("test");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.message()).find("train, eval"), std::string::npos);
  }
  try {
    parse_output_kind("fp16");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.message()).find("float32, uint8"), std::string::npos);
  }
  TransformConfig c;
  c.validate();
  EXPECT_EQ(c.sample_bytes(), 224u * 224u * 3u * 4u);
  c.output = OutputKind::kUint8;
  c.channels = 1;
  EXPECT_EQ(c.sample_bytes(), 224u * 224u);
  auto bad = [](auto mutate, const char* field) {
    TransformConfig t;
    mutate(t);
    try {
      t.validate();
      ADD_FAILURE() << field << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.message()).find(field), std::string::npos) << e.message();
    }
  };
  bad([](TransformConfig& t) { t.size = 0; }, "size");
  bad([](TransformConfig& t) { t.channels = 2; }, "channels");
  bad([](TransformConfig& t) { t.scale = {0.5, 0.1}; }, "scale");
  bad([](TransformConfig& t) { t.ratio = {0.0, 1.0}; }, "ratio");
  bad([](TransformConfig& t) { t.flip_p = 1.5; }, "flip_p");
  bad([](TransformConfig& t) { t.crop_fraction = 0; }, "crop_fraction");
  bad([](TransformConfig& t) { t.std[1] = 0; }, "std");
}

std::vector<uint8_t> run(const std::vector<uint8_t>& bytes, const TransformConfig& config,
                         uint64_t key, TransformScratch& scratch,
                         TransformTimings* timings = nullptr) {
  std::vector<uint8_t> out(config.sample_bytes());
  Rng rng(key);
  transform_sample(out.data(), bytes, "sample.jpg", config, rng, scratch, timings);
  return out;
}

// torchvision Resize(256) + CenterCrop(224) on a JPEG, against our eval transform.
TEST(Eval, MatchesTorchvision) {
  const auto jpeg = read_file(fixture("eval_src.jpg"));
  const DecodedRegion ref = decode_all(read_file(fixture("eval_ref.png")), "eval_ref.png");
  ASSERT_EQ(ref.width, 224);
  ASSERT_EQ(ref.height, 224);
  TransformScratch scratch;
  for (bool dct : {false, true}) {
    TransformConfig config;
    config.kind = TransformKind::kEval;
    config.output = OutputKind::kUint8;
    config.decode.dct_scaling = dct;
    const auto u8 = run(jpeg, config, 1, scratch);
    const auto d = diff(u8.data(), ref.pixels.data(), u8.size());
    std::printf("  eval vs torchvision, dct_scaling=%d: mean abs diff %.4f (0-255), max %d\n", dct,
                d.mean, d.max);
    RecordProperty(dct ? "eval_dct_mean_diff" : "eval_exact_mean_diff", std::to_string(d.mean));
    if (!dct) {
      EXPECT_LE(d.mean, 1.0);
      EXPECT_LE(d.max, 1);  // the box arithmetic differs from resize-then-crop only by rounding
    } else {
      EXPECT_LE(d.mean, 3.0);  // a 1/2-scale IDCT instead of full decode + wider filter
    }
    // Float output: torchvision's ToTensor + Normalize of the same uint8 pixels.
    config.output = OutputKind::kFloat32;
    const auto f = run(jpeg, config, 1, scratch);
    const float* out = reinterpret_cast<const float*>(f.data());
    double sum = 0;
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 224 * 224; ++i) {
        const float x = static_cast<float>(ref.pixels[i * 3 + c]) / 255.0f;
        const float want = (x - config.mean[c]) / config.std[c];
        sum += std::fabs(out[c * 224 * 224 + i] - want) * config.std[c] * 255.0;
        // And bit-exact against the uint8 output of the same config.
        const float mine_x = static_cast<float>(u8[i * 3 + c]) / 255.0f;
        ASSERT_EQ(out[c * 224 * 224 + i], (mine_x - config.mean[c]) / config.std[c]);
      }
    }
    const double mean = sum / (3.0 * 224 * 224);
    std::printf("  eval float32 vs torchvision, dct_scaling=%d: mean abs diff %.4f (0-255)\n", dct,
                mean);
    if (!dct) {
      EXPECT_LE(mean, 1.0);
    }
  }
}

// At scale 1 the train path is exactly crop-then-resize (torchvision's resized_crop), flipped.
TEST(Train, ExactModeIsCropThenResize) {
  const int w = 500, h = 375;
  const auto rgb = synthetic(w, h, 3);
  const auto jpeg = encode_jpeg(rgb.data(), w, h, 3, 90);
  const DecodedRegion full = decode_all(jpeg, "t.jpg");
  TransformConfig config;
  config.output = OutputKind::kUint8;
  config.decode.dct_scaling = false;
  TransformScratch scratch;
  std::vector<uint8_t> resized(224 * 224 * 3), expected(224 * 224 * 3), tmp;
  for (uint64_t key = 0; key < 20; ++key) {
    Rng rng(key);
    const CropParams p = sample_train_crop(rng, w, h, config);
    const Box box{double(p.crop.x), double(p.crop.y), double(p.crop.x + p.crop.width),
                  double(p.crop.y + p.crop.height)};
    resize_antialiased(resized.data(), 224, 224, full.pixels.data(), w, h, 3, box, box, tmp);
    copy_hwc(expected.data(), resized.data(), 224, 224, 3, p.flip);
    EXPECT_EQ(run(jpeg, config, key, scratch), expected) << "key " << key;
  }
}

TEST(Train, DctScalingStaysCloseToExact) {
  const int w = 1200, h = 900;
  const auto rgb = synthetic(w, h, 3);
  const auto jpeg = encode_jpeg(rgb.data(), w, h, 3, 90);
  TransformConfig exact, fast;
  exact.output = fast.output = OutputKind::kUint8;
  exact.decode.dct_scaling = false;
  exact.scale = fast.scale = {0.5, 1.0};  // crops large enough to use 1/2 or 1/4
  TransformScratch scratch;
  double worst = 0;
  for (uint64_t key = 0; key < 10; ++key) {
    const auto a = run(jpeg, exact, key, scratch);
    const auto b = run(jpeg, fast, key, scratch);
    worst = std::max(worst, diff(a.data(), b.data(), a.size()).mean);
  }
  std::printf("  train dct_scaling vs exact (synthetic 1200x900): worst mean abs diff %.3f\n",
              worst);
  EXPECT_LT(worst, 8.0);
}

TEST(Transform, SameKeySameBytesWhateverCameBefore) {
  const auto jpeg = read_file(fixture("eval_src.jpg"));
  const auto png = read_file(fixture("resize_src.png"));
  TransformConfig config;
  TransformScratch s1, s2;
  const auto a = run(jpeg, config, 42, s1);
  run(png, config, 43, s1);  // dirty the scratch with another sample and size
  const auto b = run(jpeg, config, 42, s1);
  const auto c = run(jpeg, config, 42, s2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_NE(a, run(jpeg, config, 44, s2));
}

TEST(Transform, GrayOutputAndTimings) {
  const auto jpeg = read_file(fixture("eval_src.jpg"));
  TransformConfig config;
  config.channels = 1;
  config.output = OutputKind::kUint8;
  config.size = 64;
  TransformScratch scratch;
  TransformTimings timings;
  const auto out = run(jpeg, config, 5, scratch, &timings);
  EXPECT_EQ(out.size(), 64u * 64u);
  EXPECT_GT(timings.decode_seconds, 0.0);
  EXPECT_GE(timings.augment_seconds, 0.0);
  // Gray output is the luma of the colour output, up to rounding of the two paths.
  config.channels = 3;
  const auto rgb = run(jpeg, config, 5, scratch);
  double sum = 0;
  for (int i = 0; i < 64 * 64; ++i) {
    const double l = (rgb[3 * i] * 299 + rgb[3 * i + 1] * 587 + rgb[3 * i + 2] * 114) / 1000.0;
    sum += std::fabs(l - out[i]);
  }
  EXPECT_LT(sum / (64 * 64), 2.0);
}

TEST(Transform, BadSampleThrowsWithItsName) {
  TransformConfig config;
  TransformScratch scratch;
  std::vector<uint8_t> out(config.sample_bytes());
  Rng rng(1);
  const std::vector<uint8_t> junk = {1, 2, 3};
  try {
    transform_sample(out.data(), junk, "dir/bad.bin", config, rng, scratch);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "dir/bad.bin: not a JPEG, PNG or WebP image");
  }
}

}  // namespace
}  // namespace stoker::test

namespace stoker::test {
namespace {

// The op list composes as documented: the ops draw from the sample's Rng right after the crop
// and flip draws and see the flipped, resized pixels; erasing draws after them and sets one
// rectangle of the normalised output. Checked against the plain transform plus the ops
// applied by hand from the same Rng state, for every policy, square and non-square sizes.
TEST(TransformOps, EqualThePlainTransformThenTheOpsThenErasing) {
  const auto jpeg = read_file(fixture("eval_src.jpg"));
  std::vector<AugmentOp> policies(4);
  policies[0].kind = AugmentOp::Kind::kTrivialAugmentWide;
  policies[1].kind = AugmentOp::Kind::kRandAugment;
  policies[2].kind = AugmentOp::Kind::kAutoAugment;
  policies[3].kind = AugmentOp::Kind::kColorJitter;
  policies[3].brightness = std::array<double, 2>{0.6, 1.4};
  policies[3].saturation = std::array<double, 2>{0.6, 1.4};
  policies[3].hue = std::array<double, 2>{-0.1, 0.1};
  TransformScratch scratch;
  int erased = 0, changed = 0;
  for (const auto& [h, w] : {std::pair{48, 48}, std::pair{40, 56}}) {
    for (const AugmentOp& op : policies) {
      for (uint64_t key = 0; key < 12; ++key) {
        TransformConfig plain;
        plain.height = h;
        plain.width = w;
        plain.output = OutputKind::kUint8;
        Rng rng(key);
        std::vector<uint8_t> want(plain.sample_bytes());
        transform_sample(want.data(), jpeg, "a.jpg", plain, rng, scratch);
        // `rng` now stands where the ops' draws begin.
        std::vector<uint8_t> op_scratch;
        const PixelImage image{want.data(), w, h, 3};
        apply_augment_op(op, rng, image, op_scratch);
        ErasingConfig erasing;
        erasing.p = 0.5;
        erasing.value = {-1.5f, 0.25f, 2.0f};
        const ErasePlan plan = sample_erasing(rng, w, h, erasing);
        const EraseBox box = plan.count > 0 ? plan.boxes[0] : EraseBox{};

        TransformConfig with_ops = plain;
        with_ops.ops = {op};
        const auto got_u8 = run(jpeg, with_ops, key, scratch);
        ASSERT_EQ(got_u8, want) << to_string(OutputKind::kUint8) << " key " << key;
        changed += got_u8 != run(jpeg, plain, key, scratch);

        with_ops.output = OutputKind::kFloat32;
        with_ops.erasing = erasing;
        const auto got = run(jpeg, with_ops, key, scratch);
        const auto* f = reinterpret_cast<const float*>(got.data());
        erased += box.height > 0;
        for (int c = 0; c < 3; ++c) {
          for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) {
              const bool in_box = y >= box.top && y < box.top + box.height && x >= box.left &&
                                  x < box.left + box.width;
              const float expect =
                  in_box
                      ? erasing.value[c]
                      : (want[(y * w + x) * 3 + c] / 255.0f - with_ops.mean[c]) / with_ops.std[c];
              ASSERT_EQ(f[(c * h + y) * w + x], expect) << "key " << key << " c " << c;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(erased, 10);   // p = 0.5 over 96 samples
  EXPECT_GT(changed, 60);  // the ops did something (Identity and skipped steps aside)
}

TEST(TransformOps, NonSquareOutputsAndTheirChecks) {
  const auto jpeg = read_file(fixture("eval_src.jpg"));
  TransformScratch scratch;
  for (const TransformKind kind : {TransformKind::kTrain, TransformKind::kEval}) {
    TransformConfig config;
    config.kind = kind;
    config.height = 30;
    config.width = 50;
    config.output = OutputKind::kUint8;
    EXPECT_EQ(config.sample_bytes(), 30u * 50u * 3u);
    EXPECT_TRUE(config.has_cpu_only_steps());
    const auto out = run(jpeg, config, 3, scratch);
    EXPECT_EQ(out.size(), 30u * 50u * 3u);
  }
  // Eval Resize(64) + CenterCrop((30, 50)) is the exact-size resize's centre window.
  TransformConfig eval;
  eval.kind = TransformKind::kEval;
  eval.resize = 64;
  eval.height = 30;
  eval.width = 50;
  eval.validate();
  eval.resize = 40;  // smaller than the crop's longer side
  EXPECT_THROW(eval.validate(), Error);
  eval.resize = 0;
  eval.resize_height = 40;  // Resize((40, 60)): exactly that, then the centre (30, 50)
  eval.resize_width = 60;
  eval.validate();
  EXPECT_EQ(run(jpeg, eval, 1, scratch).size(), 30u * 50u * 3u * sizeof(float));
  eval.resize_width = 45;  // narrower than the crop
  EXPECT_THROW(eval.validate(), Error);
  eval.resize_width = 0;  // height without width
  EXPECT_THROW(eval.validate(), Error);
  TransformConfig half;
  half.height = 30;  // width missing
  EXPECT_THROW(half.validate(), Error);
  TransformConfig bad_op;
  bad_op.ops.emplace_back();
  bad_op.ops[0].kind = AugmentOp::Kind::kRandAugment;
  bad_op.ops[0].magnitude = 31;  // bins are 0..30
  EXPECT_THROW(bad_op.validate(), Error);
  TransformConfig square;
  EXPECT_FALSE(square.has_cpu_only_steps());
}

// torch.rot90 and the shears keep every pixel inside for the exact cases; a blank image stays
// blank under every op but the inverting ones.
TEST(PixelOps, ExactCasesAndNames) {
  std::vector<uint8_t> px(4 * 4 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> scratch;
  auto turned = px;
  const PixelImage image{turned.data(), 4, 4, 3};
  for (int i = 0; i < 4; ++i) apply_pixel_op(PixelOp::kRotate, 90, image, scratch);
  EXPECT_EQ(turned, px);  // four quarter turns
  apply_pixel_op(PixelOp::kRotate, 90, image, scratch);
  // Counter-clockwise: the top-right pixel moves to the top-left.
  EXPECT_EQ(turned[0], px[3 * 3]);
  for (int i = 0; i <= static_cast<int>(PixelOp::kHue); ++i) {
    const auto op = static_cast<PixelOp>(i);
    EXPECT_EQ(parse_pixel_op(to_string(op)), op);
  }
  EXPECT_THROW(parse_pixel_op("Blur"), Error);
}

}  // namespace
}  // namespace stoker::test
