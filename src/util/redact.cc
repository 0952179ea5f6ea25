#include "util/redact.h"

#include <array>

namespace stoker::util {
namespace {

// Where a URL in running text ends: at white space, quotes and brackets that delimit it.
bool ends_url(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case '"':
    case '\'':
    case '`':
    case '<':
    case '>':
    case '(':
    case ')':
    case '[':
    case ']':
    case '{':
    case '}':
    case '|':
    case ',':
    case ';':
      return true;
    default:
      return false;
  }
}

// The URL scheme ending at text[at] ("http", "https", "s3"), or 0 when there is none.
size_t scheme_length(std::string_view text, size_t colon) {
  static constexpr std::array<std::string_view, 3> kSchemes = {"https", "http", "s3"};
  for (const std::string_view s : kSchemes) {
    if (colon < s.size()) continue;
    const size_t start = colon - s.size();
    if (text.substr(start, s.size()) != s) continue;
    // A whole word: "s3" of "xs3://" is not a scheme.
    const char before = start > 0 ? text[start - 1] : ' ';
    if ((before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
        (before >= '0' && before <= '9')) {
      continue;
    }
    return s.size();
  }
  return 0;
}

void append_redacted(std::string& out, std::string_view url) {
  // scheme://[userinfo@]host[/path][?query][#fragment]
  const size_t authority = url.find("://") + 3;
  size_t path = url.find_first_of("/?#", authority);
  if (path == std::string_view::npos) path = url.size();
  const size_t at = url.substr(authority, path - authority).rfind('@');
  out.append(url.substr(0, authority));
  if (at != std::string_view::npos) {
    out += "***@";
    out.append(url.substr(authority + at + 1, path - authority - at - 1));
  } else {
    out.append(url.substr(authority, path - authority));
  }
  size_t query = url.find('?', path);
  const size_t fragment = url.find('#', path);
  if (query == std::string_view::npos || (fragment != std::string_view::npos && fragment < query)) {
    out.append(url.substr(path));
    return;
  }
  out.append(url.substr(path, query + 1 - path));
  const size_t end = fragment == std::string_view::npos ? url.size() : fragment;
  std::string_view params = url.substr(query + 1, end - query - 1);
  bool first = true;
  while (true) {
    const size_t amp = params.find('&');
    const std::string_view param = params.substr(0, amp);
    if (!first) out += '&';
    first = false;
    const size_t eq = param.find('=');
    out.append(param.substr(0, eq));
    if (eq != std::string_view::npos) out += "=***";
    if (amp == std::string_view::npos) break;
    params.remove_prefix(amp + 1);
  }
  // The fragment is dropped: a token may travel there too.
}

}  // namespace

std::string redact_urls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  size_t at = 0;
  while ((at = text.find("://", at)) != std::string_view::npos) {
    const size_t scheme = scheme_length(text, at);
    if (scheme == 0) {
      at += 3;
      continue;
    }
    size_t end = at + 3;
    // A ':' before a space ends it too: "URL: the reason", as stoker's messages read.
    while (end < text.size() && !ends_url(text[end]) &&
           !(text[end] == ':' && (end + 1 == text.size() || text[end + 1] == ' '))) {
      ++end;
    }
    const size_t start = at - scheme;
    out.append(text.substr(copied, start - copied));
    append_redacted(out, text.substr(start, end - start));
    copied = at = end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace stoker::util
