// render_html (stoker/report.h): what the page may and may not contain.
#include "stoker/report.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker {
namespace {

TEST(Report, DataCannotEndOrCommentOutTheScripts) {
  Report page;
  page.title = "a title";
  page.diagnosis.summary = "a summary";
  page.diagnosis.evidence = {"/data/</script><!--<script>x.jpg & more"};
  page.charts.push_back(
      {{"kind", "lines"}, {"title", "</script><!--<script>"}, {"series", nlohmann::json::array()}});
  const std::string html = render_html(page);
  // Exactly the two closers of our own script elements.
  size_t closers = 0;
  for (size_t at = html.find("</script>"); at != std::string::npos;
       at = html.find("</script>", at + 1)) {
    ++closers;
  }
  EXPECT_EQ(closers, 2u);
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;!--&lt;script&gt;x.jpg &amp; more"), std::string::npos);
}

}  // namespace
}  // namespace stoker
