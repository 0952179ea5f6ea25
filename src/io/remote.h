// Objects on HTTP(S) servers and S3-compatible stores, read by byte range (private to src/io).
//
// Locations: http://HOST[:PORT]/PATH, https://..., and s3://BUCKET/KEY. An s3:// location is
// sent to the endpoint $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else the profile's
// endpoint_url, else https://s3.REGION.amazonaws.com; path style (ENDPOINT/BUCKET/KEY) for a
// custom endpoint and virtual-host style (BUCKET.ENDPOINT/KEY) for AWS, unless
// IoConfig::s3_addressing ($STOKER_S3_ADDRESSING_STYLE) says kPath or kVirtual. Requests are
// signed with AWS SigV4 (libcurl's) when credentials are found: $AWS_ACCESS_KEY_ID,
// $AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN, else the profile ($AWS_PROFILE, else "default")
// of $AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials); the region is $AWS_REGION, else
// $AWS_DEFAULT_REGION, else the profile's region in $AWS_CONFIG_FILE (~/.aws/config), else
// us-east-1. Without credentials requests go unsigned (a public bucket). These AWS settings
// are read once per process, as the AWS tools read them.
//
// Failures: a connection refused, reset or timed out, a short body, HTTP 408, 429 and 5xx are
// tried again after IoConfig::retries' waits, `attempts` tries in all, unless the calling
// thread holds a RetriedByCaller: then each request is sent once and the caller retries (a
// sample's read, under read_with_retries). Then, and for any other status (403, 404, ...), an
// I/O Error (ErrorKind::kIo) naming the location, the status or curl's reason, and the tries.
// A read is never shortened or skipped. An object whose ETag (or, without one, Last-Modified)
// changes after it was opened fails its reads ("changed since it was opened"), so that an index
// built from the old bytes is never applied to new ones. Signed requests are not redirected
// (their credential headers would follow to the new host): a 3xx to one is an error naming
// it. Messages never show a URL's userinfo or query values (util/redact.h). Timeouts:
// IoConfig::connect_timeout_s to connect, and a transfer slower than 1 KiB/s for
// IoConfig::stall_timeout_s is a timeout.
//
// Thread-safety: every function may be called from any thread; each thread keeps its own
// connection (libcurl easy handle) so that a reader's requests reuse one kept-alive connection.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "stoker/io_config.h"

namespace stoker::io {

bool is_remote_location(std::string_view location);

// A remote location without its query and fragment ("https://h/a.tar?X-Amz-Signature=..." ->
// "https://h/a.tar"): what the location names, to be told apart by (a .tar shard, a pack's
// manifest). Other locations are returned whole: a local file's name may hold '?'.
std::string_view location_path(std::string_view location);

struct RemoteStat {
  uint64_t size = 0;
  std::string etag;           // "" when the server sends none
  std::string last_modified;  // "" when the server sends none
  // This version of the object, for caches: "size:ETag", else "size:modified <Last-Modified>",
  // else "" — a server that sends neither gives nothing a cached index or copy could be
  // checked against, so nothing is cached for it.
  std::string version() const;
};

// While one lives on a thread, that thread's requests are sent once each: its caller tries
// the whole read again (read_with_retries; the read-ahead, whose failures the loader's reads
// try again), so retries are counted once, end to end. Guards nest.
class RetriedByCaller {
 public:
  RetriedByCaller();
  ~RetriedByCaller();
  RetriedByCaller(const RetriedByCaller&) = delete;
  RetriedByCaller& operator=(const RetriedByCaller&) = delete;

 private:
  bool previous_;
};

// HEAD of the object: its size and ETag.
RemoteStat stat_remote(const std::string& location, const IoConfig& io);

// Reads [offset, offset + out.size()) of the object with one range GET, conditional on the
// version opened (If-Match its ETag, else If-Unmodified-Since its Last-Modified: a replaced
// object fails the read). The answer must be a 206 whose Content-Range is exactly the range
// asked for. `what` names the bytes in messages ("member x.jpg").
void read_remote(const std::string& location, const RemoteStat& version, uint64_t offset,
                 std::span<uint8_t> out, const std::string& what, const IoConfig& io);

// Writes a whole object (PUT), tried again as reads are.
void put_remote(const std::string& location, std::span<const uint8_t> bytes, const IoConfig& io);

// How many requests have been sent in this process (tests and benchmarks count them).
uint64_t remote_requests_sent();

}  // namespace stoker::io
