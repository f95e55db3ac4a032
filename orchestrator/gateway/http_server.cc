#include "orchestrator/gateway/http_server.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "common/crypto.h"
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
// A streamed body (HttpResponse::body_reader) is read and written this much at a time.
constexpr size_t kBodyBlock = 64 << 10;
// How much nicer than amtd's other threads the disk pool's are (HttpServerOptions::disk_threads).
constexpr int kDiskNice = 5;
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
  std::mutex rng_mu;
  std::mt19937_64 rng{std::random_device{}()};  // guarded by rng_mu
  // The sinks of open event streams, for Stop (which runs on another thread once the server's
  // thread has ended).
  std::mutex sinks_mu;
  std::vector<std::weak_ptr<class StreamSink>> sinks;

  void Log(std::string_view message) const {
    if (options.log) options.log(message);
  }
  std::string NewRequestId() {
    std::lock_guard lock(rng_mu);
    return RequestId(rng);
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

// The request's method, target and header fields as handlers see them, without its body.
template <class Body>
HttpRequest HeadOf(const http::request<Body>& message, std::string request_id) {
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
  request.request_id = std::move(request_id);
  return request;
}

// The request as handlers see it (the body moved out of the parser's message).
HttpRequest ToHttpRequest(http::request<http::string_body>& message, std::string request_id) {
  HttpRequest request = HeadOf(message, std::move(request_id));
  request.body = std::move(message.body());
  return request;
}

// SHA-256 (hex) of a file, for the SigV4 check of a spooled body; nullopt when unreadable.
std::optional<std::string> Sha256OfFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auth::Sha256Hasher hasher;
  std::vector<char> block(kReadChunk * 4);
  ssize_t n;
  while ((n = ::read(fd, block.data(), block.size())) > 0) {
    hasher.Update(std::string_view(block.data(), static_cast<size_t>(n)));
  }
  ::close(fd);
  if (n < 0) return std::nullopt;
  return auth::HexEncode(hasher.Finish());
}

}  // namespace

HttpResponse ProtocolHandler::Unauthenticated(const HttpRequest& request,
                                              const auth::AuthFailure& failure) const {
  const auth::AwsAuthError error = auth::JsonServiceAuthError(failure);
  return AwsJsonError(error.http_status, error.code, error.message, request.request_id);
}

namespace {

class Session;

// An event stream's EventSink: Send and End post to the server's thread, where the session
// writes; Close (the stream has ended) turns both into no-ops, lets go of the connection's
// executor and runs the handler's end callback, once.
class StreamSink final : public EventSink {
 public:
  StreamSink(asio::any_io_executor executor, std::weak_ptr<Session> session)
      : executor_(std::move(executor)), session_(std::move(session)) {}

  void Send(std::string chunk) override;
  void End() override;

  void SetOnEnd(std::function<void()> on_end) {
    std::function<void()> now;
    {
      std::lock_guard lock(mu_);
      if (open_) {
        on_end_ = std::move(on_end);
        return;
      }
      now = std::move(on_end);  // ended before the handler was done: end its side at once
    }
    if (now) now();
  }

  std::shared_ptr<Session> session() const { return session_.lock(); }

  // Ends the stream for its producers; idempotent.
  void Close() {
    std::function<void()> on_end;
    {
      std::lock_guard lock(mu_);
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
  std::mutex mu_;
  bool open_ = true;
  std::function<void()> on_end_;
  asio::any_io_executor executor_;
  std::weak_ptr<Session> session_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {
    ++shared_->open_connections;
  }
  ~Session() {
    ReleaseSlot();
    RemoveSpool();  // the connection ended in the middle of a spooled body
  }

  // Waits for a request's first byte, for at most the idle timeout.
  void AwaitRequest() {
    parser_.emplace();
    // A spooled body may be bigger: which limit holds is known once the header is read (Spool);
    // Beast checks a Content-Length against the limit as the header ends.
    parser_->body_limit(shared_->options.spool_dir.empty()
                            ? shared_->options.max_body_bytes
                            : std::max<uint64_t>(shared_->options.max_body_bytes,
                                                 shared_->options.max_spooled_body_bytes));
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
    if (!parser_->is_done()) Spool();
    if (!spool_parser_.has_value() && !shared_->options.spool_dir.empty()) {
      // Not spooled: the memory limit, for a Content-Length now and a chunked body as it comes.
      if (parser_->content_length().value_or(0) > shared_->options.max_body_bytes) {
        return RefuseBody();
      }
      parser_->body_limit(shared_->options.max_body_bytes);
    }
    const bool done = spool_parser_.has_value() ? spool_parser_->is_done() : parser_->is_done();
    const beast::string_view expect = spool_parser_.has_value()
                                          ? spool_parser_->get()[http::field::expect]
                                          : parser_->get()[http::field::expect];
    if (!done && beast::iequals(expect, "100-continue")) {
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

  // When the accepting handler wants this body on disk (ProtocolHandler::SpoolsBody), it goes to
  // a new file of the spool folder as it arrives (Beast's file_body): memory stays one read
  // buffer whatever the size. Where no file can be made, the body is read into memory as any.
  void Spool() {
    const std::string& dir = shared_->options.spool_dir;
    if (dir.empty()) return;
    const HttpRequest head = HeadOf(parser_->get(), "");
    const ProtocolHandler* handler = shared_->HandlerFor(head);
    if (handler == nullptr || !handler->SpoolsBody(head)) return;
    std::string path = dir + "/body-XXXXXX";
    const int fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) {
      shared_->Log("cannot make a file in " + dir + " for a request body (" + std::strerror(errno) +
                   "); reading it into memory");
      return;
    }
    ::close(fd);
    beast::error_code ec;
    beast::file file;
    file.open(path.c_str(), beast::file_mode::write, ec);
    if (ec) {
      ::unlink(path.c_str());
      shared_->Log("cannot open " + path + " (" + ec.message() + "); reading the body into memory");
      return;
    }
    spool_path_ = std::move(path);
    spool_parser_.emplace(std::move(*parser_));
    spool_parser_->body_limit(shared_->options.max_spooled_body_bytes);
    spool_parser_->get().body().reset(std::move(file), ec);
  }

  // The spooled body's file goes (when the handler has not moved it away).
  void RemoveSpool() {
    if (spool_path_.empty()) return;
    ::unlink(spool_path_.c_str());
    spool_path_.clear();
  }

  void ReadRestOfBody() {
    stream_.expires_after(shared_->options.body_timeout);
    if (spool_parser_.has_value()) {
      return http::async_read(stream_, buffer_, *spool_parser_,
                              [self = shared_from_this()](beast::error_code ec, size_t) {
                                if (ec) return self->OnReadError(ec);
                                self->OnRequest();
                              });
    }
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->OnRequest();
                     });
  }

  void OnReadError(beast::error_code ec) {
    if (ec == http::error::body_limit) return RefuseBody();
    if (spool_parser_.has_value() && ec != http::error::end_of_stream && ec != asio::error::eof &&
        ec != beast::error::timeout) {
      shared_->Log("a request body could not be written to " + spool_path_ + ": " + ec.message());
    }
    spool_parser_.reset();
    RemoveSpool();
    // Timed out, closed, reset, or not HTTP: there is nobody, or nothing, to answer.
    Close();
  }

  void OnRequest() {
    if (spool_parser_.has_value()) {
      auto& message = spool_parser_->get();
      const bool keep_alive = message.keep_alive();
      beast::error_code ignored;
      message.body().file().close(ignored);  // written: the handler reads it by its path
      HttpRequest request = HeadOf(message, shared_->NewRequestId());
      spool_parser_.reset();
      request.body_file = spool_path_;
      struct stat st {};
      if (::stat(spool_path_.c_str(), &st) == 0) {
        request.body_file_size = static_cast<uint64_t>(st.st_size);
      }
      return Respond(std::move(request), keep_alive);
    }
    auto& message = parser_->get();
    const bool keep_alive = message.keep_alive();
    Respond(ToHttpRequest(message, shared_->NewRequestId()), keep_alive);
  }

  // Answers on this strand, or for a disk-bound handler on the disk pool (the connection waits
  // meanwhile: nothing else of it runs), then writes the answer from the strand.
  void Respond(HttpRequest request, bool keep_alive) {
    const ProtocolHandler* handler = shared_->HandlerFor(request);
    if (handler == nullptr || !handler->DiskBound() || shared_->disk_pool == nullptr) {
      const HttpResponse reply = Answer(request);
      RemoveSpool();
      return Write(reply, keep_alive);
    }
    asio::post(*shared_->disk_pool,
               [self = shared_from_this(), request = std::move(request), keep_alive]() mutable {
                 auto reply = std::make_shared<HttpResponse>(self->Answer(request));
                 asio::post(self->stream_.get_executor(), [self, reply, keep_alive] {
                   self->RemoveSpool();
                   self->Write(*reply, keep_alive);
                 });
               });
  }

  HttpResponse Answer(const HttpRequest& request) {
    if (auto refusal =
            shared_->host_check.Refusal(request.Header("host"), request.Header("origin"))) {
      return AwsJsonError(403, "AccessDeniedException", *refusal, request.request_id);
    }
    const ProtocolHandler* handler = shared_->HandlerFor(request);
    if (handler == nullptr) return Fallback(request);
    if (shared_->options.credentials != nullptr) {
      auth::SigV4Request signed_request;
      signed_request.method = request.method;
      signed_request.target = request.target;
      signed_request.headers = request.header_list;
      signed_request.body = request.body;
      signed_request.now = Now();
      if (!request.body_file.empty()) {
        // Hashed after the fact, from the disk; a body that cannot be read has no hash to match.
        signed_request.body_sha256 = Sha256OfFile(request.body_file).value_or("unreadable");
      }
      const auth::AuthResult result =
          auth::VerifySigV4(signed_request, *shared_->options.credentials);
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
    HttpRequest request = spool_parser_.has_value()
                              ? HeadOf(spool_parser_->get(), shared_->NewRequestId())
                              : HeadOf(parser_->get(), shared_->NewRequestId());
    spool_parser_.reset();
    RemoveSpool();
    const ProtocolHandler* handler = shared_->HandlerFor(request);
    // The limit that held: a body its handler spools may be bigger (Spool).
    const bool spooled =
        !shared_->options.spool_dir.empty() && handler != nullptr && handler->SpoolsBody(request);
    const size_t limit = spooled ? static_cast<size_t>(shared_->options.max_spooled_body_bytes)
                                 : shared_->options.max_body_bytes;
    Write(handler != nullptr ? handler->BodyTooLarge(request, limit)
                             : AwsJsonError(413, "SerializationException",
                                            "The request body exceeds the limit of " +
                                                std::to_string(limit) + " bytes.",
                                            request.request_id),
          /*keep_alive=*/false, /*linger=*/true);
  }

  void Write(const HttpResponse& reply, bool keep_alive, bool linger = false) {
    if (reply.events) return StartEvents(reply);
    if (reply.body_reader) return StartBody(reply, keep_alive);
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

  // A body from reply.body_reader: the header, then a block at a time, each read once the one
  // before is written. So the client's pace sets the reads (a client that does not read holds
  // one block until the idle timeout closes it), and memory is one block whatever the size.
  void StartBody(const HttpResponse& reply, bool keep_alive) {
    header_ = "HTTP/1.1 " + std::to_string(reply.status) + " " +
              std::string(http::obsolete_reason(static_cast<http::status>(reply.status))) + "\r\n";
    if (!reply.content_type.empty()) header_ += "Content-Type: " + reply.content_type + "\r\n";
    for (const auto& [name, value] : reply.headers) header_ += name + ": " + value + "\r\n";
    header_ += "Content-Length: " + std::to_string(reply.body_length) + "\r\n";
    if (!keep_alive) header_ += "Connection: close\r\n";
    header_ += "\r\n";
    body_reader_ = reply.body_reader;
    body_left_ = reply.body_length;
    stream_.expires_after(shared_->options.idle_timeout);
    asio::async_write(stream_, asio::buffer(header_),
                      [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        if (ec) return self->EndBody(/*cut=*/true, keep_alive);
                        self->WriteNextBlock(keep_alive);
                      });
  }

  void WriteNextBlock(bool keep_alive) {
    if (body_left_ == 0) return EndBody(/*cut=*/false, keep_alive);
    if (block_ == nullptr) block_ = std::make_unique<char[]>(kBodyBlock);
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kBodyBlock, body_left_));
    absl::StatusOr<size_t> read = absl::InternalError("the body's reader threw");
    try {
      read = body_reader_(block_.get(), want);
    } catch (const std::exception& e) {
      shared_->Log(std::string("HTTP body reader threw: ") + e.what());
    }
    if (!read.ok() || *read == 0 || *read > want) {
      // Nothing else can be said once the header is out: the client sees the body end short.
      shared_->Log("HTTP body cut short with " + std::to_string(body_left_) + " bytes unsent: " +
                   (read.ok() ? std::string("the source ended early")
                              : std::string(read.status().message())));
      return EndBody(/*cut=*/true, keep_alive);
    }
    body_left_ -= *read;
    stream_.expires_after(shared_->options.idle_timeout);
    asio::async_write(stream_, asio::buffer(block_.get(), *read),
                      [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        if (ec) return self->EndBody(/*cut=*/true, keep_alive);
                        self->WriteNextBlock(keep_alive);
                      });
  }

  // The body is written (or cannot be): its reader and block go (an idle connection holds
  // neither), then the next request, or the end.
  void EndBody(bool cut, bool keep_alive) {
    body_reader_ = nullptr;
    block_.reset();
    if (cut) {
      ReleaseSlot();
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream_.socket().close(ignored);
      return;
    }
    if (!keep_alive) return Close();
    AwaitRequest();
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

  // ---- server-sent events (HttpResponse::events)

 public:
  // On the server's thread, from the sink.
  void QueueChunk(std::string chunk) {
    if (events_ended_) return;
    if (!queue_.empty() && queue_.back() == chunk) return;  // a burst of one event is one
    queue_.push_back(std::move(chunk));
    if (!writing_) WriteNextChunk();
  }
  void EndAfterWrites() {
    end_requested_ = true;
    if (!writing_) FinishEvents();
  }
  // HttpServer::Stop, once the server's thread has ended: the stream ends now.
  void StopEvents() { FinishEvents(); }

 private:
  void StartEvents(const HttpResponse& reply) {
    if (shared_->event_streams.fetch_add(1) >= shared_->options.max_event_streams) {
      --shared_->event_streams;
      HttpResponse busy;
      busy.status = 503;
      busy.content_type = "text/plain";
      busy.body = "Too many event streams are open; try again later.\n";
      return Write(busy, /*keep_alive=*/false);
    }
    counted_stream_ = true;
    events_ = reply.events;
    header_ = "HTTP/1.1 " + std::to_string(reply.status) + " " +
              std::string(http::obsolete_reason(static_cast<http::status>(reply.status))) +
              "\r\nContent-Type: " +
              (reply.content_type.empty() ? "text/event-stream" : reply.content_type) +
              "\r\nCache-Control: no-cache\r\nConnection: close\r\n";
    for (const auto& [name, value] : reply.headers) header_ += name + ": " + value + "\r\n";
    header_ += "\r\n";
    writing_ = true;
    stream_.expires_after(shared_->options.idle_timeout);
    asio::async_write(stream_, asio::buffer(header_),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        if (ec) return self->FinishEvents();
                        self->OpenSink();
                      });
  }

  void OpenSink() {
    sink_ = std::make_shared<StreamSink>(stream_.get_executor(), weak_from_this());
    {
      std::lock_guard lock(shared_->sinks_mu);
      std::erase_if(shared_->sinks, [](const auto& w) { return w.expired(); });
      shared_->sinks.push_back(sink_);
    }
    // A client that closes is noticed by this read (it sends nothing else); on the raw socket,
    // so the write timeouts of the stream do not cut it.
    AwaitClientClose();
    Keepalive();
    auto events = std::move(events_);
    std::function<void()> on_end;
    try {
      on_end = events(sink_);
    } catch (const std::exception& e) {
      shared_->Log(std::string("HTTP event stream threw: ") + e.what());
      return FinishEvents();
    }
    sink_->SetOnEnd(std::move(on_end));
    if (!writing_ && queue_.empty() && end_requested_) FinishEvents();
  }

  void AwaitClientClose() {
    stream_.socket().async_read_some(asio::buffer(drain_),
                                     [self = shared_from_this()](beast::error_code ec, size_t) {
                                       if (ec) return self->FinishEvents();
                                       self->AwaitClientClose();
                                     });
  }

  void Keepalive() {
    keepalive_.expires_after(shared_->options.event_keepalive);
    keepalive_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->events_ended_) return;
      if (!self->writing_) self->QueueChunk(": keep-alive\n\n");
      self->Keepalive();
    });
  }

  void WriteNextChunk() {
    if (queue_.empty()) {
      writing_ = false;
      if (end_requested_) FinishEvents();
      return;
    }
    writing_ = true;
    chunk_ = std::move(queue_.front());
    queue_.pop_front();
    stream_.expires_after(shared_->options.idle_timeout);
    asio::async_write(stream_, asio::buffer(chunk_),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) {
                          self->writing_ = false;
                          return self->FinishEvents();
                        }
                        self->WriteNextChunk();
                      });
  }

  void FinishEvents() {
    if (events_ended_) return;
    events_ended_ = true;
    queue_.clear();
    keepalive_.cancel();
    if (sink_) sink_->Close();
    if (counted_stream_) {
      counted_stream_ = false;
      --shared_->event_streams;
    }
    ReleaseSlot();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Shared> shared_;
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

void StreamSink::Send(std::string chunk) {
  std::lock_guard lock(mu_);
  if (!open_) return;
  asio::post(executor_, [session = session_, chunk = std::move(chunk)]() mutable {
    if (auto s = session.lock()) s->QueueChunk(std::move(chunk));
  });
}

void StreamSink::End() {
  std::lock_guard lock(mu_);
  if (!open_) return;
  asio::post(executor_, [session = session_] {
    if (auto s = session.lock()) s->EndAfterWrites();
  });
}

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
      std::lock_guard lock(shared_->sinks_mu);
      sinks.swap(shared_->sinks);
    }
    for (const auto& weak : sinks) {
      const std::shared_ptr<StreamSink> sink = weak.lock();
      if (sink == nullptr) continue;
      // Nothing runs on the sessions any more: closing them here is safe.
      if (const std::shared_ptr<Session> session = sink->session()) session->StopEvents();
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
      std::make_shared<Session>(std::move(socket), shared_)->AwaitRequest();
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
