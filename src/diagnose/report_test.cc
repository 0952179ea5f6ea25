// render_html (stoker/report.h): what the page may and may not contain.
#include "diagnose/report.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "stoker/error.h"
#include "util/test_util.h"

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

TEST(Report, WriteHtmlFollowsLinksAndNeverReplacesANonRegularFile) {
  // Before: --html PATH renamed its temporary file over whatever PATH was: a device node, a
  // FIFO, or the symbolic link itself.
  namespace fs = std::filesystem;
  const test::TempDir temp("stoker-report");
  const fs::path dir = temp.path();
  Report page;
  page.title = "t";
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    write_html(page, fifo);
    ADD_FAILURE() << "a FIFO was replaced";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("fifo: not a regular file"), std::string::npos) << e.message();
  }
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THROW(write_html(page, dir), Error);  // a folder
  // A link: its target gets the report, the link stays a link.
  const fs::path real = dir / "real.html", link = dir / "link.html";
  std::ofstream(real) << "old";
  fs::create_symlink(real, link);
  write_html(page, link);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  std::stringstream text;
  text << std::ifstream(real).rdbuf();
  EXPECT_NE(text.str().find("<html"), std::string::npos);
  // A dangling link names where the report goes.
  const fs::path dangling = dir / "dangling.html";
  fs::create_symlink(dir / "new.html", dangling);
  write_html(page, dangling);
  EXPECT_TRUE(fs::is_regular_file(dir / "new.html"));
}

}  // namespace
}  // namespace stoker
