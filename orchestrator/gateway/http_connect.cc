// The HTTPS proxy's CONNECT (http_session.h StartConnect): a TLS Session for an AWS host, a
// Tunnel for another, or a refusal.
#include <array>
#include <memory>
#include <string>
#include <utility>

#include "orchestrator/gateway/connect_target.h"
#include "orchestrator/gateway/http_session.h"

namespace amt::gateway::internal {
namespace {

constexpr std::string_view kEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";
constexpr size_t kTunnelBlock = 16 << 10;

// Writes a short answer to a CONNECT (a refusal, or the 200 before the tunnel), then calls
// `then` with the error of the write.
template <class Then>
void WriteText(std::shared_ptr<PlainStream> stream, std::string text, Then then) {
  auto owned = std::make_shared<std::string>(std::move(text));
  asio::async_write(
      *stream, asio::buffer(*owned),
      [stream, owned, then = std::move(then)](beast::error_code ec, size_t) mutable { then(ec); });
}

std::string Refusal(int status, std::string_view reason, std::string_view message) {
  const std::string body = std::string(message) + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
         "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

void Refuse(PlainStream stream, int status, std::string_view reason, std::string_view message) {
  auto owned = std::make_shared<PlainStream>(std::move(stream));
  owned->expires_after(std::chrono::seconds(10));
  WriteText(owned, Refusal(status, reason, message), [owned](beast::error_code) {
    beast::error_code ignored;
    owned->socket().shutdown(tcp::socket::shutdown_send, ignored);
  });
}

// A CONNECT to a host that is not AWS's: bytes pass both ways untouched until both sides have
// ended theirs (each end is passed on as a half-close) or either fails. It holds one of the
// server's connections while it lives. No timeout: a download may take long; the client ends it.
class Tunnel : public std::enable_shared_from_this<Tunnel> {
 public:
  Tunnel(tcp::socket client, std::string already_read, std::shared_ptr<Shared> shared)
      : client_(std::move(client)),
        upstream_(client_.get_executor()),
        resolver_(client_.get_executor()),
        pending_(std::move(already_read)),
        shared_(std::move(shared)) {
    ++shared_->open_connections;
  }
  ~Tunnel() { --shared_->open_connections; }

  void Start(const ConnectTarget& target) {
    resolver_.async_resolve(
        target.host, std::to_string(target.port),
        [self = shared_from_this(), host = target.host](beast::error_code ec,
                                                        tcp::resolver::results_type results) {
          if (ec) return self->Fail("cannot resolve " + host + ": " + ec.message());
          asio::async_connect(
              self->upstream_, results, [self, host](beast::error_code ec, const tcp::endpoint&) {
                if (ec) return self->Fail("cannot connect to " + host + ": " + ec.message());
                self->Established();
              });
        });
  }

 private:
  void Fail(const std::string& message) {
    auto text = std::make_shared<std::string>(Refusal(502, "Bad Gateway", message));
    asio::async_write(client_, asio::buffer(*text),
                      [self = shared_from_this(), text](beast::error_code, size_t) {
                        beast::error_code ignored;
                        self->client_.shutdown(tcp::socket::shutdown_send, ignored);
                      });
  }

  void Established() {
    asio::async_write(client_, asio::buffer(kEstablished.data(), kEstablished.size()),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return self->CloseBoth();
                        // What the client sent before the 200 (its TLS hello, eagerly) first.
                        if (self->pending_.empty()) return self->Pump();
                        asio::async_write(self->upstream_, asio::buffer(self->pending_),
                                          [self](beast::error_code ec, size_t) {
                                            self->pending_.clear();
                                            if (ec) return self->CloseBoth();
                                            self->Pump();
                                          });
                      });
  }

  void Pump() {
    Copy(client_, upstream_, to_upstream_);
    Copy(upstream_, client_, to_client_);
  }

  void Copy(tcp::socket& from, tcp::socket& to, std::array<char, kTunnelBlock>& block) {
    from.async_read_some(asio::buffer(block), [self = shared_from_this(), &from, &to, &block](
                                                  beast::error_code ec, size_t n) {
      if (ec == asio::error::eof) {
        beast::error_code ignored;
        to.shutdown(tcp::socket::shutdown_send, ignored);  // the end passes on
        return;
      }
      if (ec) return self->CloseBoth();
      asio::async_write(to, asio::buffer(block.data(), n),
                        [self, &from, &to, &block](beast::error_code ec, size_t) {
                          if (ec) return self->CloseBoth();
                          self->Copy(from, to, block);
                        });
    });
  }

  void CloseBoth() {
    beast::error_code ignored;
    client_.close(ignored);
    upstream_.close(ignored);
  }

  tcp::socket client_;
  tcp::socket upstream_;
  tcp::resolver resolver_;
  std::string pending_;
  std::shared_ptr<Shared> shared_;
  std::array<char, kTunnelBlock> to_upstream_{};
  std::array<char, kTunnelBlock> to_client_{};
};

}  // namespace

void StartConnect(PlainStream stream, beast::flat_buffer buffer, const HttpRequest& request,
                  std::shared_ptr<Shared> shared) {
  const std::optional<ConnectTarget> target = ParseConnectTarget(request.target);
  if (!target.has_value()) {
    return Refuse(std::move(stream), 400, "Bad Request",
                  "CONNECT needs a target of the form host:port, not '" + request.target + "'.");
  }
  std::string already_read = beast::buffers_to_string(buffer.data());
  switch (RouteConnect(*target, shared->loopback_only)) {
    case ConnectRoute::kRefuse:
      return Refuse(std::move(stream), 403, "Forbidden",
                    "amtd listens beyond loopback, so its proxy serves AWS hosts only, not " +
                        target->host + ".");
    case ConnectRoute::kTunnel: {
      stream.expires_never();
      auto tunnel = std::make_shared<Tunnel>(stream.release_socket(), std::move(already_read),
                                             std::move(shared));
      return tunnel->Start(*target);
    }
    case ConnectRoute::kTerminate:
      break;
  }
  if (shared->options.proxy_ca == nullptr) {
    return Refuse(std::move(stream), 501, "Not Implemented",
                  "this amtd has no CA for its HTTPS proxy (amtd --proxy-ca).");
  }
  absl::StatusOr<std::shared_ptr<asio::ssl::context>> context =
      shared->options.proxy_ca->ServerContext(target->host);
  if (!context.ok()) {
    shared->Log("HTTPS proxy: no certificate for " + target->host + ": " +
                std::string(context.status().message()));
    return Refuse(std::move(stream), 502, "Bad Gateway", std::string(context.status().message()));
  }
  auto owned = std::make_shared<PlainStream>(std::move(stream));
  owned->expires_after(shared->options.idle_timeout);
  WriteText(owned, std::string(kEstablished),
            [owned, shared, host = target->host, context = *context,
             already_read = std::move(already_read)](beast::error_code ec) mutable {
              if (ec) return;
              TlsStream tls(std::move(*owned), *context);
              auto session = std::make_shared<Session<TlsStream>>(std::move(tls), std::move(shared),
                                                                  std::move(host), context);
              session->Handshake(std::move(already_read));
            });
}

}  // namespace amt::gateway::internal
