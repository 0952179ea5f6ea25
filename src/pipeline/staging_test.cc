// AugmentMode::kDeferred (the GPU path's CPU half): staged batches, augmented by the shared
// kernels on the host, are the CPU loader's batches byte for byte; staging areas that overflow
// grow instead of truncating; batch memory comes from the configured HostMemory.

#include "pipeline/staging.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "image/augment_kernel.h"
#include "image/staged_geometry.h"
#include "pipeline/test_util.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/loader.h"
#include "stoker/rng.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using image::output_spec;
using image::staged_geometry;
using image::StagedView;
using pipeline::Staging;

StagedView view_of(const Batch& b) {
  return StagedView{b.staged, b.batch_size, b.channels, b.staged_bytes, b.index};
}

class DeferredTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>("staging_test");
    root_ = dir_->path();
    // Up to 700 pixels: large crops decode at DCT scales 1/2 and 1/4.
    test::write_jpeg_folder(root_, {.images = kImages,
                                    .classes = 2,
                                    .seed = 9,
                                    .min_side = 30,
                                    .width_spread = 670,
                                    .height_spread = 500,
                                    .x_gradient = 2,
                                    .y_gradient = 1,
                                    .noise = 30});
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static LoaderConfig config(int threads, int batch) {
    return test::one_rank_config(threads, batch, 40, 11);
  }

  // The deferred batch's images after the shared kernels (the GPU's arithmetic) on the host;
  // encoded slots are decoded first by the host reference of the GPU decode, into memory after
  // the staged bytes (as the Augmenter lays out its device staging buffer).
  static std::vector<uint8_t> augment_on_host(const Batch& b, const TransformConfig& t) {
    const StagedView view = view_of(b);
    size_t end = b.staged_bytes;
    const std::vector<image::DecodedSlot> decoded =
        image::encoded_layout(view, b.staged_bytes, &end);
    std::vector<uint8_t> memory(std::max(end, b.staged_bytes));
    std::copy(b.images.begin(), b.images.begin() + static_cast<std::ptrdiff_t>(b.staged_bytes),
              memory.begin());
    image::decode_encoded_on_host(view, b.images.data(), decoded, memory.data(), t.decode);
    std::vector<augment::Geometry> geometry(static_cast<size_t>(b.batch_size));
    const int64_t ints = staged_geometry(view, t.size, geometry.data(), decoded);
    std::vector<int32_t> tables(static_cast<size_t>(ints));
    std::vector<uint8_t> out(t.sample_bytes() * b.batch_size, 0xA5);
    augment::augment_batch_host(out.data(), memory.data(), tables.data(), geometry.data(),
                                b.batch_size, output_spec(t));
    return out;
  }

  static int encoded_slots(const Batch& b) {
    return static_cast<int>(
        std::count_if(b.staged.begin(), b.staged.end(),
                      [](const StagedRegion& s) { return s.encoded_bytes > 0; }));
  }

  // Runs epoch `epoch` of both loaders and compares every batch. Returns the batches seen;
  // *encoded (when given) gets the slots staged encoded.
  static int compare_epoch(Loader& cpu, Loader& deferred, int64_t epoch, int* encoded = nullptr) {
    cpu.set_epoch(epoch);
    deferred.set_epoch(epoch);
    int batches = 0;
    while (auto want = cpu.next()) {
      auto got = deferred.next();
      EXPECT_TRUE(got != nullptr);
      if (!got) return batches;
      EXPECT_EQ(got->labels, want->labels);
      EXPECT_EQ(got->indices, want->indices);
      EXPECT_EQ(got->valid, want->valid);
      EXPECT_EQ(got->global_valid, want->global_valid);
      EXPECT_EQ(got->staged.size(), static_cast<size_t>(got->batch_size));
      EXPECT_LE(got->staged_bytes, got->images.size());
      if (encoded != nullptr) *encoded += encoded_slots(*got);
      const auto images = augment_on_host(*got, deferred.config().transform);
      EXPECT_TRUE(
          std::equal(images.begin(), images.end(), want->images.begin(), want->images.end()))
          << "epoch " << epoch << " batch " << want->index;
      ++batches;
    }
    EXPECT_EQ(deferred.next(), nullptr);
    return batches;
  }

  static constexpr int kImages = 23;
  static inline std::unique_ptr<test::TempDir> dir_;
  static inline fs::path root_;
};

TEST_F(DeferredTest, StagedBatchesAugmentToTheCpuBatches) {
  auto data = open_image_folder(root_, {.cache = "off"});
  struct Variant {
    TransformKind kind;
    OutputKind output;
    int channels;
  };
  for (const Variant v : {Variant{TransformKind::kTrain, OutputKind::kFloat32, 3},
                          Variant{TransformKind::kTrain, OutputKind::kUint8, 3},
                          Variant{TransformKind::kTrain, OutputKind::kFloat16, 1},
                          Variant{TransformKind::kEval, OutputKind::kBFloat16, 3},
                          Variant{TransformKind::kEval, OutputKind::kUint8, 1}}) {
    LoaderConfig c = config(1, 5);
    c.transform.kind = v.kind;
    c.transform.output = v.output;
    c.transform.channels = v.channels;
    Loader cpu(data, c);
    c.threads = 3;
    c.augment = AugmentMode::kDeferred;
    Loader deferred(data, c);
    EXPECT_EQ(compare_epoch(cpu, deferred, 0), 5) << to_string(v.output);
    EXPECT_EQ(compare_epoch(cpu, deferred, 1), 5) << to_string(v.output);
    EXPECT_EQ(deferred.stats().images, kImages * 2);
  }
}

// The GPU decode's CPU half: JPEGs staged encoded, decoded by the host reference (libjpeg-turbo
// at scale 1, the whole image or the crop) and augmented by the shared kernels, are the CPU
// loader's batches with DCT scaling off, byte for byte: the GPU decode's geometry is exact, and
// its pixels can differ only by nvJPEG's IDCT (measured on the GPU, docs/gpu.md).
TEST_F(DeferredTest, EncodedJpegsDecodeToTheCpuBatchesAtScaleOne) {
  auto data = open_image_folder(root_, {.cache = "off"});
  for (const auto& [kind, output, channels] :
       {std::tuple{TransformKind::kTrain, OutputKind::kFloat32, 3},
        std::tuple{TransformKind::kTrain, OutputKind::kUint8, 1},
        std::tuple{TransformKind::kEval, OutputKind::kFloat16, 3}}) {
    LoaderConfig c = config(1, 5);
    c.transform.kind = kind;
    c.transform.output = output;
    c.transform.channels = channels;
    c.transform.decode.dct_scaling = false;
    Loader cpu(data, c);
    c.threads = 3;
    c.augment = AugmentMode::kDeferred;
    c.stage_encoded_jpegs = true;
    Loader deferred(data, c);
    int encoded = 0;
    EXPECT_EQ(compare_epoch(cpu, deferred, 0, &encoded), 5) << to_string(output);
    EXPECT_EQ(compare_epoch(cpu, deferred, 1, &encoded), 5) << to_string(output);
    EXPECT_EQ(encoded, kImages * 2 + 2 * 2);  // every JPEG, padding slots included
  }
}

// Images the GPU does not decode (PNG, progressive, CMYK) are decoded by the workers in the
// same batch; a bad JPEG is skipped as on the CPU path, the same samples in the same slots.
TEST_F(DeferredTest, OtherImagesAreDecodedByTheWorkersAndBadOnesSkippedAlike) {
  const test::TempDir mixed_dir("staging_mixed");
  const fs::path mixed = mixed_dir.path();
  fs::create_directories(mixed / "a");
  fs::create_directories(mixed / "b");
  for (int i = 0; i < 4; ++i) {
    fs::copy_file(root_ / "c0" / fmt::format("img{:03d}.jpg", 2 * i),
                  mixed / "a" / fmt::format("base{}.jpg", i));
  }
  const fs::path fixtures = fs::path(STOKER_FIXTURES) / "image";
  fs::copy_file(fixtures / "progressive.jpg", mixed / "b" / "progressive.jpg");
  fs::copy_file(fixtures / "cmyk.jpg", mixed / "b" / "cmyk.jpg");
  fs::copy_file(fixtures / "rgba.png", mixed / "b" / "rgba.png");
  {
    std::ifstream in(root_ / "c1" / "img001.jpg", std::ios::binary);
    std::vector<uint8_t> cut(std::istreambuf_iterator<char>(in), {});
    cut.resize(cut.size() * 2 / 3);  // truncated inside the scan: bad on both paths
    test::write_file(mixed / "b" / "truncated.jpg", cut);
  }
  auto data = open_image_folder(mixed, {.cache = "off"});
  LoaderConfig c = config(2, 4);
  c.bad_samples = BadSamplePolicy::kSkip;
  c.transform.decode.dct_scaling = false;
  Loader cpu(data, c);
  c.augment = AugmentMode::kDeferred;
  c.stage_encoded_jpegs = true;
  Loader deferred(data, c);
  int encoded = 0;
  EXPECT_EQ(compare_epoch(cpu, deferred, 0, &encoded), 2);
  EXPECT_EQ(encoded, 4);  // the four baseline JPEGs; the others were decoded by the workers
  EXPECT_EQ(deferred.stats().skipped, 1);
  EXPECT_EQ(cpu.stats().skipped, 1);
}

TEST_F(DeferredTest, EncodedStagingNeedsTheDeferredMode) {
  auto data = open_image_folder(root_, {.cache = "off"});
  LoaderConfig c = config(1, 4);
  c.stage_encoded_jpegs = true;
  EXPECT_THROW(Loader(data, c), Error);
}

// Counts what it hands out, so the test sees the hook used and every buffer returned.
class CountingMemory : public HostMemory {
 public:
  uint8_t* allocate(size_t bytes) override {
    ++allocations;
    bytes_out += static_cast<int64_t>(bytes);
    return new (std::align_val_t{64}) uint8_t[bytes];
  }
  void deallocate(uint8_t* p, size_t bytes) noexcept override {
    ++deallocations;
    bytes_out -= static_cast<int64_t>(bytes);
    ::operator delete[](p, std::align_val_t{64});
  }
  std::atomic<int> allocations{0}, deallocations{0};
  std::atomic<int64_t> bytes_out{0};
};

TEST_F(DeferredTest, OverflowingStagingGrowsAndMemoryComesFromTheHook) {
  auto data = open_image_folder(root_, {.cache = "off"});
  auto memory = std::make_shared<CountingMemory>();
  {
    LoaderConfig c = config(2, 6);
    Loader cpu(data, c);
    c.augment = AugmentMode::kDeferred;
    c.memory = memory;
    c.staging_bytes_per_sample = 64;  // nothing fits: every region goes aside, then moves in
    Loader deferred(data, c);
    EXPECT_EQ(compare_epoch(cpu, deferred, 2), 4);
    // Grown buffers are reused: a second epoch still matches.
    EXPECT_EQ(compare_epoch(cpu, deferred, 3), 4);
    EXPECT_GT(memory->allocations.load(), 4);  // initial buffers plus grown ones
    deferred.set_epoch(0);
    auto held = deferred.next();  // a batch outliving its loader keeps its memory
    ASSERT_TRUE(held);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(held->images.data()) % 64, 0u);
  }
  EXPECT_EQ(memory->allocations.load(), memory->deallocations.load());
  EXPECT_EQ(memory->bytes_out.load(), 0);
}

TEST_F(DeferredTest, SkippedSamplesAreBlankAndAugmentToZeros) {
  const test::TempDir bad_dir("staging_bad");
  const fs::path bad = bad_dir.path();
  fs::create_directories(bad / "a");
  fs::copy_file(root_ / "c0" / "img000.jpg", bad / "a" / "good.jpg");
  std::ofstream(bad / "a" / "text.jpg") << "not an image";
  auto data = open_image_folder(bad, {.cache = "off"});
  LoaderConfig c = config(2, 2);
  c.bad_samples = BadSamplePolicy::kSkip;
  c.augment = AugmentMode::kDeferred;
  c.shuffle = false;
  Loader loader(data, c);
  loader.set_epoch(0);
  auto batch = loader.next();
  ASSERT_TRUE(batch);
  const int bad_slot = data->name(batch->indices[0]).find("text.jpg") != std::string::npos ? 0 : 1;
  EXPECT_EQ(batch->valid[bad_slot], 0);
  EXPECT_EQ(batch->valid[1 - bad_slot], 1);
  EXPECT_EQ(batch->staged[bad_slot].width, 0);
  EXPECT_GT(batch->staged[1 - bad_slot].width, 0);
  const auto images = augment_on_host(*batch, c.transform);
  const size_t slot = c.transform.sample_bytes();
  const auto first = images.begin() + bad_slot * slot;
  EXPECT_TRUE(std::all_of(first, first + slot, [](uint8_t v) { return v == 0; }));
  EXPECT_EQ(loader.stats().skipped, 1);
}

}  // namespace
}  // namespace stoker
