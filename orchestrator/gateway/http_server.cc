#include "orchestrator/gateway/http_server.h"

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <random>
#include <thread>
#include <utility>

namespace amt::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxBodyBytes = 16 << 20;
constexpr char kAwsJson[] = "application/x-amz-json-1.1";

// A random (version 4) UUID, as SageMaker's x-amzn-requestid.
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

struct Shared {
  HttpServer::Handler handler;
  std::mt19937_64 rng{std::random_device{}()};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {}

  void Read() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      return Write(Reply(http::status::payload_too_large, "SerializationException",
                         "The request body exceeds 16 MiB."),
                   false);
    }
    if (ec) return Close();  // end of stream, reset or malformed HTTP: nothing to answer
    const http::request<http::string_body>& request = parser_->get();
    const bool keep_alive = request.keep_alive();
    const auto target = request.find("X-Amz-Target");
    if (request.method() == http::verb::post && target != request.end()) {
      const HttpReply reply = shared_->handler(
          std::string_view(target->value().data(), target->value().size()), request.body());
      http::response<http::string_body> response{static_cast<http::status>(reply.status), 11};
      response.set(http::field::content_type, kAwsJson);
      response.body() = reply.body;
      return Write(std::move(response), keep_alive);
    }
    if (request.method() == http::verb::get && request.target() == "/") {
      http::response<http::string_body> response{http::status::ok, 11};
      response.set(http::field::content_type, "text/plain");
      response.body() =
          "amt-local: SageMaker's AWS JSON 1.1 API (POST / with X-Amz-Target: SageMaker.<Op>)\n";
      return Write(std::move(response), keep_alive);
    }
    Write(Reply(http::status::not_found, "UnknownOperationException",
                "amt-local serves POST / with an X-Amz-Target header."),
          keep_alive);
  }

  http::response<http::string_body> Reply(http::status status, std::string_view name,
                                          std::string_view message) {
    http::response<http::string_body> response{status, 11};
    response.set(http::field::content_type, kAwsJson);
    response.body() = AwsErrorBody(name, message);
    return response;
  }

  void Write(http::response<http::string_body> response, bool keep_alive) {
    response.set("x-amzn-RequestId", RequestId(shared_->rng));
    response.keep_alive(keep_alive);
    response.prepare_payload();
    response_ = std::move(response);
    http::async_write(stream_, response_,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        if (ec || !keep_alive) return self->Close();
                        self->Read();
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Shared> shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

class HttpServerImpl final : public HttpServer {
 public:
  explicit HttpServerImpl(Handler handler) : shared_(std::make_shared<Shared>()) {
    shared_->handler = std::move(handler);
  }
  ~HttpServerImpl() override { Stop(); }

  absl::Status Listen(const std::string& host, int port) {
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
      io_.stop();
    });
    thread_.join();
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) return;  // closed by Stop()
      std::make_shared<Session>(std::move(socket), shared_)->Read();
      Accept();
    });
  }

  std::shared_ptr<Shared> shared_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
  int port_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& host, int port,
                                                              Handler handler) {
  auto server = std::make_unique<HttpServerImpl>(std::move(handler));
  if (absl::Status s = server->Listen(host, port); !s.ok()) return s;
  return server;
}

}  // namespace amt::gateway
