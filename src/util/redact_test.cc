#include "util/redact.h"

#include <gtest/gtest.h>

namespace stoker::util {
namespace {

TEST(Redact, PresignedQueriesAndUserinfoAreHiddenTheRestKept) {
  EXPECT_EQ(redact_urls("https://b.s3.amazonaws.com/train-000.tar?X-Amz-Algorithm=AWS4-HMAC-"
                        "SHA256&X-Amz-Credential=AKIA%2F20261203&X-Amz-Signature=9f86d0: HTTP "
                        "403"),
            "https://b.s3.amazonaws.com/train-000.tar?X-Amz-Algorithm=***&X-Amz-Credential=***"
            "&X-Amz-Signature=***: HTTP 403");
  EXPECT_EQ(redact_urls("fetching http://alice:s3cret@host:8080/data/a.tar failed"),
            "fetching http://***@host:8080/data/a.tar failed");
  EXPECT_EQ(redact_urls("s3://bucket/key.tar and 'https://h/x?token=abc#frag'"),
            "s3://bucket/key.tar and 'https://h/x?token=***'");
  // Not URLs: paths, times, other schemes' look-alikes.
  EXPECT_EQ(redact_urls("/data/a?b=c.jpg at 12:34:56, file://x?y=z, xs3://q?a=b"),
            "/data/a?b=c.jpg at 12:34:56, file://x?y=z, xs3://q?a=b");
  EXPECT_EQ(redact_urls(""), "");
  EXPECT_EQ(redact_urls("http://"), "http://");
  EXPECT_EQ(redact_urls("https://h?"), "https://h?");
}

}  // namespace
}  // namespace stoker::util
