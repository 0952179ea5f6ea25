// Credentials kept out of what stoker prints (private to stoker's libraries): every message,
// warning, stats line and report goes through redact_urls, so a presigned query
// ("?X-Amz-Signature=...") or a URL's userinfo ("https://user:pass@host") is never shown.
#pragma once

#include <string>
#include <string_view>

namespace stoker::util {

// `text` with each http://, https:// and s3:// URL in it rewritten: its userinfo ("user:pass@")
// becomes "***@" and the value of each query parameter "***" ("?X-Amz-Signature=***&x=***").
// What is not a URL is unchanged. Linear in the text.
std::string redact_urls(std::string_view text);

}  // namespace stoker::util
