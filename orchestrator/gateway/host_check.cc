#include "orchestrator/gateway/host_check.h"

#include <algorithm>
#include <cctype>

#include "boost/asio/ip/address.hpp"

namespace amt::gateway {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

bool IsLoopbackName(std::string_view name) {
  if (name == "localhost") return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(name), ec);
  return !ec && address.is_loopback();
}

std::string HostName(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    return Lower(authority.substr(1, close == std::string_view::npos ? close : close - 1));
  }
  // One colon: host:port. More: an unbracketed IPv6 literal (not valid in Host, kept whole).
  const size_t colon = authority.find(':');
  if (colon != std::string_view::npos && authority.find(':', colon + 1) == std::string_view::npos) {
    authority = authority.substr(0, colon);
  }
  return Lower(authority);
}

HostCheck HostCheck::ForBinding(std::string_view bind_host, const std::vector<std::string>& extra) {
  HostCheck check;
  for (const auto& name : extra) check.names_.push_back(HostName(name));
  check.loopback_ = IsLoopbackName(HostName(bind_host));
  check.enabled_ = check.loopback_ || !check.names_.empty();
  return check;
}

bool HostCheck::Allowed(std::string_view name) const {
  if (loopback_ && IsLoopbackName(name)) return true;
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

std::optional<std::string> HostCheck::Refusal(const std::string* host,
                                              const std::string* origin) const {
  if (!enabled_) return std::nullopt;
  if (host != nullptr && !Allowed(HostName(*host))) {
    return "amtd does not answer requests for host '" + *host +
           "' (a defence against DNS rebinding). If that name is amtd's, allow it with amtd "
           "--http-allowed-hosts.";
  }
  if (origin != nullptr) {
    const size_t scheme = origin->find("://");
    const std::string_view authority = scheme == std::string::npos
                                           ? std::string_view()
                                           : std::string_view(*origin).substr(scheme + 3);
    if (authority.empty() || !Allowed(HostName(authority.substr(0, authority.find('/'))))) {
      return "amtd does not answer requests from web pages of origin '" + *origin +
             "' (a defence against DNS rebinding). If that name is amtd's, allow it with amtd "
             "--http-allowed-hosts.";
    }
  }
  return std::nullopt;
}

}  // namespace amt::gateway
