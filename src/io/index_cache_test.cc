#include "io/index_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "io/test_util.h"

namespace stoker::io {
namespace {

using test::EnvGuard;

FolderIndex sample_index() {
  FolderIndex index;
  index.classes = {"a", "b"};
  index.samples.add("a/x.jpg", 10, 0);
  index.samples.add("a/sub/y.png", -1, 0);
  index.samples.add("b/z.webp", 7, 1);
  index.dirs = {{"", 1, 100}, {"a", 2, 200}, {"a/sub", 3, 300}, {"b", 4, 400}};
  return index;
}

TEST(IndexCache, RoundTrip) {
  const FolderIndex index = sample_index();
  const std::string bytes = encode_index("/data", index);
  ASSERT_EQ(bytes.substr(0, 8), "STKIDX01");
  std::string why;
  const auto decoded = decode_index(bytes, "/data", why);
  ASSERT_TRUE(decoded) << why;
  EXPECT_EQ(decoded->classes, index.classes);
  EXPECT_EQ(decoded->samples.paths, index.samples.paths);
  EXPECT_EQ(decoded->samples.ends, index.samples.ends);
  EXPECT_EQ(decoded->samples.sizes, index.samples.sizes);
  EXPECT_EQ(decoded->samples.labels, index.samples.labels);
  ASSERT_EQ(decoded->dirs.size(), index.dirs.size());
  for (size_t i = 0; i < index.dirs.size(); ++i) {
    EXPECT_EQ(decoded->dirs[i].path, index.dirs[i].path);
    EXPECT_EQ(decoded->dirs[i].inode, index.dirs[i].inode);
    EXPECT_EQ(decoded->dirs[i].mtime_ns, index.dirs[i].mtime_ns);
  }
  EXPECT_EQ(fingerprint(SampleView::of(decoded->samples)),
            fingerprint(SampleView::of(index.samples)));
}

TEST(IndexCache, RejectsEveryTruncationAndAnotherRoot) {
  const std::string bytes = encode_index("/data", sample_index());
  std::string why;
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_FALSE(decode_index(bytes.substr(0, size), "/data", why)) << size;
  }
  EXPECT_FALSE(decode_index(bytes, "/other", why));
  EXPECT_EQ(why, "written for another folder");
  std::string version = bytes;
  version[8] = 2;
  EXPECT_FALSE(decode_index(version, "/data", why));
  EXPECT_EQ(why, "unsupported version 2");
}

// A file with a valid checksum can still be forged: the listing itself is checked.
TEST(IndexCache, RejectsForgedListings) {
  const auto rejected = [](const FolderIndex& index) {
    std::string why;
    return !decode_index(encode_index("/data", index), "/data", why).has_value();
  };
  FolderIndex escape = sample_index();
  escape.samples = {};
  escape.samples.add("a/../../etc/passwd.jpg", 1, 0);
  EXPECT_TRUE(rejected(escape));
  FolderIndex absolute = sample_index();
  absolute.samples = {};
  absolute.samples.add("/etc/x.jpg", 1, 0);
  EXPECT_TRUE(rejected(absolute));
  FolderIndex wrong_class = sample_index();
  wrong_class.samples.labels[0] = 1;
  EXPECT_TRUE(rejected(wrong_class));
  FolderIndex label_range = sample_index();
  label_range.samples.labels[2] = 2;
  EXPECT_TRUE(rejected(label_range));
  FolderIndex unsorted = sample_index();
  unsorted.classes = {"b", "a"};
  EXPECT_TRUE(rejected(unsorted));
  FolderIndex bad_dir = sample_index();
  bad_dir.dirs[1].path = "../a";
  EXPECT_TRUE(rejected(bad_dir));
  EXPECT_FALSE(rejected(sample_index()));
}

TEST(IndexCache, CacheDirFromOptionAndEnvironment) {
  EnvGuard cache("STOKER_CACHE_DIR", nullptr);
  EnvGuard xdg("XDG_CACHE_HOME", nullptr);
  EnvGuard home("HOME", nullptr);
  EXPECT_EQ(cache_dir_from_option(""), "");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(cache_dir_from_option(""), "/home/u/.cache/stoker");
  ::setenv("XDG_CACHE_HOME", "relative/is/ignored", 1);
  EXPECT_EQ(cache_dir_from_option(""), "/home/u/.cache/stoker");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(cache_dir_from_option(""), "/xdg/stoker");
  ::setenv("STOKER_CACHE_DIR", "/stoker-cache", 1);
  EXPECT_EQ(cache_dir_from_option(""), "/stoker-cache");
  EXPECT_EQ(cache_dir_from_option("/explicit"), "/explicit");
  EXPECT_EQ(cache_dir_from_option("off"), "");
  ::setenv("STOKER_CACHE_DIR", "off", 1);
  EXPECT_EQ(cache_dir_from_option(""), "");
  EXPECT_EQ(cache_dir_from_option("/explicit"), "/explicit");
}

TEST(IndexCache, FileNameIsKeyedByRoot) {
  const auto a = cache_file_path("/c", "/data/a");
  EXPECT_EQ(a.parent_path(), "/c");
  EXPECT_EQ(a.filename().string().size(), std::string("folder-0123456789abcdef.stkidx").size());
  EXPECT_NE(a, cache_file_path("/c", "/data/b"));
  EXPECT_EQ(a, cache_file_path("/c", "/data/a"));
}

}  // namespace
}  // namespace stoker::io
