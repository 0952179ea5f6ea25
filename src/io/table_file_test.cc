// Table files (src/io/table_file.h) and the file-list cache built on them: a round trip keeps
// every path, size, label and label set; any damage or another key is a miss, never an error;
// a list is mapped from its cache on the next open and parsed again once it changes.
#include "io/table_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/file_list.h"
#include "io/test_util.h"
#include "stoker/dataset.h"

namespace stoker::io {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write_file;

SampleTable sample_table(bool multi) {
  SampleTable t;
  t.add("a/1.jpg", 10, multi ? 0 : 2);
  t.add("b/long name with spaces.png", -1, multi ? -1 : 0);
  t.add("/abs/c.webp", 7, multi ? 1 : 1);
  if (multi) {
    const int32_t s0[] = {0, 2};
    const int32_t s2[] = {1};
    t.add_label_set(s0);
    t.add_label_set({});
    t.add_label_set(s2);
  }
  return t;
}

void expect_same(const SampleView& got, const SampleTable& want) {
  const SampleView w = SampleView::of(want);
  ASSERT_EQ(got.size(), w.size());
  ASSERT_EQ(got.multi_label(), w.multi_label());
  for (int64_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(got.path(i), w.path(i));
    EXPECT_EQ(got.file_size(i), w.file_size(i));
    EXPECT_EQ(got.label(i), w.label(i));
    if (w.multi_label()) {
      const auto a = got.label_set(i), b = w.label_set(i);
      EXPECT_EQ(std::vector<int32_t>(a.begin(), a.end()), std::vector<int32_t>(b.begin(), b.end()));
    }
  }
  EXPECT_EQ(fingerprint(got), fingerprint(w));
}

TEST(TableFile, RoundTripsSingleAndMultiLabelTables) {
  TempDir tmp;
  for (const bool multi : {false, true}) {
    const SampleTable table = sample_table(multi);
    const fs::path file = tmp.path() / (multi ? "multi.stktab" : "single.stktab");
    const std::vector<std::string> classes = {"cat", "dog", "émeu"};
    ASSERT_TRUE(
        store_table_file(file, "key 1", SampleView::of(table), classes, "0123456789abcdef"));
    const auto loaded = load_table_file(file, "key 1");
    ASSERT_TRUE(loaded.has_value());
    expect_same(loaded->samples, table);
    EXPECT_EQ(loaded->classes, classes);
    EXPECT_EQ(loaded->fingerprint, "0123456789abcdef");
    EXPECT_FALSE(load_table_file(file, "key 2").has_value());  // built from something else
  }
}

TEST(TableFile, EveryTruncationAndFlippedByteIsAMiss) {
  TempDir tmp;
  const SampleTable table = sample_table(true);
  const fs::path file = tmp.path() / "t.stktab";
  ASSERT_TRUE(store_table_file(file, "k", SampleView::of(table), {"a", "b", "c"}, "f"));
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path bad = tmp.path() / "bad.stktab";
  for (size_t keep = 0; keep < bytes.size(); ++keep) {
    write_file(bad, bytes.substr(0, keep));
    EXPECT_FALSE(load_table_file(bad, "k").has_value()) << "kept " << keep;
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x40);
    write_file(bad, flipped);
    EXPECT_FALSE(load_table_file(bad, "k").has_value()) << "flipped byte " << at;
  }
  EXPECT_FALSE(load_table_file(tmp.path() / "missing.stktab", "k").has_value());
}

// The list's mtime moved out of the 2-second window in which a change could go unseen.
void age(const fs::path& file, int seconds) {
  fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::seconds(seconds));
}

std::vector<fs::path> cached_lists(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with("list-")) out.push_back(e.path());
  }
  return out;
}

TEST(TableFile, AFileListIsMappedFromItsCacheUntilItChanges) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache";
  ::setenv("STOKER_CACHE_DIR", cache.c_str(), 1);
  const fs::path list = tmp.path() / "train.csv";
  write_file(list, "path,label\nimg/a.jpg,cat\nimg/b.jpg,dog\n/abs/c.jpg,cat\n");
  auto fresh = open_file_list(list);
  EXPECT_TRUE(cached_lists(cache).empty()) << "a list changed just now is not cached";

  age(list, 60);
  auto parsed = open_file_list(list);  // parsed, then cached
  ASSERT_EQ(cached_lists(cache).size(), 1u);
  auto mapped = open_file_list(list);  // mapped from the cache
  for (const auto& data : {parsed, mapped}) {
    ASSERT_EQ(data->size(), 3);
    EXPECT_EQ(data->name(0), (tmp.path() / "img/a.jpg").string());
    EXPECT_EQ(data->name(2), "/abs/c.jpg");
    EXPECT_EQ(data->label(1), 1);
    EXPECT_EQ(data->classes(), (std::vector<std::string>{"cat", "dog"}));
    EXPECT_EQ(data->fingerprint(), fresh->fingerprint());
  }
  // Another column choice is another table.
  auto other = open_file_list(list, FileListConfig{.path_column = "label", .label_column = ""});
  EXPECT_EQ(other->name(0), (tmp.path() / "cat").string());

  // A rewritten list (other size, other mtime) is parsed again, not served from the cache.
  write_file(list, "path,label\nimg/a.jpg,dog\nimg/d.jpg,emu\n");
  age(list, 30);
  auto changed = open_file_list(list);
  ASSERT_EQ(changed->size(), 2);
  EXPECT_EQ(changed->name(1), (tmp.path() / "img/d.jpg").string());
  EXPECT_EQ(changed->classes(), (std::vector<std::string>{"dog", "emu"}));
  EXPECT_EQ(changed->label(0), 0);
  ::unsetenv("STOKER_CACHE_DIR");
}

}  // namespace
}  // namespace stoker::io
