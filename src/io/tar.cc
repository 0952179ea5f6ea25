#include "io/tar.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <optional>
#include <vector>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {
namespace {

constexpr uint64_t kBlock = 512;
constexpr uint64_t kMaxWantedBytes = uint64_t{1} << 20;
// A pax or GNU long-name header is metadata of one member; more than this is not a name.
constexpr uint64_t kMaxMetaBytes = uint64_t{1} << 20;

uint64_t padded(uint64_t size) { return (size + kBlock - 1) / kBlock * kBlock; }

// A NUL-terminated (or full-width) header field.
std::string_view field(const uint8_t* header, size_t offset, size_t width) {
  const char* p = reinterpret_cast<const char*>(header + offset);
  return std::string_view(p, strnlen(p, width));
}

// A numeric field: octal digits (leading spaces allowed, ended by NUL or space), or GNU
// base-256 (the first byte's high bit set).
std::optional<uint64_t> number(const uint8_t* header, size_t offset, size_t width) {
  const uint8_t* p = header + offset;
  if (p[0] & 0x80) {
    if (p[0] != 0x80) return std::nullopt;  // negative, or more than 64 bits
    uint64_t v = 0;
    for (size_t i = 1; i < width; ++i) {
      if (v >> 56) return std::nullopt;
      v = (v << 8) | p[i];
    }
    return v;
  }
  size_t i = 0;
  while (i < width && p[i] == ' ') ++i;
  uint64_t v = 0;
  size_t digits = 0;
  for (; i < width && p[i] >= '0' && p[i] <= '7'; ++i, ++digits) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + (p[i] - '0');
  }
  if (i < width && p[i] != ' ' && p[i] != '\0') return std::nullopt;
  if (digits == 0 && i < width && p[i] != '\0' && p[i] != ' ') return std::nullopt;
  return v;
}

// Whether the stored checksum matches the header's (unsigned or, as old tars did, signed).
bool checksum_ok(const uint8_t* header) {
  const std::optional<uint64_t> stored = number(header, 148, 8);
  if (!stored) return false;
  int64_t unsigned_sum = 0, signed_sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    const uint8_t b = (i >= 148 && i < 156) ? ' ' : header[i];
    unsigned_sum += b;
    signed_sum += static_cast<int8_t>(b);
  }
  return static_cast<int64_t>(*stored) == unsigned_sum ||
         static_cast<int64_t>(*stored) == signed_sum;
}

class Scanner {
 public:
  Scanner(ByteStream& in, const std::string& archive) : in_(in), archive_(archive) {}

  // Reads exactly out.size() bytes; false at a clean end before the first byte.
  bool read_exact(std::span<uint8_t> out, std::string_view what) {
    size_t done = 0;
    while (done < out.size()) {
      const size_t n = in_.read(out.subspan(done));
      if (n == 0) {
        if (done == 0 && what.empty()) return false;
        STOKER_BAD_DATA("{}: truncated tar: {} cut short at byte {}", archive_,
                        what.empty() ? "a header" : what, position_ + done);
      }
      done += n;
    }
    position_ += out.size();
    return true;
  }
  void skip(uint64_t n, std::string_view what) {
    const uint64_t got = in_.skip(n);
    if (got < n) {
      STOKER_BAD_DATA("{}: truncated tar: {} cut short at byte {}", archive_, what,
                      position_ + got);
    }
    position_ += n;
  }
  std::string read_content(uint64_t size, std::string_view what) {
    std::string content(size, '\0');
    read_exact(std::span<uint8_t>(reinterpret_cast<uint8_t*>(content.data()), size), what);
    skip(padded(size) - size, what);
    return content;
  }
  uint64_t position() const { return position_; }
  const std::string& archive() const { return archive_; }

 private:
  ByteStream& in_;
  const std::string& archive_;
  uint64_t position_ = 0;
};

// pax records "LEN key=value\n": the path and size they set.
// A pax header's overrides of the next member's header.
struct PaxOverrides {
  std::optional<std::string> path;
  bool has_size = false;
  uint64_t size = 0;
};

void parse_pax(std::string_view records, const std::string& where, PaxOverrides& next) {
  while (!records.empty()) {
    uint64_t length = 0;
    const auto [end, ec] = std::from_chars(records.data(), records.data() + records.size(), length);
    const size_t digits = static_cast<size_t>(end - records.data());
    if (ec != std::errc() || digits == 0 || length <= digits + 1 || length > records.size() ||
        records[digits] != ' ' || records[length - 1] != '\n') {
      STOKER_BAD_DATA("{}: malformed pax header", where);
    }
    const std::string_view record = records.substr(digits + 1, length - digits - 2);
    records.remove_prefix(length);
    const size_t eq = record.find('=');
    if (eq == std::string_view::npos) {
      STOKER_BAD_DATA("{}: malformed pax header", where);
    }
    const std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (key == "path") {
      next.path = std::string(value);
    } else if (key == "size") {
      uint64_t v = 0;
      const auto [vend, vec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (vec != std::errc() || vend != value.data() + value.size()) {
        STOKER_BAD_DATA("{}: pax size \"{}\" is not a number", where, value);
      }
      next.has_size = true;
      next.size = v;
    }
  }
}

}  // namespace

uint64_t ByteStream::skip(uint64_t n) {
  std::array<uint8_t, 65536> sink;
  uint64_t done = 0;
  while (done < n) {
    const size_t got =
        read(std::span<uint8_t>(sink.data(), std::min<uint64_t>(n - done, sink.size())));
    if (got == 0) break;
    done += got;
  }
  return done;
}

void scan_tar(ByteStream& in, const std::string& archive,
              const std::function<bool(std::string_view name, uint64_t size)>& want,
              const std::function<void(TarMember&& member, std::string&& content)>& on_member) {
  Scanner scan(in, archive);
  std::array<uint8_t, kBlock> header;
  PaxOverrides next;  // from a GNU 'L' (the path) or a pax 'x' header
  while (true) {
    const uint64_t at = scan.position();
    if (!scan.read_exact(header, "")) return;
    if (std::all_of(header.begin(), header.end(), [](uint8_t b) { return b == 0; })) return;
    const std::string where = fmt::format("{}: header at byte {}", archive, at);
    STOKER_CHECK_DATA(!(at == 0 && header[0] == 0x1f && header[1] == 0x8b),
                      "{}: a gzip-compressed tar; stoker reads uncompressed shards (gunzip them: "
                      "JPEG and PNG members do not get smaller)",
                      archive);
    if (!checksum_ok(header.data())) {
      STOKER_BAD_DATA("{}: bad checksum (not a tar archive, or a damaged one)", where);
    }
    const std::optional<uint64_t> header_size = number(header.data(), 124, 12);
    if (!header_size) STOKER_BAD_DATA("{}: the size is not a number", where);
    const char type = static_cast<char>(header[156]);
    uint64_t size = *header_size;
    if (type == 'L' || type == 'x' || type == 'g') {
      if (size > kMaxMetaBytes) {
        STOKER_BAD_DATA("{}: a {}-byte name header", where, size);
      }
      std::string meta = scan.read_content(size, "a long-name or pax header");
      if (type == 'L') {
        next.path = std::string(meta.c_str());  // NUL-terminated
      } else if (type == 'x') {
        parse_pax(meta, where, next);
      }
      continue;
    }
    if (next.has_size) size = next.size;
    // No size may wrap padded() around (a pax "size=18446744073709551615").
    if (size > (uint64_t{1} << 62)) {
      STOKER_BAD_DATA("{}: a member of {} bytes runs past the end of the archive", where, size);
    }
    std::string name;
    if (next.path) {
      name = std::move(*next.path);
    } else {
      const std::string_view prefix = field(header.data(), 345, 155);
      const bool ustar = std::memcmp(header.data() + 257, "ustar", 5) == 0;
      name = ustar && !prefix.empty() && header[262] == '\0'  // POSIX ustar, not old GNU
                 ? std::string(prefix) + "/" + std::string(field(header.data(), 0, 100))
                 : std::string(field(header.data(), 0, 100));
    }
    next = PaxOverrides();
    // The member's bytes must lie inside the archive when its length is known.
    const uint64_t content_at = scan.position();
    if (const std::optional<uint64_t> length = in.length();
        length && (content_at > *length || size > *length - content_at)) {
      STOKER_BAD_DATA(
          "{}: truncated tar: member {} cut short ({} bytes from byte {}, the "
          "archive has {})",
          archive, name, size, content_at, *length);
    }
    const bool regular = type == '0' || type == '\0' || type == '7';
    if (!regular) {
      scan.skip(padded(size), "an entry");
      continue;
    }
    TarMember member{std::move(name), scan.position(), size};
    const std::string what = fmt::format("member {}", member.name);
    if (want(member.name, size)) {
      if (size > kMaxWantedBytes) {
        STOKER_BAD_DATA("{}: {}: {} bytes, more than a label may have ({})", archive, member.name,
                        size, kMaxWantedBytes);
      }
      std::string content = scan.read_content(size, what);
      on_member(std::move(member), std::move(content));
    } else {
      scan.skip(padded(size), what);
      on_member(std::move(member), std::string());
    }
  }
}

}  // namespace stoker::io
