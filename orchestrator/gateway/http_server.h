// HttpServer: a small HTTP/1.1 server (Boost.Beast) for the AWS JSON gateway. One thread of its
// own accepts and serves connections (keep-alive); every request is answered by the handler.
//
//   POST / with X-Amz-Target  -> handler(target, body), replied with content-type
//                                application/x-amz-json-1.1 and an x-amzn-requestid header
//   GET /                     -> 200, a one-line banner (for health checks and curious people)
//   anything else             -> 404 UnknownOperationException
//
// Bodies over 16 MiB are refused (413). The handler runs on the server's thread, one request at
// a time: it may block (the gateway waits for the orchestrator's loop).
#ifndef AMT_ORCHESTRATOR_GATEWAY_HTTP_SERVER_H_
#define AMT_ORCHESTRATOR_GATEWAY_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "orchestrator/gateway/aws_json.h"

namespace amt::gateway {

class HttpServer {
 public:
  using Handler = std::function<HttpReply(std::string_view target, std::string_view body)>;

  // Listens on host:port (0 picks a free port) and starts serving. FailedPrecondition when the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& host, int port,
                                                           Handler handler);
  virtual ~HttpServer() = default;

  // The port listened on (the real one when 0 was asked for).
  virtual int port() const = 0;
  // Stops accepting, drops open connections and joins the thread. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_HTTP_SERVER_H_
