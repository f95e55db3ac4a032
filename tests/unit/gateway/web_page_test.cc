#include "orchestrator/gateway/web_page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "web/web_assets.h"

namespace amt::gateway {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Pair;

HttpRequest Get(std::string target, std::string accept = "") {
  HttpRequest request;
  request.method = "GET";
  request.target = std::move(target);
  if (!accept.empty()) request.headers["accept"] = accept;
  return request;
}

TEST(WebPageHandler, TakesABrowsersRootAndTheFilesUnderUi) {
  const WebPageHandler handler;
  EXPECT_TRUE(handler.Accepts(Get("/", "text/html,application/xhtml+xml,*/*;q=0.8")));
  EXPECT_TRUE(handler.Accepts(Get("/ui/app.js")));
  EXPECT_TRUE(handler.Accepts(Get("/ui/app.js?v=1")));
  // Not a browser's, or not the page's: the banner, the AWS protocols, S3's buckets.
  EXPECT_FALSE(handler.Accepts(Get("/")));
  EXPECT_FALSE(handler.Accepts(Get("/", "application/json")));
  EXPECT_FALSE(handler.Accepts(Get("/uibucket/key")));
  HttpRequest post = Get("/ui/app.js");
  post.method = "POST";
  EXPECT_FALSE(handler.Accepts(post));
}

TEST(WebPageHandler, ServesThePageWithItsTypeAndAPolicyAllowingNoInlineScript) {
  const WebPageHandler handler;
  const HttpResponse page = handler.Handle(Get("/", "text/html"));
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_THAT(page.body, HasSubstr("<script src=\"/ui/app.js\" defer></script>"));
  EXPECT_EQ(page.body, std::string(web::FindAsset("index.html")->body));
  EXPECT_THAT(page.headers, Contains(Pair("Content-Security-Policy", std::string(kWebPagePolicy))));
  EXPECT_THAT(std::string(kWebPagePolicy), HasSubstr("script-src 'self';"));
  EXPECT_THAT(std::string(kWebPagePolicy), ::testing::Not(HasSubstr("unsafe-inline")));

  const HttpResponse script = handler.Handle(Get("/ui/app.js"));
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  EXPECT_THAT(script.body, HasSubstr("SageMaker."));
  EXPECT_EQ(handler.Handle(Get("/ui/style.css")).content_type, "text/css; charset=utf-8");
}

TEST(WebPageHandler, AnswersHeadWithTheLengthAndAnUnknownFileWithNotFound) {
  const WebPageHandler handler;
  HttpRequest head = Get("/ui/style.css");
  head.method = "HEAD";
  const HttpResponse response = handler.Handle(head);
  EXPECT_TRUE(response.body.empty());
  EXPECT_THAT(
      response.headers,
      Contains(Pair("Content-Length", std::to_string(web::FindAsset("style.css")->body.size()))));
  const HttpResponse missing = handler.Handle(Get("/ui/../secret"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "No such file of the page: /ui/../secret");
}

TEST(WebAssets, HoldEveryFileOfThePage) {
  for (const char* file :
       {"index.html", "dom.js", "charts.js", "app.js", "style.css", "uplot.js", "uplot.css"}) {
    const web::Asset* asset = web::FindAsset(file);
    ASSERT_NE(asset, nullptr) << file;
    EXPECT_FALSE(asset->body.empty()) << file;
  }
  // uPlot, from npm (web/package-lock.json), under the name index.html loads it by.
  EXPECT_THAT(std::string(web::FindAsset("uplot.js")->body),
              ::testing::StartsWith("/*! https://github.com/leeoniya/uPlot (v1.6.32) */"));
  EXPECT_EQ(web::FindAsset("uplot.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(web::FindAsset("nope.js"), nullptr);
}

}  // namespace
}  // namespace amt::gateway
