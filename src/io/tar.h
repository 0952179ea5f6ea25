// Reading the member list of a tar archive in one pass (private to src/io): the WebDataset
// reader indexes its shards with it. POSIX ustar, GNU (long names 'L', base-256 sizes) and pax
// (extended headers 'x' with path= and size=; global headers 'g' are skipped) as Python's
// tarfile, GNU tar and webdataset's writers make them.
//
// Only regular files are members ('0', '\0', and '7' contiguous files); folders, links and
// devices are passed over. The archive ends at two zero blocks or at the end of the bytes.
// Errors are ErrorKind::kBadData naming the archive and the byte offset: a header whose
// checksum is wrong, a size that is not a number, a member cut short by the end of the file.
// The byte source's own errors (I/O) pass through.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace stoker::io {

// Bytes read in order. read() fills up to out.size() bytes and returns how many (0 at the end);
// skip() passes over up to n bytes (a file seeks, a stream reads and drops them) and returns
// how many there were.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  virtual size_t read(std::span<uint8_t> out) = 0;
  virtual uint64_t skip(uint64_t n);
  // The stream's length when known (a file, a remote object): a member whose size runs past
  // it is refused before it is skipped.
  virtual std::optional<uint64_t> length() const { return std::nullopt; }
};

struct TarMember {
  std::string name;     // the path inside the archive
  uint64_t offset = 0;  // of its first content byte in the archive
  uint64_t size = 0;
};

// Calls on_member(member, content) for each regular file in archive order. want(name, size)
// says whether its content is wanted: then `content` holds it (up to 1 MiB; a larger wanted
// member is an error), else it is empty and the bytes are skipped. `archive` names it in errors.
// A size that does not fit the archive (a pax "size=18446744073709551615", a member running
// past the stream's length) is bad data naming the header, as GNU tar and Python's tarfile
// refuse it: it never wraps around to a small skip that would index hidden bytes.
void scan_tar(ByteStream& in, const std::string& archive,
              const std::function<bool(std::string_view name, uint64_t size)>& want,
              const std::function<void(TarMember&& member, std::string&& content)>& on_member);

}  // namespace stoker::io
