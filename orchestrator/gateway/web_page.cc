#include "orchestrator/gateway/web_page.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "orchestrator/gateway/connect_target.h"
#include "orchestrator/gateway/host_check.h"
#include "web/web_assets.h"

namespace amt::gateway {
namespace {

// The path of a request target, without its query.
std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

HttpResponse PlainText(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::move(body);
  return response;
}

}  // namespace

std::string_view WebPageHandler::Description() const {
  return "the web page (GET / from a browser, GET /ui/<file>, GET /favicon.ico)";
}

bool WebPageHandler::Accepts(const HttpRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") return false;
  // Addressed to AWS (through the HTTPS proxy): an S3 object's key may start with ui/.
  if (const std::string* host = request.Header("host");
      host != nullptr && IsAwsHost(HostName(*host))) {
    return false;
  }
  const std::string_view path = PathOf(request.target);
  if (path == "/ui" || path.starts_with("/ui/") || path == "/favicon.ico") return true;
  if (path != "/") return false;
  const std::string* accept = request.Header("accept");
  return accept != nullptr && accept->find("text/html") != std::string::npos;
}

HttpResponse WebPageHandler::Events(const HttpRequest& request) const {
  if (api_ == nullptr) return PlainText(404, "This server has no live feed.");
  const std::string_view target = request.target;
  const size_t query = target.find('?');
  const std::string_view parameter =
      query == std::string_view::npos ? "" : target.substr(query + 1);
  using Kind = api::SageMakerApi::JobKind;
  Kind kind;
  std::string name;
  if (parameter.starts_with("tuning-job=")) {
    kind = Kind::kTuningJob;
    name = std::string(parameter.substr(11));
  } else if (parameter.starts_with("training-job=")) {
    kind = Kind::kTrainingJob;
    name = std::string(parameter.substr(13));
  } else {
    return PlainText(400, "Ask for /ui/events?tuning-job=NAME or /ui/events?training-job=NAME.");
  }
  // The job must exist before the stream starts (its status line is still to be chosen).
  absl::Status exists;
  if (kind == Kind::kTuningJob) {
    v1::DescribeHyperParameterTuningJobRequest describe;
    describe.set_hyper_parameter_tuning_job_name(name);
    exists = api_->DescribeHyperParameterTuningJob(describe).status();
  } else {
    v1::DescribeTrainingJobRequest describe;
    describe.set_training_job_name(name);
    exists = api_->DescribeTrainingJob(describe).status();
  }
  if (!exists.ok()) {
    return PlainText(exists.code() == absl::StatusCode::kInvalidArgument ? 400 : 404,
                     std::string(exists.message()));
  }
  HttpResponse response;
  response.content_type = "text/event-stream";
  response.headers = {{"X-Content-Type-Options", "nosniff"},
                      {"Content-Security-Policy", std::string(kWebPagePolicy)}};
  const api::SageMakerApi* api = api_;
  response.events = [api, kind, name](std::shared_ptr<EventSink> sink) -> std::function<void()> {
    auto watched = api->WatchJob(kind, name, [sink](bool ended) {
      sink->Send("event: change\ndata: \n\n");
      if (ended) {
        sink->Send("event: end\ndata: \n\n");
        sink->End();
      }
    });
    if (!watched.ok()) {  // deleted since it was described
      sink->Send("event: end\ndata: \n\n");
      sink->End();
      return [] {};
    }
    return *std::move(watched);
  };
  return response;
}

HttpResponse WebPageHandler::Handle(const HttpRequest& request) const {
  std::string_view path = PathOf(request.target);
  if (path == "/ui/events") return Events(request);
  if (path == "/" || path == "/ui" || path == "/ui/") {
    path = "index.html";
  } else if (path == "/favicon.ico") {
    path = "favicon.svg";  // for clients that ask without reading the page's <link rel=icon>
  } else {
    path.remove_prefix(4);  // "/ui/"
  }
  const web::Asset* asset = web::FindAsset(path);
  if (asset == nullptr) return PlainText(404, "No such file of the page: /ui/" + std::string(path));
  HttpResponse response;
  response.content_type = std::string(asset->content_type);
  response.headers = {{"Cache-Control", "no-cache"},
                      {"X-Content-Type-Options", "nosniff"},
                      {"Content-Security-Policy", std::string(kWebPagePolicy)}};
  if (request.method == "HEAD") {
    response.headers.emplace_back("Content-Length", std::to_string(asset->body.size()));
  } else {
    response.body = std::string(asset->body);
  }
  return response;
}

HttpResponse WebPageHandler::BodyTooLarge(const HttpRequest&, size_t limit_bytes) const {
  return PlainText(
      413, "The request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes.");
}

}  // namespace amt::gateway
