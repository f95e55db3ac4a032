// The gateway's decoders of client bytes below the HTTP parser: the CBOR of Smithy RPC v2
// (CloudWatch), the XML of S3's request bodies, the query protocol's forms and timestamps, request
// targets' percent-encoding and query strings, and the SigV4 verifier's canonical request. The
// first byte picks the decoder, the rest is its input. Nothing may crash or throw, a bad input is
// an error, and what a decoder accepted must survive our own writer: CBOR we encode decodes to the
// same bytes, XML text we parsed escapes into XML that parses.
//
// Not here yet: S3's aws-chunked decoder (S3PayloadDecoder, gateway/s3/s3_payload.h), which now
// stands apart from the handler and could get a fuzzer of its own; see CMakeLists.txt.
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/credentials.h"
#include "orchestrator/auth/canonical.h"
#include "orchestrator/auth/sigv4.h"
#include "orchestrator/gateway/cbor.h"
#include "orchestrator/gateway/protocol_handler.h"
#include "orchestrator/gateway/query_protocol.h"
#include "orchestrator/gateway/request_parts.h"
#include "orchestrator/gateway/xml.h"

namespace {

namespace gw = ::amt::gateway;

// The selectors, data[0] % kDecoders; each file of corpus/wire/ starts with one.
enum Decoder : uint8_t {
  kCbor = 0,    // DecodeCbor, EncodeCbor
  kXml = 1,     // xml::Parse (S3's CompleteMultipartUpload, Delete), xml::Writer and Escape
  kForm = 2,    // query::ParseForm, ParseTimestamp, FormatIso8601
  kTarget = 3,  // PercentDecode, ParseQuery, SplitTarget (request_parts.h)
  kSigV4 = 4,   // a request (ParseRequest): query_protocol.h's checks, canonical.h, VerifySigV4
  kDecoders = 5,
};

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

void FuzzCbor(std::string_view bytes) {
  const std::optional<nlohmann::json> value = gw::DecodeCbor(bytes);
  if (!value.has_value()) return;
  const std::string encoded = gw::EncodeCbor(*value);
  const std::optional<nlohmann::json> again = gw::DecodeCbor(encoded);
  Check(again.has_value());
  // Bytes, not values: NaN != NaN as a json value, its bits survive.
  Check(gw::EncodeCbor(*again) == encoded);
  // The reply side: CloudWatch's timestamp members as tag 1.
  (void)gw::DecodeCbor(gw::EncodeCbor(*value, {"Timestamp", "Timestamps", "StartTime"}));
}

// Every text of the tree, escaped back into a document, parses: what S3 echoes of a client's
// body (DeleteObjects' keys) stays well-formed.
void CheckWritable(const gw::xml::Element& element) {
  gw::xml::Writer writer("Echo");
  writer.Leaf("Text", element.text);
  const std::string document = std::move(writer).Finish();
  Check(gw::xml::Parse(document).ok());
  (void)element.Child("Part");
  (void)element.Children("Object");
  for (const gw::xml::Element& child : element.children) CheckWritable(child);
}

void FuzzXml(std::string_view bytes) {
  const absl::StatusOr<gw::xml::Element> root = gw::xml::Parse(bytes);
  if (!root.ok()) {
    Check(root.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  CheckWritable(*root);
}

void FuzzForm(std::string_view bytes) {
  const gw::query::Form form = gw::query::ParseForm(bytes);
  (void)gw::query::FormValue(form, "Action");
  for (const auto& [name, value] : form) {
    const std::optional<double> seconds = gw::query::ParseTimestamp(value);
    if (!seconds.has_value()) continue;
    Check(std::isfinite(*seconds));
    const std::string printed = gw::query::FormatIso8601(*seconds);
    // Years 0000 to 9999 print as ParseTimestamp reads them, to the millisecond.
    if (*seconds >= 0 && *seconds < 253402300799.0) {
      const std::optional<double> again = gw::query::ParseTimestamp(printed);
      Check(again.has_value() && std::fabs(*again - *seconds) < 0.002);
    }
  }
}

void FuzzTarget(std::string_view bytes) {
  const auto [path, query] = gw::SplitTarget(bytes);
  Check(path.size() + query.size() <= bytes.size());
  for (const bool plus_is_space : {false, true}) {
    const std::optional<std::string> refused =
        gw::PercentDecode(path, plus_is_space, gw::BadEscape::kRefuse);
    const std::optional<std::string> kept =
        gw::PercentDecode(path, plus_is_space, gw::BadEscape::kKeep);
    Check(kept.has_value());
    if (refused.has_value()) Check(*refused == *kept);
  }
  const auto pairs = gw::ParseQuery(query);
  if (!pairs.has_value()) return;
  for (const auto& [name, value] : *pairs) {
    // SigV4's encoding of what the gateway decoded decodes back to it, both ways.
    const std::string encoded = amt::auth::UriEncode(value, /*keep_slash=*/false);
    Check(amt::auth::PercentDecode(encoded) == value);
    const std::optional<std::string> decoded = gw::PercentDecode(encoded, /*plus_is_space=*/true);
    Check(decoded.has_value() && *decoded == value);
    (void)name;
  }
}

// "METHOD target\n" then "name: value" lines up to an empty one, then the body.
gw::HttpRequest ParseRequest(std::string_view bytes) {
  gw::HttpRequest request;
  const auto next_line = [&bytes] {
    const size_t end = bytes.find('\n');
    std::string_view line = bytes.substr(0, end);
    bytes.remove_prefix(end == std::string_view::npos ? bytes.size() : end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    return line;
  };
  const std::string_view request_line = next_line();
  const size_t space = request_line.find(' ');
  request.method = std::string(request_line.substr(0, space));
  if (space != std::string_view::npos) request.target = request_line.substr(space + 1);
  while (!bytes.empty()) {
    const std::string_view line = next_line();
    if (line.empty()) break;
    const size_t colon = line.find(':');
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    while (value.starts_with(' ')) value.remove_prefix(1);
    request.headers.emplace(name, std::string(value));
    request.header_list.emplace_back(std::move(name), std::string(value));
  }
  request.body = std::string(bytes);
  return request;
}

void FuzzSigV4(std::string_view bytes) {
  static const amt::auth::Credentials* const credentials = [] {
    auto parsed = amt::auth::Credentials::Parse(
        "[default]\naws_access_key_id = AKIDEXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n",
        "wire_fuzzer");
    if (!parsed.ok()) __builtin_trap();
    return new amt::auth::Credentials(std::move(*parsed));
  }();
  const gw::HttpRequest request = ParseRequest(bytes);
  (void)gw::query::ScopeService(request);
  (void)gw::query::IsQueryRequest(request, "monitoring", "2010-08-01");
  (void)gw::query::IsFormContentType(request);

  const auto [path, query] = gw::SplitTarget(request.target);
  const std::string once = amt::auth::RemoveDotSegments(path);
  Check(amt::auth::RemoveDotSegments(once) == once);
  (void)amt::auth::CanonicalUri(path, /*s3=*/true);
  const std::string uri = amt::auth::CanonicalUri(path, /*s3=*/false);
  const std::vector<amt::auth::QueryParam> params = amt::auth::ParseQuery(query);
  const std::string canonical_query = amt::auth::CanonicalQueryString(params, "X-Amz-Signature");
  // The canonical query string is its own canonical form.
  Check(amt::auth::CanonicalQueryString(amt::auth::ParseQuery(canonical_query)) == canonical_query);
  const std::string* signed_headers = request.Header("x-amz-signedheaders");
  const std::vector<std::string> names =
      amt::auth::SignedHeaderNames(signed_headers != nullptr ? *signed_headers : "host;x-amz-date");
  const std::string headers = amt::auth::CanonicalHeaders(request.header_list, names);
  (void)amt::auth::StringToSign(
      "20261201T000000Z", "20261201/us-east-1/monitoring/aws4_request",
      amt::auth::CanonicalRequest(request.method, uri, canonical_query, headers, names, "-"));

  amt::auth::SigV4Request signed_request{request.method,
                                         request.target,
                                         request.header_list,
                                         request.body,
                                         /*now=*/1796083200,  // 20261201T000000Z
                                         /*body_sha256=*/std::nullopt};
  const amt::auth::AuthResult result = amt::auth::VerifySigV4(signed_request, *credentials);
  if (!result.ok()) (void)result.status();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % kDecoders) {
    case kCbor:
      FuzzCbor(rest);
      break;
    case kXml:
      FuzzXml(rest);
      break;
    case kForm:
      FuzzForm(rest);
      break;
    case kTarget:
      FuzzTarget(rest);
      break;
    default:
      FuzzSigV4(rest);
      break;
  }
  return 0;
}
