#include "orchestrator/gateway/web_page.h"

#include <string>

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
  return "the web page (GET / from a browser, GET /ui/<file>)";
}

bool WebPageHandler::Accepts(const HttpRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") return false;
  const std::string_view path = PathOf(request.target);
  if (path == "/ui" || path.starts_with("/ui/")) return true;
  if (path != "/") return false;
  const std::string* accept = request.Header("accept");
  return accept != nullptr && accept->find("text/html") != std::string::npos;
}

HttpResponse WebPageHandler::Handle(const HttpRequest& request) const {
  std::string_view path = PathOf(request.target);
  if (path == "/" || path == "/ui" || path == "/ui/") {
    path = "index.html";
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
