// VerifySigV4: checks an HTTP request's AWS Signature Version 4 against the access keys of a
// Credentials, the way AWS's front ends do, so that amtd can refuse what AWS would refuse.
//
// Both forms are accepted: the Authorization header ("AWS4-HMAC-SHA256 Credential=AKID/
// 20261201/us-east-1/sagemaker/aws4_request, SignedHeaders=host;x-amz-date, Signature=...")
// with an X-Amz-Date header, and query-string authentication (presigned URLs: X-Amz-Algorithm,
// X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders, X-Amz-Signature). Any
// region and service in the credential scope are accepted (amtd serves several services on one
// port); the service decides the canonical URI (see canonical.h: "s3" takes the path as sent).
// The payload hash is x-amz-content-sha256 when the request has it (then also checked against
// the body, unless UNSIGNED-PAYLOAD), UNSIGNED-PAYLOAD for an S3 presigned URL, else the body's
// SHA-256; chunked signing (STREAMING-*) is refused. A presigned URL needs X-Amz-Expires (at
// most 604800 s, S3's limit) and is valid until X-Amz-Date + X-Amz-Expires; the header form must
// be within the clock skew of `now`. The Date header is not read in place of X-Amz-Date: botocore
// and the AWS SDKs always send X-Amz-Date. X-Amz-Security-Token is signed like any header and
// not otherwise checked (amtd has no session tokens).
//
// A refusal is an AuthFailure: a protocol-neutral reason plus the facts AWS quotes in its
// messages. auth_errors.h turns it into AWS's code, message and HTTP status, for the JSON
// services or for S3. Pure: the time is the request's `now`; no clock, no I/O.
#ifndef AMT_ORCHESTRATOR_AUTH_SIGV4_H_
#define AMT_ORCHESTRATOR_AUTH_SIGV4_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "common/credentials.h"
#include "orchestrator/auth/canonical.h"

namespace amt::auth {

// The parts of an HTTP request the signature covers, as received.
struct SigV4Request {
  std::string method;  // "GET", "POST", ...
  // The request-target of the request line: the path as sent (percent-encoded), then "?query"
  // if there is one. Not decoded: the canonical URI depends on the exact bytes.
  std::string target;
  HeaderList headers;  // every header, in order, repeats kept
  std::string body;    // the payload bytes
  int64_t now = 0;     // the server's time, Unix epoch seconds
  // The payload's SHA-256 (lower-case hex) when the bytes are not in `body` (a body the server
  // wrote to a file as it came); then `body` is not read.
  std::optional<std::string> body_sha256;
};

struct VerifyOptions {
  // How far X-Amz-Date may be from `now`, either way. AWS allows 15 minutes.
  int64_t max_clock_skew_seconds = 900;
};

// Why a request was refused. The comment says what AuthFailure::value holds, if anything.
enum class AuthFailureReason {
  kMissingAuthentication,    // no Authorization header, or one not starting "AWS4-"; value: it
  kAmbiguousAuthentication,  // both an Authorization header and X-Amz-Algorithm in the query
  kMalformedAuthorization,   // an Authorization component without '='; value: the component
  kIncompleteSignature,      // required components missing; see AuthFailure::missing
  kMalformedDate,            // X-Amz-Date not "yyyymmddThhmmssZ"; value: the X-Amz-Date
  kRequestTooOld,            // X-Amz-Date more than the skew before now
  kRequestTooNew,            // X-Amz-Date more than the skew after now
  kInvalidExpires,           // X-Amz-Expires not a number or over 604800; value: X-Amz-Expires
  kPresignedUrlExpired,      // now is after X-Amz-Date + X-Amz-Expires
  kHostNotSigned,            // "host" is not among the signed headers
  kUnsupportedAlgorithm,     // not AWS4-HMAC-SHA256; value: the algorithm
  kMalformedCredential,      // Credential not key/date/region/service/term; value: Credential
  kWrongTerminator,          // scope does not end in aws4_request; value: the terminator
  kScopeDateMismatch,        // scope date is not X-Amz-Date's date; value: the scope date
  kUnknownAccessKey,         // access key id not in the Credentials; value: the key id
  kUnsupportedPayload,       // x-amz-content-sha256 STREAMING-* (chunked); value: it
  kSignatureMismatch,        // the signature differs from the one computed
  kContentSha256Mismatch,    // x-amz-content-sha256 is not the body's SHA-256; value: it
};

// A refused request: the reason and what AWS's messages for it quote. Fields not relevant to
// the reason are empty (or 0).
struct AuthFailure {
  AuthFailureReason reason = AuthFailureReason::kMissingAuthentication;
  bool presigned = false;  // query-string authentication rather than the header
  std::string detail;      // a neutral English explanation, for logs; never a secret
  std::string value;       // the offending text (see AuthFailureReason)
  // kIncompleteSignature: what is missing, in AWS's order. Header: any of "Credential",
  // "Signature", "SignedHeaders", "X-Amz-Date"; query: any of "X-Amz-Algorithm",
  // "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date",
  // "X-Amz-Expires".
  std::vector<std::string> missing;
  std::string authorization;  // the Authorization header as received, when there was one
  // kMissingAuthentication of a request signed with AWS Signature Version 2 (an "AWS key:sig"
  // Authorization header, or a presigned URL with AWSAccessKeyId and Signature, as boto3's
  // default S3 presigned URLs are): S3 answers that the mechanism is not supported.
  bool signature_version_2 = false;
  std::string access_key_id;  // once the Credential parsed
  std::string request_time;   // X-Amz-Date, once it parsed ("20261201T000000Z")
  std::string server_time;    // `now` in the same format (set for every failure)
  // kRequestTooOld/kRequestTooNew: the allowed skew; kPresignedUrlExpired: X-Amz-Expires.
  int64_t window_seconds = 0;
  // The same three: server_time - window (too old, expired) or + window (too new), formatted.
  std::string limit_time;
  // kSignatureMismatch: what the signature was computed over, which AWS echoes so a client can
  // find its mistake (neither reveals the secret).
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature_provided;
  std::string payload_sha256;  // kContentSha256Mismatch: the body's actual SHA-256
};

// Who signed an accepted request.
struct Principal {
  std::string access_key_id;
  std::string profile;  // the credentials-file profile of the key
  std::string region;   // from the credential scope
  std::string service;  // from the credential scope
  bool presigned = false;
};

// Either a Principal or an AuthFailure; absl::StatusOr's shape, with AWS's facts kept.
class AuthResult {
 public:
  // Implicit, as absl::StatusOr's, so that `return failure;` and `return principal;` read plainly.
  AuthResult(Principal principal) : result_(std::move(principal)) {}  // NOLINT
  AuthResult(AuthFailure failure) : result_(std::move(failure)) {}    // NOLINT

  bool ok() const { return std::holds_alternative<Principal>(result_); }
  // Precondition: ok().
  const Principal& principal() const { return std::get<Principal>(result_); }
  // Precondition: !ok().
  const AuthFailure& failure() const { return std::get<AuthFailure>(result_); }

  // OK, or Unauthenticated with the failure's detail: for callers that only log.
  absl::Status status() const;

 private:
  std::variant<Principal, AuthFailure> result_;
};

// Verifies `request` against `credentials`. Checks run in the order DynamoDB's front end
// reports them (as recorded by mhart/dynalite index.js): one auth form only, its components,
// X-Amz-Date's format and skew (or a presigned URL's expiry), host signed, the algorithm, the
// credential scope, the access key, then the signature (compared in constant time) and last
// x-amz-content-sha256 against the body. The first failure is returned. Thread-safe: reads
// `credentials` only.
AuthResult VerifySigV4(const SigV4Request& request, const Credentials& credentials,
                       const VerifyOptions& options = {});

}  // namespace amt::auth

#endif  // AMT_ORCHESTRATOR_AUTH_SIGV4_H_
