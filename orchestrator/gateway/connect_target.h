// What amtd's HTTPS proxy does with a CONNECT request (http_server.h, the transparent endpoint):
// its target ("sts.us-east-1.amazonaws.com:443") decoded, and the route it takes. Pure.
//
//   an AWS host (*.amazonaws.com, *.amazonaws.com.cn, *.api.aws)
//                -> kTerminate: amtd answers the TLS handshake with a certificate of its CA for
//                   that host and serves the requests inside with its own handlers
//   another host, amtd listening on loopback only
//                -> kTunnel: bytes pass untouched to that host (pip, a notebook's downloads)
//   another host, amtd listening beyond loopback
//                -> kRefuse: amtd is no open proxy for its network
#ifndef AMT_ORCHESTRATOR_GATEWAY_CONNECT_TARGET_H_
#define AMT_ORCHESTRATOR_GATEWAY_CONNECT_TARGET_H_

#include <optional>
#include <string>
#include <string_view>

namespace amt::gateway {

struct ConnectTarget {
  std::string host;  // lower case; an IPv6 literal without its brackets
  int port = 0;
};

// The authority-form target of a CONNECT ("host:port", "[::1]:443"); nullopt when the port is
// missing or not in 1-65535, or the host is empty or has characters no host name has.
std::optional<ConnectTarget> ParseConnectTarget(std::string_view target);

// Whether `host` (lower case) is one of AWS's service endpoints' names.
bool IsAwsHost(std::string_view host);

enum class ConnectRoute { kTerminate, kTunnel, kRefuse };

ConnectRoute RouteConnect(const ConnectTarget& target, bool loopback_only);

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_CONNECT_TARGET_H_
