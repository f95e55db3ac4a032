#include "orchestrator/core/timers.h"

#include <gtest/gtest.h>

#include "tests/unit/core/fakes.h"

namespace amt::core {
namespace {

TEST(ScopedTimer, FiresOnceAtItsTime) {
  FakeClock clock;
  FakeTimers timers(clock);
  int fired = 0;
  ScopedTimer t;
  t.Arm(timers, clock.Now() + 5, [&] { ++fired; });
  timers.Advance(4);
  EXPECT_EQ(fired, 0);
  timers.Advance(2);
  EXPECT_EQ(fired, 1);
  timers.Advance(10);
  EXPECT_EQ(fired, 1);
}

TEST(ScopedTimer, RearmingReplacesAndDestructionCancels) {
  FakeClock clock;
  FakeTimers timers(clock);
  int first = 0, second = 0;
  {
    ScopedTimer t;
    t.Arm(timers, clock.Now() + 5, [&] { ++first; });
    t.Arm(timers, clock.Now() + 3, [&] { ++second; });
    EXPECT_EQ(timers.pending(), 1u);
    ScopedTimer moved = std::move(t);
    EXPECT_FALSE(t.armed());  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_TRUE(moved.armed());
  }
  EXPECT_EQ(timers.pending(), 0u);
  timers.Advance(10);
  EXPECT_EQ(first + second, 0);
}

TEST(ScopedTimer, CancelIsIdempotentAndAFiredTimerCanBeRearmedFromItsCallback) {
  FakeClock clock;
  FakeTimers timers(clock);
  int fired = 0;
  ScopedTimer t;
  std::function<void()> tick = [&] {
    if (++fired < 3) t.Arm(timers, clock.Now() + 1, tick);
  };
  t.Arm(timers, clock.Now() + 1, tick);
  timers.Advance(10);
  EXPECT_EQ(fired, 3);
  t.Cancel();
  t.Cancel();
  EXPECT_EQ(timers.pending(), 0u);
}

}  // namespace
}  // namespace amt::core
