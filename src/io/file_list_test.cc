#include "io/file_list.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/test_util.h"
#include "stoker/dataset.h"

namespace stoker::io {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::TempDir;
using test::write_file;
using ::testing::HasSubstr;

TEST(FileList, ParsesPathsLabelsAndComments) {
  TempDir tmp;
  const fs::path list = tmp.path() / "lists/train.txt";
  write_file(tmp.path() / "lists/img/a.jpg", "AAA");
  write_file(tmp.path() / "abs.png", "abs");
  write_file(list,
             "# a comment\n"
             "img/a.jpg\t3\n"
             "\n"
             "   \t \n"
             "with\ttab.jpg\t0\r\n" +
                 (tmp.path() / "abs.png").string() + "\t1");  // no final newline
  auto data = open_file_list(list);
  ASSERT_EQ(data->size(), 3);
  EXPECT_EQ(data->name(0), (tmp.path() / "lists/img/a.jpg").string());
  EXPECT_EQ(data->name(1), (tmp.path() / "lists/with\ttab.jpg").string());
  EXPECT_EQ(data->name(2), (tmp.path() / "abs.png").string());
  EXPECT_EQ(data->label(0), 3);
  EXPECT_EQ(data->label(1), 0);
  EXPECT_EQ(data->label(2), 1);
  EXPECT_EQ(data->classes(), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(data->describe(), "file-list " + list.string() + " (3 samples, 4 classes)");

  std::vector<uint8_t> bytes;
  data->read(0, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "AAA");
  data->read(2, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "abs");
}

TEST(FileList, RelativeToTheCurrentFolderWhenTheListHasNoFolder) {
  TempDir tmp;
  write_file(tmp.path() / "l.txt", "x.jpg\t0\n");
  const fs::path old = fs::current_path();
  fs::current_path(tmp.path());
  auto data = open_file_list("l.txt");
  fs::current_path(old);
  EXPECT_EQ(data->name(0), "x.jpg");
}

TEST(FileList, FingerprintCoversPathsAndLabelsInOrder) {
  TempDir tmp;
  write_file(tmp.path() / "a/l.txt", "x.jpg\t0\ny.jpg\t1\n");
  write_file(tmp.path() / "b/l.txt", "# same listing, other folder\nx.jpg\t0\ny.jpg\t1\n");
  write_file(tmp.path() / "c/l.txt", "y.jpg\t1\nx.jpg\t0\n");
  write_file(tmp.path() / "d/l.txt", "x.jpg\t0\ny.jpg\t2\n");
  const std::string a = open_file_list(tmp.path() / "a/l.txt")->fingerprint();
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(open_file_list(tmp.path() / "b/l.txt")->fingerprint(), a);
  EXPECT_NE(open_file_list(tmp.path() / "c/l.txt")->fingerprint(), a);
  EXPECT_NE(open_file_list(tmp.path() / "d/l.txt")->fingerprint(), a);
}

TEST(FileList, MalformedLinesNameTheListAndLine) {
  TempDir tmp;
  const fs::path list = tmp.path() / "l.txt";
  const auto error_for = [&](const std::string& content) {
    write_file(list, content);
    return error_of([&] { open_file_list(list); });
  };
  const std::string l = list.string();
  EXPECT_EQ(error_for("a.jpg\t0\n# c\nb.jpg 1\n"),
            l + ":3: expected 'path<TAB>label', found no tab (a table needs a header naming its "
                "path column: path, file, filename, image, ...)");
  EXPECT_EQ(error_for("a.jpg\tcat\n"), l + ":1: label 'cat' is not an integer");
  EXPECT_EQ(error_for("\na.jpg\t1x\n"), l + ":2: label '1x' is not an integer");
  EXPECT_EQ(error_for("a.jpg\t 1\n"), l + ":1: label ' 1' is not an integer");
  EXPECT_EQ(error_for("a.jpg\t\n"), l + ":1: label '' is not an integer");
  EXPECT_EQ(error_for("a.jpg\t1\t\n"), l + ":1: label '' is not an integer");
  EXPECT_EQ(error_for("a.jpg\t-1\n"), l + ":1: label -1 is out of range [0, 16777215]");
  EXPECT_EQ(error_for("a.jpg\t16777216\n"), l + ":1: label 16777216 is out of range [0, 16777215]");
  EXPECT_EQ(error_for("a.jpg\t99999999999999999999\n"),
            l + ":1: label 99999999999999999999 is out of range [0, 16777215]");
  EXPECT_EQ(error_for("\t1\n"), l + ":1: empty path");
  EXPECT_EQ(error_for(std::string("a\0b.jpg\t1\n", 10)), l + ":1: the path contains a NUL byte");
  EXPECT_EQ(error_for("# only comments\n\n"), l + ": no samples");
  EXPECT_EQ(error_for(""), l + ": no samples");
  EXPECT_EQ(error_of([&] { open_file_list(tmp.path() / "missing.txt"); }),
            (tmp.path() / "missing.txt").string() + ": No such file or directory");
}

// issue 30: one id of 16,777,215 in a 27-byte list made 16.7 M classes (1.9 GB, 5 GB per
// multi-hot batch of 64): ids are bounded by the labels seen, sparse ones (COCO's) pass.
TEST(FileList, LabelIdsFarAboveTheLabelsSeenAreRefusedNamingTheLine) {
  TempDir tmp;
  const fs::path list = tmp.path() / "l.txt";
  write_file(list, "a.jpg\t0\nb.jpg\t16777215\n");
  EXPECT_EQ(error_of([&] { open_file_list(list); }),
            list.string() +
                ": line 2: label 16777215 is far above the 2 distinct labels seen "
                "(ids make a class each up to the largest, and must be below 1028 "
                "here): number the classes 0..N-1, or give class names instead of ids");
  // COCO's category ids: 1..90 with gaps, 80 used.
  std::string coco;
  for (int id = 1; id <= 90; ++id) {
    if (id % 9 != 0) coco += fmt::format("i{}.jpg\t{}\n", id, id);  // 80 of 1..90
  }
  write_file(list, coco);
  EXPECT_EQ(open_file_list(list)->classes().size(), 90u);  // ids 0..89: the largest used is 89
}

TEST(FileList, FieldColumnsAreKeptPerSample) {
  TempDir tmp;
  const fs::path csv = tmp.path() / "pairs.csv";
  write_file(csv, "path,caption,score\na.jpg,\"a cat, sleeping\",0.5\nb.jpg,,0.25\n");
  auto data = open_file_list(csv, {.field_columns = {"caption", "score"}});
  EXPECT_TRUE(data->has_field("caption"));
  EXPECT_FALSE(data->has_field("path"));  // only what was asked for
  std::string out;
  data->read_field(0, "caption", out);
  EXPECT_EQ(out, "a cat, sleeping");
  data->read_field(1, "caption", out);
  EXPECT_EQ(out, "");  // an empty cell is an empty field, not a missing one
  data->read_field(1, "score", out);
  EXPECT_EQ(out, "0.25");
  EXPECT_NE(data->fingerprint(), open_file_list(csv)->fingerprint());
  EXPECT_THAT(error_of([&] { open_file_list(csv, {.field_columns = {"alt"}}); }),
              HasSubstr("pairs.csv:1: no column 'alt' for the field (the header: path, caption, "
                        "score)"));
  const fs::path jsonl = tmp.path() / "pairs.jsonl";
  write_file(jsonl,
             "{\"path\": \"a.jpg\", \"t\": \"x\", \"m\": {\"k\": 1}}\n"
             "{\"path\": \"b.jpg\", \"m\": [2]}\n");
  auto lines = open_file_list(jsonl, {.field_columns = {"t", "m"}});
  lines->read_field(0, "m", out);
  EXPECT_EQ(out, "{\"k\":1}");  // not a string: JSON text
  try {
    lines->read_field(1, "t", out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadData);
    EXPECT_THAT(e.message(), HasSubstr("b.jpg: no 't' for the field"));
  }
  const fs::path legacy = tmp.path() / "l.txt";
  write_file(legacy, "a.jpg\t0\n");
  EXPECT_THAT(error_of([&] { open_file_list(legacy, {.field_columns = {"c"}}); }),
              HasSubstr("headerless"));
}

TEST(FileList, CsvWithAHeaderAndClassNamesMapsThemLikeImageFolder) {
  TempDir tmp;
  const fs::path list = tmp.path() / "train.csv";
  // As Python's csv module writes it: CRLF, quotes around a field with a comma or a quote.
  write_file(list,
             "\xEF\xBB\xBFid,Image,label,split\r\n"
             "1,img/a.jpg,zebra,train\r\n"
             "2,\"img/b, the second.jpg\",ant,train\r\n"
             "3,img/c.jpg,\"golden \"\"retriever\"\"\",val\r\n"
             "\r\n"
             "4,img/d.jpg,ant,train\r\n");
  auto data = open_file_list(list);
  ASSERT_EQ(data->size(), 4);
  EXPECT_EQ(data->classes(), (std::vector<std::string>{"ant", "golden \"retriever\"", "zebra"}));
  EXPECT_EQ(data->label(0), 2);
  EXPECT_EQ(data->label(1), 0);
  EXPECT_EQ(data->label(2), 1);
  EXPECT_EQ(data->label(3), 0);
  EXPECT_FALSE(data->multi_label());
  EXPECT_EQ(data->name(1), (tmp.path() / "img/b, the second.jpg").string());
  // Other columns by name; integer labels stay ids.
  write_file(list, "file,y,cls\na.jpg,5,7\nb.jpg,2,0\n");
  auto by_name = open_file_list(list, {.path_column = "file", .label_column = "cls"});
  EXPECT_EQ(by_name->label(0), 7);
  EXPECT_EQ(by_name->classes().size(), 8u);
  EXPECT_EQ(open_file_list(list)->label(0), 5);  // "y" is a usual label column name
}

TEST(FileList, TabSeparatedTablesJsonLinesMultiLabelAndLabelFree) {
  TempDir tmp;
  const fs::path tsv = tmp.path() / "l.tsv";
  write_file(tsv, "path\tlabels\na.jpg\t3;7\nb.jpg\t7\nc.jpg\t1 2\n");
  auto multi = open_file_list(tsv);
  ASSERT_TRUE(multi->multi_label());
  EXPECT_EQ(std::vector<int32_t>(multi->label_set(0).begin(), multi->label_set(0).end()),
            (std::vector<int32_t>{3, 7}));
  EXPECT_EQ(multi->label_set(1).size(), 1u);
  EXPECT_EQ(std::vector<int32_t>(multi->label_set(2).begin(), multi->label_set(2).end()),
            (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(multi->label(0), 3);
  EXPECT_EQ(multi->classes().size(), 8u);

  const fs::path jsonl = tmp.path() / "l.jsonl";
  write_file(jsonl,
             "{\"path\": \"a.jpg\", \"label\": [\"dog\", \"cat\"]}\n"
             "\n"
             "{\"path\": \"b.jpg\", \"label\": []}\n"
             "{\"path\": \"c.jpg\", \"label\": \"cat\", \"extra\": 1}\r\n");
  auto j = open_file_list(jsonl);
  ASSERT_TRUE(j->multi_label());  // a list anywhere makes it multi-label
  EXPECT_EQ(j->classes(), (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(j->label_set(0).size(), 2u);
  EXPECT_EQ(j->label_set(1).size(), 0u);
  EXPECT_EQ(j->label(1), -1);
  EXPECT_EQ(j->label(2), 0);
  write_file(jsonl,
             "{\"image\": \"a.jpg\", \"target\": 4}\n{\"image\": \"b.jpg\", \"target\": 1}\n");
  auto ids = open_file_list(jsonl);
  EXPECT_FALSE(ids->multi_label());
  EXPECT_EQ(ids->label(0), 4);

  const fs::path free = tmp.path() / "unlabelled.csv";
  write_file(free, "path,width\na.jpg,640\nb.jpg,480\n");
  auto none = open_file_list(free);
  EXPECT_EQ(none->size(), 2);
  EXPECT_EQ(none->label(0), -1);
  EXPECT_TRUE(none->classes().empty());

  // The label sets are part of the fingerprint.
  write_file(tsv, "path\tlabels\na.jpg\t3;7\nb.jpg\t7\nc.jpg\t1 3\n");
  EXPECT_NE(open_file_list(tsv)->fingerprint(), multi->fingerprint());
}

TEST(FileList, BadRowsOfTablesAndJsonLinesNameTheLine) {
  TempDir tmp;
  const auto error_for = [&](const std::string& name, const std::string& content,
                             const FileListConfig& config = {}) {
    write_file(tmp.path() / name, content);
    return error_of([&] { open_file_list(tmp.path() / name, config); });
  };
  const std::string c = (tmp.path() / "l.csv").string(), j = (tmp.path() / "l.jsonl").string();
  EXPECT_EQ(error_for("l.csv", "path,label\na.jpg,1\nb.jpg\n"),
            c + ":3: 1 fields, the header has 2");
  EXPECT_EQ(error_for("l.csv", "path,label\na.jpg,1\n\"b.jpg,2\n"),
            c + ":3: a quoted field is not closed");
  EXPECT_EQ(error_for("l.csv", "path,label\n\"a\"x,1\n"),
            c + ":2: characters after a closing quote");
  EXPECT_EQ(error_for("l.csv", "path,label\na.jpg,\n"), c + ":2: empty label (column 'label')");
  EXPECT_EQ(error_for("l.csv", "a.jpg,3\nb.jpg,4\n"),
            c + ":1: no path column in the header (a.jpg, 3): name one path, file, filename, "
                "image, image_path, filepath or img, or give the path column");
  EXPECT_EQ(error_for("l.csv", "path,label\na.jpg,1\n", {.path_column = "", .label_column = "cls"}),
            c + ":1: no column 'cls' in the header (path, label)");
  EXPECT_EQ(error_for("l.csv", "path,label\n,1\n"), c + ":2: empty path");
  EXPECT_EQ(error_for("l.jsonl", "{\"path\": \"a.jpg\", \"label\": 1}\n[1, 2]\n"),
            j + ":2: expected a JSON object");
  EXPECT_EQ(error_for("l.jsonl", "{\"path\": \"a.jpg\", \"label\": 1}\n{\"label\": 2}\n"),
            j + ":2: no path: expected a string member \"path\" (or file, filename, image, ...)");
  EXPECT_EQ(error_for("l.jsonl", "{\"path\": \"a.jpg\", \"label\": -3}\n"),
            j + ":1: label -3 is not a class name or an integer in [0, 16777215]");
  EXPECT_EQ(error_for("l.jsonl", "{\"path\": \"a.jpg\", \"label\": 1}\n{\"path\": \"b.jpg\"}\n"),
            j + ":2: no label where the lines before have one");
  EXPECT_NE(error_for("l.jsonl", "{\"path\": \"a.jpg\"\n").find(j + ":1: not JSON"),
            std::string::npos);
  // A label nesting a million lists would overflow the stack in nlohmann's recursive dump():
  // refused on the text, before parsing.
  EXPECT_EQ(error_for("l.jsonl", "{\"path\": \"a.jpg\", \"label\": " + std::string(1000000, '[') +
                                     std::string(1000000, ']') + "}\n"),
            j + ":1: JSON nested deeper than 32 levels");
}

TEST(FileList, ReadErrorsNameTheFile) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "folder");
  fs::create_symlink("nowhere.jpg", dir / "dangling.jpg");
  ASSERT_EQ(::mkfifo((dir / "fifo.jpg").c_str(), 0600), 0);
  write_file(dir / "l.txt", "folder\t0\ndangling.jpg\t0\nmissing.jpg\t0\nfifo.jpg\t0\n");
  auto data = open_file_list(dir / "l.txt");
  std::vector<uint8_t> bytes;
  const auto read_error = [&](int64_t index) {
    return error_of([&] { data->read(index, bytes); });
  };
  // The kind each error is raised with: what the entry is (bad data, which the bad-sample
  // policy may skip) or what the storage did (I/O: errno and path on the error).
  const auto kind_of = [&](int64_t index) {
    try {
      data->read(index, bytes);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::kInternal;
  };
  EXPECT_EQ(read_error(0), (dir / "folder").string() + ": is a directory");
  EXPECT_EQ(kind_of(0), ErrorKind::kBadData);
  EXPECT_EQ(read_error(1), (dir / "dangling.jpg").string() + ": dangling symbolic link");
  EXPECT_EQ(kind_of(1), ErrorKind::kBadData);
  EXPECT_EQ(read_error(2), (dir / "missing.jpg").string() + ": No such file or directory");
  try {
    data->read(2, bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(e.sys_errno(), ENOENT);
    EXPECT_EQ(e.path(), (dir / "missing.jpg").string());
  }
  EXPECT_EQ(read_error(3), (dir / "fifo.jpg").string() + ": not a regular file");  // no hang
  EXPECT_EQ(kind_of(3), ErrorKind::kBadData);
  EXPECT_EQ(read_error(-1), (dir / "l.txt").string() + ": sample index -1 out of range [0, 4)");
}

// What read_list makes of `text` fed in chunks of `chunk` bytes: "ERROR message", or one line
// per sample (path, label, set) and the classes.
std::string read_in_chunks(const std::string& text, const std::string& name, size_t chunk) {
  std::string out;
  const ListBytes bytes = [&](const std::function<void(std::string_view)>& each) {
    for (size_t at = 0; at < text.size(); at += chunk)
      each(std::string_view(text).substr(at, chunk));
  };
  try {
    const auto classes = read_list(
        text, bytes, name, {}, [&](bool multi) { out += multi ? "multi\n" : "single\n"; },
        [&](std::string_view path, int64_t label, std::span<const int32_t> set) {
          out += fmt::format("{} {} [{}]\n", path, label, fmt::join(set, ","));
        });
    out += fmt::format("classes {}\n", fmt::join(classes, "|"));
  } catch (const Error& e) {
    out = "ERROR " + e.message();
  }
  return out;
}

TEST(FileList, ChunksSplittingABomAQuoteACrlfOrAMultiByteNameReadAsTheWholeText) {
  const std::vector<std::pair<std::string, std::string>> lists = {
      {"l.csv", "\xEF\xBB\xBFpath,label\r\n\"a,\"\"b\"\"\r\nc.jpg\",dog\r\n\xC3\xA9.jpg,cat\r\n"},
      {"l.csv", "\xEF\xBBpath,label\na.jpg,1\n"},  // not a whole BOM: data
      {"l.csv", "path,label\n\"a.jpg\"x,1\n"},
      {"l.csv", "path,label\n\"a.jpg,1\n"},
      {"l.csv", "path,label\na.jpg,\"1;2\"\rb.jpg,3\r"},
      {"l.tsv", "path\tlabels\na.jpg\t3 7\nb.jpg\t7\n\n"},
      {"l.txt", "# c\r\na b.jpg\t3\r\n\n  \nc.jpg\t007"},
      {"l.jsonl", "{\"path\": \"a.jpg\", \"label\": [\"x\", 7]}\r\n\n{\"path\": \"b\"}\n"},
      {"l.jsonl", "{\"path\": \"a.jpg\", \"label\": \"007\"}\n{\"path\": \"b\", \"label\": 7}"},
  };
  for (const auto& [name, text] : lists) {
    const std::string whole = read_in_chunks(text, name, text.size() + 1);
    for (size_t chunk = 1; chunk <= 7; ++chunk) {
      EXPECT_EQ(read_in_chunks(text, name, chunk), whole) << name << " in chunks of " << chunk;
    }
  }
  EXPECT_EQ(read_in_chunks(lists[0].second, "l.csv", 3),
            "single\na,\"b\"\r\nc.jpg 1 []\n\xC3\xA9.jpg 0 []\nclasses cat|dog\n");
  EXPECT_EQ(read_in_chunks(lists[8].second, "l.jsonl", 1),
            "single\na.jpg 7 []\nb 7 []\nclasses 0|1|2|3|4|5|6|7\n");  // "007" is the id 7
}

TEST(FileList, AListThatChangesBetweenItsTwoReadsIsAnError) {
  // The second pass sees another label, or more rows, than the first counted.
  for (const auto& [first, second] : std::vector<std::pair<std::string, std::string>>{
           {"path,label\na,cat\nb,dog\n", "path,label\na,cat\nb,emu\n"},
           {"a\t1\nb\t2\n", "a\t1\nb\t2\nc\t1\n"},
           {"a\t1\nb\t2\n", "a\t1\n"}}) {
    int reads = 0;
    const ListBytes bytes = [&](const std::function<void(std::string_view)>& each) {
      each(reads++ == 0 ? first : second);
    };
    const std::string name = first.starts_with("path") ? "l.csv" : "l.txt";
    EXPECT_THAT(error_of([&] {
                  read_list(
                      first, bytes, name, {}, [](bool) {}, [](auto...) {});
                }),
                testing::HasSubstr("the list changed while it was read: open it again"));
  }
}

TEST(FileList, ReadReusesTheBuffer) {
  TempDir tmp;
  write_file(tmp.path() / "big.jpg", std::string(100000, 'b'));
  write_file(tmp.path() / "small.jpg", "s");
  write_file(tmp.path() / "empty.jpg", "");
  write_file(tmp.path() / "l.txt", "big.jpg\t0\nsmall.jpg\t0\nempty.jpg\t0\n");
  auto data = open_file_list(tmp.path() / "l.txt");
  std::vector<uint8_t> bytes;
  data->read(0, bytes);
  ASSERT_EQ(bytes.size(), 100000u);
  EXPECT_EQ(bytes[99999], 'b');
  const uint8_t* storage = bytes.data();
  data->read(1, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "s");
  EXPECT_EQ(bytes.data(), storage);
  data->read(2, bytes);
  EXPECT_TRUE(bytes.empty());
  EXPECT_GE(bytes.capacity(), 100000u);
}

}  // namespace
}  // namespace stoker::io
