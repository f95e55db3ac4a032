#include "common/utf8.h"

namespace amt {
namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

std::optional<size_t> InvalidUtf8Offset(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    // The allowed range of the second byte rules out overlong forms, surrogates (ED A0..BF) and
    // code points above U+10FFFF (F4 90..).
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + 1 >= n || s[i + 1] < low || s[i + 1] > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (i + k >= n || !IsContinuation(s[i + k])) return i;
    }
    i += length;
  }
  return std::nullopt;
}

std::string ReplaceInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (true) {
    const std::optional<size_t> bad = InvalidUtf8Offset(text);
    if (!bad.has_value()) break;
    out.append(text.substr(0, *bad));
    out += "\xEF\xBF\xBD";  // U+FFFD
    text.remove_prefix(*bad + 1);
  }
  out.append(text);
  return out;
}

}  // namespace amt
