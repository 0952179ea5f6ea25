// Storage for random reads on its own: mapped and pread reads agree, a file that shrinks under
// a mapping is an I/O error (not a SIGBUS), and open errors carry their kind and errno.
#include "io/random_access_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "io/test_util.h"
#include "stoker/error.h"

namespace stoker::io {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + 7);
  return v;
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Error error_from(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorKind::kInternal, "<no error>");
}

TEST(RandomAccessFile, MappedAndPreadReadsGiveTheSameBytes) {
  test::TempDir dir;
  const fs::path path = dir.path() / "f.bin";
  const auto bytes = pattern(3 * 4096 + 123);
  write_bytes(path, bytes);

  RandomAccessFile pread_only = RandomAccessFile::open(path.string(), "f");
  RandomAccessFile whole = RandomAccessFile::open(path.string(), "f");
  RandomAccessFile tail = RandomAccessFile::open(path.string(), "f");
  ASSERT_TRUE(whole.map_from(0));
  ASSERT_TRUE(tail.map_from(2 * 4096 + 5));  // mapped from its page on; pread before it
  EXPECT_EQ(whole.size(), bytes.size());
  EXPECT_TRUE(whole.mapped(0, bytes.size()));
  EXPECT_FALSE(whole.mapped(1, bytes.size()));
  EXPECT_FALSE(pread_only.mapped(0, 1));
  EXPECT_TRUE(tail.mapped(2 * 4096, 4096));
  EXPECT_FALSE(tail.mapped(2 * 4096 - 1, 2));

  for (const auto& [offset, a, b] : {std::tuple<uint64_t, size_t, size_t>{0, 10, 0},
                                     {4090, 12, 3000},
                                     {2 * 4096 - 3, 5, 0},
                                     {bytes.size() - 50, 20, 30},
                                     {100, 0, 7}}) {
    const std::vector<uint8_t> want_a(bytes.begin() + offset, bytes.begin() + offset + a);
    const std::vector<uint8_t> want_b(bytes.begin() + offset + a, bytes.begin() + offset + a + b);
    for (const RandomAccessFile* f : {&pread_only, &whole, &tail}) {
      std::vector<uint8_t> got_a(a), got_b(b);
      f->read(offset, got_a, "test", got_b);
      EXPECT_EQ(got_a, want_a) << offset;
      EXPECT_EQ(got_b, want_b) << offset;
    }
  }
  const uint64_t from = 2 * 4096;
  EXPECT_EQ(tail.hash_mapped(from, bytes.size() - from, "tail"),
            XXH3_64bits(bytes.data() + from, bytes.size() - from));
}

TEST(RandomAccessFile, AFileThatShrinksIsAnIoErrorWhetherMappedOrNot) {
  test::TempDir dir;
  const fs::path path = dir.path() / "f.bin";
  write_bytes(path, pattern(4 * 4096));
  RandomAccessFile mapped = RandomAccessFile::open(path.string(), "f.bin");
  RandomAccessFile preads = RandomAccessFile::open(path.string(), "f.bin");
  ASSERT_TRUE(mapped.map_from(0));
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  std::vector<uint8_t> out(100);
  const Error m = error_from([&] { mapped.read(3 * 4096, out, "record 9 at byte offset 12288"); });
  EXPECT_EQ(m.kind(), ErrorKind::kIo);
  EXPECT_EQ(m.path(), "f.bin");
  EXPECT_THAT(m.message(), HasSubstr("f.bin: record 9 at byte offset 12288: cannot be read (the "
                                     "file shrank after it was opened, or an I/O error)"));
  const Error p = error_from([&] { preads.read(3 * 4096, out, "record 9"); });
  EXPECT_EQ(p.kind(), ErrorKind::kIo);
  EXPECT_THAT(p.message(),
              HasSubstr("f.bin: record 9: cannot be read (the file shrank after it was opened)"));
  // The bytes still there are read as before.
  mapped.read(0, out, "start");
  EXPECT_EQ(out[1], pattern(2)[1]);
}

TEST(RandomAccessFile, OpenErrorsHaveTheirKind) {
  test::TempDir dir;
  const Error missing =
      error_from([&] { RandomAccessFile::open((dir.path() / "none").string(), "none"); });
  EXPECT_EQ(missing.kind(), ErrorKind::kIo);
  EXPECT_EQ(missing.sys_errno(), ENOENT);
  EXPECT_EQ(missing.path(), "none");
  // A folder or a FIFO is this entry's fault, and opening the FIFO does not wait for a writer.
  const Error folder = error_from([&] { RandomAccessFile::open(dir.path().string(), "d"); });
  EXPECT_EQ(folder.kind(), ErrorKind::kBadData);
  EXPECT_THAT(folder.message(), HasSubstr("d: is a directory"));
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_from([&] { RandomAccessFile::open(fifo.string(), "p"); }).kind(),
            ErrorKind::kBadData);
}

TEST(RandomAccessFile, AnEmptyFileOpensAndMapsNothing) {
  test::TempDir dir;
  const fs::path path = dir.path() / "empty";
  write_bytes(path, {});
  RandomAccessFile f = RandomAccessFile::open(path.string(), "empty");
  EXPECT_EQ(f.size(), 0u);
  EXPECT_FALSE(f.map_from(0));
  std::vector<uint8_t> none;
  f.read(0, none, "nothing");
}

}  // namespace
}  // namespace stoker::io
