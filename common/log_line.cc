#include "common/log_line.h"

namespace amt {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at the start of `s`, or 0 when its first byte does not
// begin one (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
size_t ValidSequence(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto continuation = [&](size_t i) { return i < s.size() && (byte(i) & 0xC0) == 0x80; };
  const unsigned char b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return continuation(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (b == 0xED && byte(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (b == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string SageMakerLogLine(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  std::string out;
  out.reserve(line.size());
  while (!line.empty()) {
    const char c = line.front();
    if (c == '\t') {
      out += "#011";
      line.remove_prefix(1);
      continue;
    }
    if (c == '\r') {
      line.remove_prefix(1);
      continue;
    }
    const size_t n = ValidSequence(line);
    if (n == 0) {
      out += kReplacement;
      line.remove_prefix(1);
      continue;
    }
    out.append(line.substr(0, n));
    line.remove_prefix(n);
  }
  return out;
}

}  // namespace amt
