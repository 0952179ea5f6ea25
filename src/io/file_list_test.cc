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
            l + ":3: expected 'path<TAB>label', found no tab");
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
