// WebPageHandler: the page (web/) on amtd's HTTP port. GET / from a browser (Accept: text/html)
// and GET /ui/<file> answer the page's files; the page then reads the same SageMaker and
// CloudWatch Logs APIs as boto3 (POST /, the other handlers), so it shows nothing they cannot.
// Registered before the S3 handler, which would otherwise take /ui/... as a bucket. Other
// clients' GET / (no text/html) still get the server's banner.
//
// GET /ui/events?tuning-job=NAME (or ?training-job=NAME) is the page's live feed, a stream of
// server-sent events (text/event-stream): "event: change" now and after every change of that job
// (for a tuning job, of its training jobs too), then "event: end" once the job has ended, and the
// stream closes. The page re-reads the API on each change: the events carry no data, so there is
// still one source of truth. A job that does not exist: 404 with SageMaker's message.
//
// Every answer carries a Content-Security-Policy that allows only the page's own script, style
// and API (no inline script, no other origin), so text the page shows from jobs, tags or logs can
// never run even if it were ever put into the page as HTML.
#ifndef AMT_ORCHESTRATOR_GATEWAY_WEB_PAGE_H_
#define AMT_ORCHESTRATOR_GATEWAY_WEB_PAGE_H_

#include <string_view>

#include "orchestrator/api/sagemaker_api.h"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway {

// The Content-Security-Policy of the page's responses.
inline constexpr std::string_view kWebPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

class WebPageHandler final : public ProtocolHandler {
 public:
  // `api`, when given, must outlive the handler and serves the live feed; without it
  // /ui/events answers 404.
  explicit WebPageHandler(const api::SageMakerApi* api = nullptr) : api_(api) {}

  std::string_view Description() const override;
  bool Accepts(const HttpRequest& request) const override;
  HttpResponse Handle(const HttpRequest& request) const override;
  HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const override;

 private:
  HttpResponse Events(const HttpRequest& request) const;

  const api::SageMakerApi* api_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_WEB_PAGE_H_
