// HttpServer: a small HTTP/1.1 server (Boost.Beast) for the AWS protocols amtd speaks. A pool of
// threads of its own (HttpServerOptions::threads) accepts and serves connections (keep-alive);
// each connection is served on one of them at a time (an Asio strand), so a request that takes
// long (a SageMaker call waiting for the loop, a disk-bound S3 call) holds its own connection
// only. Each request goes to the first of its ProtocolHandlers (protocol_handler.h) that accepts
// it, in the order given:
//
//   Host/Origin not amtd's   -> 403 AccessDeniedException (DNS rebinding; host_check.h)
//   credentials are set and the request's SigV4 signature is missing or wrong
//                            -> the accepting handler's Unauthenticated (auth/sigv4.h)
//   a handler accepts it     -> that handler's response (and its request-id header)
//   GET /, no handler        -> 200, a banner listing the handlers (for health checks)
//   anything else            -> 404 UnknownOperationException (AWS JSON shape)
//   CONNECT host:port        -> the HTTPS proxy (HttpServerOptions::proxy_ca, connect_target.h):
//                               for an AWS host, TLS with a certificate of amtd's CA, then
//                               requests as above (no Host check: they name AWS's hosts);
//                               another host is tunnelled on loopback, refused beyond it
//   body over the limit      -> the accepting handler's BodyTooLarge (413), then the connection
//                               is closed
//
// Nothing a client sends stops the server: a handler that throws costs that request a 500,
// failed accepts (e.g. out of file descriptors) are retried with backoff, connections are closed
// when idle or too slow to send their request, and connections over the cap are closed at once.
// Handlers run on the server's threads, requests of different connections at once: they may
// block (the SageMaker handler waits for the orchestrator's loop). A body may come from a reader
// (HttpResponse::body_reader, an S3 object) a block at a time, as the client takes it. A response
// may instead be a stream of server-sent events (protocol_handler.h HttpResponse::events), fed
// from any thread through its EventSink and written by the connection's strand, without blocking
// it; Stop ends every stream.
#ifndef AMT_ORCHESTRATOR_GATEWAY_HTTP_SERVER_H_
#define AMT_ORCHESTRATOR_GATEWAY_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/credentials.h"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway {

class CertificateAuthority;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 picks a free port
  // Threads serving connections (at least 1). Handlers block (on the loop, on the disk), so more
  // than the cores: each blocked handler holds one.
  int threads = 8;
  // Threads for the handlers that say they are disk-bound (ProtocolHandler::DiskBound: S3), apart
  // from `threads`, so that uploads waiting on fsync never delay a SageMaker call.
  int disk_threads = 4;
  // A connection with no request under way (before its first, between keep-alive requests) is
  // closed after this long. Also bounds the write of a response to a client that does not read.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};
  // From a request's first byte to the end of its header fields (slow-header clients).
  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
  // From the end of the header fields to the end of the body.
  std::chrono::milliseconds body_timeout{std::chrono::seconds(60)};
  // Open connections at most; one more is closed as soon as it is accepted (the client sees the
  // connection end and may retry), so a flood cannot take every file descriptor of amtd.
  int max_connections = 512;
  // Server-sent event streams (HttpResponse::events) open at once at most; one more is answered
  // 503. Each also counts as a connection.
  int max_event_streams = 32;
  // An event stream with nothing to send gets a comment line this often, so that a client gone
  // without a word is noticed (the write fails) and proxies keep the connection.
  std::chrono::milliseconds event_keepalive{std::chrono::seconds(15)};
  // Larger bodies get the handler's BodyTooLarge (SageMaker's biggest requests are ~100 KB).
  size_t max_body_bytes = 16 << 20;
  // Where bodies a handler spools (ProtocolHandler::SpoolsBody: S3 uploads) are written as they
  // arrive, one file each, removed once the request is answered; empty: every body is read into
  // memory (within max_body_bytes). A spooled body may reach max_spooled_body_bytes (S3's
  // largest single PUT: 5 GiB).
  std::string spool_dir;
  uint64_t max_spooled_body_bytes = uint64_t{5} << 30;
  // Names requests may be addressed to besides the loopback ones (HostCheck::ForBinding).
  std::vector<std::string> allowed_hosts;
  // When set, every request a handler accepts must be signed (AWS Signature Version 4) with one
  // of these access keys; else any signature, or none, is accepted (SageMaker clients always
  // sign, with whatever credentials they have).
  std::shared_ptr<const auth::Credentials> credentials;
  // The CA of the HTTPS proxy: a CONNECT to an AWS host gets a TLS session with a certificate it
  // issues for the host. None: such a CONNECT is answered 501 (other hosts are tunnelled or
  // refused all the same).
  std::shared_ptr<CertificateAuthority> proxy_ca;
  // Unix seconds, for the signatures' clock-skew check. Default: the system clock.
  std::function<int64_t()> now;
  // Reports what the server cannot tell a client (failed accepts); called on the server's thread.
  // Default: nothing.
  std::function<void(std::string_view message)> log;
};

class HttpServer {
 public:
  // Listens on options.host:options.port and starts serving with `handlers` (first match wins).
  // InvalidArgument for a bad host address, FailedPrecondition when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpServerOptions& options, std::vector<std::unique_ptr<ProtocolHandler>> handlers);
  virtual ~HttpServer() = default;

  // The port listened on (the real one when 0 was asked for).
  virtual int port() const = 0;
  // Stops accepting, drops open connections and joins the thread. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_HTTP_SERVER_H_
