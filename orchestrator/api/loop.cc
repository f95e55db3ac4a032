#include "orchestrator/api/loop.h"

#include <chrono>

namespace amt::api {

Loop::Loop() : guard_(boost::asio::make_work_guard(context_)) {}

Loop::~Loop() { Stop(); }

void Loop::Start() {
  thread_ = std::thread([this] { context_.run(); });
}

void Loop::Stop() {
  if (stopped_) return;
  stopped_ = true;
  guard_.reset();
  context_.stop();
  if (thread_.joinable()) thread_.join();
}

AsioTimers::~AsioTimers() {
  for (auto& [id, timer] : timers_) timer->cancel();
}

uint64_t AsioTimers::At(double when, std::function<void()> fn) {
  const uint64_t id = next_id_++;
  auto timer = std::make_unique<boost::asio::steady_timer>(loop_.context());
  const double delay = std::max(0.0, when - clock_.Now());
  timer->expires_after(std::chrono::microseconds(static_cast<int64_t>(delay * 1e6)));
  timer->async_wait([this, id, fn = std::move(fn)](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled
    timers_.erase(id);
    fn();
  });
  timers_.emplace(id, std::move(timer));
  return id;
}

void AsioTimers::Cancel(uint64_t id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  it->second->cancel();
  timers_.erase(it);
}

}  // namespace amt::api
