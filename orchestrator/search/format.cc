#include "orchestrator/search/format.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace amt::search {

std::string FormatInteger(int64_t v) { return std::to_string(v); }

std::string FormatContinuous(double v) {
  // Fixed notation of the shortest round-trip digits needs at most 17 significant digits plus
  // up to 4 leading zeros (|v| >= 1e-4) or 16 integer digits, a sign and a point; 64 is ample.
  char buf[64];
  const double magnitude = std::fabs(v);
  const bool fixed = v == 0 || (magnitude >= 1e-4 && magnitude < 1e16);
  const std::chars_format format = fixed ? std::chars_format::fixed : std::chars_format::scientific;
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v, format);
  if (ec != std::errc()) return "nan";  // unreachable: the buffer fits every double above
  return std::string(buf, ptr);
}

}  // namespace amt::search
