// Loop: the one event loop that owns orchestrator state (a boost::asio::io_context on its own
// thread), and AsioTimers, the production core::Timers on top of it.
//
// gRPC handler threads never touch the orchestrator; they Call() onto the loop and wait for the
// answer. That is the whole concurrency model of amtd.
#ifndef AMT_ORCHESTRATOR_API_LOOP_H_
#define AMT_ORCHESTRATOR_API_LOOP_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>  // before asio: Boost 1.74 + g++ 12 + C++20

#include "common/clock.h"
#include "orchestrator/core/timers.h"

namespace amt::api {

class Loop {
 public:
  Loop();
  // Stops the loop and joins its thread.
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // Starts the loop thread. Work posted before Start runs once it starts.
  void Start();
  // Stops the loop; pending work is dropped. Idempotent. Must not be called from the loop.
  void Stop();

  boost::asio::io_context& context() { return context_; }
  bool InLoopThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  // Runs `fn` on the loop, later. Thread-safe.
  void Post(std::function<void()> fn) { boost::asio::post(context_, std::move(fn)); }

  // Runs `fn` on the loop and returns its result; blocks the calling (non-loop) thread.
  template <typename Fn>
  auto Call(Fn fn) -> std::invoke_result_t<Fn> {
    using R = std::invoke_result_t<Fn>;
    auto promise = std::make_shared<std::promise<R>>();
    auto future = promise->get_future();
    Post([promise, fn = std::move(fn)]() mutable {
      if constexpr (std::is_void_v<R>) {
        fn();
        promise->set_value();
      } else {
        promise->set_value(fn());
      }
    });
    return future.get();
  }

 private:
  boost::asio::io_context context_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
  bool stopped_ = false;
};

// core::Timers on the loop: each timer is a steady_timer set to (when - clock.Now()). Runs on
// and must be used from the loop thread.
class AsioTimers final : public core::Timers {
 public:
  AsioTimers(Loop& loop, const Clock& clock) : loop_(loop), clock_(clock) {}
  ~AsioTimers() override;
  uint64_t At(double when, std::function<void()> fn) override;
  void Cancel(uint64_t id) override;

 private:
  Loop& loop_;
  const Clock& clock_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<boost::asio::steady_timer>> timers_;
};

}  // namespace amt::api

#endif  // AMT_ORCHESTRATOR_API_LOOP_H_
