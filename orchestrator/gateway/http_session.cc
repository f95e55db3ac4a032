#include "orchestrator/gateway/http_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <type_traits>

#include "common/crypto.h"
#include "orchestrator/auth/sigv4.h"
#include "orchestrator/gateway/aws_json.h"

namespace amt::gateway::internal {
namespace {

constexpr size_t kReadChunk = 16 << 10;
// A streamed body (HttpResponse::body_reader) is read and written this much at a time.
constexpr size_t kBodyBlock = 64 << 10;
constexpr char kAwsJson[] = "application/x-amz-json-1.1";

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

std::string Shared::NewRequestId() {
  MutexLock lock(&rng_mu);
  return RequestId(rng);
}

HttpResponse AwsJsonError(int status, std::string_view name, std::string_view message,
                          const std::string& request_id) {
  HttpResponse response;
  response.status = status;
  response.content_type = kAwsJson;
  response.body = AwsErrorBody(name, message);
  response.headers.emplace_back("x-amzn-RequestId", request_id);
  return response;
}

template <class Stream>
Session<Stream>::Session(Stream stream, std::shared_ptr<Shared> shared)
    : stream_(std::move(stream)), shared_(std::move(shared)) {
  ++shared_->open_connections;
}

template <class Stream>
Session<Stream>::Session(Stream stream, std::shared_ptr<Shared> shared, std::string tunnel_host,
                         std::shared_ptr<asio::ssl::context> tls)
    : tls_(std::move(tls)),
      stream_(std::move(stream)),
      shared_(std::move(shared)),
      tunnel_host_(std::move(tunnel_host)) {
  ++shared_->open_connections;
}

template <class Stream>
Session<Stream>::~Session() {
  ReleaseSlot();
  RemoveSpool();  // the connection ended in the middle of a spooled body
}

template <class Stream>
void Session<Stream>::AwaitRequest() {
  parser_.emplace();
  // A spooled body may be bigger: which limit holds is known once the header is read (Spool);
  // Beast checks a Content-Length against the limit as the header ends.
  parser_->body_limit(shared_->options.spool_dir.empty()
                          ? shared_->options.max_body_bytes
                          : std::max<uint64_t>(shared_->options.max_body_bytes,
                                               shared_->options.max_spooled_body_bytes));
  if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is already here
  Tcp().expires_after(shared_->options.idle_timeout);
  stream_.async_read_some(buffer_.prepare(kReadChunk),
                          [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                            if (ec) return self->Close();  // idle, closed by the client, reset
                            self->buffer_.commit(n);
                            self->ReadHeader();
                          });
}

template <class Stream>
void Session<Stream>::Handshake(std::string already_read) {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    Tcp().expires_after(shared_->options.header_timeout);
    auto bytes = std::make_shared<std::string>(std::move(already_read));
    stream_.async_handshake(asio::ssl::stream_base::server, asio::buffer(*bytes),
                            [self = this->shared_from_this(), bytes](beast::error_code ec, size_t) {
                              // A client that does not trust amtd's CA ends here (its alert):
                              // AWS_CA_BUNDLE is not set, or names another bundle.
                              if (ec) return self->Close();
                              self->AwaitRequest();
                            });
  } else {
    (void)already_read;
    AwaitRequest();
  }
}

template <class Stream>
void Session<Stream>::ReadHeader() {
  Tcp().expires_after(shared_->options.header_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = this->shared_from_this()](beast::error_code ec, size_t) {
                            if (ec) return self->OnReadError(ec);
                            self->ReadBody();
                          });
}

template <class Stream>
void Session<Stream>::ReadBody() {
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
    Tcp().expires_after(shared_->options.idle_timeout);
    return asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                             [self = this->shared_from_this()](beast::error_code ec, size_t) {
                               if (ec) return self->Close();
                               self->ReadRestOfBody();
                             });
  }
  ReadRestOfBody();
}

template <class Stream>
void Session<Stream>::Spool() {
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

template <class Stream>
void Session<Stream>::RemoveSpool() {
  if (spool_path_.empty()) return;
  ::unlink(spool_path_.c_str());
  spool_path_.clear();
}

template <class Stream>
void Session<Stream>::ReadRestOfBody() {
  Tcp().expires_after(shared_->options.body_timeout);
  if (spool_parser_.has_value()) {
    return http::async_read(stream_, buffer_, *spool_parser_,
                            [self = this->shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->OnReadError(ec);
                              self->OnRequest();
                            });
  }
  http::async_read(stream_, buffer_, *parser_,
                   [self = this->shared_from_this()](beast::error_code ec, size_t) {
                     if (ec) return self->OnReadError(ec);
                     self->OnRequest();
                   });
}

template <class Stream>
void Session<Stream>::OnReadError(beast::error_code ec) {
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

template <class Stream>
void Session<Stream>::OnRequest() {
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
  if constexpr (std::is_same_v<Stream, PlainStream>) {
    if (message.method() == http::verb::connect) {
      return Connect(ToHttpRequest(message, shared_->NewRequestId()));
    }
  }
  Respond(ToHttpRequest(message, shared_->NewRequestId()), keep_alive);
}

template <class Stream>
void Session<Stream>::Connect(const HttpRequest& request) {
  if constexpr (std::is_same_v<Stream, PlainStream>) {
    ReleaseSlot();  // the connection is StartConnect's now, and counted there
    StartConnect(std::move(stream_), std::move(buffer_), request, shared_);
  } else {
    (void)request;
  }
}

template <class Stream>
void Session<Stream>::Respond(HttpRequest request, bool keep_alive) {
  const ProtocolHandler* handler = shared_->HandlerFor(request);
  if (handler == nullptr || !handler->DiskBound() || shared_->disk_pool == nullptr) {
    const HttpResponse reply = Answer(request);
    RemoveSpool();
    return Write(reply, keep_alive);
  }
  asio::post(*shared_->disk_pool,
             [self = this->shared_from_this(), request = std::move(request), keep_alive]() mutable {
               auto reply = std::make_shared<HttpResponse>(self->Answer(request));
               asio::post(self->stream_.get_executor(), [self, reply, keep_alive] {
                 self->RemoveSpool();
                 self->Write(*reply, keep_alive);
               });
             });
}

template <class Stream>
HttpResponse Session<Stream>::Answer(const HttpRequest& request) {
  if (tunnel_host_.empty()) {
    if (auto refusal =
            shared_->host_check.Refusal(request.Header("host"), request.Header("origin"))) {
      return AwsJsonError(403, "AccessDeniedException", *refusal, request.request_id);
    }
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

template <class Stream>
int64_t Session<Stream>::Now() const {
  if (shared_->options.now) return shared_->options.now();
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <class Stream>
HttpResponse Session<Stream>::Fallback(const HttpRequest& request) const {
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

template <class Stream>
void Session<Stream>::RefuseBody() {
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

template <class Stream>
void Session<Stream>::Write(const HttpResponse& reply, bool keep_alive, bool linger) {
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
  Tcp().expires_after(shared_->options.idle_timeout);
  http::async_write(
      stream_, response_,
      [self = this->shared_from_this(), keep_alive, linger](beast::error_code ec, size_t) {
        if (ec) return self->Close();
        if (linger) return self->LingeringClose();
        if (!keep_alive) return self->Close();
        self->AwaitRequest();
      });
}

template <class Stream>
void Session<Stream>::StartBody(const HttpResponse& reply, bool keep_alive) {
  header_ = "HTTP/1.1 " + std::to_string(reply.status) + " " +
            std::string(http::obsolete_reason(static_cast<http::status>(reply.status))) + "\r\n";
  if (!reply.content_type.empty()) header_ += "Content-Type: " + reply.content_type + "\r\n";
  for (const auto& [name, value] : reply.headers) header_ += name + ": " + value + "\r\n";
  header_ += "Content-Length: " + std::to_string(reply.body_length) + "\r\n";
  if (!keep_alive) header_ += "Connection: close\r\n";
  header_ += "\r\n";
  body_reader_ = reply.body_reader;
  body_left_ = reply.body_length;
  Tcp().expires_after(shared_->options.idle_timeout);
  asio::async_write(stream_, asio::buffer(header_),
                    [self = this->shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                      if (ec) return self->EndBody(/*cut=*/true, keep_alive);
                      self->WriteNextBlock(keep_alive);
                    });
}

template <class Stream>
void Session<Stream>::WriteNextBlock(bool keep_alive) {
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
    shared_->Log(
        "HTTP body cut short with " + std::to_string(body_left_) + " bytes unsent: " +
        (read.ok() ? std::string("the source ended early") : std::string(read.status().message())));
    return EndBody(/*cut=*/true, keep_alive);
  }
  body_left_ -= *read;
  Tcp().expires_after(shared_->options.idle_timeout);
  asio::async_write(stream_, asio::buffer(block_.get(), *read),
                    [self = this->shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                      if (ec) return self->EndBody(/*cut=*/true, keep_alive);
                      self->WriteNextBlock(keep_alive);
                    });
}

template <class Stream>
void Session<Stream>::EndBody(bool cut, bool keep_alive) {
  body_reader_ = nullptr;
  block_.reset();
  if (cut) {
    ReleaseSlot();
    beast::error_code ignored;
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Tcp().socket().close(ignored);
    return;
  }
  if (!keep_alive) return Close();
  AwaitRequest();
}

template <class Stream>
void Session<Stream>::LingeringClose() {
  Close();
  Tcp().expires_after(shared_->options.header_timeout);
  Drain();
}

template <class Stream>
void Session<Stream>::Drain() {
  stream_.async_read_some(asio::buffer(drain_),
                          [self = this->shared_from_this()](beast::error_code ec, size_t) {
                            if (!ec) self->Drain();
                          });
}

template <class Stream>
void Session<Stream>::Close() {
  // The slot is free before the client can see the end of the connection.
  ReleaseSlot();
  beast::error_code ignored;
  Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
}

template <class Stream>
void Session<Stream>::ReleaseSlot() {
  if (released_) return;
  released_ = true;
  --shared_->open_connections;
}

template class Session<PlainStream>;
template class Session<TlsStream>;

}  // namespace amt::gateway::internal
