#include "orchestrator/gateway/http_server.h"

#include <algorithm>
#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/aws_json.h"
#include "orchestrator/gateway/host_check.h"

namespace amt::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

constexpr size_t kReadChunk = 16 << 10;
constexpr char kAwsJson[] = "application/x-amz-json-1.1";
// Accept failures are retried after this, doubling up to kMaxAcceptBackoff.
constexpr milliseconds kFirstAcceptBackoff(10);
constexpr milliseconds kMaxAcceptBackoff(1000);

// A random (version 4) UUID, as AWS request ids are.
std::string RequestId(std::mt19937_64& rng) {
  std::array<unsigned char, 16> b{};
  for (size_t i = 0; i < b.size(); i += 8) {
    const uint64_t r = rng();
    for (size_t j = 0; j < 8; ++j) b[i + j] = static_cast<unsigned char>(r >> (8 * j));
  }
  b[6] = (b[6] & 0x0F) | 0x40;
  b[8] = (b[8] & 0x3F) | 0x80;
  char out[37];
  std::snprintf(out, sizeof(out),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

// What every session of a server shares. Used on the server's thread only, so no lock.
struct Shared {
  HttpServerOptions options;
  std::vector<std::unique_ptr<ProtocolHandler>> handlers;
  HostCheck host_check;
  std::mt19937_64 rng{std::random_device{}()};
  int open_connections = 0;

  void Log(std::string_view message) const {
    if (options.log) options.log(message);
  }
  const ProtocolHandler* HandlerFor(const HttpRequest& request) const {
    for (const auto& handler : handlers) {
      if (handler->Accepts(request)) return handler.get();
    }
    return nullptr;
  }
};

HttpResponse AwsJsonError(int status, std::string_view name, std::string_view message,
                          const std::string& request_id) {
  HttpResponse response;
  response.status = status;
  response.content_type = kAwsJson;
  response.body = AwsErrorBody(name, message);
  response.headers.emplace_back("x-amzn-RequestId", request_id);
  return response;
}

// The request as handlers see it (the body moved out of the parser's message).
HttpRequest ToHttpRequest(http::request<http::string_body>& message, std::string request_id) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  for (const auto& field : message) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    request.header_list.emplace_back(name, std::string(field.value()));
    request.headers.emplace(std::move(name), std::string(field.value()));
  }
  request.body = std::move(message.body());
  request.request_id = std::move(request_id);
  return request;
}

}  // namespace

HttpResponse ProtocolHandler::Unauthenticated(const HttpRequest& request,
                                              const auth::AuthFailure& failure) const {
  const auth::AwsAuthError error = auth::JsonServiceAuthError(failure);
  return AwsJsonError(error.http_status, error.code, error.message, request.request_id);
}

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {
    ++shared_->open_connections;
  }
  ~Session() { ReleaseSlot(); }

  // Waits for a request's first byte, for at most the idle timeout.
  void AwaitRequest() {
    parser_.emplace();
    parser_->body_limit(shared_->options.max_body_bytes);
    if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is already here
    stream_.expires_after(shared_->options.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->Close();  // idle, closed by the client, reset
                              self->buffer_.commit(n);
                              self->ReadHeader();
                            });
  }

 private:
  void ReadHeader() {
    stream_.expires_after(shared_->options.header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->OnReadError(ec);
                              self->ReadBody();
                            });
  }

  // A client that sent `Expect: 100-continue` (botocore does for S3 uploads) waits for the
  // interim response before it sends the body (botocore: one second, then sends it anyway).
  void ReadBody() {
    if (!parser_->is_done() &&
        beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      stream_.expires_after(shared_->options.idle_timeout);
      return asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                               [self = shared_from_this()](beast::error_code ec, size_t) {
                                 if (ec) return self->Close();
                                 self->ReadRestOfBody();
                               });
    }
    ReadRestOfBody();
  }

  void ReadRestOfBody() {
    stream_.expires_after(shared_->options.body_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->OnRequest();
                     });
  }

  void OnReadError(beast::error_code ec) {
    if (ec == http::error::body_limit) return RefuseBody();
    // Timed out, closed, reset, or not HTTP: there is nobody, or nothing, to answer.
    Close();
  }

  void OnRequest() {
    auto& message = parser_->get();
    const bool keep_alive = message.keep_alive();
    const HttpRequest request = ToHttpRequest(message, RequestId(shared_->rng));
    Write(Answer(request), keep_alive);
  }

  HttpResponse Answer(const HttpRequest& request) {
    if (auto refusal =
            shared_->host_check.Refusal(request.Header("host"), request.Header("origin"))) {
      return AwsJsonError(403, "AccessDeniedException", *refusal, request.request_id);
    }
    const ProtocolHandler* handler = shared_->HandlerFor(request);
    if (handler == nullptr) return Fallback(request);
    if (shared_->options.credentials != nullptr) {
      const auth::AuthResult result = auth::VerifySigV4(
          {request.method, request.target, request.header_list, request.body, Now()},
          *shared_->options.credentials);
      if (!result.ok()) return handler->Unauthenticated(request, result.failure());
    }
    // Handlers must not throw; if one does anyway, the request fails and amtd stays up.
    try {
      return handler->Handle(request);
    } catch (const std::exception& e) {
      shared_->Log(std::string("HTTP handler threw: ") + e.what());
    } catch (...) {
      shared_->Log("HTTP handler threw a non-exception");
    }
    return AwsJsonError(500, "InternalFailure", "The request could not be handled.",
                        request.request_id);
  }

  int64_t Now() const {
    if (shared_->options.now) return shared_->options.now();
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  HttpResponse Fallback(const HttpRequest& request) const {
    if (request.method == "GET" && request.target == "/") {
      HttpResponse banner;
      banner.content_type = "text/plain";
      banner.body = "amt-local:";
      for (const auto& handler : shared_->handlers) {
        banner.body += " " + std::string(handler->Description()) + ";";
      }
      banner.body.back() = '\n';
      return banner;
    }
    return AwsJsonError(404, "UnknownOperationException",
                        "amt-local serves POST / with an X-Amz-Target header.", request.request_id);
  }

  // The body is over the limit: the accepting handler says so in its protocol's words, then the
  // connection ends (the rest of the body is not read).
  void RefuseBody() {
    HttpRequest request = ToHttpRequest(parser_->get(), RequestId(shared_->rng));
    request.body.clear();
    const ProtocolHandler* handler = shared_->HandlerFor(request);
    const size_t limit = shared_->options.max_body_bytes;
    Write(handler != nullptr ? handler->BodyTooLarge(request, limit)
                             : AwsJsonError(413, "SerializationException",
                                            "The request body exceeds the limit of " +
                                                std::to_string(limit) + " bytes.",
                                            request.request_id),
          /*keep_alive=*/false, /*linger=*/true);
  }

  void Write(const HttpResponse& reply, bool keep_alive, bool linger = false) {
    http::response<http::string_body> response{static_cast<http::status>(reply.status), 11};
    if (!reply.content_type.empty()) response.set(http::field::content_type, reply.content_type);
    for (const auto& [name, value] : reply.headers) response.set(name, value);
    response.body() = reply.body;
    response.keep_alive(keep_alive);
    // A handler that sets Content-Length itself answers a HEAD: the length a GET would send,
    // with no body.
    if (response.find(http::field::content_length) == response.end() || !reply.body.empty()) {
      response.prepare_payload();
    }
    response_ = std::move(response);
    stream_.expires_after(shared_->options.idle_timeout);
    http::async_write(
        stream_, response_,
        [self = shared_from_this(), keep_alive, linger](beast::error_code ec, size_t) {
          if (ec) return self->Close();
          if (linger) return self->LingeringClose();
          if (!keep_alive) return self->Close();
          self->AwaitRequest();
        });
  }

  // Ends our side and discards what the client still sends until it ends its own (or the header
  // timeout passes): closing with unread data would reset the connection, and the client could
  // lose the response it has not read yet.
  void LingeringClose() {
    Close();
    stream_.expires_after(shared_->options.header_timeout);
    Drain();
  }

  void Drain() {
    stream_.async_read_some(asio::buffer(drain_),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (!ec) self->Drain();
                            });
  }

  void Close() {
    // The slot is free before the client can see the end of the connection.
    ReleaseSlot();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  void ReleaseSlot() {
    if (released_) return;
    released_ = true;
    --shared_->open_connections;
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Shared> shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::array<char, 4096> drain_{};
  bool released_ = false;
};

class HttpServerImpl final : public HttpServer {
 public:
  HttpServerImpl(const HttpServerOptions& options,
                 std::vector<std::unique_ptr<ProtocolHandler>> handlers)
      : shared_(std::make_shared<Shared>()) {
    shared_->options = options;
    shared_->handlers = std::move(handlers);
    shared_->host_check = HostCheck::ForBinding(options.host, options.allowed_hosts);
  }
  ~HttpServerImpl() override { Stop(); }

  absl::Status Listen() {
    const std::string& host = shared_->options.host;
    const int port = shared_->options.port;
    beast::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) return absl::InvalidArgumentError("bad HTTP gateway address " + host);
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::FailedPreconditionError("cannot listen on " + host + ":" + std::to_string(port) +
                                           " (" + ec.message() + ")");
    }
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
    return absl::OkStatus();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (!thread_.joinable()) return;
    asio::post(io_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      retry_.cancel();
      io_.stop();
    });
    thread_.join();
  }

 private:
  void Accept() {
    acceptor_.async_accept(
        [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open()) return;  // closed by Stop()
    if (ec) {
      // Out of file descriptors (EMFILE, ENFILE), out of memory, a connection aborted before it
      // was taken: all pass. The pending connection stays queued, so retrying at once would spin.
      shared_->Log("HTTP accept failed (" + ec.message() + "); retrying in " +
                   std::to_string(backoff_.count()) + " ms");
      retry_.expires_after(backoff_);
      backoff_ = std::min(backoff_ * 2, kMaxAcceptBackoff);
      retry_.async_wait([this](beast::error_code wait) {
        if (!wait) Accept();
      });
      return;
    }
    backoff_ = kFirstAcceptBackoff;
    if (shared_->open_connections >= shared_->options.max_connections) {
      beast::error_code ignored;
      socket.close(ignored);  // over the cap: the client sees the connection end at once
    } else {
      std::make_shared<Session>(std::move(socket), shared_)->AwaitRequest();
    }
    Accept();
  }

  std::shared_ptr<Shared> shared_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  asio::steady_timer retry_{io_};
  milliseconds backoff_ = kFirstAcceptBackoff;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpServerOptions& options, std::vector<std::unique_ptr<ProtocolHandler>> handlers) {
  auto server = std::make_unique<HttpServerImpl>(options, std::move(handlers));
  if (absl::Status s = server->Listen(); !s.ok()) return s;
  return server;
}

}  // namespace amt::gateway
