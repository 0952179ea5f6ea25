#include "io/image_folder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io/test_util.h"
#include "stoker/dataset.h"

namespace stoker::io {
namespace {

namespace fs = std::filesystem;
using test::backdate_folders;
using test::error_of;
using test::TempDir;
using test::write_file;

using Listing = std::vector<std::pair<std::string, int64_t>>;

// (path relative to `root`, label) of every sample, in index order.
Listing listing(const Dataset& data, const fs::path& root) {
  Listing out;
  const std::string prefix = root.string() + "/";
  for (int64_t i = 0; i < data.size(); ++i) {
    std::string name = data.name(i);
    EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
    out.emplace_back(name.substr(prefix.size()), data.label(i));
  }
  return out;
}

ImageFolderOpening open_traced(const fs::path& root, const std::string& cache) {
  return open_image_folder_traced(root, ImageFolderConfig{.cache = cache});
}

// A tree exercising every torchvision rule; kExpected below is derived by hand from them.
class ImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() / "data";
    cache_ = (tmp_.path() / "cache").string();
    const fs::path outside = tmp_.path() / "outside";
    write_file(root_ / "Bird/b.webp", "bird");
    write_file(root_ / "cat/b.JPG", "cat-b");
    write_file(root_ / "cat/a.png", "a");
    write_file(root_ / "cat/Z.jpeg", "z");
    write_file(root_ / "cat/.hidden.jpg", "h");
    write_file(root_ / "cat/UPPER.TIFF", "u");
    write_file(root_ / "cat/notes.txt", "not an image");
    write_file(root_ / "cat/jpg", "no dot");
    write_file(root_ / "cat/x.jpg.txt", "wrong suffix");
    write_file(root_ / "cat/bad.jpg/inner.png", "inside a folder named like an image");
    write_file(root_ / "cat/sub/x.webp", "x");
    write_file(root_ / "cat/sub b/y.bmp", "y");
    write_file(root_ / "cat/sub/deeper/z.tif", "zz");
    fs::create_symlink("../dog/d1.jpg", root_ / "cat/link.jpg");
    fs::create_symlink("nowhere.png", root_ / "cat/dangling.png");
    write_file(root_ / "dog/d1.jpg", "dog-1");
    write_file(root_ / "dog/d2.PPM", "dog-2");
    write_file(outside / "shared/s.pgm", "s");
    fs::create_symlink(outside / "shared", root_ / "dog/linked");
    write_file(outside / "emu/e.png", "e");
    fs::create_symlink(outside / "emu", root_ / "emu");
    write_file(root_ / "readme.txt", "a file in the root is not a class");
    write_file(root_ / "top.jpg", "nor is an image");
  }

  TempDir tmp_;
  fs::path root_;
  std::string cache_;
};

// torchvision 0.14: classes sorted by bytes ("Bird" < "cat"); folders of a class sorted by
// their whole path, so "cat/sub b" (' ' = 0x20) comes between "cat/sub" and "cat/sub/deeper"
// ('/' = 0x2f); files sorted by bytes within a folder; "bad.jpg" is a folder, walked; links
// to files and dangling links are listed; linked folders and classes are followed.
const Listing kExpected = {
    {"Bird/b.webp", 0},      {"cat/.hidden.jpg", 1}, {"cat/UPPER.TIFF", 1},
    {"cat/Z.jpeg", 1},       {"cat/a.png", 1},       {"cat/b.JPG", 1},
    {"cat/dangling.png", 1}, {"cat/link.jpg", 1},    {"cat/bad.jpg/inner.png", 1},
    {"cat/sub/x.webp", 1},   {"cat/sub b/y.bmp", 1}, {"cat/sub/deeper/z.tif", 1},
    {"dog/d1.jpg", 2},       {"dog/d2.PPM", 2},      {"dog/linked/s.pgm", 2},
    {"emu/e.png", 3},
};

TEST_F(ImageFolderTest, OrderAndLabelsFollowTorchvision) {
  auto data = open_image_folder(root_, {.cache = "off"});
  EXPECT_EQ(data->classes(), (std::vector<std::string>{"Bird", "cat", "dog", "emu"}));
  EXPECT_EQ(listing(*data, root_), kExpected);
  EXPECT_EQ(data->describe(),
            fmt::format("image-folder {} (16 samples, 4 classes)", root_.string()));
}

TEST_F(ImageFolderTest, RootWithTrailingSlash) {
  auto data = open_image_folder(root_.string() + "/", {.cache = "off"});
  EXPECT_EQ(listing(*data, root_), kExpected);
}

TEST_F(ImageFolderTest, ReadGivesBytesAndNamesTheFileOnError) {
  auto data = open_image_folder(root_, {.cache = "off"});
  std::vector<uint8_t> bytes;
  data->read(12, bytes);  // dog/d1.jpg
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "dog-1");
  data->read(7, bytes);  // cat/link.jpg -> dog/d1.jpg
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "dog-1");
  EXPECT_EQ(error_of([&] { data->read(6, bytes); }),
            (root_ / "cat/dangling.png").string() + ": dangling symbolic link");
  EXPECT_EQ(error_of([&] { data->read(16, bytes); }),
            fmt::format("{}: sample index 16 out of range [0, 16)", root_.string()));
}

TEST_F(ImageFolderTest, FingerprintIsStableAndFollowsSizes) {
  const std::string first = open_image_folder(root_, {.cache = "off"})->fingerprint();
  EXPECT_EQ(first.size(), 16u);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(open_image_folder(root_, {.cache = "off"})->fingerprint(), first);
  // Opened through another spelling of the root: same listing, same fingerprint.
  EXPECT_EQ(open_image_folder(root_ / "." / "", {.cache = "off"})->fingerprint(), first);
  write_file(root_ / "dog/d2.PPM", "dog-2 grew");
  EXPECT_NE(open_image_folder(root_, {.cache = "off"})->fingerprint(), first);
}

TEST_F(ImageFolderTest, SymlinkLoopIsNotFollowedForever) {
  fs::create_symlink("..", root_ / "cat/sub/loop");
  auto data = open_image_folder(root_, {.cache = "off"});
  EXPECT_EQ(listing(*data, root_), kExpected);
}

TEST(ImageFolderErrors, EmptyClassesAreNamed) {
  TempDir tmp;
  const fs::path root = tmp.path() / "data";
  write_file(root / "a/x.jpg", "x");
  write_file(root / "b/readme.txt", "x");
  fs::create_directories(root / "c");
  write_file(root / "d/folder.png/deep.txt", "x");
  EXPECT_EQ(error_of([&] { open_image_folder(root, {.cache = "off"}); }),
            root.string() +
                ": Found no valid file for the classes b, c, d. Supported extensions are: .jpg, "
                ".jpeg, .png, .ppm, .bmp, .pgm, .tif, .tiff, .webp");
}

TEST(ImageFolderErrors, NoClassesOrNoRoot) {
  TempDir tmp;
  write_file(tmp.path() / "x.jpg", "x");
  EXPECT_EQ(error_of([&] { open_image_folder(tmp.path(), {.cache = "off"}); }),
            tmp.path().string() + ": no class folders");
  const fs::path missing = tmp.path() / "missing";
  EXPECT_EQ(error_of([&] { open_image_folder(missing, {.cache = "off"}); }),
            missing.string() + ": No such file or directory");
  EXPECT_EQ(error_of([&] { open_image_folder(missing, {}); }),
            missing.string() + ": No such file or directory");
  EXPECT_EQ(error_of([&] { open_image_folder(tmp.path() / "x.jpg", {.cache = "off"}); }),
            (tmp.path() / "x.jpg").string() + ": Not a directory");
}

TEST_F(ImageFolderTest, CacheHitSkipsTheWalkAndMatchesIt) {
  const auto walked = open_traced(root_, "off");
  EXPECT_TRUE(walked.cache_file.empty());
  EXPECT_FALSE(walked.from_cache);

  // Folders created a moment ago may still change within one mtime tick: not cached.
  const auto fresh = open_traced(root_, cache_);
  EXPECT_FALSE(fresh.from_cache);
  EXPECT_FALSE(fresh.cache_written);
  EXPECT_EQ(fresh.cache_file.parent_path(), fs::path(cache_));

  backdate_folders(root_);
  backdate_folders(tmp_.path() / "outside");
  const auto first = open_traced(root_, cache_);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(first.cache_written);
  EXPECT_TRUE(fs::is_regular_file(first.cache_file));

  const auto second = open_traced(root_, cache_);
  EXPECT_TRUE(second.from_cache);
  EXPECT_FALSE(second.cache_written);
  const Dataset& a = *walked.dataset;
  const Dataset& b = *second.dataset;
  EXPECT_EQ(listing(b, root_), kExpected);
  EXPECT_EQ(b.classes(), a.classes());
  EXPECT_EQ(b.fingerprint(), a.fingerprint());
  EXPECT_EQ(b.describe(), a.describe());
  std::vector<uint8_t> bytes;
  b.read(0, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "bird");

  // The cache is keyed by the canonical root: another spelling hits it too.
  const auto other = open_traced(root_ / "." / "", cache_);
  EXPECT_TRUE(other.from_cache);
  EXPECT_EQ(other.cache_file, first.cache_file);
}

TEST_F(ImageFolderTest, CacheIsInvalidatedByAnyWalkedFolder) {
  const std::vector<fs::path> changes = {
      root_ / "cat/new.jpg",                   // a class folder
      root_ / "cat/sub/deeper/new.png",        // a nested folder
      tmp_.path() / "outside/shared/new.pgm",  // a folder reached through a symlink
      root_ / "fox/f.jpg",                     // a new class, in the root
  };
  int64_t expected_size = static_cast<int64_t>(kExpected.size());
  for (const fs::path& change : changes) {
    backdate_folders(tmp_.path());
    ASSERT_TRUE(open_traced(root_, cache_).cache_written);
    ASSERT_TRUE(open_traced(root_, cache_).from_cache);
    write_file(change, "new");
    const auto reopened = open_traced(root_, cache_);
    EXPECT_FALSE(reopened.from_cache) << change;
    EXPECT_EQ(reopened.dataset->size(), ++expected_size) << change;
  }
}

TEST_F(ImageFolderTest, BadCacheFilesAreIgnored) {
  backdate_folders(tmp_.path());
  const auto first = open_traced(root_, cache_);
  ASSERT_TRUE(first.cache_written);
  const std::string fingerprint = first.dataset->fingerprint();
  const std::string good = [&] {
    std::ifstream in(first.cache_file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5a;
  const std::vector<std::string> bad = {
      "", "garbage", good.substr(0, 40), good.substr(0, good.size() - 1), good + "x", flipped};
  for (const std::string& content : bad) {
    write_file(first.cache_file, content);
    const auto reopened = open_traced(root_, cache_);
    EXPECT_FALSE(reopened.from_cache) << content.size();
    EXPECT_TRUE(reopened.cache_written) << content.size();  // and replaced by a good one
    EXPECT_EQ(reopened.dataset->fingerprint(), fingerprint);
  }
  // A folder in place of the cache file: still only a miss.
  fs::remove(first.cache_file);
  fs::create_directories(first.cache_file);
  const auto blocked = open_traced(root_, cache_);
  EXPECT_FALSE(blocked.from_cache);
  EXPECT_FALSE(blocked.cache_written);
  EXPECT_EQ(blocked.dataset->fingerprint(), fingerprint);
}

TEST_F(ImageFolderTest, UnwritableCacheIsNotAnError) {
  backdate_folders(tmp_.path());
  write_file(tmp_.path() / "file", "a file where the cache folder should go");
  const auto opened = open_traced(root_, (tmp_.path() / "file/cache").string());
  EXPECT_FALSE(opened.cache_written);
  EXPECT_EQ(listing(*opened.dataset, root_), kExpected);
}

TEST_F(ImageFolderTest, ConcurrentOpensAgree) {
  backdate_folders(tmp_.path());
  const std::string expected = open_image_folder(root_, {.cache = "off"})->fingerprint();
  std::vector<std::string> fingerprints(4);
  std::vector<std::thread> threads;
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < fingerprints.size(); ++i) {
      threads.emplace_back(
          [&, i] { fingerprints[i] = open_image_folder(root_, {.cache = cache_})->fingerprint(); });
    }
    for (auto& thread : threads) thread.join();
    threads.clear();
    for (const auto& fingerprint : fingerprints) EXPECT_EQ(fingerprint, expected);
  }
  // No temporary file left behind.
  for (const auto& entry : fs::directory_iterator(cache_)) {
    EXPECT_EQ(entry.path().extension(), ".stkidx") << entry.path();
  }
}

TEST(OpenDataset, DispatchesOnTheKindOfPath) {
  TempDir tmp;
  test::EnvGuard cache("STOKER_CACHE_DIR", (tmp.path() / "cache").c_str());
  write_file(tmp.path() / "data/a/x.jpg", "x");
  write_file(tmp.path() / "list.txt", "data/a/x.jpg\t0\n");
  EXPECT_EQ(open_dataset(tmp.path() / "data")->describe().rfind("image-folder ", 0), 0u);
  EXPECT_EQ(open_dataset(tmp.path() / "list.txt")->describe().rfind("file-list ", 0), 0u);
  EXPECT_EQ(error_of([&] { open_dataset(tmp.path() / "nope"); }),
            (tmp.path() / "nope").string() + ": no such file or directory");
  ASSERT_EQ(::mkfifo((tmp.path() / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { open_dataset(tmp.path() / "fifo"); }),
            (tmp.path() / "fifo").string() + ": not a folder or a regular file");
}

}  // namespace
}  // namespace stoker::io
