// HostCheck: refuses HTTP requests addressed to a name amtd does not answer to, the defence
// against DNS rebinding (a web page whose name resolves to 127.0.0.1 must not drive amtd from
// the user's browser). A request passes when its Host header (port aside) is an allowed name,
// and its Origin header, if any (browsers send one on cross-origin requests), names an allowed
// host too. Clients that send no Host (HTTP/1.0 tools) pass: browsers always send one.
#ifndef AMT_ORCHESTRATOR_GATEWAY_HOST_CHECK_H_
#define AMT_ORCHESTRATOR_GATEWAY_HOST_CHECK_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amt::gateway {

class HostCheck {
 public:
  // The names allowed for a server bound to `bind_host`, plus `extra` (e.g. amtd
  // --http-allowed-hosts). Bound to loopback: localhost, 127.0.0.0/8 and ::1 addresses, and
  // `extra`. Bound elsewhere (0.0.0.0, a LAN address): only `extra`, and with no `extra` every
  // name passes (a server others reach by names it cannot know).
  static HostCheck ForBinding(std::string_view bind_host, const std::vector<std::string>& extra);

  // Why the request is refused, or nullopt when it passes. `host` and `origin` are the header
  // values, nullptr when absent.
  std::optional<std::string> Refusal(const std::string* host, const std::string* origin) const;

  bool enabled() const { return enabled_; }

 private:
  bool Allowed(std::string_view name) const;

  bool enabled_ = false;
  bool loopback_ = false;
  std::vector<std::string> names_;  // lower case, IPv6 without brackets
};

// The host of a Host header value or an Origin's authority, lower case, without the port or the
// brackets of an IPv6 literal: "[::1]:7071" -> "::1", "LocalHost:80" -> "localhost".
std::string HostName(std::string_view authority);

// Whether `name` (a HostName) is a loopback one: localhost, 127.0.0.0/8, ::1.
bool IsLoopbackName(std::string_view name);

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_HOST_CHECK_H_
