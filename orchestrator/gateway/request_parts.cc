#include "orchestrator/gateway/request_parts.h"

#include <vector>

#include "common/text.h"

namespace amt::gateway {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space,
                                         BadEscape bad_escape) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int high = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      const int low = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (high < 0 || low < 0) {
        if (bad_escape == BadEscape::kRefuse) return std::nullopt;
        out.push_back(c);
        continue;
      }
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> ParseQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (query.empty()) return pairs;
  for (std::string_view part : auth::text::Split(query, "&", /*skip_empty=*/true)) {
    if (part.empty()) continue;
    const size_t equals = part.find('=');
    std::optional<std::string> name = PercentDecode(part.substr(0, equals), true);
    std::optional<std::string> value = equals == std::string_view::npos
                                           ? std::string()
                                           : PercentDecode(part.substr(equals + 1), true);
    if (!name.has_value() || !value.has_value()) return std::nullopt;
    pairs.emplace_back(std::move(*name), std::move(*value));
  }
  return pairs;
}

std::pair<std::string_view, std::string_view> SplitTarget(std::string_view target) {
  const size_t question = target.find('?');
  if (question == std::string_view::npos) return {target, {}};
  return {target.substr(0, question), target.substr(question + 1)};
}

}  // namespace amt::gateway
