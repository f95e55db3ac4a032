// The connections of HttpServer (http_server.h), internal to the gateway: what the server's
// sessions share (Shared), a connection's Session (reads a request, spooling its body to a file
// when its handler asks; answers it on the connection's strand or on the disk pool; writes the
// answer, or streams its body, or a stream of server-sent events), an event stream's sink
// (StreamSink), and the HTTPS proxy's CONNECT (StartConnect: a TLS session of amtd's own for an
// AWS host, a Tunnel for others). A Session is over plain TCP (PlainStream) or, inside a CONNECT
// to an AWS host, over TLS (TlsStream). Included by http_server.cc, http_session.cc,
// http_event_stream.cc and http_connect.cc only: it brings in Beast.
#ifndef AMT_ORCHESTRATOR_GATEWAY_HTTP_SESSION_H_
#define AMT_ORCHESTRATOR_GATEWAY_HTTP_SESSION_H_

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "orchestrator/gateway/certificate_authority.h"
#include "orchestrator/gateway/host_check.h"
#include "orchestrator/gateway/http_server.h"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

class StreamSink;

// What every session of a server shares, from every thread of the pool: set before it starts
// and read only after, or atomic, or under a lock.
struct Shared {
  HttpServerOptions options;
  // The pool of ProtocolHandler::DiskBound handlers (HttpServerOptions::disk_threads).
  std::unique_ptr<asio::thread_pool> disk_pool;
  std::vector<std::unique_ptr<ProtocolHandler>> handlers;
  HostCheck host_check;
  std::atomic<int> open_connections{0};
  std::atomic<int> event_streams{0};
  Mutex rng_mu;
  std::mt19937_64 rng ABSL_GUARDED_BY(rng_mu){std::random_device{}()};
  // The sinks of open event streams, for Stop (which runs on another thread once the server's
  // thread has ended).
  Mutex sinks_mu;
  std::vector<std::weak_ptr<StreamSink>> sinks ABSL_GUARDED_BY(sinks_mu);
  // Whether the server listens on loopback only: CONNECT tunnels to other hosts then
  // (RouteConnect).
  bool loopback_only = false;

  void Log(std::string_view message) const {
    if (options.log) options.log(message);
  }
  // A fresh request id (a random UUID); from any thread.
  std::string NewRequestId();
  const ProtocolHandler* HandlerFor(const HttpRequest& request) const {
    for (const auto& handler : handlers) {
      if (handler->Accepts(request)) return handler.get();
    }
    return nullptr;
  }
};

// An AWS JSON error (the server's own answers: 403, 404, 413, 500), with its request id.
HttpResponse AwsJsonError(int status, std::string_view name, std::string_view message,
                          const std::string& request_id);

// What a StreamSink drives: the Session of its connection, whatever its stream.
class EventStreamOwner {
 public:
  virtual ~EventStreamOwner() = default;
  // On the server's thread, from the sink.
  virtual void QueueChunk(std::string chunk) = 0;
  virtual void EndAfterWrites() = 0;
  // HttpServer::Stop, once the server's thread has ended: the stream ends now.
  virtual void StopEvents() = 0;
};

// An event stream's EventSink: Send and End post to the server's thread, where the session
// writes; Close (the stream has ended) turns both into no-ops, lets go of the connection's
// executor and runs the handler's end callback, once.
class StreamSink final : public EventSink {
 public:
  StreamSink(asio::any_io_executor executor, std::weak_ptr<EventStreamOwner> session)
      : executor_(std::move(executor)), session_(std::move(session)) {}

  void Send(std::string chunk) override;
  void End() override;

  void SetOnEnd(std::function<void()> on_end) {
    std::function<void()> now;
    {
      MutexLock lock(&mu_);
      if (open_) {
        on_end_ = std::move(on_end);
        return;
      }
      now = std::move(on_end);  // ended before the handler was done: end its side at once
    }
    if (now) now();
  }

  std::shared_ptr<EventStreamOwner> session() const { return session_.lock(); }

  // Ends the stream for its producers; idempotent.
  void Close() {
    std::function<void()> on_end;
    {
      MutexLock lock(&mu_);
      if (!open_) return;
      open_ = false;
      on_end = std::move(on_end_);
      // The executor holds the connection's strand, which must not outlive the server's
      // io_context; the producer may keep this sink longer than that.
      executor_ = asio::any_io_executor();
    }
    if (on_end) on_end();
  }

 private:
  Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  std::function<void()> on_end_ ABSL_GUARDED_BY(mu_);
  asio::any_io_executor executor_ ABSL_GUARDED_BY(mu_);
  std::weak_ptr<EventStreamOwner> session_;
};

// One connection, from its first request to its end. A Session is its connection's: its methods
// run on the connection's strand, one at a time (Answer also on the disk pool, while the
// connection waits for it; StopEvents from HttpServer::Stop, once no thread of the server runs).
// http_session.cc holds the requests and responses, http_event_stream.cc the event streams;
// both instantiate the two streams.
//
// A TlsStream session is the inside of a CONNECT to an AWS host (`tunnel_host`): its requests
// are addressed to that host (sts.us-east-1.amazonaws.com), so the Host check, a defence of the
// plain endpoint against browsers, does not apply to them.
template <class Stream>
class Session final : public EventStreamOwner,
                      public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, std::shared_ptr<Shared> shared);
  // The TLS side of a CONNECT to `tunnel_host`, with `tls` (the host's server context) kept for
  // as long as the stream lives.
  Session(Stream stream, std::shared_ptr<Shared> shared, std::string tunnel_host,
          std::shared_ptr<asio::ssl::context> tls);
  ~Session() override;

  // Waits for a request's first byte, for at most the idle timeout.
  void AwaitRequest();

  // TLS: the server's handshake (with `already_read`, bytes the client sent before it), then
  // AwaitRequest.
  void Handshake(std::string already_read);

 private:
  void ReadHeader();

  // A client that sent `Expect: 100-continue` (botocore does for S3 uploads) waits for the
  // interim response before it sends the body (botocore: one second, then sends it anyway).
  void ReadBody();

  // When the accepting handler wants this body on disk (ProtocolHandler::SpoolsBody), it goes to
  // a new file of the spool folder as it arrives (Beast's file_body): memory stays one read
  // buffer whatever the size. Where no file can be made, the body is read into memory as any.
  void Spool();

  // The spooled body's file goes (when the handler has not moved it away).
  void RemoveSpool();
  void ReadRestOfBody();
  void OnReadError(beast::error_code ec);
  void OnRequest();

  // Answers on this strand, or for a disk-bound handler on the disk pool (the connection waits
  // meanwhile: nothing else of it runs), then writes the answer from the strand.
  void Respond(HttpRequest request, bool keep_alive);
  HttpResponse Answer(const HttpRequest& request);
  int64_t Now() const;
  HttpResponse Fallback(const HttpRequest& request) const;

  // The body is over the limit: the accepting handler says so in its protocol's words, then the
  // connection ends (the rest of the body is not read).
  void RefuseBody();
  void Write(const HttpResponse& reply, bool keep_alive, bool linger = false);

  // A body from reply.body_reader: the header, then a block at a time, each read once the one
  // before is written. So the client's pace sets the reads (a client that does not read holds
  // one block until the idle timeout closes it), and memory is one block whatever the size.
  void StartBody(const HttpResponse& reply, bool keep_alive);
  void WriteNextBlock(bool keep_alive);

  // The body is written (or cannot be): its reader and block go (an idle connection holds
  // neither), then the next request, or the end.
  void EndBody(bool cut, bool keep_alive);

  // Ends our side and discards what the client still sends until it ends its own (or the header
  // timeout passes): closing with unread data would reset the connection, and the client could
  // lose the response it has not read yet.
  void LingeringClose();
  void Drain();
  void Close();
  void ReleaseSlot();

  // A CONNECT (plain sessions only): the connection becomes StartConnect's.
  void Connect(const HttpRequest& request);

  // The TCP layer under the stream (timeouts, shutdown, close).
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  // ---- server-sent events (HttpResponse::events)

 public:
  void QueueChunk(std::string chunk) override;
  void EndAfterWrites() override;
  void StopEvents() override { FinishEvents(); }

 private:
  void StartEvents(const HttpResponse& reply);
  void OpenSink();
  void AwaitClientClose();
  void Keepalive();
  void WriteNextChunk();
  void FinishEvents();

  // Declared before stream_, which uses it, so that it outlives the stream.
  std::shared_ptr<asio::ssl::context> tls_;
  Stream stream_;
  std::shared_ptr<Shared> shared_;
  std::string tunnel_host_;  // TLS: the AWS host the client CONNECTed to
  // The event stream's state (StartEvents): its header, what waits to be written, the chunk
  // being written.
  std::function<std::function<void()>(std::shared_ptr<EventSink>)> events_;
  std::shared_ptr<StreamSink> sink_;
  std::string header_;
  std::deque<std::string> queue_;
  std::string chunk_;
  bool writing_ = false;
  bool end_requested_ = false;
  bool events_ended_ = false;
  bool counted_stream_ = false;
  asio::steady_timer keepalive_{stream_.get_executor()};
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // A body going to a file (Spool): the parser parser_ was moved into, and the file's path.
  std::optional<http::request_parser<http::file_body>> spool_parser_;
  std::string spool_path_;
  http::response<http::string_body> response_;
  // A streamed body (StartBody): its reader, the bytes still to send, the block being written.
  HttpResponse::BodyReader body_reader_;
  uint64_t body_left_ = 0;
  std::unique_ptr<char[]> block_;
  std::array<char, 4096> drain_{};
  bool released_ = false;
};

// The CONNECT `request` of a plain session whose connection is `stream` (with `buffer`, what was
// read after the request): by RouteConnect, a TLS Session for an AWS host (amtd's CA issues its
// certificate; none configured: 501), a Tunnel to another host, or a refusal (403); a target
// that does not parse is a 400. The connection is then no longer its session's.
void StartConnect(PlainStream stream, beast::flat_buffer buffer, const HttpRequest& request,
                  std::shared_ptr<Shared> shared);

}  // namespace amt::gateway::internal

#endif  // AMT_ORCHESTRATOR_GATEWAY_HTTP_SESSION_H_
