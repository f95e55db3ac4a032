// ProtocolHandler: one AWS wire protocol served by HttpServer (http_server.h). The server reads an
// HTTP request, asks its handlers in order whether they accept it, and lets the first that does
// answer. SageMaker's AWS JSON 1.1 (aws_json.h) is one; S3's REST-XML (by path and method),
// CloudWatch Logs' JSON 1.1 (by X-Amz-Target) or STS's query protocol (by the SigV4 scope) are
// others, each beside the rest without touching them. Each renders its own errors, in its own
// protocol's shape.
//
// No Beast in this header: handlers are plain code over strings, testable without sockets.
#ifndef AMT_ORCHESTRATOR_GATEWAY_PROTOCOL_HANDLER_H_
#define AMT_ORCHESTRATOR_GATEWAY_PROTOCOL_HANDLER_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/auth/sigv4.h"

namespace amt::gateway {

struct HttpRequest {
  std::string method;  // "POST", "GET", ...
  std::string target;  // path and query, as sent: "/", "/bucket/key?uploads"
  // Header fields by lower-case name (HTTP names are case-insensitive); a repeated field keeps
  // its first value.
  std::map<std::string, std::string, std::less<>> headers;
  // Every header field as received, in order, names lower-cased, repeats kept: what a SigV4
  // signature covers.
  std::vector<std::pair<std::string, std::string>> header_list;
  std::string body;
  // A fresh random UUID from the server, for the protocol's request-id header.
  std::string request_id;

  // The value of header `lower_case_name`, nullptr when absent.
  const std::string* Header(std::string_view lower_case_name) const {
    const auto it = headers.find(lower_case_name);
    return it == headers.end() ? nullptr : &it->second;
  }
};

// The sending side of a stream of server-sent events (HttpResponse::events). Thread-safe: Send and
// End may be called from any thread, at any time, and do nothing once the stream has ended (End,
// the client gone, a write failed, the server stopped).
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Queues `chunk`, one or more whole events ("event: change\ndata: \n\n"). A chunk equal to
  // the last one still waiting to be written is dropped: a burst of the same event is one.
  virtual void Send(std::string chunk) = 0;
  // Ends the stream once what was queued is written; the connection then closes.
  virtual void End() = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;  // more fields, e.g. request ids
  std::string body;
  // When set, the response is a stream of server-sent events (text/event-stream) instead of
  // `body`: the server sends the status and headers (no Content-Length; the connection closes at
  // the end), then calls `events` once, on its thread, with the stream's sink. `events` returns
  // what the server calls, once, when the stream ends for any reason (e.g. to unsubscribe; from
  // the server's thread, or from HttpServer::Stop). A comment line keeps an idle stream alive.
  std::function<std::function<void()>(std::shared_ptr<EventSink>)> events;
};

class ProtocolHandler {
 public:
  virtual ~ProtocolHandler() = default;

  // What it serves, for the server's banner: "SageMaker (AWS JSON 1.1, X-Amz-Target: SageMaker.*)".
  virtual std::string_view Description() const = 0;

  // Whether `request` is this protocol's, judged from its method, target and headers (the body
  // may be empty; see BodyTooLarge). Pure and cheap.
  virtual bool Accepts(const HttpRequest& request) const = 0;

  // Answers an accepted request. Never throws: a bad request is an error response of the
  // protocol. Runs on the server's thread and may block (e.g. on the orchestrator's loop).
  virtual HttpResponse Handle(const HttpRequest& request) const = 0;

  // Answers an accepted request whose body is over the server's limit of `limit_bytes`; the
  // request carries the headers only. The server closes the connection after it.
  virtual HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const = 0;

  // Answers an accepted request whose signature the server refused (amtd --credentials). The
  // default is the AWS JSON services' answer (auth/auth_errors.h: JsonServiceAuthError, e.g. 400
  // InvalidSignatureException) in the AWS JSON error shape; S3 answers in its own XML.
  virtual HttpResponse Unauthenticated(const HttpRequest& request,
                                       const auth::AuthFailure& failure) const;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_PROTOCOL_HANDLER_H_
