// Raw bytes on amtd's HTTP port, as HttpServer reads them: Beast's request parser with the
// server's header and body limits, then the Host/Origin check on what parsed.
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "orchestrator/gateway/host_check.h"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto check = amt::gateway::HostCheck::ForBinding("127.0.0.1", {"amt.internal"});
  http::request_parser<http::string_body> parser;
  parser.header_limit(64 * 1024);
  parser.body_limit(1 << 20);
  boost::beast::error_code ec;
  size_t offset = 0;
  while (offset < size && !parser.is_done()) {
    const size_t used = parser.put(boost::asio::buffer(data + offset, size - offset), ec);
    if (ec == http::error::need_more) break;
    if (ec || used == 0) return 0;
    offset += used;
  }
  if (!parser.is_header_done()) return 0;
  const auto& request = parser.get();
  std::string host, origin;
  const auto host_field = request.find(http::field::host);
  const auto origin_field = request.find(http::field::origin);
  if (host_field != request.end()) host = std::string(host_field->value());
  if (origin_field != request.end()) origin = std::string(origin_field->value());
  (void)check.Refusal(host_field != request.end() ? &host : nullptr,
                      origin_field != request.end() ? &origin : nullptr);
  (void)amt::gateway::HostName(host);
  return 0;
}
