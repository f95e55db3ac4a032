// A SigV4 signer for the failure-path tests, built from canonical.h's steps: it signs what the
// tests then break one way or another. Whether those steps are right is shown elsewhere, against
// AWS's test-suite vectors and real botocore signatures (sigv4_test.cc,
// sigv4_botocore_test.cc), so these helpers are not the tests' only witness.
#ifndef AMT_TESTS_UNIT_AUTH_TEST_SIGNER_H_
#define AMT_TESTS_UNIT_AUTH_TEST_SIGNER_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/crypto.h"
#include "orchestrator/auth/canonical.h"
#include "orchestrator/auth/sigv4.h"

namespace amt::auth::testing {

// AWS's example key, as in the SigV4 test suite.
inline constexpr char kKeyId[] = "AKIDEXAMPLE";
inline constexpr char kSecret[] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
inline constexpr char kAmzDate[] = "20150830T123600Z";
inline constexpr int64_t kSignedAt = 1440938160;  // kAmzDate as Unix seconds

inline Credentials ExampleCredentials() {
  return *Credentials::Parse(std::string("[example]\naws_access_key_id = ") + kKeyId +
                                 "\naws_secret_access_key = " + kSecret + "\n",
                             "test");
}

struct SignSpec {
  std::string key_id = kKeyId;
  std::string secret = kSecret;
  std::string amz_date = kAmzDate;
  std::string scope_date = "20150830";
  std::string region = "us-east-1";
  std::string service = "service";
  std::string terminator = "aws4_request";
  std::string signed_headers = "host;x-amz-date";
};

inline std::string Credential(const SignSpec& spec) {
  return spec.key_id + "/" + spec.scope_date + "/" + spec.region + "/" + spec.service + "/" +
         spec.terminator;
}

// The signature of `request` (whose target, headers and body are final) under `spec`, following
// the server's rules: x-amz-content-sha256 if sent, else the body's hash.
inline std::string SignatureFor(const SigV4Request& request, const SignSpec& spec,
                                bool presigned = false) {
  const size_t question = request.target.find('?');
  const std::string path = request.target.substr(0, question);
  const std::vector<QueryParam> query = question == std::string::npos
                                            ? std::vector<QueryParam>()
                                            : ParseQuery(request.target.substr(question + 1));
  std::string payload = Sha256Hex(request.body);
  for (const auto& [name, value] : request.headers) {
    if (name == "x-amz-content-sha256") payload = value;
  }
  if (presigned && spec.service == "s3") payload = "UNSIGNED-PAYLOAD";
  const std::vector<std::string> names = SignedHeaderNames(spec.signed_headers);
  const std::string canonical_request =
      CanonicalRequest(request.method, CanonicalUri(path, spec.service == "s3"),
                       CanonicalQueryString(query, presigned ? "X-Amz-Signature" : ""),
                       CanonicalHeaders(request.headers, names), names, payload);
  const std::string scope =
      spec.scope_date + "/" + spec.region + "/" + spec.service + "/" + spec.terminator;
  return Signature(SigningKey(spec.secret, spec.scope_date, spec.region, spec.service),
                   StringToSign(spec.amz_date, scope, canonical_request));
}

// A request signed in the Authorization header: `request` gets X-Amz-Date (unless it has one)
// and the Authorization header.
inline SigV4Request HeaderSigned(SigV4Request request, const SignSpec& spec = {}) {
  bool has_date = false;
  for (const auto& header : request.headers) has_date |= header.first == "X-Amz-Date";
  if (!has_date) request.headers.emplace_back("X-Amz-Date", spec.amz_date);
  const std::string signature = SignatureFor(request, spec);
  request.headers.emplace_back("Authorization", "AWS4-HMAC-SHA256 Credential=" + Credential(spec) +
                                                    ", SignedHeaders=" + spec.signed_headers +
                                                    ", Signature=" + signature);
  return request;
}

// A presigned request: the X-Amz-* parameters appended to the target's query.
inline SigV4Request QuerySigned(SigV4Request request, const SignSpec& spec,
                                const std::string& expires) {
  request.target += request.target.find('?') == std::string::npos ? "?" : "&";
  request.target +=
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + UriEncode(Credential(spec), false) +
      "&X-Amz-Date=" + spec.amz_date + "&X-Amz-Expires=" + expires +
      "&X-Amz-SignedHeaders=" + UriEncode(spec.signed_headers, false);
  request.target += "&X-Amz-Signature=" + SignatureFor(request, spec, /*presigned=*/true);
  return request;
}

// The value of the first header named exactly `name`; a test failure when there is none.
inline std::string& HeaderValue(SigV4Request& request, std::string_view name) {
  for (auto& [header_name, value] : request.headers) {
    if (header_name == name) return value;
  }
  ADD_FAILURE() << "no header " << name;
  static std::string* none = new std::string();
  return *none;
}

// A GET of / on example.amazonaws.com at kSignedAt, not yet signed.
inline SigV4Request ExampleGet(std::string target = "/") {
  SigV4Request request;
  request.method = "GET";
  request.target = std::move(target);
  request.headers = {{"Host", "example.amazonaws.com"}};
  request.now = kSignedAt;
  return request;
}

}  // namespace amt::auth::testing

#endif  // AMT_TESTS_UNIT_AUTH_TEST_SIGNER_H_
