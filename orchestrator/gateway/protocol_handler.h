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
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
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
  // A body the server wrote to a file as it arrived, instead of `body` (its handler asked:
  // ProtocolHandler::SpoolsBody): the file's path and size; empty when the body is in `body`.
  // The file is the handler's to read or move away while it handles the request; the server
  // removes it afterwards if it is still there.
  std::string body_file;
  uint64_t body_file_size = 0;
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
  // When set, the body is `body_length` bytes read from here instead of `body`, a block at a
  // time as the client takes them (an S3 object: memory stays one block whatever its size, and
  // a client that does not read holds no more). Called on the server's threads, one call at a
  // time, with room for `capacity` bytes; returns how many it put in `buffer` (0 only at the
  // end), or an error: the connection is then cut, and the client sees the body end short.
  using BodyReader = std::function<absl::StatusOr<size_t>(char* buffer, size_t capacity)>;
  BodyReader body_reader;
  uint64_t body_length = 0;
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
  // protocol. Runs on one of the server's threads, beside other requests (handlers are called
  // concurrently and must be thread-safe), and may block (e.g. on the orchestrator's loop): that
  // holds only its own connection.
  virtual HttpResponse Handle(const HttpRequest& request) const = 0;

  // Whether Handle does disk work that may take long (S3's objects): such requests are handled on
  // the server's pool for disk work (HttpServerOptions::disk_threads), so however many wait on
  // the disk, the other handlers' requests (a SageMaker call) are answered as fast as ever.
  virtual bool DiskBound() const { return false; }

  // Whether the body of `request` (its method, target and headers; no body yet) should be
  // written to a file as it arrives rather than held in memory (HttpRequest::body_file): uploads
  // of any size, so that memory is a block per upload. Only where the server has a spool folder
  // (HttpServerOptions::spool_dir); then such bodies may reach max_spooled_body_bytes. Pure.
  virtual bool SpoolsBody(const HttpRequest& request) const {
    (void)request;
    return false;
  }

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
