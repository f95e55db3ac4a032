// HttpServer as an HTTPS proxy (CONNECT): a real CA in a temporary folder, TLS clients that
// trust it (or not), a tunnel to a loopback TCP server, the refusals. Blocking clients on
// loopback; the tests wait on sockets, never sleep.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <stdlib.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "orchestrator/gateway/certificate_authority.h"
#include "orchestrator/gateway/http_server.h"
#include "tests/support/temp_dir.h"

namespace amt::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Answers every request with the Host it was addressed to and its body.
class HostEcho final : public ProtocolHandler {
 public:
  std::string_view Description() const override { return "host echo"; }
  bool Accepts(const HttpRequest& request) const override {
    return request.Header("x-amz-target") != nullptr;
  }
  HttpResponse Handle(const HttpRequest& request) const override {
    HttpResponse response;
    response.content_type = "text/plain";
    const std::string* host = request.Header("host");
    response.body =
        "host=" + (host != nullptr ? *host : std::string("-")) + " body=" + request.body;
    return response;
  }
  HttpResponse BodyTooLarge(const HttpRequest&, size_t) const override { return {}; }
};

class HttpsProxyTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = temp_.str(); }
  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
  }

  void Start(const std::string& bind = "127.0.0.1", bool with_ca = true) {
    HttpServerOptions options;
    options.host = bind;
    options.threads = 2;
    options.disk_threads = 0;
    if (with_ca) {
      auto ca = CertificateAuthority::LoadOrCreate(dir_);
      ASSERT_TRUE(ca.ok()) << ca.status();
      ca_path_ = (*ca)->certificate_path();
      options.proxy_ca = std::move(*ca);
    }
    std::vector<std::unique_ptr<ProtocolHandler>> handlers;
    handlers.push_back(std::make_unique<HostEcho>());
    auto server = HttpServer::Start(options, std::move(handlers));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  // A connection to the proxy that sent CONNECT `target`; returns the proxy's answer's header
  // (and, for a refusal, its body as far as the connection's end).
  std::string Connect(tcp::socket& socket, const std::string& target) {
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                 static_cast<unsigned short>(server_->port())));
    asio::write(socket, asio::buffer("CONNECT " + target + " HTTP/1.1\r\nHost: " + target +
                                     "\r\nUser-Agent: test\r\n\r\n"));
    std::string header;
    char byte;
    while (!header.ends_with("\r\n\r\n")) {
      socket.read_some(asio::buffer(&byte, 1));
      header.push_back(byte);
    }
    return header;
  }

  ::amt::testing::TempDir temp_{"amt-proxy-test"};
  std::string dir_;
  std::string ca_path_;
  std::unique_ptr<HttpServer> server_;
  asio::io_context io_;
};

// A TLS client over `socket` that trusts `ca_file` (none: the system's store only) and checks
// that the certificate names `host`.
std::unique_ptr<ssl::stream<tcp::socket&>> Tls(tcp::socket& socket, ssl::context& context,
                                               const std::string& ca_file,
                                               const std::string& host) {
  context.set_verify_mode(ssl::verify_peer);
  if (ca_file.empty()) {
    context.set_default_verify_paths();
  } else {
    context.load_verify_file(ca_file);
  }
  auto stream = std::make_unique<ssl::stream<tcp::socket&>>(socket, context);
  stream->set_verify_callback(ssl::host_name_verification(host));
  SSL_set_tlsext_host_name(stream->native_handle(), host.c_str());
  return stream;
}

TEST_F(HttpsProxyTest, AnAwsHostIsServedByAmtdOverTlsWithACertificateOfItsCa) {
  Start();
  tcp::socket socket(io_);
  const std::string host = "sts.us-east-1.amazonaws.com";
  EXPECT_THAT(Connect(socket, host + ":443"), StartsWith("HTTP/1.1 200 "));
  ssl::context context(ssl::context::tls_client);
  auto tls = Tls(socket, context, ca_path_, host);
  tls->handshake(ssl::stream_base::client);
  // Two requests on the one TLS connection (keep-alive), both the handler's, Host check aside.
  for (const std::string body : {"first", "second"}) {
    http::request<http::string_body> request{http::verb::post, "/", 11};
    request.set(http::field::host, host);
    request.set("X-Amz-Target", "Echo.Call");
    request.body() = body;
    request.prepare_payload();
    http::write(*tls, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(*tls, buffer, response);
    EXPECT_EQ(response.result_int(), 200);
    EXPECT_EQ(response.body(), "host=" + host + " body=" + body);
  }
}

TEST_F(HttpsProxyTest, AClientThatDoesNotTrustTheCaFailsItsHandshake) {
  Start();
  tcp::socket socket(io_);
  EXPECT_THAT(Connect(socket, "iam.amazonaws.com:443"), StartsWith("HTTP/1.1 200 "));
  ssl::context context(ssl::context::tls_client);
  auto tls = Tls(socket, context, /*ca_file=*/"", "iam.amazonaws.com");
  beast::error_code ec;
  tls->handshake(ssl::stream_base::client, ec);
  EXPECT_TRUE(ec) << "the handshake passed without AWS_CA_BUNDLE";
}

TEST_F(HttpsProxyTest, TheCertificateIsTheRequestedHostsOnly) {
  Start();
  tcp::socket socket(io_);
  EXPECT_THAT(Connect(socket, "logs.us-east-1.amazonaws.com:443"), StartsWith("HTTP/1.1 200 "));
  ssl::context context(ssl::context::tls_client);
  auto tls = Tls(socket, context, ca_path_, "sts.us-east-1.amazonaws.com");
  beast::error_code ec;
  tls->handshake(ssl::stream_base::client, ec);
  EXPECT_TRUE(ec);
}

// A TCP server on loopback for one connection: answers "pong:<what it read>" to the first bytes,
// then echoes the end of the stream with its own.
class Upstream {
 public:
  Upstream() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    thread_ = std::thread([this] {
      tcp::socket socket(io_);
      acceptor_.accept(socket);
      char data[64];
      beast::error_code ec;
      const size_t n = socket.read_some(asio::buffer(data), ec);
      if (ec) return;
      asio::write(socket, asio::buffer("pong:" + std::string(data, n)), ec);
      while (!ec) socket.read_some(asio::buffer(data), ec);  // until the client's end
      socket.shutdown(tcp::socket::shutdown_send, ec);
    });
  }
  ~Upstream() { thread_.join(); }
  int port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

TEST_F(HttpsProxyTest, AnotherHostIsTunnelledUntouchedOnLoopback) {
  Start();
  Upstream upstream;
  tcp::socket socket(io_);
  EXPECT_THAT(Connect(socket, "127.0.0.1:" + std::to_string(upstream.port())),
              StartsWith("HTTP/1.1 200 "));
  asio::write(socket, asio::buffer(std::string("ping")));
  std::string reply(9, '\0');
  asio::read(socket, asio::buffer(reply));
  EXPECT_EQ(reply, "pong:ping");
  socket.shutdown(tcp::socket::shutdown_send);
  char byte;
  beast::error_code ec;
  socket.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::eof);  // the upstream's end, passed on
}

TEST_F(HttpsProxyTest, AnUnreachableHostIsABadGateway) {
  Start();
  // A port nothing listens on: bound, then closed.
  int port;
  {
    tcp::acceptor probe(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }
  tcp::socket socket(io_);
  EXPECT_THAT(Connect(socket, "127.0.0.1:" + std::to_string(port)), StartsWith("HTTP/1.1 502 "));
}

TEST_F(HttpsProxyTest, BeyondLoopbackOnlyAwsHostsAreServed) {
  Start("0.0.0.0");
  Upstream upstream;
  {
    tcp::socket socket(io_);
    const std::string header = Connect(socket, "127.0.0.1:" + std::to_string(upstream.port()));
    EXPECT_THAT(header, StartsWith("HTTP/1.1 403 "));
  }
  {
    tcp::socket socket(io_);
    EXPECT_THAT(Connect(socket, "sts.amazonaws.com:443"), StartsWith("HTTP/1.1 200 "));
  }
  // The upstream's thread waits for a connection the proxy never made: one, to end it.
  tcp::socket unblock(io_);
  unblock.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                static_cast<unsigned short>(upstream.port())));
  unblock.close();
}

TEST_F(HttpsProxyTest, WithoutACaAnAwsHostIsNotImplemented) {
  Start("127.0.0.1", /*with_ca=*/false);
  tcp::socket socket(io_);
  EXPECT_THAT(Connect(socket, "sts.amazonaws.com:443"), StartsWith("HTTP/1.1 501 "));
}

TEST_F(HttpsProxyTest, ATargetThatIsNoAuthorityIsABadRequest) {
  Start();
  tcp::socket socket(io_);
  EXPECT_THAT(Connect(socket, "sts.amazonaws.com"), StartsWith("HTTP/1.1 400 "));
}

}  // namespace
}  // namespace amt::gateway
