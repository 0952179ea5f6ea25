#include "io/remote.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/env_vars.h"
#include "util/logging.h"
#include "util/redact.h"
#include "util/stop.h"
#include "util/text.h"

namespace stoker::io {
namespace {

std::atomic<uint64_t> requests_sent{0};

// Set on a thread while a caller retries its reads itself (RetriedByCaller).
thread_local bool caller_retries = false;

std::string env(const char* name) { return util::env_string(name); }

// An AWS-style ini file: [section] then key = value lines; '#' and ';' start comments.
using Ini = std::map<std::string, std::map<std::string, std::string>>;
Ini read_ini(const std::string& path) {
  Ini ini;
  std::ifstream in(path);
  std::string line, section;
  while (std::getline(in, line)) {
    const std::string t(util::trim(line));
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      section = util::trim(std::string_view(t).substr(1, t.size() - 2));
      continue;
    }
    const size_t eq = t.find('=');
    if (eq != std::string::npos) {
      ini[section][std::string(util::trim(t.substr(0, eq)))] = util::trim(t.substr(eq + 1));
    }
  }
  return ini;
}

// The AWS side of S3: endpoint, region and credentials, from the AWS_* variables and files,
// read once per process as the AWS tools do (the addressing style is IoConfig's).
struct S3Settings {
  std::string endpoint;  // scheme://host[:port], no trailing '/'
  bool custom_endpoint = false;
  std::string region = "us-east-1";
  std::string access_key, secret_key, session_token;
};

const S3Settings& s3_settings() {
  static const S3Settings settings = [] {
    S3Settings s;
    const std::string home = env("HOME");
    const std::string profile = env("AWS_PROFILE").empty() ? "default" : env("AWS_PROFILE");
    std::string credentials_file = env("AWS_SHARED_CREDENTIALS_FILE");
    if (credentials_file.empty() && !home.empty()) credentials_file = home + "/.aws/credentials";
    std::string config_file = env("AWS_CONFIG_FILE");
    if (config_file.empty() && !home.empty()) config_file = home + "/.aws/config";
    const Ini credentials = credentials_file.empty() ? Ini() : read_ini(credentials_file);
    const Ini config = config_file.empty() ? Ini() : read_ini(config_file);
    const auto from = [](const Ini& ini, const std::string& section, const char* key) {
      const auto s = ini.find(section);
      if (s == ini.end()) return std::string();
      const auto k = s->second.find(key);
      return k == s->second.end() ? std::string() : k->second;
    };
    const std::string config_section = profile == "default" ? "default" : "profile " + profile;
    s.access_key = env("AWS_ACCESS_KEY_ID");
    s.secret_key = env("AWS_SECRET_ACCESS_KEY");
    s.session_token = env("AWS_SESSION_TOKEN");
    if (s.access_key.empty()) {
      s.access_key = from(credentials, profile, "aws_access_key_id");
      s.secret_key = from(credentials, profile, "aws_secret_access_key");
      s.session_token = from(credentials, profile, "aws_session_token");
    }
    for (const std::string& region :
         {env("AWS_REGION"), env("AWS_DEFAULT_REGION"), from(config, config_section, "region")}) {
      if (!region.empty()) {
        s.region = region;
        break;
      }
    }
    for (const std::string& endpoint : {env("AWS_ENDPOINT_URL_S3"), env("AWS_ENDPOINT_URL"),
                                        from(config, config_section, "endpoint_url")}) {
      if (!endpoint.empty()) {
        s.endpoint = endpoint;
        s.custom_endpoint = true;
        break;
      }
    }
    if (s.endpoint.empty()) s.endpoint = "https://s3." + s.region + ".amazonaws.com";
    while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
    return s;
  }();
  return settings;
}

// S3 object keys in a URL: every byte but the unreserved ones and '/' percent-encoded, as
// SigV4's canonical URI wants them.
std::string encode_key(std::string_view key) {
  std::string out;
  for (const char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

struct Target {
  std::string url;
  bool sign = false;
  std::string sigv4;    // "aws:amz:REGION:s3"
  std::string userpwd;  // "KEY:SECRET"
  std::string token;    // session token header value
};

Target resolve(const std::string& location, S3Addressing addressing) {
  Target t;
  if (location.rfind("s3://", 0) != 0) {
    t.url = location;
    return t;
  }
  const std::string_view rest = std::string_view(location).substr(5);
  const size_t slash = rest.find('/');
  STOKER_CHECK_ARG(slash != std::string_view::npos && slash > 0 && slash + 1 < rest.size(),
                   "{}: expected s3://BUCKET/KEY", location);
  const std::string bucket(rest.substr(0, slash));
  const std::string key = encode_key(rest.substr(slash + 1));
  const S3Settings& s = s3_settings();
  const bool path_style =
      addressing == S3Addressing::kPath || (addressing == S3Addressing::kAuto && s.custom_endpoint);
  if (path_style) {
    t.url = s.endpoint + "/" + bucket + "/" + key;
  } else {
    const size_t scheme_end = s.endpoint.find("://");
    STOKER_CHECK_ARG(scheme_end != std::string::npos, "S3 endpoint {}: expected scheme://host",
                     s.endpoint);
    t.url = s.endpoint.substr(0, scheme_end + 3) + bucket + "." +
            s.endpoint.substr(scheme_end + 3) + "/" + key;
  }
  if (!s.access_key.empty()) {
    t.sign = true;
    t.sigv4 = "aws:amz:" + s.region + ":s3";
    t.userpwd = s.access_key + ":" + s.secret_key;
    t.token = s.session_token;
  }
  return t;
}

void ensure_curl() {
  static const bool ready = [] {
    const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
    STOKER_CHECK(code == CURLE_OK, "libcurl: {}", curl_easy_strerror(code));
    return true;
  }();
  (void)ready;
}

// Each thread's libcurl handles: the request's (reset before each request) and the multi
// handle it runs in, whose connection cache keeps the thread's connection open between
// requests.
struct ThreadHandles {
  CURL* easy = curl_easy_init();
  CURLM* multi = curl_multi_init();
  ~ThreadHandles() {
    curl_multi_cleanup(multi);
    curl_easy_cleanup(easy);
  }
};

ThreadHandles& thread_handles() {
  ensure_curl();
  thread_local ThreadHandles handles;
  STOKER_CHECK(handles.easy != nullptr && handles.multi != nullptr,
               "libcurl: cannot make a handle");
  curl_easy_reset(handles.easy);
  return handles;
}

// Runs the easy handle's transfer to its end, like curl_easy_perform, but waking at least every
// 100 ms to abort it when the thread should stop (util/stop.h: a cancelled open, a closing
// loader, a deadline), so that Ctrl-C or close() never waits for a stalled server.
CURLcode run_transfer(ThreadHandles& handles) {
  if (curl_multi_add_handle(handles.multi, handles.easy) != CURLM_OK) return CURLE_FAILED_INIT;
  CURLcode code = CURLE_OK;
  bool done = false;
  while (!done) {
    int running = 0;
    if (curl_multi_perform(handles.multi, &running) != CURLM_OK) {
      code = CURLE_FAILED_INIT;
      break;
    }
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(handles.multi, &queued)) {
      if (message->msg == CURLMSG_DONE && message->easy_handle == handles.easy) {
        code = message->data.result;
        done = true;
      }
    }
    if (done) break;
    if (util::stop_reason()) {
      code = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    if (curl_multi_poll(handles.multi, nullptr, 0, 100, nullptr) != CURLM_OK) {
      code = CURLE_FAILED_INIT;
      break;
    }
  }
  curl_multi_remove_handle(handles.multi, handles.easy);
  return code;
}

struct Headers {
  curl_slist* list = nullptr;
  void add(const std::string& header) {
    curl_slist* next = curl_slist_append(list, header.c_str());
    STOKER_CHECK(next != nullptr, "libcurl: out of memory");
    list = next;
  }
  ~Headers() { curl_slist_free_all(list); }
};

// What one request got.
struct Exchange {
  // Where a 2xx body goes: the bytes of [0, target.size()), more than that is an overrun.
  std::span<uint8_t> target;
  uint64_t received = 0;
  bool overrun = false;
  long status = 0;
  std::string reason;  // the status line's text
  std::string etag;
  std::string last_modified;
  std::string location;       // a redirect's target (not followed for signed requests)
  std::string content_range;  // a 206's "bytes first-last/total"
  std::optional<uint64_t> content_length;
  std::string error_body;  // the start of a >= 300 response's body (S3 puts its code there)
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect or 100 Continue)
    const std::string status_line(util::trim(line));
    const size_t sp = status_line.find(' ');
    x.status = sp == std::string::npos ? 0 : std::strtol(status_line.c_str() + sp + 1, nullptr, 10);
    const size_t sp2 = sp == std::string::npos ? sp : status_line.find(' ', sp + 1);
    x.reason = sp2 == std::string::npos ? "" : status_line.substr(sp2 + 1);
    x.etag.clear();
    x.last_modified.clear();
    x.location.clear();
    x.content_range.clear();
    x.content_length.reset();
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    const std::string name = util::lower(line.substr(0, colon));
    const std::string value(util::trim(line.substr(colon + 1)));
    if (name == "etag") x.etag = value;
    if (name == "last-modified") x.last_modified = value;
    if (name == "location") x.location = value;
    if (name == "content-range") x.content_range = value;
    if (name == "content-length") x.content_length = std::strtoull(value.c_str(), nullptr, 10);
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const size_t n = size * count;
  if (x.status >= 300) {
    x.error_body.append(data,
                        std::min<size_t>(n, 512 - std::min<size_t>(512, x.error_body.size())));
    return n;
  }
  if (x.received + n > x.target.size()) {
    x.overrun = true;
    return 0;  // aborts the transfer: the server sent more than the range asked for
  }
  std::memcpy(x.target.data() + x.received, data, n);
  x.received += n;
  return n;
}

enum class Method { kHead, kGet, kPut };

struct Request {
  Method method = Method::kGet;
  std::optional<std::pair<uint64_t, uint64_t>> range;  // [first, last], inclusive
  std::string if_match;
  std::string if_unmodified_since;  // without an ETag: the Last-Modified it was opened at
  std::span<const uint8_t> body;    // kPut
};

// The CA certificates HTTPS is checked against: $CURL_CA_BUNDLE or $SSL_CERT_FILE when set (as
// the curl tool and OpenSSL read them), else libcurl's own default when that file exists, else
// the first existing bundle of the other common layouts. The portable wheel's libcurl is
// Debian's, whose default is Debian's path; on RHEL or SUSE that file is absent. Empty: leave
// libcurl's default (and its error) alone.
const std::string& ca_bundle() {
  static const std::string bundle = [] {
    for (const char* name : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
      if (auto given = util::env_text(name)) return *given;
    }
    const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
    std::vector<std::string> candidates;
    if (info != nullptr && info->cainfo != nullptr) candidates.emplace_back(info->cainfo);
    for (const char* path : {"/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Arch
                             "/etc/pki/tls/certs/ca-bundle.crt",    // Fedora, RHEL, Rocky
                             "/etc/ssl/ca-bundle.pem",              // openSUSE
                             "/etc/ssl/cert.pem"}) {                // Alpine, macOS-like
      candidates.emplace_back(path);
    }
    for (const std::string& path : candidates) {
      if (::access(path.c_str(), R_OK) == 0) return path;
    }
    return std::string();
  }();
  return bundle;
}

// One attempt. Returns the curl code; the exchange holds what the server said.
CURLcode perform(const Target& target, const Request& request, const IoConfig& io, Exchange& x,
                 std::string& error) {
  ThreadHandles& handles = thread_handles();
  CURL* h = handles.easy;
  Headers headers;
  char error_buffer[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h, CURLOPT_URL, target.url.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  if (!ca_bundle().empty()) curl_easy_setopt(h, CURLOPT_CAINFO, ca_bundle().c_str());
  // A signed request's credentials travel in headers that libcurl would send to any redirect
  // target (x-amz-security-token is no Authorization header): signed requests are never
  // redirected; unsigned ones carry none and follow.
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, target.sign ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::ceil(io.connect_timeout_s * 1000)));
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(std::ceil(io.stall_timeout_s)));
  // A deadline (util/stop.h) bounds the whole transfer (0: none; the handle is reused, so
  // always set).
  const std::optional<double> left = util::seconds_to_deadline();
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                   left ? std::max(1L, static_cast<long>(std::ceil(*left * 1000))) : 0L);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "stoker");
  // Large receive buffers: a run of members arrives in a few hundred calls, not thousands.
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 512L * 1024);
  std::string range;
  if (request.range) {
    range = fmt::format("{}-{}", request.range->first, request.range->second);
    curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  }
  if (!request.if_match.empty()) headers.add("If-Match: " + request.if_match);
  if (!request.if_unmodified_since.empty()) {
    headers.add("If-Unmodified-Since: " + request.if_unmodified_since);
  }
  switch (request.method) {
    case Method::kHead:
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
      break;
    case Method::kGet:
      break;
    case Method::kPut:
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, reinterpret_cast<const char*>(request.body.data()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
      // No "Expect:" header to turn off 100-continue: libcurl's SigV4 would sign the empty
      // header it never sends, and the store rejects the signature.
      headers.add("Content-Type: application/octet-stream");
      break;
  }
  if (target.sign) {
    // S3 requires the payload's hash as a header, and libcurl signs the value given there:
    // the empty body's SHA-256, or for an upload UNSIGNED-PAYLOAD (S3's way of signing the
    // headers only; TLS protects the body).
    headers.add(request.method == Method::kPut
                    ? "x-amz-content-sha256: UNSIGNED-PAYLOAD"
                    : "x-amz-content-sha256: "
                      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    if (!target.token.empty()) headers.add("x-amz-security-token: " + target.token);
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, target.sigv4.c_str());
    curl_easy_setopt(h, CURLOPT_USERPWD, target.userpwd.c_str());
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
  requests_sent.fetch_add(1, std::memory_order_relaxed);
  const CURLcode code = run_transfer(handles);
  if (code != CURLE_OK) error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) x.status = status;
  return code;
}

bool transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

bool transient(long status) {
  return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

// The S3 error code in an XML error body ("<Code>NoSuchKey</Code>"), or "".
std::string s3_code(const std::string& body) {
  const size_t begin = body.find("<Code>");
  const size_t end = body.find("</Code>");
  if (begin == std::string::npos || end == std::string::npos || end < begin) return "";
  return body.substr(begin + 6, end - begin - 6);
}

// Whether a Content-Range header ("bytes 100-199/5000") is exactly the range [first, last].
bool range_is(std::string_view header, std::pair<uint64_t, uint64_t> range) {
  header = util::trim(header);
  if (header.substr(0, 6) != "bytes ") return false;
  header.remove_prefix(6);
  const size_t dash = header.find('-');
  const size_t slash = header.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return false;
  }
  uint64_t first = 0, last = 0;
  const auto parse = [](std::string_view s, uint64_t& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size();
  };
  return parse(header.substr(0, dash), first) &&
         parse(header.substr(dash + 1, slash - dash - 1), last) && first == range.first &&
         last == range.second;
}

// Runs `request` with retries (none while the caller retries); returns the exchange of the
// attempt that succeeded (2xx, body complete when `expect_bytes` is set). Throws the I/O Error
// described in remote.h.
Exchange run(const std::string& location, const Request& request, const IoConfig& io,
             std::span<uint8_t> target, const std::string& what,
             std::optional<uint64_t> expect_bytes) {
  const int attempts = caller_retries ? 1 : io.retries.attempts;
  const Target resolved = resolve(location, io.s3_addressing);
  const std::string subject = what.empty() ? location : location + ": " + what;
  for (int attempt = 1;; ++attempt) {
    util::throw_if_stopped(subject);
    Exchange x;
    x.target = target;
    std::string curl_error;
    const CURLcode code = perform(resolved, request, io, x, curl_error);
    if (code != CURLE_OK) util::throw_if_stopped(subject);  // aborted, or the deadline's timeout
    std::string failure;
    bool retry = false;
    if (code == CURLE_OK && x.status == 206 && request.range &&
        !range_is(x.content_range, *request.range)) {
      // Bytes of another range than the one asked for are no answer to it (a misbehaving
      // cache or proxy): never used.
      STOKER_THROW_IO(EIO, location,
                      "{}: the server answered another range than the one asked for "
                      "(Content-Range \"{}\", asked bytes {}-{})",
                      subject, x.content_range, request.range->first, request.range->second);
    }
    if (code == CURLE_OK && x.status >= 200 && x.status < 300) {
      if (!expect_bytes || x.received == *expect_bytes) return x;
      if (request.range && x.status == 200) {
        STOKER_THROW_IO(EIO, location,
                        "{}: the server ignores byte ranges (HTTP 200 to a range "
                        "request); stoker needs range reads",
                        subject);
      }
      failure = fmt::format("short body ({} of {} bytes)", x.received, *expect_bytes);
      retry = true;
    } else if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && x.overrun) || x.status >= 300) {
      if (x.overrun) {
        failure = fmt::format("more bytes than the {} asked for", target.size());
      } else {
        const std::string s3 = s3_code(x.error_body);
        failure = fmt::format("HTTP {}{}{}", x.status, x.reason.empty() ? "" : " " + x.reason,
                              s3.empty() ? "" : " (" + s3 + ")");
        if (x.status == 412 && !request.if_match.empty()) {
          STOKER_THROW_IO(ESTALE, location,
                          "{}: the object changed since it was opened (ETag {} no longer "
                          "matches); open the dataset again",
                          subject, request.if_match);
        }
        if (x.status == 404) failure += ": no such object";
        if (x.status >= 300 && x.status < 400 && resolved.sign) {
          STOKER_THROW_IO(EIO, location,
                          "{}: HTTP {}: the store redirects this signed request{}; stoker does "
                          "not follow redirects of signed requests, so that the credentials "
                          "stay with the endpoint: point AWS_ENDPOINT_URL (or the region) at "
                          "the host it names",
                          subject, x.status,
                          x.location.empty() ? "" : " to " + util::redact_urls(x.location));
        }
        if (x.status == 412 && !request.if_unmodified_since.empty()) {
          STOKER_THROW_IO(ESTALE, location,
                          "{}: the object changed since it was opened (modified after {}); "
                          "open the dataset again",
                          subject, request.if_unmodified_since);
        }
        if ((x.status == 401 || x.status == 403) && location.rfind("s3://", 0) == 0) {
          failure += s3_settings().access_key.empty()
                         ? ": access denied to an unsigned request (no credentials found: set "
                           "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
                         : ": access denied (check the credentials, the region " +
                               s3_settings().region + " and the endpoint " +
                               s3_settings().endpoint + ")";
        }
      }
      retry = transient(x.status);
    } else {
      failure = curl_error;
      retry = transient(code);
    }
    if (!retry || attempt >= attempts) {
      // The caller that retries counts the tries in its own message.
      if (caller_retries) STOKER_THROW_IO(EIO, location, "{}: {}", subject, failure);
      STOKER_THROW_IO(EIO, location, "{}: {} (tried {} time{})", subject, failure, attempt,
                      attempt == 1 ? "" : "s");
    }
    const double backoff = io.retries.wait_before(attempt + 1);
    log(LogLevel::kWarning, "{}: {}; trying again in {:.2f} s ({} of {})", subject, failure,
        backoff, attempt, attempts);
    if (!util::sleep_unless_stopped(backoff)) util::throw_if_stopped(subject);
  }
}

}  // namespace

bool is_remote_location(std::string_view location) {
  return location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0 ||
         location.rfind("s3://", 0) == 0;
}

std::string_view location_path(std::string_view location) {
  if (!is_remote_location(location)) return location;
  return location.substr(0, location.find_first_of("?#"));
}

RetriedByCaller::RetriedByCaller() : previous_(caller_retries) { caller_retries = true; }
RetriedByCaller::~RetriedByCaller() { caller_retries = previous_; }

RemoteStat stat_remote(const std::string& location, const IoConfig& io) {
  Request request;
  request.method = Method::kHead;
  const Exchange x = run(location, request, io, {}, "", std::nullopt);
  if (!x.content_length) {
    STOKER_THROW_IO(EIO, location, "{}: the server sends no Content-Length", location);
  }
  // A weak ETag ("W/...") never matches If-Match (RFC 9110 compares strongly): not used.
  return RemoteStat{*x.content_length, x.etag.rfind("W/", 0) == 0 ? "" : x.etag, x.last_modified};
}

std::string RemoteStat::version() const {
  if (!etag.empty()) return fmt::format("{}:{}", size, etag);
  if (!last_modified.empty()) return fmt::format("{}:modified {}", size, last_modified);
  return "";
}

void read_remote(const std::string& location, const RemoteStat& version, uint64_t offset,
                 std::span<uint8_t> out, const std::string& what, const IoConfig& io) {
  if (out.empty()) return;
  Request request;
  request.range = std::pair(offset, offset + out.size() - 1);
  request.if_match = version.etag;
  if (version.etag.empty()) request.if_unmodified_since = version.last_modified;
  run(location, request, io, out, what, out.size());
}

void put_remote(const std::string& location, std::span<const uint8_t> bytes, const IoConfig& io) {
  Request request;
  request.method = Method::kPut;
  request.body = bytes;
  run(location, request, io, {}, "", std::nullopt);
}

uint64_t remote_requests_sent() { return requests_sent.load(std::memory_order_relaxed); }

}  // namespace stoker::io
