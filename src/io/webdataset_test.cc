// The tar scanner, shard patterns, the WebDataset conventions and the shard index cache, on
// archives built here byte by byte (GNU, pax and ustar headers); the Python tests read shards
// written by the webdataset package and served by nginx and an S3 store.
#include "io/webdataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "io/read_ahead.h"
#include "io/tar.h"
#include "io/test_util.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Fills in a header's checksum field (the unsigned sum of its bytes, the field as spaces).
void seal(std::string& h) {
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (const char c : h) sum += static_cast<unsigned char>(c);
  const std::string check = fmt::format("{:06o}", sum);
  std::memcpy(h.data() + 148, check.data(), 6);
  h[154] = '\0';
}

// One 512-byte ustar header (octal fields, checksum filled in).
std::string header(const std::string& name, uint64_t size, char type = '0',
                   const std::string& prefix = "") {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::memcpy(h.data() + 100, "0000644", 7);
  std::memcpy(h.data() + 108, "0001750", 7);
  std::memcpy(h.data() + 116, "0001750", 7);
  const std::string octal = fmt::format("{:011o}", size);
  std::memcpy(h.data() + 124, octal.data(), 11);
  std::memcpy(h.data() + 136, "14721476000", 11);
  h[156] = type;
  std::memcpy(h.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memcpy(h.data() + 345, prefix.data(), std::min<size_t>(prefix.size(), 155));
  seal(h);
  return h;
}

std::string padded(const std::string& content) {
  return content + std::string((512 - content.size() % 512) % 512, '\0');
}

std::string member(const std::string& name, const std::string& content) {
  return header(name, content.size()) + padded(content);
}

std::string pax(const std::map<std::string, std::string>& records) {
  std::string body;
  for (const auto& [key, value] : records) {
    const std::string rest = " " + key + "=" + value + "\n";
    size_t length = rest.size() + 1;
    while (std::to_string(length).size() + rest.size() != length) ++length;
    body += std::to_string(length) + rest;
  }
  return header("././@PaxHeader", body.size(), 'x') + padded(body);
}

std::string end_of_archive() { return std::string(1024, '\0'); }

class StringStream final : public ByteStream {
 public:
  explicit StringStream(std::string bytes, bool sized = true)
      : bytes_(std::move(bytes)), sized_(sized) {}
  size_t read(std::span<uint8_t> out) override {
    const size_t n = std::min(out.size(), bytes_.size() - at_);
    std::memcpy(out.data(), bytes_.data() + at_, n);
    at_ += n;
    return n;
  }
  std::optional<uint64_t> length() const override {
    return sized_ ? std::optional<uint64_t>(bytes_.size()) : std::nullopt;
  }

 private:
  std::string bytes_;
  bool sized_;
  size_t at_ = 0;
};

struct Scanned {
  std::vector<std::string> names;
  std::vector<uint64_t> offsets, sizes;
  std::vector<std::string> contents;
};

Scanned scan(const std::string& bytes, bool sized = true) {
  StringStream in(bytes, sized);
  Scanned out;
  scan_tar(
      in, "t.tar", [](std::string_view name, uint64_t) { return name.ends_with(".cls"); },
      [&](TarMember&& m, std::string&& content) {
        out.names.push_back(m.name);
        out.offsets.push_back(m.offset);
        out.sizes.push_back(m.size);
        out.contents.push_back(content);
      });
  return out;
}

TEST(TarScan, UstarGnuLongNamesPaxAndPrefixes) {
  const std::string long_name = std::string(150, 'a') + "/key.jpg";
  const std::string bytes = member("a.cls", "7") + header("dir/", 0, '5') +
                            header("././@LongLink", long_name.size() + 1, 'L') +
                            padded(long_name + '\0') + member("ignored-by-L", "xy") +
                            pax({{"path", "p/ünïcode.cls"}, {"mtime", "1.5"}}) +
                            member("short", "42") + header("key.jpg", 0, '0', "pre/fix") +
                            header("link.jpg", 0, '2') + end_of_archive() + "trailing junk";
  const Scanned s = scan(bytes);
  EXPECT_THAT(s.names, ElementsAre("a.cls", long_name, "p/ünïcode.cls", "pre/fix/key.jpg"));
  EXPECT_THAT(s.sizes, ElementsAre(1, 2, 2, 0));
  EXPECT_THAT(s.contents, ElementsAre("7", "", "42", ""));
  EXPECT_EQ(s.offsets[0], 512u);
  EXPECT_EQ(bytes.substr(s.offsets[1], 2), "xy");
}

TEST(TarScan, GnuBase256SizeAndPaxSize) {
  std::string h = header("big.cls", 0);
  // Base-256: 0x80 then the size big-endian in the remaining 11 bytes.
  std::memset(h.data() + 124, 0, 12);
  h[124] = static_cast<char>(0x80);
  h[135] = 3;
  seal(h);
  const Scanned s = scan(h + padded("abc") + pax({{"size", "4"}}) + header("x.cls", 0) +
                         padded("wxyz") + end_of_archive());
  EXPECT_THAT(s.contents, ElementsAre("abc", "wxyz"));
}

TEST(TarScan, APaxSizePastTheArchiveIsBadDataNotAWrappedSkip) {
  // issue 30: "size=2^64-1" made padded() wrap to 0, so the scanner indexed the bytes of the
  // "hidden" member's content as a member of their own. GNU tar and tarfile refuse it.
  const std::string hidden = member("hidden.cls", "6");
  const std::string bytes =
      pax({{"size", "18446744073709551615"}}) + header("a.jpg", 0) + hidden + end_of_archive();
  for (const bool sized : {true, false}) {
    const std::string e = test::error_of([&] { scan(bytes, sized); });
    EXPECT_THAT(e, HasSubstr("t.tar: header at byte 1024: a member of 18446744073709551615 "
                             "bytes runs past the end of the archive"))
        << sized;
  }
  // A ustar size larger than what follows it, when the archive's length is known: refused
  // before anything is skipped.
  const std::string e = test::error_of([&] { scan(header("b.jpg", 4096) + end_of_archive()); });
  EXPECT_THAT(e, HasSubstr("t.tar: truncated tar: member b.jpg cut short (4096 bytes from byte "
                           "512, the archive has 1536)"));
}

TEST(TarScan, DamageIsBadDataNamingTheArchiveAndOffset) {
  std::string bad = member("a.cls", "1");
  bad[0] = 'b';  // the checksum no longer matches
  try {
    scan(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadData);
    EXPECT_THAT(e.message(), HasSubstr("t.tar: header at byte 0: bad checksum"));
  }
  const std::string whole = member("a.jpg", std::string(3000, 'x'));
  EXPECT_THAT(test::error_of([&] { scan(whole.substr(0, 2000)); }),
              HasSubstr("t.tar: truncated tar: member a.jpg cut short"));
  EXPECT_THAT(test::error_of([&] { scan(member("a.cls", "1").substr(0, 300)); }),
              HasSubstr("truncated tar: a header cut short at byte 300"));
  // An archive of only zero blocks, or no bytes at all, is empty.
  EXPECT_TRUE(scan(end_of_archive()).names.empty());
  EXPECT_TRUE(scan("").names.empty());
}

TEST(ShardPattern, RangesListsAndSeparators) {
  EXPECT_THAT(expand_shard_pattern("s-{000..002}.tar"),
              ElementsAre("s-000.tar", "s-001.tar", "s-002.tar"));
  EXPECT_THAT(
      expand_shard_pattern("{a,b}/x{8..10}.tar"),
      ElementsAre("a/x8.tar", "a/x9.tar", "a/x10.tar", "b/x8.tar", "b/x9.tar", "b/x10.tar"));
  EXPECT_THAT(expand_shard_pattern("http://h/a.tar::s3://b/k-{1..2}.tar"),
              ElementsAre("http://h/a.tar", "s3://b/k-1.tar", "s3://b/k-2.tar"));
  EXPECT_THAT(test::error_of([] { expand_shard_pattern("s-{2..1}.tar"); }),
              HasSubstr("runs backwards"));
  EXPECT_THAT(test::error_of([] { expand_shard_pattern("s-{1..2.tar"); }),
              HasSubstr("a '{' without '}'"));
  EXPECT_THAT(test::error_of([] { expand_shard_pattern("s-{0..99999999}.tar"); }),
              HasSubstr("more than 10000000 shards"));
}

class WebDatasetTest : public ::testing::Test {
 protected:
  std::string shard(const std::string& name, const std::string& bytes) {
    const auto path = dir_.path() / name;
    test::write_file(path, bytes);
    return path.string();
  }
  std::string cache() const { return (dir_.path() / "cache").string(); }
  test::TempDir dir_;
};

TEST_F(WebDatasetTest, KeysExtensionsAndLabelsFollowWebDataset) {
  const std::string s0 =
      shard("s-0.tar", member("a/x.JPG", "jpeg-x1") + member("a/x.cls", " 3\n") +
                           member("a/x.txt", "ignored: cls comes first") +
                           member("y.seg.png", "seg") + member("y.webp", "webp-y") +
                           member("y.json", R"({"label": 1, "caption": "c"})") +
                           member("README", "no dot: not a sample") +
                           member(".hidden.jpg", "skip") + end_of_archive());
  const std::string s1 =
      shard("s-1.tar", member("z.jpeg", "jpeg-z") + member("z.txt", "0") + end_of_archive());
  auto data = open_webdataset(dir_.path().string() + "/s-{0..1}.tar", {}, {cache()});
  ASSERT_EQ(data->size(), 3);
  EXPECT_EQ(data->name(0), s0 + ":a/x.jpg");  // key up to the first dot, extension lowercased
  EXPECT_EQ(data->name(1), s0 + ":y.webp");   // .webp ranks before .seg.png
  EXPECT_EQ(data->name(2), s1 + ":z.jpeg");
  EXPECT_THAT(data->classes(), ElementsAre("0", "1", "2", "3"));
  EXPECT_EQ(data->label(0), 3);
  EXPECT_EQ(data->label(1), 1);
  EXPECT_EQ(data->label(2), 0);
  std::vector<uint8_t> bytes;
  data->read(1, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "webp-y");
  EXPECT_THAT(data->describe(), HasSubstr("(2 shards, 3 samples, 4 classes)"));
}

TEST_F(WebDatasetTest, ClassNamesJsonListsAndALabelColumn) {
  shard("n.tar", member("a.jpg", "A") + member("a.json", R"({"tags": ["dog", "cat"]})") +
                     member("a.txt", "zebra") + member("b.jpg", "B") +
                     member("b.json", R"({"tags": ["cat"]})") + member("b.txt", "ant") +
                     end_of_archive());
  const std::string pattern = (dir_.path() / "n.tar").string();
  auto by_text = open_webdataset(pattern, {}, {cache()});
  EXPECT_THAT(by_text->classes(), ElementsAre("ant", "zebra"));  // sorted names, from .txt
  EXPECT_EQ(by_text->label(0), 1);
  FileListConfig tags;
  tags.label_column = "tags";  // not an extension: the JSON member
  auto by_tags = open_webdataset(pattern, tags, {cache()});
  ASSERT_TRUE(by_tags->multi_label());
  EXPECT_THAT(by_tags->classes(), ElementsAre("cat", "dog"));
  EXPECT_THAT(std::vector<int32_t>(by_tags->label_set(0).begin(), by_tags->label_set(0).end()),
              ElementsAre(0, 1));
  EXPECT_NE(by_text->fingerprint(), by_tags->fingerprint());
}

TEST_F(WebDatasetTest, IncompleteSamplesAreBadDataForTheSkipPolicy) {
  shard("i.tar", member("a.jpg", "A") + member("a.cls", "0") + member("b.cls", "1") +
                     member("c.png", "C") + end_of_archive());
  auto data = open_webdataset((dir_.path() / "i.tar").string(), {}, {cache()});
  ASSERT_EQ(data->size(), 3);
  std::vector<uint8_t> bytes;
  try {
    data->read(1, bytes);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadData);
    EXPECT_THAT(e.message(), HasSubstr("i.tar:b: no image member (the sample has: cls)"));
  }
  try {
    data->label(2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadData);
    EXPECT_THAT(e.message(), HasSubstr("i.tar:c.png: no label"));
  }
}

TEST_F(WebDatasetTest, TheIndexIsCachedUntilTheShardChanges) {
  const std::string path =
      shard("c.tar", member("a.jpg", "A") + member("a.cls", "0") + end_of_archive());
  auto first = open_webdataset(path, {}, {cache()});
  size_t cached = 0;
  for (const auto& e : std::filesystem::directory_iterator(cache())) {
    cached += e.path().filename().string().starts_with("wds-");
  }
  EXPECT_EQ(cached, 1u);
  // The same shard again: the cached index is used. Rewritten (new size and mtime): read again.
  EXPECT_EQ(open_webdataset(path, {}, {cache()})->fingerprint(), first->fingerprint());
  shard("c.tar", member("a.jpg", "A") + member("a.cls", "0") + member("b.jpg", "BB") +
                     member("b.cls", "1") + end_of_archive());
  auto second = open_webdataset(path, {}, {cache()});
  EXPECT_EQ(second->size(), 2);
  // A damaged cache file is a miss, never an error.
  for (const auto& e : std::filesystem::directory_iterator(cache())) {
    test::write_file(e.path(), "garbage");
  }
  EXPECT_EQ(open_webdataset(path, {}, {cache()})->size(), 2);
}

TEST_F(WebDatasetTest, FieldsAreTheSamplesMembersFromTheScanAndFromTheCache) {
  const std::string path = shard(
      "f.tar", member("a.jpg", "A") + member("a.txt", "a cat") +
                   member("a.json", R"({"sim": 0.31, "tags": ["x"]})") + member("b.jpg", "B") +
                   member("b.json", R"({"tags": []})") + end_of_archive());
  for (int pass = 0; pass < 2; ++pass) {  // scanned, then from the cached index
    auto data = open_webdataset(path, {}, {cache()});
    EXPECT_TRUE(data->has_field("txt"));
    EXPECT_TRUE(data->has_field("json.anything"));
    EXPECT_FALSE(data->has_field("cls"));
    std::string out;
    data->read_field(0, "txt", out);
    EXPECT_EQ(out, "a cat");
    data->read_field(0, "json.sim", out);
    EXPECT_EQ(out, "0.31");
    data->read_field(0, "json.tags", out);
    EXPECT_EQ(out, R"(["x"])");
    data->read_field(1, "json", out);
    EXPECT_EQ(out, R"({"tags": []})");
    EXPECT_THAT(test::error_of([&] { data->read_field(1, "txt", out); }),
                HasSubstr("f.tar:b.jpg: no .txt member for the field 'txt' (the sample has: "
                          "jpg,json)"));
    EXPECT_THAT(test::error_of([&] { data->read_field(1, "json.sim", out); }),
                HasSubstr("f.tar:b.jpg: its .json member has no 'sim'"));
  }
}

TEST_F(WebDatasetTest, AFilterKeepsThePassingSamplesAndTheirShards) {
  const auto sample = [](const std::string& key, int score) {
    return member(key + ".jpg", "img-" + key) +
           member(key + ".json",
                  fmt::format(R"({{"score": {}, "lang": "{}"}})", score, score % 2 ? "en" : "de"));
  };
  shard("p-0.tar", sample("a", 1) + sample("b", 5) + sample("c", 2) + end_of_archive());
  shard("p-1.tar", sample("d", 0) + member("e.jpg", "no json") + end_of_archive());
  shard("p-2.tar", sample("f", 9) + sample("g", 3) + end_of_archive());
  std::shared_ptr<const Dataset> base =
      open_webdataset(dir_.path().string() + "/p-{0..2}.tar", {}, {cache()});
  auto kept = filter_dataset(base, {{"json.score", ">=", "2"}});
  ASSERT_EQ(kept->size(), 4);  // b, c, f, g: e has no .json, so it does not pass
  EXPECT_EQ(kept->filtered(), 3);
  EXPECT_EQ(kept->shard_ends(), (std::vector<int64_t>{2, 4}));  // p-1 kept nothing
  EXPECT_THAT(kept->name(2), HasSubstr("p-2.tar:f.jpg"));
  std::vector<uint8_t> bytes;
  kept->read(3, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "img-g");
  EXPECT_NE(kept->fingerprint(), base->fingerprint());
  EXPECT_THAT(kept->describe(), HasSubstr("filtered to 4 by json.score >= 2"));
  auto english = filter_dataset(base, {{"json.lang", "==", "en"}, {"json.score", "<", "9"}});
  EXPECT_EQ(english->size(), 3);  // a, b, g (f is 9)
  EXPECT_THAT(test::error_of([&] {
                filter_dataset(base, {{"json.score", "=~", "1"}});
              }),
              HasSubstr("'=~' is not a comparison"));
  EXPECT_THAT(test::error_of([&] {
                filter_dataset(base, {{"txt", "==", "x"}});
              }),
              HasSubstr("has no field 'txt'"));
}

TEST_F(WebDatasetTest, GzipShardsAndEmptySetsAreRefusedClearly) {
  shard("g.tar.gz", std::string("\x1f\x8b\x08\x00", 4) + std::string(600, '\0'));
  EXPECT_THAT(
      test::error_of([&] { open_webdataset((dir_.path() / "g.tar.gz").string(), {}, {cache()}); }),
      HasSubstr("a gzip-compressed tar"));
  shard("e.tar", end_of_archive());
  EXPECT_THAT(
      test::error_of([&] { open_webdataset((dir_.path() / "e.tar").string(), {}, {cache()}); }),
      HasSubstr("no samples in 1 shard"));
}

TEST(ReadAheadTest, HintedSamplesArriveOnceEachAndErrorsReachTheReader) {
  std::atomic<int> fetches{0};
  const auto bytes_of = [](int64_t index) {
    return std::vector<uint8_t>(static_cast<size_t>(index % 7 + 1), static_cast<uint8_t>(index));
  };
  // Units: runs of 3 consecutive indices (as a shard's neighbouring members would be).
  ReadAhead ahead(
      [&](std::span<const int64_t> unit, std::vector<std::vector<uint8_t>>& out) {
        ++fetches;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        for (const int64_t index : unit) {
          if (index == 13) STOKER_THROW_IO(EIO, "x", "sample 13: injected");
          out.push_back(bytes_of(index));
        }
      },
      [](int64_t index) { return static_cast<uint64_t>(index % 7 + 1); },
      [](std::vector<int64_t> indices) {
        std::map<int64_t, std::vector<int64_t>> runs;
        for (const int64_t i : indices) runs[i / 3].push_back(i);
        std::vector<std::vector<int64_t>> out;
        for (auto& [run, members] : runs) out.push_back(members);
        return out;
      },
      4, 16);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < 40; ++i) order.push_back(i);
  order.push_back(5);  // a padding slot repeating sample 5
  ahead.hint(order);
  std::vector<uint8_t> out;
  for (const int64_t i : order) {
    if (i / 3 == 13 / 3) {  // 12, 13 and 14 share the failed unit
      EXPECT_THAT(test::error_of([&] { ahead.take(i, out); }), HasSubstr("injected"));
      EXPECT_FALSE(ahead.take(i, out));  // dropped: a retry reads it itself
      continue;
    }
    ASSERT_TRUE(ahead.take(i, out)) << i;
    EXPECT_EQ(out, bytes_of(i));
  }
  EXPECT_EQ(fetches.load(), 14);  // one fetch per unit; sample 5 once for its two slots
  EXPECT_FALSE(ahead.take(3, out));
  ahead.hint(order);
  ahead.clear();
  EXPECT_FALSE(ahead.take(0, out));
}

}  // namespace
}  // namespace stoker::io
