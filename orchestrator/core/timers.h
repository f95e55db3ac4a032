// Timers: one-shot timers on the orchestrator loop (the injected interface), and ScopedTimer, the
// owner of one armed timer that cancels it when re-armed, cancelled or destroyed. Every timer of
// a job lives in a ScopedTimer held by that job's runtime record, so dropping the record (or the
// Orchestrator) cancels all of its timers: no callback can outlive what it refers to.
#ifndef AMT_ORCHESTRATOR_CORE_TIMERS_H_
#define AMT_ORCHESTRATOR_CORE_TIMERS_H_

#include <cstdint>
#include <functional>

namespace amt::core {

// One-shot timers on the orchestrator loop, by the injected clock's time.
class Timers {
 public:
  virtual ~Timers() = default;
  // Runs `fn` on the loop once Clock::Now() >= when. Returns an id (never 0) for Cancel.
  virtual uint64_t At(double when, std::function<void()> fn) = 0;
  // Cancelling an unknown or fired timer is a no-op.
  virtual void Cancel(uint64_t id) = 0;
};

// Owns at most one armed timer. Move-only; `timers` must outlive every ScopedTimer armed on it.
// Runs on the orchestrator loop.
class ScopedTimer {
 public:
  ScopedTimer() = default;
  ~ScopedTimer() { Cancel(); }
  ScopedTimer(ScopedTimer&& other) noexcept : timers_(other.timers_), id_(other.id_) {
    other.id_ = 0;
  }
  ScopedTimer& operator=(ScopedTimer&& other) noexcept {
    if (this != &other) {
      Cancel();
      timers_ = other.timers_;
      id_ = other.id_;
      other.id_ = 0;
    }
    return *this;
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

  // Cancels the timer armed before, if any, and arms `fn` at `when`.
  void Arm(Timers& timers, double when, std::function<void()> fn) {
    Cancel();
    timers_ = &timers;
    id_ = timers.At(when, std::move(fn));
  }
  // No-op when nothing is armed. A fired timer's id is unknown to Timers: cancelling it is a
  // no-op there too.
  void Cancel() {
    if (id_ != 0 && timers_ != nullptr) timers_->Cancel(id_);
    id_ = 0;
  }
  bool armed() const { return id_ != 0; }

 private:
  Timers* timers_ = nullptr;
  uint64_t id_ = 0;
};

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_TIMERS_H_
