// The server-sent events of a Session (HttpResponse::events): the stream's header, its sink,
// the queue of chunks written one at a time, the keep-alive comments, and its end.
#include <exception>
#include <string>
#include <utility>

#include "orchestrator/gateway/http_session.h"

namespace amt::gateway::internal {

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

void Session::QueueChunk(std::string chunk) {
  if (events_ended_) return;
  if (!queue_.empty() && queue_.back() == chunk) return;  // a burst of one event is one
  queue_.push_back(std::move(chunk));
  if (!writing_) WriteNextChunk();
}

void Session::EndAfterWrites() {
  end_requested_ = true;
  if (!writing_) FinishEvents();
}

void Session::StartEvents(const HttpResponse& reply) {
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

void Session::OpenSink() {
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

void Session::AwaitClientClose() {
  stream_.socket().async_read_some(asio::buffer(drain_),
                                   [self = shared_from_this()](beast::error_code ec, size_t) {
                                     if (ec) return self->FinishEvents();
                                     self->AwaitClientClose();
                                   });
}

void Session::Keepalive() {
  keepalive_.expires_after(shared_->options.event_keepalive);
  keepalive_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->events_ended_) return;
    if (!self->writing_) self->QueueChunk(": keep-alive\n\n");
    self->Keepalive();
  });
}

void Session::WriteNextChunk() {
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

void Session::FinishEvents() {
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

}  // namespace amt::gateway::internal
