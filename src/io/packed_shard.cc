#include "io/packed_shard.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "stoker/error.h"

namespace stoker::io {

using namespace packed;  // NOLINT: the format's constants, used throughout this file

namespace {

// Fuzzing builds cannot forge XXH3 values, so they skip the comparisons (and only them) to let
// the fuzzer reach the bounds checks behind them; every other build verifies.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kVerifyChecksums = false;
#else
constexpr bool kVerifyChecksums = true;
#endif

// pread of exactly `size` bytes at `offset`; false on EOF or error (errno set on error, 0 on EOF).
bool read_exact(int fd, uint8_t* out, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = 0;
      return false;
    }
    out += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// Shards are mapped (unless STOKER_PACKED_IO=pread, or mapping fails) and records copied out of
// the mapping. A page of a mapping that cannot be read (the file shrank after it was opened, or
// an I/O error) raises SIGBUS instead of failing a read(); every access to the mapping
// therefore runs under touch_guarded(), which turns that SIGBUS into a false return, so the
// caller throws an error naming the shard and record.
// The handler is process-wide and installed once. A SIGBUS that is not a fault inside a guarded
// touch (another mapping's, or one sent with kill) goes to the handler that was there before.
// The guarded thread's jump buffer is found through a pthread key, not a thread_local: in a
// dlopen'ed library (the Python module) a thread_local may be allocated on first access, which
// a signal handler must not do, and initial-exec TLS may not fit in the static TLS block.
// pthread_getspecific only reads the thread's key table.
pthread_key_t g_touch_key;
bool g_touch_guard = false;  // set once, before the handler is installed
struct sigaction g_previous_sigbus;

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const bool fault = info != nullptr && info->si_code > 0;  // <= 0: sent by a process
  if (fault) {
    auto* jump = static_cast<sigjmp_buf*>(pthread_getspecific(g_touch_key));
    if (jump != nullptr) siglongjmp(*jump, 1);
  }
  const struct sigaction& previous = g_previous_sigbus;
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) {
    // A fault cannot be ignored: with the default action back, it recurs and ends the process.
    if (fault) ::sigaction(SIGBUS, &previous, nullptr);
    return;
  }
  if (previous.sa_handler != SIG_DFL) {
    previous.sa_handler(signal);
    return;
  }
  // Default action: restore it; a fault recurs when the instruction runs again, a sent signal
  // is raised again (SA_NODEFER: delivered at once).
  ::sigaction(SIGBUS, &previous, nullptr);
  if (!fault) ::raise(SIGBUS);
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Without a key (all taken) the mapping is still read, unguarded: SIGBUS then ends the
    // process, as it would without this handler.
    if (pthread_key_create(&g_touch_key, nullptr) != 0) return;
    g_touch_guard = true;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigbus;
    // SA_NODEFER: siglongjmp leaves the handler without restoring the signal mask (sigsetjmp
    // with savemask 0, no syscall per record), so SIGBUS must not be blocked while it runs.
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
}

using TouchFn = void (*)(void*) noexcept;

// Calls touch(arg), which only reads or copies memory (noexcept, no destructors to skip, no
// locks held); false if that raised SIGBUS.
bool touch_guarded(TouchFn touch, void* arg) {
  if (!g_touch_guard) {
    touch(arg);
    return true;
  }
  // A fault on a thread that blocks SIGBUS kills the process whatever the handler: unblock it
  // (once per thread; blocking a fault signal has no use). Threads inherit their creator's mask.
  thread_local bool unblocked = false;
  if (!unblocked) {
    sigset_t bus;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
    unblocked = true;
  }
  // Nested guards put the outer jump buffer back on the way out.
  void* const outer = pthread_getspecific(g_touch_key);
  sigjmp_buf jump;
  if (sigsetjmp(jump, 0) != 0) {
    pthread_setspecific(g_touch_key, outer);
    return false;
  }
  if (pthread_setspecific(g_touch_key, &jump) != 0) {  // no memory for the key: unguarded
    touch(arg);
    return true;
  }
  touch(arg);
  pthread_setspecific(g_touch_key, outer);
  return true;
}

// memcpy from a mapping under the guard (size 0 copies nothing); false if a page could not be
// read.
bool copy_guarded(void* to, const uint8_t* from, size_t size) {
  struct Copy {
    void* to;
    const uint8_t* from;
    size_t size;
  } c{to, from, size};
  return touch_guarded(
      [](void* a) noexcept {
        auto* c = static_cast<Copy*>(a);
        if (c->size > 0) std::memcpy(c->to, c->from, c->size);
      },
      &c);
}

bool mapped_reads() {
  const char* io = std::getenv("STOKER_PACKED_IO");
  return io == nullptr || std::strcmp(io, "pread") != 0;
}

bool checksum_ok(uint64_t stored, uint64_t computed) {
  return !kVerifyChecksums || stored == computed;
}

// Writes everything or throws; retries EINTR and short writes.
void write_all(int fd, const uint8_t* data, size_t size, const std::string& name) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      STOKER_THROW_IO(errno, name, "{}: write failed: {}", name, errno_message(errno));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void fsync_or_throw(int fd, const std::string& name) {
  if (::fsync(fd) != 0)
    STOKER_THROW_IO(errno, name, "{}: fsync failed: {}", name, errno_message(errno));
}

}  // namespace

uint64_t record_checksum(const uint8_t* header24, std::span<const uint8_t> payload) {
  const uint64_t seed = XXH3_64bits(header24, record::kChecksum);
  return XXH3_64bits_withSeed(payload.data(), payload.size(), seed);
}

std::string shard_file_name(uint64_t number) {
  return fmt::format("{}{:05d}{}", kShardPrefix, number, kShardSuffix);
}

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void Mapping::reset() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

// ---------------------------------------------------------------------------------------------
// ShardFile

ShardFile ShardFile::open(const std::string& path, const std::string& name) {
  ShardFile s;
  s.name_ = name;
  int raw;
  do {
    raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) {
    const int error = errno;
    if (error == ENOENT) STOKER_THROW_IO(error, name, "{}: missing shard (no such file)", name);
    STOKER_THROW_IO(error, name, "{}: {}", name, errno_message(error));
  }
  s.fd_ = UniqueFd(raw);
  struct stat st;
  if (::fstat(s.fd_.get(), &st) != 0) {
    STOKER_THROW_IO(errno, name, "{}: {}", name, errno_message(errno));
  }
  STOKER_CHECK(S_ISREG(st.st_mode), "{}: not a regular file", name);
  const int flags = ::fcntl(s.fd_.get(), F_GETFL);
  if (flags >= 0) ::fcntl(s.fd_.get(), F_SETFL, flags & ~O_NONBLOCK);
  s.file_size_ = static_cast<uint64_t>(st.st_size);
  const uint64_t size = s.file_size_;
  STOKER_CHECK(size >= kShardHeaderSize + kShardFooterSize,
               "{}: truncated shard: {} bytes, less than a header and a footer ({} bytes)", name,
               size, kShardHeaderSize + kShardFooterSize);

  // Header and footer are read with pread; only the tail [index, end) is mapped (below).
  uint8_t h[kShardHeaderSize], f[kShardFooterSize];
  const uint64_t footer_at = size - kShardFooterSize;
  STOKER_CHECK(
      read_exact(s.fd_.get(), h, sizeof h, 0) && read_exact(s.fd_.get(), f, sizeof f, footer_at),
      "{}: cannot read header and footer: {}", name,
      errno != 0 ? errno_message(errno) : "short read");

  // Header. Magic, then version before anything else, so that a file of a newer format
  // says so rather than failing a checksum it defines differently.
  STOKER_CHECK(std::memcmp(h + header::kMagic, kShardMagic, sizeof kShardMagic) == 0,
               "{}: not a stoker shard (bad magic at byte offset 0)", name);
  const uint32_t version = load_u32(h + header::kVersion);
  STOKER_CHECK(version == kFormatVersion,
               "{}: unsupported shard format version {} at byte offset {} (this build reads "
               "version {})",
               name, version, header::kVersion, kFormatVersion);
  const uint32_t header_size = load_u32(h + header::kHeaderSize);
  STOKER_CHECK(header_size == kShardHeaderSize,
               "{}: corrupt header: header size {} at byte offset {} (expected {})", name,
               header_size, header::kHeaderSize, kShardHeaderSize);
  s.header_checksum_ = load_u64(h + header::kChecksum);
  STOKER_CHECK(checksum_ok(s.header_checksum_, XXH3_64bits(h, header::kChecksum)),
               "{}: header checksum mismatch (header at byte offset 0)", name);
  s.options_hash_ = load_u64(h + header::kOptionsHash);
  s.shard_number_ = load_u64(h + header::kShardNumber);
  s.first_record_ = load_u64(h + header::kFirstRecord);
  s.first_source_ = load_u64(h + header::kFirstSource);

  // Footer.
  STOKER_CHECK(std::memcmp(f + footer::kMagic, kFooterMagic, sizeof kFooterMagic) == 0,
               "{}: no shard footer at byte offset {}: the shard is truncated or was not "
               "completely written",
               name, footer_at);
  s.footer_checksum_ = load_u64(f + footer::kChecksum);
  STOKER_CHECK(checksum_ok(s.footer_checksum_,
                           XXH3_64bits_withSeed(f, footer::kChecksum, s.header_checksum_)),
               "{}: footer checksum mismatch (footer at byte offset {})", name, footer_at);
  s.record_count_ = load_u64(f + footer::kRecordCount);
  s.source_count_ = load_u64(f + footer::kSourceCount);
  s.index_offset_ = load_u64(f + footer::kIndexOffset);
  s.skipped_offset_ = load_u64(f + footer::kSkippedOffset);
  s.skipped_count_ = load_u64(f + footer::kSkippedCount);

  // Every offset and count against the file: no product below can overflow because each
  // factor is bounded by the file size first.
  const auto corrupt = [&](const char* what) {
    STOKER_THROW("{}: corrupt footer at byte offset {}: {}", name, footer_at, what);
  };
  if (s.index_offset_ < kShardHeaderSize || s.index_offset_ > footer_at) {
    corrupt("index offset outside the file");
  }
  if (s.record_count_ > (footer_at - s.index_offset_) / kIndexEntrySize) {
    corrupt("record count larger than the index");
  }
  if (s.skipped_offset_ != s.index_offset_ + s.record_count_ * kIndexEntrySize) {
    corrupt("skipped-list offset does not follow the index");
  }
  if (s.skipped_count_ > (footer_at - s.skipped_offset_) / kSkippedFixedSize) {
    corrupt("skipped count larger than the skipped list");
  }
  if (s.source_count_ < s.record_count_ || s.source_count_ - s.record_count_ != s.skipped_count_) {
    corrupt("source count is not records + skipped");
  }
  if (s.record_count_ > (s.index_offset_ - kShardHeaderSize) / kRecordHeaderSize) {
    corrupt("more records than the record area holds");
  }
  if (s.first_record_ > (uint64_t{1} << 62) || s.first_source_ > (uint64_t{1} << 62) ||
      s.source_count_ > (uint64_t{1} << 62)) {
    corrupt("record or source index out of range");
  }

  // Map the whole file, so that records are copied out of the page cache without a syscall;
  // only the pages a process has read count in its RSS (as shared file pages). With
  // STOKER_PACKED_IO=pread, or when the whole file cannot be mapped (an address-space limit),
  // only the tail from the index on is mapped and records are read with preadv.
  install_sigbus_handler();
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t index_page = s.index_offset_ / page * page;
  void* addr =
      mapped_reads() ? ::mmap(nullptr, size, PROT_READ, MAP_SHARED, s.fd_.get(), 0) : MAP_FAILED;
  uint64_t map_from = 0;
  if (addr == MAP_FAILED) {
    map_from = index_page;
    addr = ::mmap(nullptr, size - map_from, PROT_READ, MAP_SHARED, s.fd_.get(),
                  static_cast<off_t>(map_from));
    if (addr == MAP_FAILED) STOKER_THROW("{}: mmap failed: {}", name, errno_message(errno));
  }
  s.records_mapped_ = map_from == 0;
  s.map_ = Mapping(static_cast<const uint8_t*>(addr), size - map_from);
  s.index_ = s.map_.data() + (s.index_offset_ - map_from);
  // One read-ahead of the index, not a fault per page.
  ::madvise(static_cast<uint8_t*>(addr) + (index_page - map_from), size - index_page,
            MADV_WILLNEED);
  struct TailTouch {
    const uint8_t* at;
    uint64_t size;
    uint64_t hash;
  } tail{s.index_, footer_at - s.index_offset_, 0};
  STOKER_CHECK(touch_guarded(
                   [](void* a) noexcept {
                     auto* t = static_cast<TailTouch*>(a);
                     t->hash = XXH3_64bits(t->at, t->size);
                   },
                   &tail),
               "{}: index at byte offset {} cannot be read (the shard shrank while it was opened, "
               "or an I/O error)",
               name, s.index_offset_);
  STOKER_CHECK(checksum_ok(load_u64(f + footer::kTailChecksum), tail.hash),
               "{}: index checksum mismatch (index at byte offset {})", name, s.index_offset_);
  return s;
}

IndexEntry ShardFile::entry(uint64_t j) const {
  uint8_t e[kIndexEntrySize];
  if (!copy_guarded(e, index_ + j * kIndexEntrySize, sizeof e)) index_unreadable(j);
  return IndexEntry{load_u64(e + entry::kOffset), load_u32(e + entry::kPayloadLength),
                    load_u32(e + entry::kLabel), load_u64(e + entry::kChecksum)};
}

uint32_t ShardFile::label(uint64_t j) const { return entry(j).label; }

void ShardFile::index_unreadable(uint64_t j) const {
  STOKER_THROW_IO(
      EIO, name_,
      "{}: record {}: index entry at byte offset {} cannot be read (the shard shrank after it was "
      "opened, or an I/O error)",
      name_, j, index_offset_ + j * kIndexEntrySize);
}

void ShardFile::read_record(uint64_t j, std::vector<uint8_t>& out, RecordInfo* info) const {
  STOKER_CHECK(j < record_count_, "{}: record {} out of range [0, {})", name_, j, record_count_);
  const IndexEntry e = entry(j);
  STOKER_CHECK_DATA(
      e.payload_length <= kMaxPayloadLength,
      "{}: record {}: corrupt index entry at byte offset {}: payload length {} above the "
      "cap",
      name_, j, index_offset_ + j * kIndexEntrySize, e.payload_length);
  // Record header + payload must lie inside [header end, index offset).
  STOKER_CHECK_DATA(
      e.offset >= kShardHeaderSize && e.offset <= index_offset_ &&
          index_offset_ - e.offset >= kRecordHeaderSize + uint64_t{e.payload_length},
      "{}: record {}: corrupt index entry at byte offset {}: record [{}, +{}) outside the "
      "record area [{}, {})",
      name_, j, index_offset_ + j * kIndexEntrySize, e.offset,
      kRecordHeaderSize + uint64_t{e.payload_length}, kShardHeaderSize, index_offset_);

  uint8_t h[kRecordHeaderSize];
  out.resize(e.payload_length);
  if (records_mapped_) {
    const uint8_t* record = map_.data() + e.offset;
    if (!copy_guarded(h, record, kRecordHeaderSize) ||
        !copy_guarded(out.data(), record + kRecordHeaderSize, e.payload_length)) {
      STOKER_THROW_IO(EIO, name_,
                      "{}: record {} at byte offset {}: cannot be read (the shard shrank after "
                      "it was opened, or an I/O error)",
                      name_, j, e.offset);
    }
  } else {
    // One syscall for header and payload, straight into the caller's buffer.
    size_t done = 0;
    const size_t total = kRecordHeaderSize + e.payload_length;
    while (done < total) {
      iovec iov[2];
      int count = 0;
      if (done < kRecordHeaderSize) {
        iov[count++] = iovec{h + done, kRecordHeaderSize - done};
        iov[count++] = iovec{out.data(), e.payload_length};
      } else {
        const size_t p = done - kRecordHeaderSize;
        iov[count++] = iovec{out.data() + p, e.payload_length - p};
      }
      const ssize_t n = ::preadv(fd_.get(), iov, count, static_cast<off_t>(e.offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        STOKER_THROW_IO(errno, name_, "{}: record {} at byte offset {}: {}", name_, j, e.offset,
                        errno_message(errno));
      }
      if (n == 0) {
        STOKER_THROW_IO(0, name_,
                        "{}: record {} at byte offset {}: cannot be read (the shard shrank after "
                        "it was opened)",
                        name_, j, e.offset);
      }
      done += static_cast<size_t>(n);
    }
  }

  STOKER_CHECK_DATA(std::memcmp(h + record::kMagic, kRecordMagic, sizeof kRecordMagic) == 0,
                    "{}: record {} at byte offset {}: bad record magic", name_, j, e.offset);
  const uint32_t label = load_u32(h + record::kLabel);
  const uint32_t length = load_u32(h + record::kPayloadLength);
  const uint64_t stored = load_u64(h + record::kChecksum);
  STOKER_CHECK_DATA(length == e.payload_length && label == e.label && stored == e.checksum,
                    "{}: record {} at byte offset {}: record header disagrees with its index entry",
                    name_, j, e.offset);
  STOKER_CHECK_DATA(checksum_ok(stored, record_checksum(h, out)),
                    "{}: record {} at byte offset {}: checksum mismatch", name_, j, e.offset);
  if (info != nullptr) {
    info->label = label;
    info->encoding = static_cast<Encoding>(h[record::kEncoding]);
    info->channels = h[record::kChannels];
    info->width = load_u32(h + record::kWidth);
    info->height = load_u32(h + record::kHeight);
  }
}

std::vector<SkippedSample> ShardFile::skipped() const {
  std::vector<SkippedSample> result;
  const uint64_t end = file_size_ - kShardFooterSize;
  // The list is copied out of the mapping under the guard, then parsed from the copy.
  std::vector<uint8_t> list(end - skipped_offset_);
  STOKER_CHECK(copy_guarded(list.data(), index_ + (skipped_offset_ - index_offset_), list.size()),
               "{}: skipped list at byte offset {} cannot be read (the shard shrank after it was "
               "opened, or an I/O error)",
               name_, skipped_offset_);
  uint64_t at = skipped_offset_;
  for (uint64_t k = 0; k < skipped_count_; ++k) {
    STOKER_CHECK(end - at >= kSkippedFixedSize,
                 "{}: skipped entry {} at byte offset {}: runs past the footer", name_, k, at);
    const uint8_t* p = list.data() + (at - skipped_offset_);
    SkippedSample s;
    s.source_index = load_u64(p);
    const uint32_t name_length = load_u32(p + 8);
    const uint32_t reason_length = load_u32(p + 12);
    STOKER_CHECK(name_length <= kMaxSkippedText && reason_length <= kMaxSkippedText &&
                     end - at - kSkippedFixedSize >= uint64_t{name_length} + reason_length,
                 "{}: skipped entry {} at byte offset {}: lengths run past the footer", name_, k,
                 at);
    STOKER_CHECK(s.source_index >= first_source_ && s.source_index - first_source_ < source_count_,
                 "{}: skipped entry {} at byte offset {}: source index {} outside the shard's "
                 "range",
                 name_, k, at, s.source_index);
    const char* text = reinterpret_cast<const char*>(p + kSkippedFixedSize);
    s.name.assign(text, name_length);
    s.reason.assign(text + name_length, reason_length);
    at += kSkippedFixedSize + name_length + reason_length;
    result.push_back(std::move(s));
  }
  STOKER_CHECK(at == end, "{}: {} stray bytes after the skipped list at byte offset {}", name_,
               end - at, at);
  return result;
}

// ---------------------------------------------------------------------------------------------
// ShardWriter

namespace {
constexpr size_t kWriteBuffer = size_t{1} << 20;
}  // namespace

ShardWriter::ShardWriter(const std::filesystem::path& dir, uint64_t number, uint64_t options_hash,
                         uint64_t first_record, uint64_t first_source)
    : dir_(dir), first_source_(first_source) {
  final_ = dir / shard_file_name(number);
  temp_ = dir / (shard_file_name(number) + std::string(kTempSuffix));
  // O_TRUNC: a temporary file of an interrupted run is garbage by definition.
  const int raw = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (raw < 0) {
    STOKER_THROW_IO(errno, temp_.string(), "{}: cannot create: {}", temp_.string(),
                    errno_message(errno));
  }
  fd_ = UniqueFd(raw);
  buffer_.reserve(kWriteBuffer);

  uint8_t h[kShardHeaderSize] = {};
  std::memcpy(h + header::kMagic, kShardMagic, sizeof kShardMagic);
  store_u32(h + header::kVersion, kFormatVersion);
  store_u32(h + header::kHeaderSize, kShardHeaderSize);
  store_u64(h + header::kOptionsHash, options_hash);
  store_u64(h + header::kShardNumber, number);
  store_u64(h + header::kFirstRecord, first_record);
  store_u64(h + header::kFirstSource, first_source);
  header_checksum_ = XXH3_64bits(h, header::kChecksum);
  store_u64(h + header::kChecksum, header_checksum_);
  write(h, sizeof h);
  data_end_ = kShardHeaderSize;
}

ShardWriter::~ShardWriter() {
  if (!finished_) {
    fd_.reset();
    ::unlink(temp_.c_str());
  }
}

void ShardWriter::write(const uint8_t* data, size_t size) {
  if (buffer_.size() + size > kWriteBuffer) flush();
  if (size >= kWriteBuffer) {
    write_all(fd_.get(), data, size, temp_.string());
  } else {
    buffer_.insert(buffer_.end(), data, data + size);
  }
  file_pos_ += size;
}

void ShardWriter::flush() {
  write_all(fd_.get(), buffer_.data(), buffer_.size(), temp_.string());
  buffer_.clear();
}

void ShardWriter::add_record(const RecordInfo& info, std::span<const uint8_t> payload) {
  STOKER_CHECK(payload.size() <= kMaxPayloadLength, "{}: record payload of {} bytes above the cap",
               temp_.string(), payload.size());
  uint8_t h[kRecordHeaderSize] = {};
  std::memcpy(h + record::kMagic, kRecordMagic, sizeof kRecordMagic);
  store_u32(h + record::kLabel, info.label);
  h[record::kEncoding] = static_cast<uint8_t>(info.encoding);
  h[record::kChannels] = info.channels;
  store_u32(h + record::kWidth, info.width);
  store_u32(h + record::kHeight, info.height);
  store_u32(h + record::kPayloadLength, static_cast<uint32_t>(payload.size()));
  const uint64_t checksum = record_checksum(h, payload);
  store_u64(h + record::kChecksum, checksum);

  uint8_t e[kIndexEntrySize];
  store_u64(e + entry::kOffset, data_end_);
  store_u32(e + entry::kPayloadLength, static_cast<uint32_t>(payload.size()));
  store_u32(e + entry::kLabel, info.label);
  store_u64(e + entry::kChecksum, checksum);
  index_.insert(index_.end(), e, e + sizeof e);

  write(h, sizeof h);
  write(payload.data(), payload.size());
  data_end_ += kRecordHeaderSize + payload.size();
}

void ShardWriter::add_skipped(uint64_t source_index, const std::string& name,
                              const std::string& reason) {
  const uint32_t name_length =
      static_cast<uint32_t>(std::min<size_t>(name.size(), kMaxSkippedText));
  const uint32_t reason_length =
      static_cast<uint32_t>(std::min<size_t>(reason.size(), kMaxSkippedText));
  uint8_t fixed[kSkippedFixedSize];
  store_u64(fixed, source_index);
  store_u32(fixed + 8, name_length);
  store_u32(fixed + 12, reason_length);
  skipped_.insert(skipped_.end(), fixed, fixed + sizeof fixed);
  skipped_.insert(skipped_.end(), name.begin(), name.begin() + name_length);
  skipped_.insert(skipped_.end(), reason.begin(), reason.begin() + reason_length);
  ++skipped_count_;
}

ShardWriter::Result ShardWriter::finish(uint64_t source_end) {
  STOKER_CHECK(!finished_, "{}: finished twice", temp_.string());
  const uint64_t records = record_count();
  const uint64_t index_offset = data_end_;
  write(index_.data(), index_.size());
  write(skipped_.data(), skipped_.size());
  XXH3_state_t* state = XXH3_createState();
  STOKER_CHECK(state != nullptr, "{}: out of memory", temp_.string());
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, index_.data(), index_.size());
  XXH3_64bits_update(state, skipped_.data(), skipped_.size());
  const uint64_t tail = XXH3_64bits_digest(state);
  XXH3_freeState(state);

  uint8_t f[kShardFooterSize] = {};
  store_u64(f + footer::kRecordCount, records);
  store_u64(f + footer::kSourceCount, source_end - first_source_);
  store_u64(f + footer::kIndexOffset, index_offset);
  store_u64(f + footer::kSkippedOffset, index_offset + index_.size());
  store_u64(f + footer::kSkippedCount, skipped_count_);
  store_u64(f + footer::kTailChecksum, tail);
  const uint64_t checksum = XXH3_64bits_withSeed(f, footer::kChecksum, header_checksum_);
  store_u64(f + footer::kChecksum, checksum);
  std::memcpy(f + footer::kMagic, kFooterMagic, sizeof kFooterMagic);
  write(f, sizeof f);
  flush();
  STOKER_CHECK(source_end - first_source_ == records + skipped_count_,
               "{}: internal error: source range does not match records + skipped", temp_.string());

  fsync_or_throw(fd_.get(), temp_.string());
  fd_.reset();
  if (::rename(temp_.c_str(), final_.c_str()) != 0) {
    STOKER_THROW_IO(errno, final_.string(), "{}: cannot rename to {}: {}", temp_.string(),
                    final_.string(), errno_message(errno));
  }
  finished_ = true;
  fsync_directory(dir_);
  return Result{records, source_end - first_source_, file_pos_, checksum};
}

void write_file_atomically(const std::filesystem::path& dir, const std::string& name,
                           std::span<const uint8_t> bytes) {
  const std::filesystem::path final_path = dir / name;
  const std::filesystem::path temp = dir / (name + std::string(kTempSuffix));
  {
    const int raw = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (raw < 0) {
      STOKER_THROW_IO(errno, temp.string(), "{}: cannot create: {}", temp.string(),
                      errno_message(errno));
    }
    UniqueFd fd(raw);
    write_all(fd.get(), bytes.data(), bytes.size(), temp.string());
    fsync_or_throw(fd.get(), temp.string());
  }
  if (::rename(temp.c_str(), final_path.c_str()) != 0) {
    STOKER_THROW_IO(errno, final_path.string(), "{}: cannot rename to {}: {}", temp.string(),
                    final_path.string(), errno_message(errno));
  }
  fsync_directory(dir);
}

void fsync_directory(const std::filesystem::path& dir) {
  const int raw = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (raw < 0) {
    STOKER_THROW_IO(errno, dir.string(), "{}: cannot open folder: {}", dir.string(),
                    errno_message(errno));
  }
  UniqueFd fd(raw);
  fsync_or_throw(fd.get(), dir.string());
}

}  // namespace stoker::io
