// One stored object read by byte range, wherever it lies (private to src/io): a local file
// (pread) or a remote object (remote.h). The WebDataset reader reads its shards through it.
// Errors: the I/O Errors of RandomAccessFile and remote.h, naming the location.
// Thread-safety: the const methods may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/tar.h"
#include "stoker/io_config.h"

namespace stoker::io {

class Blob {
 public:
  virtual ~Blob() = default;
  // A path or an http(s):// or s3:// location; a remote one is read as `io` says (kept).
  static std::unique_ptr<Blob> open(const std::string& location, const IoConfig& io);

  const std::string& location() const { return location_; }
  virtual bool remote() const = 0;
  virtual uint64_t size() const = 0;
  // Identifies this version of the object: size, modification time and inode of a file; size
  // and ETag (else Last-Modified) of a remote object — "" when the server sends neither, and
  // then nothing derived from the object may be cached.
  virtual std::string stamp() const = 0;
  // Reads [offset, offset + out.size()); `what` names the bytes in messages.
  virtual void read(uint64_t offset, std::span<uint8_t> out, const std::string& what) const = 0;

 protected:
  explicit Blob(std::string location) : location_(std::move(location)) {}

 private:
  std::string location_;
};

// A Blob read from the start in chunks of `chunk` bytes (one range read each); skip() past the
// buffered bytes reads nothing, so indexing a tar of large members reads little more than its
// headers where the chunk is smaller than the members.
class BlobStream final : public ByteStream {
 public:
  BlobStream(const Blob& blob, uint64_t chunk) : blob_(blob), chunk_(chunk) {}
  size_t read(std::span<uint8_t> out) override;
  uint64_t skip(uint64_t n) override;
  std::optional<uint64_t> length() const override { return blob_.size(); }

 private:
  const Blob& blob_;
  uint64_t chunk_;
  std::vector<uint8_t> buffer_;
  uint64_t buffer_offset_ = 0;  // of buffer_[0] in the blob
  uint64_t position_ = 0;       // the next byte to hand out
};

}  // namespace stoker::io
