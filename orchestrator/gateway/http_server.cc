#include "orchestrator/gateway/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/http_session.h"

namespace amt::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using internal::PlainStream;
using internal::Session;
using internal::Shared;
using internal::StreamSink;
using std::chrono::milliseconds;

// How much nicer than amtd's other threads the disk pool's are (HttpServerOptions::disk_threads).
constexpr int kDiskNice = 5;
// Accept failures are retried after this, doubling up to kMaxAcceptBackoff.
constexpr milliseconds kFirstAcceptBackoff(10);
constexpr milliseconds kMaxAcceptBackoff(1000);

}  // namespace

HttpResponse ProtocolHandler::Unauthenticated(const HttpRequest& request,
                                              const auth::AuthFailure& failure) const {
  const auth::AwsAuthError error = auth::JsonServiceAuthError(failure);
  return internal::AwsJsonError(error.http_status, error.code, error.message, request.request_id);
}

namespace {

class HttpServerImpl final : public HttpServer {
 public:
  HttpServerImpl(const HttpServerOptions& options,
                 std::vector<std::unique_ptr<ProtocolHandler>> handlers)
      : shared_(std::make_shared<Shared>()) {
    shared_->options = options;
    shared_->handlers = std::move(handlers);
    shared_->host_check = HostCheck::ForBinding(options.host, options.allowed_hosts);
    shared_->loopback_only = IsLoopbackName(HostName(options.host));
  }
  ~HttpServerImpl() override { Stop(); }

  absl::Status Listen() {
    const std::string& host = shared_->options.host;
    const int port = shared_->options.port;
    beast::error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (ec) {
      // A name (localhost, this machine's name): its first address, IPv4 first, as gRPC's
      // listener takes the same --host.
      tcp::resolver resolver(io_);
      const auto results = resolver.resolve(host, "", ec);
      if (ec || results.empty()) {
        return absl::InvalidArgumentError("bad HTTP gateway address " + host + " (" +
                                          (ec ? ec.message() : "no address") + ")");
      }
      address = results.begin()->endpoint().address();
      for (const auto& result : results) {
        if (result.endpoint().address().is_v4()) {
          address = result.endpoint().address();
          break;
        }
      }
    }
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
    if (shared_->options.disk_threads > 0) {
      shared_->disk_pool =
          std::make_unique<asio::thread_pool>(static_cast<size_t>(shared_->options.disk_threads));
      // Bulk work yields the CPU to the control plane: on a busy machine a SageMaker call is
      // answered first (Linux's nice value is per thread; the latch makes each of the pool's
      // threads take one of these). Not vital: a refusal changes nothing.
      const int threads = shared_->options.disk_threads;
      auto started = std::make_shared<std::latch>(threads);
      for (int i = 0; i < threads; ++i) {
        asio::post(*shared_->disk_pool, [started] {
          (void)::setpriority(PRIO_PROCESS, 0, kDiskNice);
          started->arrive_and_wait();
        });
      }
    }
    asio::post(accept_strand_, [this] { Accept(); });
    const int threads = std::max(1, shared_->options.threads);
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
    return absl::OkStatus();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (threads_.empty()) return;
    asio::post(accept_strand_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      retry_.cancel();
      io_.stop();
    });
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    // Handlers under way finish (their answers go nowhere: the connections' context is stopped).
    if (shared_->disk_pool != nullptr) shared_->disk_pool->join();
    // Every event stream ends, for its client (the connection closes) and for its producer (its
    // end callback runs now, while what it unsubscribes from still runs).
    std::vector<std::weak_ptr<StreamSink>> sinks;
    {
      MutexLock lock(&shared_->sinks_mu);
      sinks.swap(shared_->sinks);
    }
    for (const auto& weak : sinks) {
      const std::shared_ptr<StreamSink> sink = weak.lock();
      if (sink == nullptr) continue;
      // Nothing runs on the sessions any more: closing them here is safe.
      if (const auto session = sink->session()) session->StopEvents();
      sink->Close();
    }
  }

 private:
  // Runs on accept_strand_; each connection gets a strand of its own (its handlers, timers and
  // event sink run there, one at a time).
  void Accept() {
    acceptor_.async_accept(
        asio::make_strand(io_),
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
      std::make_shared<Session<PlainStream>>(PlainStream(std::move(socket)), shared_)
          ->AwaitRequest();
    }
    Accept();
  }

  std::shared_ptr<Shared> shared_;
  asio::io_context io_;
  asio::strand<asio::io_context::executor_type> accept_strand_{asio::make_strand(io_)};
  tcp::acceptor acceptor_{accept_strand_};
  asio::steady_timer retry_{accept_strand_};
  milliseconds backoff_ = kFirstAcceptBackoff;  // on accept_strand_
  std::vector<std::thread> threads_;
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
