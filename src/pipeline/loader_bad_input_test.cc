// The bad-input corpus through the loader, under both bad-sample policies.
//
// Bad (each must be named with its reason under `error`, and zero-filled, marked invalid and
// counted under `skip`): a zero-byte file; a JPEG truncated at several points (inside the
// markers, inside the tables, mid-scan, just before the end-of-image marker) and a truncated
// PNG; random bytes named .jpg; a JPEG header claiming 65,500 x 65,500; a dangling symlink and
// a directory named like an image (the tests run as root, so permissions cannot make a file
// unreadable). Not bad samples but I/O errors, which stop the job under either policy after
// their retries: a file deleted after the folder was indexed, an injected EIO.
//
// Unusual but valid (delivered valid, pixels exactly as Pillow decodes them): a PNG named .jpg,
// CMYK and progressive JPEGs, a 16-bit PNG, a grayscale JPEG, a 1x1 JPEG (fixtures with Pillow
// references, tests/fixtures/image), and an EXIF-rotated JPEG whose orientation is ignored, as
// torchvision does. "Exactly as Pillow" is checked end to end: each fixture's slot equals the
// slot of a raw-pixel payload holding Pillow's decode (the same transform on the same pixels).
//
// The corpus is generated in $STOKER_TEST_TMP at test time.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "pipeline/test_util.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/loader.h"
#include "stoker/raw_image.h"
#include "stoker/rng.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> noisy_jpeg(int width, int height, uint64_t seed) {
  Rng rng(stream_key(seed, 1));
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 3);
  for (size_t p = 0; p < pixels.size(); ++p) {
    pixels[p] = static_cast<uint8_t>(((p / 3) % width) * 2 + rng.bounded(60));
  }
  return encode_jpeg(pixels.data(), width, height, 3, 90);
}

// `jpeg` with an EXIF APP1 segment (orientation 6: rotate 90 degrees) right after SOI.
std::vector<uint8_t> with_exif_orientation(const std::vector<uint8_t>& jpeg, uint16_t value) {
  const uint8_t tiff[] = {'I',
                          'I',
                          42,
                          0,
                          8,
                          0,
                          0,
                          0,  // little-endian, IFD at 8
                          1,
                          0,  // one entry
                          0x12,
                          0x01,
                          3,
                          0,
                          1,
                          0,
                          0,
                          0,  // tag 0x0112, SHORT, count 1
                          static_cast<uint8_t>(value),
                          static_cast<uint8_t>(value >> 8),
                          0,
                          0,
                          0,
                          0,
                          0,
                          0};  // no next IFD
  std::vector<uint8_t> app1 = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
  app1.insert(app1.end(), std::begin(tiff), std::end(tiff));
  const size_t length = app1.size() - 2;
  app1[2] = static_cast<uint8_t>(length >> 8);
  app1[3] = static_cast<uint8_t>(length & 0xFF);
  std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);
  out.insert(out.end(), app1.begin(), app1.end());
  out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
  return out;
}

// Patches the baseline frame header (FF C0) to claim width x height.
std::vector<uint8_t> with_frame_size(std::vector<uint8_t> jpeg, int width, int height) {
  for (size_t i = 2; i + 9 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
      jpeg[i + 5] = static_cast<uint8_t>(height >> 8);
      jpeg[i + 6] = static_cast<uint8_t>(height & 0xFF);
      jpeg[i + 7] = static_cast<uint8_t>(width >> 8);
      jpeg[i + 8] = static_cast<uint8_t>(width & 0xFF);
      return jpeg;
    }
  }
  ADD_FAILURE() << "no SOF0 marker";
  return jpeg;
}

std::vector<uint8_t> head(const std::vector<uint8_t>& bytes, size_t n) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
}

// The message of the stoker::Error `fn` throws, or "<no error>".
template <typename Fn>
std::string test_error(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "<no error>";
}

struct BadFile {
  std::string file;
  std::string reason;  // a part of the error message after "PATH: "
};

class BadInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>("bad_input_test");
    root_ = dir_->path();
    for (int i = 0; i < 4; ++i)
      write_bytes(root_ / fmt::format("good{}.jpg", i), noisy_jpeg(48, 40, i));

    const std::vector<uint8_t> jpeg = noisy_jpeg(200, 150, 9);
    size_t sos = 0;  // the start-of-scan marker: entropy-coded data follows its header
    for (size_t i = 2; i + 1 < jpeg.size() && sos == 0; ++i) {
      if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) sos = i;
    }
    ASSERT_GT(sos, 200u);
    ASSERT_LT(sos + 1000, jpeg.size());
    const std::vector<uint8_t> png = read_bytes(fixture("palette.png"));
    Rng rng(stream_key(5, 5));
    std::vector<uint8_t> random(4096);
    for (auto& b : random) b = static_cast<uint8_t>(rng.bounded(256));
    random[0] = 0x42;  // never a magic number by chance

    const std::vector<std::pair<BadFile, std::vector<uint8_t>>> files = {
        {{"zero.jpg", "empty file"}, {}},
        {{"trunc_soi.jpg", "not a JPEG, PNG or WebP image"}, head(jpeg, 2)},
        {{"trunc_tables.jpg", "premature end"}, head(jpeg, 100)},
        {{"trunc_scan.jpg", "(truncated file)"}, head(jpeg, sos + (jpeg.size() - sos) / 2)},
        {{"trunc_no_eoi.jpg", "no end-of-image marker"}, head(jpeg, jpeg.size() - 2)},
        {{"trunc.png", "PNG"}, head(png, png.size() / 2)},
        {{"random.jpg", "not a JPEG, PNG or WebP image"}, random},
        {{"bomb.jpg", "65500x65500"}, with_frame_size(jpeg, 65500, 65500)},
    };
    for (const auto& [bad, bytes] : files) {
      write_bytes(root_ / bad.file, bytes);
      bad_.push_back(bad);
    }
    fs::create_symlink(root_ / "nowhere" / "gone.jpg", root_ / "dangling.jpg");
    bad_.push_back({"dangling.jpg", "dangling symbolic link"});
    fs::create_directory(root_ / "dir.jpg");
    bad_.push_back({"dir.jpg", "is a directory"});

    // Unusual but valid: each fixture, and beside it Pillow's decode as a raw payload.
    for (const char* name :
         {"png_named.jpg", "cmyk.jpg", "progressive.jpg", "rgb16.png", "gray.jpg", "one.jpg"}) {
      const auto bytes = read_bytes(fixture(name));
      const auto ref = read_bytes(fixture(std::string(name) + ".ref3.bin"));
      const ImageHeader header = probe_image(bytes, name);
      ASSERT_EQ(ref.size(), static_cast<size_t>(header.width) * header.height * 3) << name;
      write_bytes(root_ / name, bytes);
      write_bytes(root_ / (std::string(name) + ".pil.raw"),
                  encode_raw_image(ref.data(), header.width, header.height, 3, 0));
      pairs_.emplace_back(name, std::string(name) + ".pil.raw");
    }
    const std::vector<uint8_t> upright = noisy_jpeg(60, 30, 3);
    write_bytes(root_ / "exif_rotated.jpg", with_exif_orientation(upright, 6));
    write_bytes(root_ / "upright.jpg", upright);
    pairs_.emplace_back("exif_rotated.jpg", "upright.jpg");

    // The list names every file: good, bad and valid.
    std::ofstream list(root_ / "list.txt");
    int label = 0;
    for (int i = 0; i < 4; ++i) list << fmt::format("good{}.jpg\t{}\n", i, label++ % 3);
    for (const auto& bad : bad_) list << bad.file << '\t' << label++ % 3 << '\n';
    for (const auto& [file, ref] : pairs_) {
      list << file << '\t' << label++ % 3 << '\n';
      list << ref << '\t' << label++ % 3 << '\n';
    }
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static std::string fixture(const std::string& name) {
    return std::string(STOKER_FIXTURES) + "/image/" + name;
  }

  // A file list of the four good files and `extra`.
  static std::shared_ptr<Dataset> list_with(const std::string& extra) {
    const fs::path list = root_ / fmt::format("list_{}.txt", extra);
    std::ofstream(list) << "good0.jpg\t0\ngood1.jpg\t1\ngood2.jpg\t0\n"
                        << extra << "\t1\ngood3.jpg\t1\n";
    return open_file_list(list);
  }

  static LoaderConfig config(BadSamplePolicy policy, int batch) {
    LoaderConfig c;
    c.batch_size = batch;
    c.threads = 2;
    c.rank = 0;
    c.world_size = 1;
    c.shuffle = false;
    c.bad_samples = policy;
    c.transform.kind = TransformKind::kEval;
    c.transform.output = OutputKind::kUint8;
    c.transform.size = 24;
    c.transform.decode.dct_scaling = false;  // exact: the slot is a function of Pillow's pixels
    return c;
  }

  static inline std::unique_ptr<test::TempDir> dir_;
  static inline fs::path root_;
  static std::vector<BadFile> bad_;
  static std::vector<std::pair<std::string, std::string>> pairs_;  // (valid file, reference)
};

std::vector<BadFile> BadInputTest::bad_;
std::vector<std::pair<std::string, std::string>> BadInputTest::pairs_;

// `error`: each bad file, among good ones, ends the epoch with an error naming it and saying
// why; nothing after the failed batch is delivered.
TEST_F(BadInputTest, ErrorPolicyNamesEachBadFileAndItsReason) {
  for (const auto& bad : bad_) {
    auto data = list_with(bad.file);
    Loader loader(data, config(BadSamplePolicy::kError, 2));
    loader.set_epoch(0);
    ASSERT_TRUE(loader.next()) << bad.file;  // good0, good1
    try {
      loader.next();  // good2, then the bad file
      ADD_FAILURE() << bad.file << ": no error";
    } catch (const Error& e) {
      const std::string expected = (root_ / bad.file).string() + ": ";
      EXPECT_EQ(e.message().rfind(expected, 0), 0u) << e.message();
      EXPECT_NE(e.message().find(bad.reason), std::string::npos) << bad.file << ": " << e.message();
    }
    EXPECT_EQ(loader.next(), nullptr) << bad.file;
    EXPECT_EQ(loader.state().consumed, 2) << bad.file;
    EXPECT_EQ(loader.stats().skipped, 0);
  }
}

// `skip`: the whole corpus in one epoch. Bad slots are zero-filled, invalid and counted once
// each; every other file is delivered valid, and the unusual ones equal Pillow's decode.
TEST_F(BadInputTest, SkipPolicyCountsEveryBadFileAndDecodesTheUnusualOnes) {
  auto data = open_file_list(root_ / "list.txt");
  ASSERT_EQ(data->size(), static_cast<int64_t>(4 + bad_.size() + 2 * pairs_.size()));
  auto c = config(BadSamplePolicy::kSkip, 5);
  Loader loader(data, c);
  loader.set_epoch(0);
  std::map<std::string, std::vector<uint8_t>> slots;  // file name -> its valid slot
  std::set<std::string> skipped;
  int64_t batch_skips = 0;
  while (auto batch = loader.next()) {
    const size_t bytes = batch->images.size() / static_cast<size_t>(batch->batch_size);
    int64_t valid = 0;
    for (int i = 0; i < batch->batch_size; ++i) {
      const std::string file = fs::path(data->name(batch->indices[i])).filename().string();
      const uint8_t* slot = batch->images.data() + i * bytes;
      const bool padding = batch->index * batch->batch_size + i >= data->size();
      if (padding) continue;
      if (batch->valid[i]) {
        ++valid;
        EXPECT_TRUE(slots.emplace(file, std::vector<uint8_t>(slot, slot + bytes)).second) << file;
      } else {
        EXPECT_TRUE(std::all_of(slot, slot + bytes, [](uint8_t v) { return v == 0; })) << file;
        EXPECT_TRUE(skipped.insert(file).second) << file;
      }
    }
    batch_skips += batch->skipped;
    EXPECT_EQ(batch->global_valid, valid) << "one rank: a skipped slot leaves global_valid";
  }
  std::set<std::string> expected_bad;
  for (const auto& bad : bad_) expected_bad.insert(bad.file);
  EXPECT_EQ(skipped, expected_bad);
  EXPECT_EQ(loader.stats().skipped, static_cast<int64_t>(bad_.size()));
  EXPECT_EQ(batch_skips, static_cast<int64_t>(bad_.size()));
  EXPECT_EQ(static_cast<int64_t>(slots.size()), 4 + 2 * static_cast<int64_t>(pairs_.size()));
  for (const auto& [file, ref] : pairs_) {
    ASSERT_TRUE(slots.count(file) && slots.count(ref)) << file;
    EXPECT_EQ(slots[file], slots[ref]) << file << " is not decoded as " << ref;
  }
  // Not trivially equal: the unusual images differ from one another.
  EXPECT_NE(slots["cmyk.jpg"], slots["progressive.jpg"]);
}

// The EXIF orientation is ignored: the header keeps the stored (unrotated) size.
TEST_F(BadInputTest, ExifOrientationIsIgnored) {
  const auto bytes = read_bytes(root_ / "exif_rotated.jpg");
  const ImageHeader header = probe_image(bytes, "exif_rotated.jpg");
  EXPECT_EQ(header.width, 60);
  EXPECT_EQ(header.height, 30);
}

// A file deleted after its folder was indexed is the storage's doing, not the sample's: an
// I/O error (ENOENT, the path on the error), tried again, then the end of the epoch under
// either policy. A dead mount must not pass for an epoch of bad samples.
TEST_F(BadInputTest, FileDeletedAfterIndexingStopsTheJobUnderEitherPolicy) {
  const fs::path folder = root_ / "folder";
  for (int i = 0; i < 5; ++i) {
    write_bytes(folder / "c" / fmt::format("f{}.jpg", i), noisy_jpeg(32, 32, 20 + i));
  }
  auto data = open_image_folder(folder, {.cache = "off"});
  ASSERT_EQ(data->size(), 5);
  fs::remove(folder / "c" / "f3.jpg");
  for (BadSamplePolicy policy : {BadSamplePolicy::kError, BadSamplePolicy::kSkip}) {
    Loader loader(data, config(policy, 5));
    try {
      loader.next();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kIo);
      EXPECT_EQ(e.sys_errno(), ENOENT);
      EXPECT_EQ(e.path(), (folder / "c" / "f3.jpg").string());
      EXPECT_NE(e.message().find("f3.jpg: No such file or directory (tried 3 times)"),
                std::string::npos)
          << e.message();
    }
    EXPECT_EQ(loader.stats().skipped, 0);
  }
}

// An injected EIO (a storage failure) under bad_samples = skip: tried 3 times, then the job
// stops naming the file and the errno; a corrupt JPEG in the same batch is still skipped and
// counted, and an EIO that heals before the last try costs nothing.
TEST(IoErrors, PersistentEioStopsTheJobUnderSkipWhileACorruptJpegIsSkipped) {
  auto c = test::one_rank_config(2, 8, 16);
  c.shuffle = false;
  c.bad_samples = BadSamplePolicy::kSkip;
  {
    auto data = std::make_shared<test::MemoryDataset>(test::MemoryImages{
        .images = 8, .seed = 4, .bad_index = 2, .io_error_index = 5, .io_failures = 1000});
    Loader loader(data, c);
    try {
      loader.next();
      ADD_FAILURE() << "an EIO was skipped like a bad sample";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kIo);
      EXPECT_EQ(e.sys_errno(), EIO);
      EXPECT_EQ(e.path(), "mem5.jpg");
      EXPECT_EQ(e.message(), "mem5.jpg: Input/output error (tried 3 times)");
    }
    EXPECT_EQ(data->io_error_reads(), 3);
  }
  auto data = std::make_shared<test::MemoryDataset>(test::MemoryImages{
      .images = 8, .seed = 4, .bad_index = 2, .io_error_index = 5, .io_failures = 2});
  Loader loader(data, c);
  auto batch = loader.next();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->valid, (std::vector<uint8_t>{1, 1, 0, 1, 1, 1, 1, 1}));  // only the JPEG
  EXPECT_EQ(batch->skipped, 1);
  EXPECT_EQ(data->io_error_reads(), 3);  // two failures, then the read that worked
}

// Before: the loader read with the default IoRetryPolicy whatever the caller chose. Now
// LoaderConfig::read_retries is the policy of every sample read.
TEST(IoErrors, TheConfiguredReadRetriesAreTheLoaders) {
  auto c = test::one_rank_config(1, 8, 16);
  c.shuffle = false;
  c.read_retries.attempts = 5;
  c.read_retries.first_backoff_s = 0;
  {
    auto data = std::make_shared<test::MemoryDataset>(
        test::MemoryImages{.images = 8, .seed = 4, .io_error_index = 5, .io_failures = 1000});
    Loader loader(data, c);
    try {
      loader.next();
      ADD_FAILURE() << "a persistent EIO was not fatal";
    } catch (const Error& e) {
      EXPECT_EQ(e.message(), "mem5.jpg: Input/output error (tried 5 times)");
    }
    EXPECT_EQ(data->io_error_reads(), 5);
  }
  auto data = std::make_shared<test::MemoryDataset>(
      test::MemoryImages{.images = 8, .seed = 4, .io_error_index = 5, .io_failures = 4});
  Loader loader(data, c);
  ASSERT_TRUE(loader.next());  // four failures, then the fifth try read it
  EXPECT_EQ(data->io_error_reads(), 5);

  c.read_retries.attempts = 0;
  EXPECT_EQ(test_error([&] { Loader unused(data, c); }),
            "io retries: attempts must be in [1, 100] (got 0)");
  c.read_retries.attempts = 3;
  c.close_timeout_seconds = -0.5;
  EXPECT_EQ(test_error([&] { Loader unused(data, c); }),
            "close_timeout_seconds must be in [0, 86400] (got -0.5)");
}

// Before: closing a loader whose read was waiting between tries waited for every try left
// (here 99 waits of 5 s), up to the close timeout. Now closing stops the reads in progress
// (stoker/cancel.h): the wait ends, no later try is made, and the workers are joined.
TEST(IoErrors, ClosingTheLoaderStopsAReadWaitingBetweenTries) {
  auto c = test::one_rank_config(1, 8, 16);
  c.shuffle = false;
  c.read_retries.attempts = 100;
  c.read_retries.first_backoff_s = 5;
  c.close_timeout_seconds = 86400;  // joined because the read stopped, not abandoned
  auto data = std::make_shared<test::MemoryDataset>(
      test::MemoryImages{.images = 8, .seed = 4, .io_error_index = 0, .io_failures = 1000});
  {
    Loader loader(data, c);
    loader.set_epoch(0);
    while (data->io_error_reads() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(data->io_error_reads(), 1);
}

// A read stuck where nothing can stop it (a hung mount; here a read that sleeps an hour) is
// abandoned after the close timeout, with a warning. In a child process that leaves through
// _Exit: the abandoned workers and their state are never freed, by design, which a leak checker
// would report at a normal exit. gtest's "fast" style (fork, no exec): the "threadsafe" style
// re-executes the test binary, which qemu-user (the arm64 tests) cannot do; ctest runs each test
// in its own process, so the fork happens while the parent has one thread.
TEST(LoaderCloseDeathTest, AReadNothingCanStopIsAbandonedAfterTheCloseTimeout) {
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        auto c = test::one_rank_config(1, 8, 16);
        c.close_timeout_seconds = 0.2;
        auto data = std::make_shared<test::MemoryDataset>(
            test::MemoryImages{.images = 8, .seed = 4, .read_delay = std::chrono::hours(1)});
        {
          Loader loader(data, c);
          loader.set_epoch(0);
          while (data->reads() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0),
      "still had samples being read after 0.2 s .*abandoned, not joined");
}

// Before: ~Loader read STOKER_CLOSE_TIMEOUT with atof, so "1O" was 1 s and "ten" 0 s. Now the
// variable is close_timeout_seconds' default, read when a LoaderConfig is made.
TEST(IoErrors, CloseTimeoutDefaultsToTheEnvironmentAndAMalformedOneIsNamed) {
  {
    test::EnvGuard env("STOKER_CLOSE_TIMEOUT", nullptr);
    EXPECT_EQ(LoaderConfig{}.close_timeout_seconds, 10);
  }
  {
    test::EnvGuard env("STOKER_CLOSE_TIMEOUT", "0.25");
    EXPECT_EQ(LoaderConfig{}.close_timeout_seconds, 0.25);
  }
  for (const char* bad : {"1O", "ten", "-1"}) {
    test::EnvGuard env("STOKER_CLOSE_TIMEOUT", bad);
    EXPECT_EQ(test_error([] { LoaderConfig c; }),
              fmt::format("STOKER_CLOSE_TIMEOUT={}: expected a number in [0, 86400]", bad));
  }
}

bool HasSubstrText_(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(SkipPolicy, DataThatIsAllBadStopsAfterABoundedNumberInARow) {
  // Before: `bench --images N --bad-samples skip` over unreadable data ran forever, epoch after
  // epoch of skips. Now the 1000th bad sample in a row ends it with an error saying why.
  auto c = test::one_rank_config(2, 16, 16);
  c.bad_samples = BadSamplePolicy::kSkip;
  auto data = std::make_shared<test::MemoryDataset>(
      test::MemoryImages{.images = 40, .seed = 2, .all_bad = true});
  Loader loader(data, c);
  int64_t epochs = 0, batches = 0;
  try {
    for (;; ++epochs) {
      ASSERT_LT(epochs, 100) << "still skipping after 100 epochs";
      loader.set_epoch(epochs);
      while (loader.next()) ++batches;
    }
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadData);
    EXPECT_TRUE(HasSubstrText_(e.message(),
                               "bad samples in a row, none read well in between "
                               "(the last: mem"))
        << e.message();
    EXPECT_TRUE(HasSubstrText_(e.message(), "not a JPEG, PNG or WebP image")) << e.message();
  }
  EXPECT_LE(batches, 1000 / 16 + 1);
  EXPECT_LE(data->reads(), 1000 + 2 * 16 * 3);  // the limit, plus batches already in flight
  // A few bad samples among good ones never reach the limit: the count restarts at each good
  // one (the skip test above runs whole epochs with one bad sample).
  c.max_bad_in_a_row = 2;
  auto mixed = std::make_shared<test::MemoryDataset>(
      test::MemoryImages{.images = 40, .seed = 2, .bad_index = 7});
  Loader tolerant(mixed, c);
  for (int epoch = 0; epoch < 3; ++epoch) {
    tolerant.set_epoch(epoch);
    int64_t skipped = 0;
    while (auto batch = tolerant.next()) skipped += batch->skipped;
    EXPECT_EQ(skipped, 1);
  }
}

}  // namespace
}  // namespace stoker
