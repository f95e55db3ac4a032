#include "orchestrator/auth/sigv4.h"

#include <optional>
#include <string_view>

#include "absl/algorithm/container.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/crypto.h"
#include "common/text.h"

namespace amt::auth {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kSignatureParam = "X-Amz-Signature";
constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
constexpr int64_t kMaxExpiresSeconds = 604800;  // a week: S3's limit for presigned URLs

// The authentication parameters, from the Authorization header or from the query string.
struct AuthParams {
  std::string algorithm;
  std::string credential;
  std::string signed_headers;
  std::string signature;
  std::string amz_date;
  std::string expires;  // presigned only
};

const std::string* FindHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [header_name, value] : headers) {
    if (text::EqualsIgnoreCase(header_name, name)) return &value;
  }
  return nullptr;
}

const std::string* FindParam(const std::vector<QueryParam>& params, std::string_view name) {
  for (const QueryParam& param : params) {
    if (param.name == name) return &param.value;
  }
  return nullptr;
}

// The value of 1 to 9 decimal digits; -1 for anything else (empty, a sign, a letter, too long).
int64_t ParseDigits(std::string_view digits) {
  if (!text::AllDigits(digits) || digits.size() > 9) return -1;
  int64_t value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  return value;
}

std::string FormatAmzDate(int64_t unix_seconds) {
  return absl::FormatTime("%Y%m%dT%H%M%SZ", absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

// "yyyymmddThhmmssZ" as Unix seconds; nullopt for anything else, including impossible dates.
std::optional<int64_t> ParseAmzDate(std::string_view value) {
  if (value.size() != 16 || value[8] != 'T' || value[15] != 'Z') return std::nullopt;
  int64_t fields[6];
  const size_t starts[6] = {0, 4, 6, 9, 11, 13};
  const size_t widths[6] = {4, 2, 2, 2, 2, 2};
  for (int i = 0; i < 6; ++i) {
    fields[i] = ParseDigits(value.substr(starts[i], widths[i]));
    if (fields[i] < 0) return std::nullopt;
  }
  const absl::CivilSecond civil(fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]);
  // CivilSecond normalizes (month 13 becomes January); a date that changed was not a date.
  if (civil.year() != fields[0] || civil.month() != fields[1] || civil.day() != fields[2] ||
      civil.hour() != fields[3] || civil.minute() != fields[4] || civil.second() != fields[5]) {
    return std::nullopt;
  }
  return absl::ToUnixSeconds(absl::FromCivil(civil, absl::UTCTimeZone()));
}

// Builds the failures of one request, each with the facts common to all of them.
class Failures {
 public:
  Failures(const SigV4Request& request, bool presigned) {
    base_.presigned = presigned;
    base_.server_time = FormatAmzDate(request.now);
    if (const std::string* header = FindHeader(request.headers, "authorization")) {
      base_.authorization = *header;
    }
  }
  AuthFailure Make(AuthFailureReason reason, std::string detail, std::string value = {}) const {
    AuthFailure failure = base_;
    failure.reason = reason;
    failure.detail = std::move(detail);
    failure.value = std::move(value);
    return failure;
  }
  AuthFailure& base() { return base_; }
  bool presigned() const { return base_.presigned; }

 private:
  AuthFailure base_;
};

// Reads the Authorization header's components (split at ',' and ' ', as AWS does).
std::optional<AuthFailure> ParseHeaderAuth(const SigV4Request& request,
                                           std::string_view authorization, const Failures& failures,
                                           AuthParams* params) {
  const std::string_view trimmed = text::Strip(authorization);
  const size_t space = trimmed.find(' ');
  params->algorithm = std::string(trimmed.substr(0, space));
  const std::string_view rest =
      space == std::string_view::npos ? std::string_view() : trimmed.substr(space + 1);
  for (std::string_view component : text::Split(rest, ", ", /*skip_empty=*/true)) {
    const size_t eq = component.find('=');
    if (eq == std::string_view::npos) {
      return failures.Make(AuthFailureReason::kMalformedAuthorization,
                           text::Cat("Authorization component '", component, "' has no '='"),
                           std::string(component));
    }
    const std::string_view key = component.substr(0, eq);
    const std::string value(component.substr(eq + 1));
    if (key == "Credential") params->credential = value;
    if (key == "SignedHeaders") params->signed_headers = value;
    if (key == "Signature") params->signature = value;
  }
  if (const std::string* date = FindHeader(request.headers, "x-amz-date")) {
    params->amz_date = std::string(text::Strip(*date));
  }
  std::vector<std::string> missing;
  if (params->credential.empty()) missing.push_back("Credential");
  if (params->signature.empty()) missing.push_back("Signature");
  if (params->signed_headers.empty()) missing.push_back("SignedHeaders");
  if (params->amz_date.empty()) missing.push_back("X-Amz-Date");
  if (missing.empty()) return std::nullopt;
  AuthFailure failure = failures.Make(AuthFailureReason::kIncompleteSignature,
                                      text::Cat("Authorization lacks ", text::Join(missing, ", ")));
  failure.missing = std::move(missing);
  return failure;
}

// Reads the X-Amz-* query parameters of a presigned URL.
std::optional<AuthFailure> ParseQueryAuth(const std::vector<QueryParam>& query,
                                          const Failures& failures, AuthParams* params) {
  const std::pair<std::string_view, std::string*> wanted[] = {
      {"X-Amz-Algorithm", &params->algorithm}, {"X-Amz-Credential", &params->credential},
      {"X-Amz-Signature", &params->signature}, {"X-Amz-SignedHeaders", &params->signed_headers},
      {"X-Amz-Date", &params->amz_date},       {"X-Amz-Expires", &params->expires}};
  std::vector<std::string> missing;
  for (const auto& [name, field] : wanted) {
    const std::string* value = FindParam(query, name);
    if (value == nullptr || value->empty()) {
      missing.emplace_back(name);
    } else {
      *field = *value;
    }
  }
  if (missing.empty()) return std::nullopt;
  AuthFailure failure =
      failures.Make(AuthFailureReason::kIncompleteSignature,
                    text::Cat("the query string lacks ", text::Join(missing, ", ")));
  failure.missing = std::move(missing);
  return failure;
}

// The credential scope: "<key id>/<yyyymmdd>/<region>/<service>/aws4_request".
struct Scope {
  std::string key_id;
  std::string date;
  std::string region;
  std::string service;
};

// X-Amz-Date's format and distance from now; for a presigned URL, X-Amz-Expires and expiry.
std::optional<AuthFailure> CheckTime(const SigV4Request& request, const AuthParams& params,
                                     const VerifyOptions& options, Failures* failures) {
  const std::optional<int64_t> signed_at = ParseAmzDate(params.amz_date);
  if (!signed_at.has_value()) {
    return failures->Make(AuthFailureReason::kMalformedDate,
                          text::Cat("X-Amz-Date '", params.amz_date,
                                    "' is not in ISO 8601 basic format (yyyymmddThhmmssZ)"),
                          params.amz_date);
  }
  failures->base().request_time = params.amz_date;
  const int64_t skew = options.max_clock_skew_seconds;
  const bool presigned = failures->base().presigned;
  const int64_t expires = presigned ? ParseDigits(params.expires) : 0;
  if (expires < 0 || expires > kMaxExpiresSeconds) {
    return failures->Make(AuthFailureReason::kInvalidExpires,
                          text::Cat("X-Amz-Expires '", params.expires,
                                    "' is not a number of seconds up to ", kMaxExpiresSeconds),
                          params.expires);
  }
  AuthFailureReason reason;
  int64_t window = skew;
  if (*signed_at > request.now + skew) {
    reason = AuthFailureReason::kRequestTooNew;
  } else if (!presigned && *signed_at < request.now - skew) {
    reason = AuthFailureReason::kRequestTooOld;
  } else if (presigned && request.now > *signed_at + expires) {
    reason = AuthFailureReason::kPresignedUrlExpired;
    window = expires;
  } else {
    return std::nullopt;
  }
  AuthFailure failure = failures->Make(
      reason, text::Cat("signed at ", params.amz_date, ", now ", failures->base().server_time,
                        presigned && reason == AuthFailureReason::kPresignedUrlExpired
                            ? ", past X-Amz-Expires "
                            : ", allowed skew ",
                        window, " s"));
  failure.window_seconds = window;
  failure.limit_time = FormatAmzDate(
      reason == AuthFailureReason::kRequestTooNew ? request.now + window : request.now - window);
  return failure;
}

// The Credential's five parts, its terminator and its date against X-Amz-Date's.
std::optional<AuthFailure> ParseScope(const AuthParams& params, Failures* failures, Scope* scope) {
  // Trailing slashes are ignored (DynamoDB's behaviour, per mhart/dynalite).
  std::string_view credential = params.credential;
  while (credential.ends_with('/')) credential.remove_suffix(1);
  std::vector<std::string> parts;
  for (std::string_view part : text::Split(credential, "/", /*skip_empty=*/false)) {
    parts.emplace_back(part);
  }
  if (parts.size() != 5) {
    return failures->Make(AuthFailureReason::kMalformedCredential,
                          text::Cat("Credential '", params.credential,
                                    "' is not key/date/region/service/aws4_request"),
                          params.credential);
  }
  failures->base().access_key_id = parts[0];
  if (parts[4] != "aws4_request") {
    return failures->Make(
        AuthFailureReason::kWrongTerminator,
        text::Cat("credential scope ends in '", parts[4], "', not 'aws4_request'"), parts[4]);
  }
  if (parts[1] != std::string_view(params.amz_date).substr(0, 8)) {
    return failures->Make(AuthFailureReason::kScopeDateMismatch,
                          text::Cat("credential scope date ", parts[1],
                                    " is not the date of X-Amz-Date ", params.amz_date),
                          parts[1]);
  }
  *scope = Scope{.key_id = std::move(parts[0]),
                 .date = std::move(parts[1]),
                 .region = std::move(parts[2]),
                 .service = std::move(parts[3])};
  return std::nullopt;
}

// What the request says its payload hash is: x-amz-content-sha256 when sent, UNSIGNED-PAYLOAD
// for an S3 presigned URL (botocore's S3SigV4QueryAuth.payload), else the body's SHA-256.
std::string PayloadHash(const SigV4Request& request, const std::string* content_sha256,
                        bool presigned, bool s3) {
  if (content_sha256 != nullptr) return std::string(text::Strip(*content_sha256));
  if (presigned && s3) return std::string(kUnsignedPayload);
  return request.body_sha256.has_value() ? *request.body_sha256 : Sha256Hex(request.body);
}

bool IsSha256Hex(std::string_view value) {
  return value.size() == 64 && absl::c_all_of(value, [](char c) {
           return text::IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

// The signature, recomputed and compared; then x-amz-content-sha256 against the body.
AuthResult CheckSignature(const SigV4Request& request, std::string_view raw_path,
                          const std::vector<QueryParam>& query, const AuthParams& params,
                          const std::vector<std::string>& signed_names, const Scope& scope,
                          const Credential& credential, const Failures& failures) {
  const bool presigned = failures.presigned();
  const bool s3 = scope.service == "s3";
  const std::string* content_sha256 = FindHeader(request.headers, "x-amz-content-sha256");
  const std::string payload_hash = PayloadHash(request, content_sha256, presigned, s3);
  if (payload_hash.starts_with("STREAMING-")) {
    return failures.Make(AuthFailureReason::kUnsupportedPayload,
                         text::Cat("chunked payload signing (", payload_hash, ") is not supported"),
                         payload_hash);
  }
  const std::string canonical_request = CanonicalRequest(
      request.method, CanonicalUri(raw_path, s3),
      CanonicalQueryString(query, presigned ? kSignatureParam : std::string_view()),
      CanonicalHeaders(request.headers, signed_names), signed_names, payload_hash);
  const std::string string_to_sign =
      StringToSign(params.amz_date,
                   text::Cat(scope.date, "/", scope.region, "/", scope.service, "/aws4_request"),
                   canonical_request);
  const std::string expected =
      Signature(SigningKey(credential.secret_access_key, scope.date, scope.region, scope.service),
                string_to_sign);
  if (!ConstantTimeEquals(expected, params.signature)) {
    AuthFailure failure = failures.Make(AuthFailureReason::kSignatureMismatch,
                                        "the signature does not match the request");
    failure.canonical_request = canonical_request;
    failure.string_to_sign = string_to_sign;
    failure.signature_provided = params.signature;
    return failure;
  }
  if (content_sha256 != nullptr && payload_hash != kUnsignedPayload) {
    const std::string actual =
        request.body_sha256.has_value() ? *request.body_sha256 : Sha256Hex(request.body);
    if (!IsSha256Hex(payload_hash) || text::Lower(payload_hash) != actual) {
      AuthFailure failure = failures.Make(
          AuthFailureReason::kContentSha256Mismatch,
          text::Cat("x-amz-content-sha256 ", payload_hash, " is not the body's SHA-256"),
          payload_hash);
      failure.payload_sha256 = actual;
      return failure;
    }
  }
  return Principal{.access_key_id = scope.key_id,
                   .profile = credential.profile,
                   .region = scope.region,
                   .service = scope.service,
                   .presigned = presigned};
}

}  // namespace

absl::Status AuthResult::status() const {
  if (ok()) return absl::OkStatus();
  return absl::UnauthenticatedError(failure().detail);
}

AuthResult VerifySigV4(const SigV4Request& request, const Credentials& credentials,
                       const VerifyOptions& options) {
  const std::string_view target = request.target;
  const size_t question = target.find('?');
  const std::string_view raw_path = target.substr(0, question);
  const std::vector<QueryParam> query = question == std::string_view::npos
                                            ? std::vector<QueryParam>()
                                            : ParseQuery(target.substr(question + 1));
  const std::string* authorization = FindHeader(request.headers, "authorization");
  const bool presigned = FindParam(query, "X-Amz-Algorithm") != nullptr;
  Failures failures(request, presigned);
  if (authorization != nullptr && presigned) {
    return failures.Make(AuthFailureReason::kAmbiguousAuthentication,
                         "both an Authorization header and X-Amz-Algorithm in the query");
  }
  if (authorization == nullptr && !presigned) {
    if (FindParam(query, "AWSAccessKeyId") != nullptr && FindParam(query, "Signature") != nullptr) {
      AuthFailure failure = failures.Make(
          AuthFailureReason::kMissingAuthentication,
          "a presigned URL of AWS Signature Version 2 (AWSAccessKeyId and Signature in the query); "
          "only Version 4 is checked");
      failure.signature_version_2 = true;
      return failure;
    }
    return failures.Make(AuthFailureReason::kMissingAuthentication,
                         "no Authorization header and no X-Amz-Algorithm query parameter");
  }
  if (!presigned && !text::Strip(*authorization).starts_with("AWS4-")) {
    AuthFailure failure =
        failures.Make(AuthFailureReason::kMissingAuthentication,
                      "the Authorization header is not AWS Signature Version 4", *authorization);
    failure.signature_version_2 = text::Strip(*authorization).starts_with("AWS ");
    return failure;
  }
  AuthParams params;
  std::optional<AuthFailure> failure =
      presigned ? ParseQueryAuth(query, failures, &params)
                : ParseHeaderAuth(request, *authorization, failures, &params);
  if (!failure.has_value()) failure = CheckTime(request, params, options, &failures);
  if (failure.has_value()) return *std::move(failure);
  const std::vector<std::string> signed_names = SignedHeaderNames(params.signed_headers);
  if (!absl::c_linear_search(signed_names, "host")) {
    return failures.Make(
        AuthFailureReason::kHostNotSigned,
        text::Cat("'host' is not among the signed headers '", params.signed_headers, "'"));
  }
  if (params.algorithm != kAlgorithm) {
    return failures.Make(AuthFailureReason::kUnsupportedAlgorithm,
                         text::Cat("algorithm '", params.algorithm, "' is not ", kAlgorithm),
                         params.algorithm);
  }
  Scope scope;
  if ((failure = ParseScope(params, &failures, &scope))) return *std::move(failure);
  const Credential* credential = credentials.Find(scope.key_id);
  if (credential == nullptr) {
    return failures.Make(AuthFailureReason::kUnknownAccessKey,
                         text::Cat("unknown access key id '", scope.key_id, "'"), scope.key_id);
  }
  return CheckSignature(request, raw_path, query, params, signed_names, scope, *credential,
                        failures);
}

}  // namespace amt::auth
