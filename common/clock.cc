#include "common/clock.h"

#include <chrono>

namespace amt {

double SystemClock::Now() const {
  using std::chrono::duration;
  // Millisecond precision, as SageMaker's timestamps carry.
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count();
  return static_cast<double>(ms) / 1000.0;
}

}  // namespace amt
