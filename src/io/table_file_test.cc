// Table files (src/io/table_file.h) and the file-list cache built on them: a round trip keeps
// every path, size, label and label set; any damage or another key is a miss, never an error;
// a list is mapped from its cache on the next open and parsed again once it changes; the
// streaming writer writes the bytes store_table_file writes, and a list larger than the
// reader's chunks is streamed into the same table it parses to in memory.
#include "io/table_file.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/file_list.h"
#include "io/sample_table.h"
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

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(TableFile, TheStreamingWriterWritesTheBytesStoreWrites) {
  TempDir tmp;
  // Tables of three samples, and of 300,000 (every column past the writer's 1 MiB buffers).
  SampleTable big_single, big_multi;
  for (int32_t i = 0; i < 300'000; ++i) {
    const std::string path = fmt::format("train/n{:08d}/img_{}.JPEG", i % 1000, i);
    big_single.add(path, -1, i % 1000);
    big_multi.add(path, i, i % 3 == 0 ? -1 : i % 7);
    const int32_t set[] = {i % 7, 7 + i % 5, 12 + i % 11};
    big_multi.add_label_set(std::span<const int32_t>(set).first(i % 3 == 0 ? 0 : i % 3 + 1));
  }
  const std::vector<std::pair<SampleTable, std::vector<std::string>>> tables = {
      {sample_table(false), {"cat", "dog", "émeu"}},
      {sample_table(true), {"cat", "dog", "émeu"}},
      {big_single, {}},
      {big_multi, std::vector<std::string>(23, "class")}};
  for (size_t t = 0; t < tables.size(); ++t) {
    const SampleView view = SampleView::of(tables[t].first);
    const fs::path stored = tmp.path() / fmt::format("stored{}.stktab", t);
    const fs::path streamed = tmp.path() / "streamed" / fmt::format("{}.stktab", t);
    ASSERT_TRUE(store_table_file(stored, "key", view, tables[t].second, fingerprint(view)));
    std::string streamed_fingerprint;
    {
      TableFileWriter writer(streamed.parent_path(), view.multi_label());
      for (int64_t i = 0; i < view.size(); ++i) {
        writer.add(view.path(i), view.file_size(i), view.label(i),
                   view.multi_label() ? view.label_set(i) : std::span<const int32_t>());
      }
      ASSERT_TRUE(writer.ok());
      ASSERT_TRUE(writer.finish(streamed, "key", tables[t].second, streamed_fingerprint));
    }
    EXPECT_EQ(streamed_fingerprint, fingerprint(view)) << "table " << t;
    EXPECT_TRUE(file_bytes(streamed) == file_bytes(stored)) << "table " << t;
    // Its temporary columns are gone.
    EXPECT_EQ(std::distance(fs::directory_iterator(streamed.parent_path()), {}),
              static_cast<std::ptrdiff_t>(t + 1));
  }
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

TEST(TableFile, AListLargerThanTheReadersChunksIsStreamedIntoTheTableItParsesTo) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache";
  test::EnvGuard env("STOKER_CACHE_DIR", cache.c_str());
  // Quoted fields with newlines, CRLFs and multi-byte names across the 1 MiB chunk boundaries.
  std::string csv = "\xEF\xBB\xBFpath,labels\r\n", jsonl, txt;
  for (int i = 0; i < 60'000; ++i) {
    csv += fmt::format("\"dir {}\n/é{}.jpg\",\"{};{}\"\r\n", i % 97, i, i % 13, 20 + i % 4);
    jsonl += fmt::format("{{\"path\": \"j/{}.png\", \"label\": \"class {}\"}}\n", i, i % 101);
    txt += fmt::format("t/{}.jpg\t{}\n", i, i % 1000);
  }
  ASSERT_GT(csv.size(), size_t{1} << 20);
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"l.csv", csv}, {"l.jsonl", jsonl}, {"l.txt", txt}}) {
    const fs::path list = tmp.path() / name;
    write_file(list, text);
    age(list, 60);
    const auto in_memory = file_list_from_text(text, list.string(), {});
    for (int open = 0; open < 2; ++open) {  // streamed into the cache, then mapped from it
      const auto got = open_file_list(list);
      ASSERT_EQ(got->size(), in_memory->size()) << name;
      EXPECT_EQ(got->fingerprint(), in_memory->fingerprint()) << name;
      EXPECT_EQ(got->classes(), in_memory->classes()) << name;
      EXPECT_EQ(got->multi_label(), in_memory->multi_label()) << name;
      for (const int64_t i : {int64_t{0}, int64_t{1}, int64_t{31'337}, got->size() - 1}) {
        EXPECT_EQ(got->name(i), in_memory->name(i)) << name << " sample " << i;
        EXPECT_EQ(got->label(i), in_memory->label(i)) << name << " sample " << i;
      }
    }
  }
  EXPECT_EQ(cached_lists(cache).size(), 3u);
  // Nothing else is left in the cache folder: no temporary column or table.
  EXPECT_EQ(std::distance(fs::directory_iterator(cache), {}), 3);
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
