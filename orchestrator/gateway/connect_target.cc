#include "orchestrator/gateway/connect_target.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace amt::gateway {
namespace {

bool EndsWithLabel(std::string_view host, std::string_view suffix) {
  return host.size() > suffix.size() && host.ends_with(suffix) &&
         host[host.size() - suffix.size() - 1] == '.';
}

bool HostCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_' ||
         c == ':';
}

}  // namespace

std::optional<ConnectTarget> ParseConnectTarget(std::string_view target) {
  std::string_view host;
  std::string_view port;
  if (target.starts_with('[')) {
    const size_t close = target.find(']');
    if (close == std::string_view::npos || close + 1 >= target.size() || target[close + 1] != ':') {
      return std::nullopt;
    }
    host = target.substr(1, close - 1);
    port = target.substr(close + 2);
  } else {
    const size_t colon = target.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = target.substr(0, colon);
    port = target.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return std::nullopt;  // IPv6 needs brackets
  }
  if (host.empty() || !std::all_of(host.begin(), host.end(), HostCharacter)) return std::nullopt;
  int number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (ec != std::errc() || end != port.data() + port.size() || number < 1 || number > 65535) {
    return std::nullopt;
  }
  ConnectTarget parsed;
  parsed.host = std::string(host);
  std::transform(parsed.host.begin(), parsed.host.end(), parsed.host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  parsed.port = number;
  return parsed;
}

bool IsAwsHost(std::string_view host) {
  if (host.ends_with('.')) host.remove_suffix(1);  // a fully qualified name
  return EndsWithLabel(host, "amazonaws.com") || EndsWithLabel(host, "amazonaws.com.cn") ||
         EndsWithLabel(host, "api.aws");
}

ConnectRoute RouteConnect(const ConnectTarget& target, bool loopback_only) {
  if (IsAwsHost(target.host)) return ConnectRoute::kTerminate;
  return loopback_only ? ConnectRoute::kTunnel : ConnectRoute::kRefuse;
}

}  // namespace amt::gateway
