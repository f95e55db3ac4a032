#include "orchestrator/gateway/web_page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/unit/api/api_fixture.h"
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

TEST(WebPageHandler, LeavesRequestsAddressedToAwsToTheirServices) {
  const WebPageHandler handler;
  // Through the HTTPS proxy, GET /ui/model.tar.gz on a bucket's name is S3's object.
  HttpRequest object = Get("/ui/model.tar.gz");
  object.headers["host"] = "models.s3.us-east-1.amazonaws.com";
  EXPECT_FALSE(handler.Accepts(object));
  HttpRequest icon = Get("/favicon.ico");
  icon.headers["host"] = "site.s3.amazonaws.com:443";
  EXPECT_FALSE(handler.Accepts(icon));
  HttpRequest local = Get("/ui/app.js");
  local.headers["host"] = "127.0.0.1:7071";
  EXPECT_TRUE(handler.Accepts(local));
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

TEST(WebPageHandler, ServesAnIconAtFaviconIcoAndThePageLinksIt) {
  const WebPageHandler handler;
  ASSERT_TRUE(handler.Accepts(Get("/favicon.ico")));
  const HttpResponse icon = handler.Handle(Get("/favicon.ico"));
  EXPECT_EQ(icon.status, 200);
  EXPECT_EQ(icon.content_type, "image/svg+xml");
  EXPECT_THAT(icon.body, HasSubstr("<svg"));
  EXPECT_EQ(handler.Handle(Get("/ui/favicon.svg")).body, icon.body);
  EXPECT_THAT(handler.Handle(Get("/", "text/html")).body,
              HasSubstr("<link rel=\"icon\" href=\"/ui/favicon.svg\" type=\"image/svg+xml\">"));
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
  for (const char* file : {"index.html", "dom.js", "charts.js", "compare.js", "app.js", "style.css",
                           "uplot.js", "uplot.css"}) {
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

// ---------------------------------------------------------------- the live feed

// Records what a stream's producer sends.
class RecordingSink final : public EventSink {
 public:
  void Send(std::string chunk) override {
    std::lock_guard lock(mu_);
    chunks_.push_back(std::move(chunk));
  }
  void End() override {
    std::lock_guard lock(mu_);
    ended_ = true;
  }
  std::vector<std::string> chunks() const {
    std::lock_guard lock(mu_);
    return chunks_;
  }
  bool ended() const {
    std::lock_guard lock(mu_);
    return ended_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> chunks_;
  bool ended_ = false;
};

constexpr char kChange[] = "event: change\ndata: \n\n";
constexpr char kEnd[] = "event: end\ndata: \n\n";

class WebPageEventsTest : public api::ApiFixture {
 protected:
  WebPageHandler handler_{api_.get()};
};

TEST_F(WebPageEventsTest, StreamsAChangeNowAndOnEveryChangeThenTheEndOfTheJob) {
  ASSERT_TRUE(api_->CreateTrainingJob(api::TrainingJobRequest("live")).ok());
  const HttpResponse response = handler_.Handle(Get("/ui/events?training-job=live"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "text/event-stream");
  ASSERT_TRUE(response.events);
  auto sink = std::make_shared<RecordingSink>();
  const std::function<void()> on_end = response.events(sink);
  EXPECT_THAT(sink->chunks(), ::testing::ElementsAre(kChange));  // the job runs
  v1::StopTrainingJobRequest stop;
  stop.set_training_job_name("live");
  ASSERT_TRUE(api_->StopTrainingJob(stop).ok());
  // No worker runs it, so the stop ends it at once: a change, then the end.
  EXPECT_THAT(sink->chunks(), ::testing::ElementsAre(kChange, kChange, kEnd));
  EXPECT_TRUE(sink->ended());
  on_end();
}

TEST_F(WebPageEventsTest, EndsAtOnceForAJobThatHasEnded) {
  ASSERT_TRUE(api_->CreateTrainingJob(api::TrainingJobRequest("done")).ok());
  v1::StopTrainingJobRequest stop;
  stop.set_training_job_name("done");
  ASSERT_TRUE(api_->StopTrainingJob(stop).ok());
  const HttpResponse response = handler_.Handle(Get("/ui/events?training-job=done"));
  auto sink = std::make_shared<RecordingSink>();
  response.events(sink)();
  EXPECT_THAT(sink->chunks(), ::testing::ElementsAre(kChange, kEnd));
  EXPECT_TRUE(sink->ended());
}

TEST_F(WebPageEventsTest, RefusesAMissingJobOrABadQuery) {
  const HttpResponse missing = handler_.Handle(Get("/ui/events?tuning-job=nope"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body,
            "Amazon SageMaker can't find a tuning job called nope. Type another name.");
  EXPECT_FALSE(missing.events);
  const HttpResponse bad = handler_.Handle(Get("/ui/events?tuning-job=a%20b"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(handler_.Handle(Get("/ui/events")).status, 400);
  EXPECT_EQ(handler_.Handle(Get("/ui/events?job=x")).status, 400);
  EXPECT_EQ(WebPageHandler().Handle(Get("/ui/events?tuning-job=x")).status, 404);  // no API
}

}  // namespace
}  // namespace amt::gateway
