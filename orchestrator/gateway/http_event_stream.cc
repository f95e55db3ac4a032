// The server-sent events of a Session (HttpResponse::events): the stream's header, its sink,
// the queue of chunks written one at a time, the keep-alive comments, and its end.
#include <exception>
#include <string>
#include <type_traits>
#include <utility>

#include "orchestrator/gateway/http_session.h"

namespace amt::gateway::internal {

void StreamSink::Send(std::string chunk) {
  MutexLock lock(&mu_);
  if (!open_) return;
  asio::post(executor_, [session = session_, chunk = std::move(chunk)]() mutable {
    if (auto s = session.lock()) s->QueueChunk(std::move(chunk));
  });
}

void StreamSink::End() {
  MutexLock lock(&mu_);
  if (!open_) return;
  asio::post(executor_, [session = session_] {
    if (auto s = session.lock()) s->EndAfterWrites();
  });
}

template <class Stream>
void Session<Stream>::QueueChunk(std::string chunk) {
  if (events_ended_) return;
  if (!queue_.empty() && queue_.back() == chunk) return;  // a burst of one event is one
  queue_.push_back(std::move(chunk));
  if (!writing_) WriteNextChunk();
}

template <class Stream>
void Session<Stream>::EndAfterWrites() {
  end_requested_ = true;
  if (!writing_) FinishEvents();
}

template <class Stream>
void Session<Stream>::StartEvents(const HttpResponse& reply) {
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
  Tcp().expires_after(shared_->options.idle_timeout);
  asio::async_write(stream_, asio::buffer(header_),
                    [self = this->shared_from_this()](beast::error_code ec, size_t) {
                      self->writing_ = false;
                      if (ec) return self->FinishEvents();
                      self->OpenSink();
                    });
}

template <class Stream>
void Session<Stream>::OpenSink() {
  sink_ = std::make_shared<StreamSink>(stream_.get_executor(), this->weak_from_this());
  {
    MutexLock lock(&shared_->sinks_mu);
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

template <class Stream>
void Session<Stream>::AwaitClientClose() {
  auto on_read = [self = this->shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return self->FinishEvents();
    self->AwaitClientClose();
  };
  if constexpr (std::is_same_v<Stream, PlainStream>) {
    Tcp().socket().async_read_some(asio::buffer(drain_), std::move(on_read));
  } else {
    // TLS has no raw bytes to read apart: through the stream (whose timeouts may then end an
    // idle stream; the web page's streams are plain).
    stream_.async_read_some(asio::buffer(drain_), std::move(on_read));
  }
}

template <class Stream>
void Session<Stream>::Keepalive() {
  keepalive_.expires_after(shared_->options.event_keepalive);
  keepalive_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
    if (ec || self->events_ended_) return;
    if (!self->writing_) self->QueueChunk(": keep-alive\n\n");
    self->Keepalive();
  });
}

template <class Stream>
void Session<Stream>::WriteNextChunk() {
  if (queue_.empty()) {
    writing_ = false;
    if (end_requested_) FinishEvents();
    return;
  }
  writing_ = true;
  chunk_ = std::move(queue_.front());
  queue_.pop_front();
  Tcp().expires_after(shared_->options.idle_timeout);
  asio::async_write(stream_, asio::buffer(chunk_),
                    [self = this->shared_from_this()](beast::error_code ec, size_t) {
                      if (ec) {
                        self->writing_ = false;
                        return self->FinishEvents();
                      }
                      self->WriteNextChunk();
                    });
}

template <class Stream>
void Session<Stream>::FinishEvents() {
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
  Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
  Tcp().socket().close(ignored);
}

// The class is instantiated in http_session.cc; its members of this file here.
template void Session<PlainStream>::QueueChunk(std::string);
template void Session<PlainStream>::EndAfterWrites();
template void Session<PlainStream>::StartEvents(const HttpResponse&);
template void Session<PlainStream>::OpenSink();
template void Session<PlainStream>::AwaitClientClose();
template void Session<PlainStream>::Keepalive();
template void Session<PlainStream>::WriteNextChunk();
template void Session<PlainStream>::FinishEvents();
template void Session<TlsStream>::QueueChunk(std::string);
template void Session<TlsStream>::EndAfterWrites();
template void Session<TlsStream>::StartEvents(const HttpResponse&);
template void Session<TlsStream>::OpenSink();
template void Session<TlsStream>::AwaitClientClose();
template void Session<TlsStream>::Keepalive();
template void Session<TlsStream>::WriteNextChunk();
template void Session<TlsStream>::FinishEvents();

}  // namespace amt::gateway::internal
