#include "common/mutex.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace amt {
namespace {

using std::chrono::milliseconds;

class Flag {
 public:
  void Set() {
    MutexLock lock(&mu_);
    set_ = true;
    cv_.SignalAll();
  }
  bool AwaitFor(milliseconds timeout) {
    MutexLock lock(&mu_);
    return cv_.AwaitFor(&mu_, timeout, [this] {
      mu_.AssertHeld();
      return set_;
    });
  }
  bool WaitForTimesOut(milliseconds timeout) {
    MutexLock lock(&mu_);
    return cv_.WaitFor(&mu_, timeout);
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool set_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(CondVarTest, AwaitForSeesAFlagSetBeforeTheWait) {
  Flag flag;
  flag.Set();
  EXPECT_TRUE(flag.AwaitFor(milliseconds(0)));
}

TEST(CondVarTest, AwaitForWakesWhenAnotherThreadSetsTheFlag) {
  Flag flag;
  std::thread setter([&flag] { flag.Set(); });
  // An hour: the test passes only because the setter's SignalAll wakes the wait.
  EXPECT_TRUE(flag.AwaitFor(std::chrono::hours(1)));
  setter.join();
}

TEST(CondVarTest, AwaitForReturnsFalseWhenTheFlagStaysUnset) {
  Flag flag;
  EXPECT_FALSE(flag.AwaitFor(milliseconds(1)));
}

TEST(CondVarTest, WaitForSaysTheTimeRanOut) {
  Flag flag;
  // Nobody signals: only a spurious wake-up (allowed, rare) returns false, so try a few times.
  bool timed_out = false;
  for (int i = 0; i < 5 && !timed_out; ++i) timed_out = flag.WaitForTimesOut(milliseconds(1));
  EXPECT_TRUE(timed_out);
}

TEST(MutexTest, SerialisesIncrementsFromTwoThreads) {
  Mutex mu;
  int count = 0;
  auto add = [&] {
    for (int i = 0; i < 10000; ++i) {
      MutexLock lock(&mu);
      ++count;
    }
  };
  std::thread other(add);
  add();
  other.join();
  MutexLock lock(&mu);
  EXPECT_EQ(count, 20000);
}

}  // namespace
}  // namespace amt
