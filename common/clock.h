// Clock: the injected source of time. Production code gets SystemClock from main.cc; tests use
// FakeClock and advance it by hand. Times are epoch seconds as doubles, the AWS JSON wire form.
#ifndef AMT_COMMON_CLOCK_H_
#define AMT_COMMON_CLOCK_H_

#include <atomic>

namespace amt {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch, with sub-second precision. Thread-safe.
  virtual double Now() const = 0;
};

// Wall-clock time (std::chrono::system_clock).
class SystemClock final : public Clock {
 public:
  double Now() const override;
};

// A clock that moves only when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(double start = 1'700'000'000.0) : now_(start) {}
  double Now() const override { return now_.load(); }
  void Advance(double seconds) { now_.store(now_.load() + seconds); }
  void Set(double now) { now_.store(now); }

 private:
  std::atomic<double> now_;
};

}  // namespace amt

#endif  // AMT_COMMON_CLOCK_H_
