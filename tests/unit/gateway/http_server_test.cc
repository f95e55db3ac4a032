// HttpServer with fake protocol handlers and a blocking client on loopback. Timeouts are short and
// configured; the tests wait on the socket (a reply, the end of the connection), never sleep.
#include "orchestrator/gateway/http_server.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/temp_dir.h"

namespace amt::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Accepts requests whose X-Amz-Target starts with `prefix`; answers "<name>: <body>".
class EchoHandler final : public ProtocolHandler {
 public:
  EchoHandler(std::string name, std::string prefix)
      : name_(std::move(name)), prefix_(std::move(prefix)) {}
  std::string_view Description() const override { return name_; }
  bool Accepts(const HttpRequest& request) const override {
    const std::string* target = request.Header("x-amz-target");
    return target != nullptr && target->starts_with(prefix_);
  }
  HttpResponse Handle(const HttpRequest& request) const override {
    if (request.body == "throw") throw std::runtime_error("handler bug");
    HttpResponse response;
    if (request.method == "HEAD") {  // the length a GET would have, and no body
      response.headers.emplace_back("Content-Length", "42");
      return response;
    }
    response.content_type = "text/plain";
    response.body = name_ + ": " + request.body;
    response.headers.emplace_back("x-request-id", request.request_id);
    return response;
  }
  HttpResponse BodyTooLarge(const HttpRequest&, size_t limit) const override {
    HttpResponse response;
    response.status = 413;
    response.body = name_ + " refuses more than " + std::to_string(limit) + " bytes";
    return response;
  }

 private:
  std::string name_;
  std::string prefix_;
};

struct Reply {
  int status = 0;
  std::string body;
  std::string request_id;
};

// One blocking HTTP/1.1 connection.
class Client {
 public:
  explicit Client(int port) : socket_(io_) {
    socket_.connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  }
  Reply Send(const std::string& target, const std::string& body, bool close = false,
             http::verb verb = http::verb::post, const std::string& host = "localhost",
             const std::string& origin = "") {
    http::request<http::string_body> request{verb, "/", 11};
    request.set(http::field::host, host);
    if (!origin.empty()) request.set(http::field::origin, origin);
    if (!target.empty()) request.set("X-Amz-Target", target);
    if (close) request.keep_alive(false);
    request.body() = body;
    request.prepare_payload();
    http::write(socket_, request);
    return Read();
  }
  Reply Read() {
    http::response<http::string_body> response;
    http::read(socket_, buffer_, response);
    return {static_cast<int>(response.result_int()), response.body(),
            std::string(response["x-request-id"])};
  }
  void WriteRaw(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }
  // The bytes of one response header (up to its empty line), read as they come.
  std::string ReadHeaderRaw() {
    std::string header;
    char byte;
    while (!header.ends_with("\r\n\r\n")) {
      socket_.read_some(asio::buffer(&byte, 1));
      header.push_back(byte);
    }
    return header;
  }
  // Reads until what was read (since the last call) ends with `end`; returns it.
  std::string ReadUntil(const std::string& end) {
    std::string out;
    char byte;
    while (!out.ends_with(end)) {
      socket_.read_some(asio::buffer(&byte, 1));
      out.push_back(byte);
    }
    return out;
  }
  // Everything until the server ends the connection.
  std::string ReadToEnd() {
    std::string out;
    beast::error_code ec;
    char byte;
    for (;;) {
      const size_t n = socket_.read_some(asio::buffer(&byte, 1), ec);
      if (ec) break;
      if (n == 1) out.push_back(byte);
    }
    return out;
  }
  void Close() { socket_.close(); }
  // Blocks until the server ends the connection; true on a clean end of stream (or a reset).
  bool WaitForEnd() {
    beast::error_code ec;
    char byte;
    while (!ec) socket_.read_some(asio::buffer(&byte, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

// Answers X-Amz-Target "Events." with a stream of server-sent events: the test thread feeds it
// through the sinks it hands out (Sinks()), and learns when a stream ended (Ended()).
// "Block.": waits until the test releases it, then answers "released".
class BlockingHandler final : public ProtocolHandler {
 public:
  std::string_view Description() const override { return "block"; }
  bool Accepts(const HttpRequest& request) const override {
    const std::string* target = request.Header("x-amz-target");
    return target != nullptr && target->starts_with("Block.");
  }
  HttpResponse Handle(const HttpRequest&) const override {
    entered_.set_value();
    release_.wait();
    HttpResponse response;
    response.body = "released";
    return response;
  }
  HttpResponse BodyTooLarge(const HttpRequest&, size_t) const override { return {}; }
  void WaitEntered() const { entered_future_.wait(); }
  void Release() { release_promise_.set_value(); }

 private:
  mutable std::promise<void> entered_;
  std::shared_future<void> entered_future_ = entered_.get_future().share();
  std::promise<void> release_promise_;
  std::shared_future<void> release_ = release_promise_.get_future().share();
};

// "Big.<n>": a body of n bytes ('a' + i % 26) from a body_reader, `reads` counting its calls.
class BigBodyHandler final : public ProtocolHandler {
 public:
  std::string_view Description() const override { return "big"; }
  bool Accepts(const HttpRequest& request) const override {
    const std::string* target = request.Header("x-amz-target");
    return target != nullptr && target->starts_with("Big.");
  }
  HttpResponse Handle(const HttpRequest& request) const override {
    const uint64_t size = std::stoull(request.Header("x-amz-target")->substr(4));
    HttpResponse response;
    response.content_type = "application/octet-stream";
    response.body_length = size;
    auto sent = std::make_shared<uint64_t>(0);
    auto reads = reads_;
    response.body_reader = [sent, size, reads](char* buffer,
                                               size_t capacity) -> absl::StatusOr<size_t> {
      ++*reads;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(capacity, size - *sent));
      for (size_t i = 0; i < n; ++i) buffer[i] = static_cast<char>('a' + (*sent + i) % 26);
      *sent += n;
      return n;
    };
    return response;
  }
  HttpResponse BodyTooLarge(const HttpRequest&, size_t) const override { return {}; }
  int reads() const { return *reads_; }

 private:
  std::shared_ptr<std::atomic<int>> reads_ = std::make_shared<std::atomic<int>>(0);
};

// "Spool.": its bodies go to a file; answers "<size> <content> <body held in memory>".
class SpoolHandler final : public ProtocolHandler {
 public:
  std::string_view Description() const override { return "spool"; }
  bool Accepts(const HttpRequest& request) const override {
    const std::string* target = request.Header("x-amz-target");
    return target != nullptr && target->starts_with("Spool.");
  }
  bool SpoolsBody(const HttpRequest&) const override { return true; }
  HttpResponse Handle(const HttpRequest& request) const override {
    std::lock_guard lock(mu_);
    files_.push_back(request.body_file);
    std::string content;
    if (FILE* f = std::fopen(request.body_file.c_str(), "rb")) {
      char buffer[4096];
      size_t n;
      while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) content.append(buffer, n);
      std::fclose(f);
    }
    HttpResponse response;
    response.body = std::to_string(request.body_file_size) + " " + content + " " +
                    (request.body.empty() ? "none" : "body");
    return response;
  }
  HttpResponse BodyTooLarge(const HttpRequest&, size_t limit) const override {
    HttpResponse response;
    response.status = 413;
    response.body = "spool refuses more than " + std::to_string(limit) + " bytes";
    return response;
  }
  std::vector<std::string> files() const {
    std::lock_guard lock(mu_);
    return files_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::string> files_;
};

class EventHandler final : public ProtocolHandler {
 public:
  std::string_view Description() const override { return "events"; }
  bool Accepts(const HttpRequest& request) const override {
    const std::string* target = request.Header("x-amz-target");
    return target != nullptr && target->starts_with("Events.");
  }
  HttpResponse Handle(const HttpRequest&) const override {
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.headers.emplace_back("X-Stream", "yes");
    response.events = [state = state_](std::shared_ptr<EventSink> sink) -> std::function<void()> {
      std::lock_guard lock(state->mu);
      state->sinks.push_back(sink);
      state->cv.notify_all();
      return [state] {
        std::lock_guard lock(state->mu);
        ++state->ended;
        state->cv.notify_all();
      };
    };
    return response;
  }
  HttpResponse BodyTooLarge(const HttpRequest&, size_t) const override { return {}; }

  // Waits for the n-th stream's sink (1-based).
  std::shared_ptr<EventSink> Sink(size_t n) const {
    std::unique_lock lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->sinks.size() >= n; });
    return state_->sinks[n - 1];
  }
  // Waits until `n` streams have ended.
  void WaitEnded(int n) const {
    std::unique_lock lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->ended >= n; });
  }
  int ended() const {
    std::lock_guard lock(state_->mu);
    return state_->ended;
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::shared_ptr<EventSink>> sinks;
    int ended = 0;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

const char kEventRequest[] =
    "GET / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: Events.Watch\r\n\r\n";

class HttpServerTest : public ::testing::Test {
 protected:
  // With `more`, also the blocking, big-body and spooling handlers.
  void Start(HttpServerOptions options = {}, bool more = false) {
    std::vector<std::unique_ptr<ProtocolHandler>> handlers;
    auto events = std::make_unique<EventHandler>();
    events_ = events.get();
    handlers.push_back(std::move(events));
    if (more) AddMoreHandlers(handlers);
    handlers.push_back(std::make_unique<EchoHandler>("first", "First."));
    handlers.push_back(std::make_unique<EchoHandler>("second", "Second."));
    handlers.push_back(std::make_unique<EchoHandler>("shadowed", "First."));
    auto server = HttpServer::Start(options, std::move(handlers));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  void AddMoreHandlers(std::vector<std::unique_ptr<ProtocolHandler>>& handlers) {
    auto block = std::make_unique<BlockingHandler>();
    block_ = block.get();
    handlers.push_back(std::move(block));
    auto big = std::make_unique<BigBodyHandler>();
    big_ = big.get();
    handlers.push_back(std::move(big));
    auto spool = std::make_unique<SpoolHandler>();
    spool_ = spool.get();
    handlers.push_back(std::move(spool));
  }
  int port() const { return server_->port(); }

  std::unique_ptr<HttpServer> server_;
  const EventHandler* events_ = nullptr;
  BlockingHandler* block_ = nullptr;
  const BigBodyHandler* big_ = nullptr;
  const SpoolHandler* spool_ = nullptr;
};

TEST_F(HttpServerTest, AHandlerThatWaitsHoldsOnlyItsOwnConnection) {
  Start({}, /*more=*/true);
  Client waiting(port());
  std::thread blocked([&] { EXPECT_EQ(waiting.Send("Block.Op", "").body, "released"); });
  block_->WaitEntered();
  // The server's other threads answer meanwhile (with one thread this would wait forever).
  Client other(port());
  EXPECT_EQ(other.Send("First.Op", "meanwhile").body, "first: meanwhile");
  block_->Release();
  blocked.join();
}

TEST_F(HttpServerTest, StreamsABodyFromItsReaderABlockAtATimeThenServesTheNextRequest) {
  Start({}, /*more=*/true);
  Client client(port());
  const uint64_t size = (3 << 20) + 7;  // 3 MiB and a bit: many blocks, a short last one
  const Reply big = client.Send("Big." + std::to_string(size), "");
  EXPECT_EQ(big.status, 200);
  ASSERT_EQ(big.body.size(), size);
  for (uint64_t i = 0; i < size; i += 4099) {
    ASSERT_EQ(big.body[i], static_cast<char>('a' + i % 26)) << "at " << i;
  }
  EXPECT_GE(big_->reads(), 3 * 16);  // 64 KiB blocks, never the whole body at once
  EXPECT_EQ(client.Send("First.Op", "after").body, "first: after");  // kept alive
}

TEST_F(HttpServerTest, ReadsTheBodyOfAClientThatDoesNotReadOnlyAsFastAsItReads) {
  Start({}, /*more=*/true);
  Client slow(port());
  slow.WriteRaw(
      "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: Big.1073741824\r\n"
      "Content-Length: 0\r\n\r\n");
  slow.ReadHeaderRaw();  // and then nothing more is read
  // The socket buffers fill and the server stops reading its source: a few blocks, not 1 GiB.
  Client other(port());
  EXPECT_EQ(other.Send("First.Op", "x").body, "first: x");
  EXPECT_LT(big_->reads(), 1024);
}

TEST_F(HttpServerTest, SpoolsABodyToAFileItsHandlerReadsAndRemovesItAfterwards) {
  const ::amt::testing::TempDir temp("amt-spool");
  const std::string dir = temp.str();
  HttpServerOptions options;
  options.spool_dir = dir;
  options.max_body_bytes = 8;  // spooled bodies are not held to it
  options.max_spooled_body_bytes = 64;
  Start(options, /*more=*/true);
  Client client(port());
  const Reply spooled = client.Send("Spool.Put", "a body over eight bytes");
  EXPECT_EQ(spooled.body, "23 a body over eight bytes none");
  ASSERT_EQ(spool_->files().size(), 1u);
  EXPECT_THAT(spool_->files()[0], StartsWith(dir + "/body-"));
  EXPECT_NE(::access(spool_->files()[0].c_str(), F_OK), 0) << "the spooled file is left";
  // Not spooled: held to max_body_bytes, in memory.
  EXPECT_EQ(client.Send("First.Op", "0123456789").status, 413);
  Client again(port());
  EXPECT_EQ(again.Send("Spool.Put", std::string(65, 'x')).body, "spool refuses more than 64 bytes");
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "nothing is left behind";
}

TEST_F(HttpServerTest, StreamsServerSentEventsSentFromAnyThreadUntilTheyEnd) {
  Start();
  Client client(port());
  client.WriteRaw(kEventRequest);
  const std::string header = client.ReadHeaderRaw();
  EXPECT_THAT(header, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(header, HasSubstr("Content-Type: text/event-stream\r\n"));
  EXPECT_THAT(header, HasSubstr("Cache-Control: no-cache\r\n"));
  EXPECT_THAT(header, HasSubstr("X-Stream: yes\r\n"));
  EXPECT_THAT(header, Not(HasSubstr("Content-Length")));
  const std::shared_ptr<EventSink> sink = events_->Sink(1);
  sink->Send("event: a\ndata: 1\n\n");  // from this thread, not the server's
  EXPECT_EQ(client.ReadUntil("\n\n"), "event: a\ndata: 1\n\n");
  sink->Send("event: b\ndata: 2\n\n");
  sink->End();
  EXPECT_EQ(client.ReadToEnd(), "event: b\ndata: 2\n\n");
  events_->WaitEnded(1);
  sink->Send("event: late\n\n");  // after the end: nothing, and no harm
  EXPECT_EQ(events_->ended(), 1);
  // The server goes on serving other connections.
  Client other(port());
  EXPECT_EQ(other.Send("First.Op", "a").body, "first: a");
}

TEST_F(HttpServerTest, EndsAnEventStreamWhenTheClientGoes) {
  Start();
  {
    Client client(port());
    client.WriteRaw(kEventRequest);
    client.ReadHeaderRaw();
    events_->Sink(1);
    client.Close();
  }
  events_->WaitEnded(1);  // the server noticed without writing anything
  events_->Sink(1)->Send("event: a\n\n");
}

TEST_F(HttpServerTest, SendsKeepAliveCommentsOnAQuietStream) {
  HttpServerOptions options;
  options.event_keepalive = milliseconds(20);
  Start(options);
  Client client(port());
  client.WriteRaw(kEventRequest);
  client.ReadHeaderRaw();
  EXPECT_EQ(client.ReadUntil("\n\n"), ": keep-alive\n\n");
}

TEST_F(HttpServerTest, StopEndsEveryEventStream) {
  Start();
  Client first(port());
  first.WriteRaw(kEventRequest);
  first.ReadHeaderRaw();
  Client second(port());
  second.WriteRaw(kEventRequest);
  second.ReadHeaderRaw();
  events_->Sink(2);
  server_->Stop();
  EXPECT_EQ(events_->ended(), 2);  // both producers were told before Stop returned
  EXPECT_TRUE(first.WaitForEnd());
  EXPECT_TRUE(second.WaitForEnd());
}

TEST_F(HttpServerTest, AnswersAnEventStreamOverTheCapWith503) {
  HttpServerOptions options;
  options.max_event_streams = 1;
  Start(options);
  Client first(port());
  first.WriteRaw(kEventRequest);
  first.ReadHeaderRaw();
  Client second(port());
  second.WriteRaw(kEventRequest);
  EXPECT_EQ(second.Read().status, 503);
  // Once the first has ended, a new stream is taken.
  events_->Sink(1)->End();
  first.ReadToEnd();
  events_->WaitEnded(1);
  Client third(port());
  third.WriteRaw(kEventRequest);
  EXPECT_THAT(third.ReadHeaderRaw(), StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST_F(HttpServerTest, RoutesEachRequestToTheFirstHandlerThatAcceptsIt) {
  Start();
  Client client(port());
  Reply r = client.Send("First.Op", "a");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "first: a");
  EXPECT_THAT(r.request_id, ::testing::MatchesRegex("[0-9a-f-]{36}"));
  r = client.Send("Second.Op", "b");  // the same connection: keep-alive
  EXPECT_EQ(r.body, "second: b");
}

TEST_F(HttpServerTest, RefusesRequestsForAnotherHostOrFromAForeignOrigin) {
  Start();  // bound to 127.0.0.1
  Client client(port());
  Reply r = client.Send("First.Op", "a", false, http::verb::post, "rebound.example:80");
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(r.body, HasSubstr("AccessDeniedException"));
  EXPECT_THAT(r.body, HasSubstr("amtd does not answer requests for host 'rebound.example:80'"));
  r = client.Send("First.Op", "a", false, http::verb::post, "127.0.0.1:1",
                  "http://rebound.example");
  EXPECT_EQ(r.status, 403);
  r = client.Send("First.Op", "a", false, http::verb::post, "127.0.0.1:1");
  EXPECT_EQ(r.status, 200);  // the same connection carries on
  EXPECT_EQ(r.body, "first: a");
}

TEST_F(HttpServerTest, AnswersAHealthCheckAndRequestsNoHandlerTakes) {
  Start();
  Client client(port());
  Reply r = client.Send("", "", false, http::verb::get);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "amt-local: events; first; second; shadowed\n");
  r = client.Send("Third.Op", "{}");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("UnknownOperationException"));
}

TEST_F(HttpServerTest, AHandlerThatThrowsCostsOnlyItsRequest) {
  std::vector<std::string> logged;
  HttpServerOptions options;
  options.log = [&logged](std::string_view m) { logged.emplace_back(m); };
  Start(options);
  Client client(port());
  Reply r = client.Send("First.Op", "throw");
  EXPECT_EQ(r.status, 500);
  EXPECT_THAT(r.body, HasSubstr("InternalFailure"));
  r = client.Send("First.Op", "again");
  EXPECT_EQ(r.body, "first: again");
  server_->Stop();  // joins the server's thread: `logged` is ours again
  EXPECT_THAT(logged, ::testing::Contains("HTTP handler threw: handler bug"));
}

TEST_F(HttpServerTest, AnswersABodyOverTheLimitWithTheHandlersErrorAndCloses) {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  Start(options);
  Client client(port());
  const Reply r = client.Send("Second.Op", std::string(4096, 'x'));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.body, "second refuses more than 1024 bytes");
  EXPECT_TRUE(client.WaitForEnd());
  // A body at the limit is fine.
  Client next(port());
  EXPECT_EQ(next.Send("Second.Op", std::string(1024, 'y')).status, 200);
}

TEST_F(HttpServerTest, AnswersExpect100ContinueBeforeTheBodyIsSent) {
  Start();
  Client client(port());
  client.WriteRaw(
      "PUT / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: First.Op\r\nContent-Length: 4\r\n"
      "Expect: 100-continue\r\n\r\n");
  EXPECT_THAT(client.ReadHeaderRaw(), StartsWith("HTTP/1.1 100 Continue\r\n"));
  client.WriteRaw("body");
  const Reply r = client.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "first: body");
}

TEST_F(HttpServerTest, KeepsTheContentLengthAHandlerGivesAHeadResponse) {
  Start();
  Client client(port());
  client.WriteRaw("HEAD / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: First.Op\r\n\r\n");
  const std::string header = client.ReadHeaderRaw();
  EXPECT_THAT(header, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(header, HasSubstr("Content-Length: 42\r\n"));
  // No body followed: the next request on the connection is answered as usual.
  EXPECT_EQ(client.Send("First.Op", "after").body, "first: after");
}

TEST_F(HttpServerTest, ClosesAConnectionThatSendsNothing) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(50);
  Start(options);
  Client client(port());
  EXPECT_TRUE(client.WaitForEnd());
}

TEST_F(HttpServerTest, ClosesAKeepAliveConnectionThatGoesIdle) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(50);
  Start(options);
  Client client(port());
  EXPECT_EQ(client.Send("First.Op", "a").status, 200);
  EXPECT_TRUE(client.WaitForEnd());
}

TEST_F(HttpServerTest, ClosesAConnectionThatSendsItsHeaderTooSlowly) {
  HttpServerOptions options;
  options.header_timeout = milliseconds(50);
  Start(options);
  Client client(port());
  client.WriteRaw("POST / HTTP/1.1\r\nHost: x\r\n");  // and never the end of the header
  EXPECT_TRUE(client.WaitForEnd());
}

TEST_F(HttpServerTest, ClosesConnectionsOverTheCapAtOnce) {
  HttpServerOptions options;
  options.max_connections = 1;
  Start(options);
  Client first(port());
  EXPECT_EQ(first.Send("First.Op", "a").status, 200);  // now surely accepted and counted
  Client second(port());
  EXPECT_TRUE(second.WaitForEnd());
  // The first one leaves; its slot is free before it sees the end of the connection.
  EXPECT_EQ(first.Send("First.Op", "bye", /*close=*/true).status, 200);
  EXPECT_TRUE(first.WaitForEnd());
  Client third(port());
  EXPECT_EQ(third.Send("First.Op", "c").body, "first: c");
}

// Issue "the HTTP accept loop stops for good after one failed accept": the process runs out of
// file descriptors for real while a client waits to be accepted.
TEST_F(HttpServerTest, KeepsAcceptingAfterRunningOutOfFileDescriptors) {
  auto failed = std::make_shared<std::promise<void>>();
  auto failed_once = std::make_shared<std::once_flag>();
  HttpServerOptions options;
  options.log = [failed, failed_once](std::string_view message) {
    if (message.starts_with("HTTP accept failed")) {
      std::call_once(*failed_once, [&] { failed->set_value(); });
    }
  };
  Start(options);
  // Everything that may need a descriptor comes before there are none left: the socket, and the
  // port (UBSan's vptr check of a virtual call probes memory through a pipe).
  const auto server_port = static_cast<unsigned short>(port());
  std::future<void> accept_failed = failed->get_future();  // copies a shared_ptr: vptr check
  asio::io_context io;
  tcp::socket socket(io);
  socket.open(tcp::v4());

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 256);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> filler;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) filler.push_back(fd);
  ASSERT_EQ(errno, EMFILE);

  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_port));
  accept_failed.wait();  // the server tried to accept it and could not
  for (int fd : filler) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);

  http::request<http::string_body> request{http::verb::post, "/", 11};
  request.set("X-Amz-Target", "First.Op");
  request.body() = "still here";
  request.prepare_payload();
  http::write(socket, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  EXPECT_EQ(response.body(), "first: still here");
}

TEST_F(HttpServerTest, RefusesAnAddressItCannotUse) {
  HttpServerOptions options;
  options.host = "not an address";
  auto server = HttpServer::Start(options, {});
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("bad HTTP gateway address not an address"));
}

TEST_F(HttpServerTest, ListensOnAHostName) {
  HttpServerOptions options;
  options.host = "localhost";  // was "bad HTTP gateway address localhost"
  auto server = HttpServer::Start(options, {});
  ASSERT_TRUE(server.ok()) << server.status();
  asio::io_context io;
  tcp::socket socket(io);
  beast::error_code ec;
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                               static_cast<unsigned short>((*server)->port())),
                 ec);
  EXPECT_FALSE(ec) << ec.message();
}

}  // namespace
}  // namespace amt::gateway
