// Small string helpers over std::string_view for this folder's .cc files. Debian's Abseil has
// its own absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW is 0), which does not convert to
// or from std::string_view, so absl::StrCat, StrSplit and friends would need a conversion at
// every call; these few helpers are simpler. Internal to orchestrator/auth.
#ifndef AMT_COMMON_TEXT_H_
#define AMT_COMMON_TEXT_H_

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace amt::auth::text {

inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline char ToLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string_view Strip(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ToLower(c);
  return out;
}

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLower(a[i]) != ToLower(b[i])) return false;
  }
  return true;
}

// Non-empty digits only.
inline bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// The pieces of `s` between any of `delimiters`; empty pieces dropped when `skip_empty`.
inline std::vector<std::string_view> Split(std::string_view s, std::string_view delimiters,
                                           bool skip_empty) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (true) {
    const size_t end = s.find_first_of(delimiters, start);
    const std::string_view piece =
        s.substr(start, end == std::string_view::npos ? end : end - start);
    if (!piece.empty() || !skip_empty) pieces.push_back(piece);
    if (end == std::string_view::npos) return pieces;
    start = end + 1;
  }
}

template <typename Strings>
std::string Join(const Strings& pieces, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& piece : pieces) {
    if (!first) out += separator;
    out += piece;
    first = false;
  }
  return out;
}

inline void AppendPiece(std::string* out, std::string_view piece) { out->append(piece); }
inline void AppendPiece(std::string* out, std::integral auto number) {
  out->append(std::to_string(number));
}

// Concatenates strings and integers, as absl::StrCat.
template <typename... Pieces>
std::string Cat(const Pieces&... pieces) {
  std::string out;
  (AppendPiece(&out, pieces), ...);
  return out;
}

}  // namespace amt::auth::text

#endif  // AMT_COMMON_TEXT_H_
