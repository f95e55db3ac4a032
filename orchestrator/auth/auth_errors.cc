#include "orchestrator/auth/auth_errors.h"

#include <string_view>

#include "common/text.h"

// Sources, cited by key in the tables below. Captures of real AWS responses come first; the
// emulators (mhart/dynalite for the coral JSON front end, LocalStack, MinIO, versitygw for S3)
// fill in what no capture shows.
// [sm-runtime]  SageMaker (runtime) reply: HTTP 403, x-amzn-ErrorType
//               MissingAuthenticationTokenException, {"message":"Missing Authentication Token"}:
//               https://github.com/aws/amazon-sagemaker-examples/issues/290
// [sm-scope]    SageMaker API reply: HTTP 400, application/x-amz-json-1.1,
//               {"__type":"InvalidSignatureException","message":"Credential should be scoped
//               to correct service: 'sagemaker'. "}:
//               https://github.com/disneystreaming/smithy4s/issues/1568
// [sm-token]    SageMaker API CreateTrainingJob: "UnrecognizedClientException: The security token
//               included in the request is invalid. status code: 400":
//               https://github.com/aws/amazon-sagemaker-operator-for-k8s/issues/99
// [sm-sig]      SageMaker runtime mismatch text, with "The Canonical String for this request
//               should have been" and "The String-to-Sign should have been":
//               https://github.com/DavidMuller/aws-requests-auth/issues/33
// [dynalite]    DynamoDB's front end (the coral framework SageMaker shares) as recorded in
//               mhart/dynalite index.js: codes, texts, HTTP 400, the order of the checks.
// [expired]     "Signature expired: 20140325T143453Z is now earlier than 20140325T143751Z
//               (20140325T145251Z - 15 min.)", InvalidSignatureException, statusCode 400:
//               https://github.com/aws/aws-sdk-js/issues/254
// [not-yet]     "Signature not yet current: <t> is still later than <now + skew> (<now> + 15
//               min.)": dacut/scratchstack-aws-signature src/error.rs (SignatureDoesNotMatch).
// [cloud9]      IncompleteSignatureException, statusCode 400, "'<part>' not a valid key=value
//               pair (missing equal-sign) in Authorization header: '<header>'.":
//               https://github.com/iann0036/cloud9-sync/issues/10
// [apigw]       "Authorization header requires 'Credential' parameter. ... Authorization=...":
//               https://github.com/aws/chalice/issues/828
// [s3-one]      InvalidArgument "Only one auth mechanism allowed; ...":
//               https://github.com/catalyst/moodle-tool_objectfs/issues/303,
//               https://github.com/buildkite/buildkite-mcp-server/issues/278
// [s3-key]      InvalidAccessKeyId, 403:
// https://github.com/raster-foundry/raster-foundry/issues/289,
//               https://github.com/zerocracy/farm/issues/2205
// [s3-skew]     RequestTimeTooSkewed, 403, with RequestTime, ServerTime and
//               MaxAllowedSkewMilliseconds 900000: https://github.com/aws/aws-sdk-php/issues/612
// [s3-date]     AccessDenied "AWS authentication requires a valid Date or x-amz-date header",
//               403: https://github.com/gaul/s3proxy/pull/29 (AWS's answer to ceph's s3-tests),
//               https://github.com/indix/gocd-s3-artifacts/pull/16
// [s3-sig]      SignatureDoesNotMatch "... Check your key and signing method.", 403:
//               https://github.com/akka/alpakka/issues/357; LocalStack
//               localstack-core/localstack/services/s3/presigned_url.py
// [s3-expired]  AccessDenied "Request has expired" with X-Amz-Expires, Expires, ServerTime:
//               https://github.com/aws/aws-sdk-php/issues/1333
// [s3-not-yet]  AccessDenied "Request is not yet valid" with X-Amz-Date, Expires, ServerTime:
//               https://github.com/minio/minio/issues/2638,
//               https://github.com/dmjio/s3-signer/issues/16
// [s3-v2]       InvalidRequest "The authorization mechanism you have provided is not supported.
//               Please use AWS4-HMAC-SHA256.", 400: https://github.com/aws/aws-cli/issues/2432,
//               https://github.com/yegor256/s3auth/issues/320
// [s3-type]     InvalidArgument "Unsupported Authorization Type" (ArgumentName Authorization):
//               https://github.com/Einstore/Einstore/issues/152,
//               https://github.com/danialfarid/ng-file-upload/issues/615
// [localstack]  localstack-core/localstack/services/s3/presigned_url.py:
//               AuthorizationQueryParametersError texts.
// [versitygw]   versity/versitygw s3err/sigv4.go and s3err/presigned-urls.go (an S3 gateway
//               tested against AWS): AuthorizationHeaderMalformed and
//               AuthorizationQueryParametersError texts, HTTP 400.
// [minio]       minio/minio cmd/api-errors.go: XAmzContentSHA256Mismatch (400), NotImplemented
//               (501), the X-Amz-Expires texts.

namespace amt::auth {
namespace {

using Reason = AuthFailureReason;

// "15 min." or, for a window not in whole minutes, "90 sec.".
std::string Window(int64_t seconds) {
  if (seconds % 60 == 0) return text::Cat(seconds / 60, " min.");
  return text::Cat(seconds, " sec.");
}

constexpr std::string_view kJsonMismatch =
    "The request signature we calculated does not match the signature you provided. Check your "
    "AWS Secret Access Key and signing method. Consult the service documentation for details.";

// [dynalite], [apigw], [cloud9]: the IncompleteSignatureException texts.
std::string JsonIncompleteMessage(const AuthFailure& failure) {
  std::string message;
  if (failure.presigned) {
    for (const std::string& name : failure.missing) {
      message += text::Cat("AWS query-string parameters must include '", name, "'. ");
    }
    return message + "Re-examine the query-string parameters.";
  }
  for (const std::string& name : failure.missing) {
    if (name == "X-Amz-Date") {
      message +=
          "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' "
          "header. ";
    } else {
      message += text::Cat("Authorization header requires '", name, "' parameter. ");
    }
  }
  return message + "Authorization=" + failure.authorization;
}

// X-Amz-Expires' own texts ([versitygw], [minio]); the JSON services quote S3's too (ours).
std::string ExpiresMessage(const AuthFailure& failure) {
  if (failure.value.starts_with('-')) return "X-Amz-Expires must be non-negative";
  if (failure.value.empty() || failure.value.find_first_not_of("0123456789") != std::string::npos) {
    return "X-Amz-Expires should be a number";
  }
  return "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires "
         "must be less than 604800 seconds";
}

AwsAuthError Invalid(std::string message) {
  return {"InvalidSignatureException", std::move(message), 400};
}

AwsAuthError Incomplete(std::string message) {
  return {"IncompleteSignatureException", std::move(message), 400};
}

// The JSON services' clock and expiry texts.
AwsAuthError JsonTimeError(const AuthFailure& failure) {
  if (failure.reason == Reason::kRequestTooNew) {  // [not-yet]
    return Invalid(text::Cat("Signature not yet current: ", failure.request_time,
                             " is still later than ", failure.limit_time, " (", failure.server_time,
                             " + ", Window(failure.window_seconds), ")"));
  }
  // kRequestTooOld [expired]; kPresignedUrlExpired: ours, the same text with X-Amz-Expires as
  // the window.
  return Invalid(text::Cat("Signature expired: ", failure.request_time, " is now earlier than ",
                           failure.limit_time, " (", failure.server_time, " - ",
                           Window(failure.window_seconds), ")"));
}

// The JSON services' texts about the Credential and its scope ([dynalite]; each scope text ends
// in ". " as the SageMaker capture [sm-scope] does).
AwsAuthError JsonCredentialError(const AuthFailure& failure) {
  switch (failure.reason) {
    case Reason::kMalformedCredential:
      return Incomplete(
          text::Cat("Credential must have exactly 5 slash-delimited elements, e.g. "
                    "keyid/date/region/service/term, got '",
                    failure.value, "'"));
    case Reason::kWrongTerminator:
      return Invalid(
          text::Cat("Credential should be scoped with a valid terminator: 'aws4_request', not '",
                    failure.value, "'. "));
    default:  // kScopeDateMismatch
      return Invalid(text::Cat(
          "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from "
          "HTTP: '",
          failure.value, "' != '", failure.request_time.substr(0, 8), "', from '",
          failure.request_time, "'. "));
  }
}

// S3's texts for a malformed Authorization header or malformed query parameters; the two forms
// have different codes and wording ([versitygw], [localstack], [s3-date], [s3-type]).
AwsAuthError S3FormError(const AuthFailure& failure) {
  const bool query = failure.presigned;
  const auto header_malformed = [](std::string_view what) {
    return AwsAuthError{"AuthorizationHeaderMalformed",
                        text::Cat("The authorization header is malformed; ", what), 400};
  };
  const auto query_error = [](std::string_view message) {
    return AwsAuthError{"AuthorizationQueryParametersError", std::string(message), 400};
  };
  const AwsAuthError no_date = {
      "AccessDenied", "AWS authentication requires a valid Date or x-amz-date header", 403};
  constexpr std::string_view kCredentialShape =
      "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/"
      "aws4_request\".";
  constexpr std::string_view kParsing = "Error parsing the X-Amz-Credential parameter; ";
  switch (failure.reason) {
    case Reason::kMalformedAuthorization:
      return header_malformed(
          text::Cat("the authorization component \"", failure.value, "\" is malformed."));
    case Reason::kIncompleteSignature:
      if (query) {
        return query_error(
            "Query-string authentication version 4 requires the X-Amz-Algorithm, "
            "X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and "
            "X-Amz-Expires parameters.");
      }
      if (failure.missing.size() == 1 && failure.missing[0] == "X-Amz-Date") return no_date;
      return header_malformed(
          "the authorization header requires three components: Credential, SignedHeaders, and "
          "Signature.");
    case Reason::kMalformedDate:
      if (!query) return no_date;
      return query_error("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
    case Reason::kUnsupportedAlgorithm:
      if (!query) return {"InvalidArgument", "Unsupported Authorization Type", 400};
      return query_error(
          "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256 and AWS4-ECDSA-P256-SHA256\"");
    case Reason::kMalformedCredential:
      return query ? query_error(text::Cat(kParsing, kCredentialShape))
                   : header_malformed(kCredentialShape);
    case Reason::kWrongTerminator: {
      const std::string what = text::Cat("incorrect terminal \"", failure.value,
                                         "\". This endpoint uses \"aws4_request\".");
      return query ? query_error(text::Cat(kParsing, what)) : header_malformed(what);
    }
    default:  // kScopeDateMismatch
      if (!query) {
        return header_malformed("Invalid credential date. Date is not the same as X-Amz-Date.");
      }
      return query_error(text::Cat("Invalid credential date \"", failure.value,
                                   "\". This date is not the same as X-Amz-Date: \"",
                                   failure.request_time.substr(0, 8), "\"."));
  }
}

}  // namespace

AwsAuthError JsonServiceAuthError(const AuthFailure& failure) {
  switch (failure.reason) {
    case Reason::kMissingAuthentication:  // [sm-runtime]; DynamoDB differs ([dynalite])
      return {"MissingAuthenticationTokenException", "Missing Authentication Token", 403};
    case Reason::kAmbiguousAuthentication:  // [dynalite]
      return Invalid(
          "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' "
          "as HTTP header.");
    case Reason::kMalformedAuthorization:  // [cloud9]
      return Incomplete(text::Cat("'", failure.value,
                                  "' not a valid key=value pair (missing equal-sign) in "
                                  "Authorization header: '",
                                  failure.authorization, "'."));
    case Reason::kIncompleteSignature:  // [dynalite], [apigw]
      return Incomplete(JsonIncompleteMessage(failure));
    case Reason::kMalformedDate:  // [dynalite]
      return Incomplete(text::Cat("Date must be in ISO-8601 'basic format'. Got '", failure.value,
                                  "'. See http://en.wikipedia.org/wiki/ISO_8601"));
    case Reason::kRequestTooOld:
    case Reason::kRequestTooNew:
    case Reason::kPresignedUrlExpired:
      return JsonTimeError(failure);
    case Reason::kInvalidExpires:  // ours: S3's texts
      return Incomplete(ExpiresMessage(failure));
    case Reason::kHostNotSigned:  // [dynalite]
      return Invalid("'Host' must be a 'SignedHeader' in the AWS Authorization.");
    case Reason::kUnsupportedAlgorithm:  // [dynalite]
      return Incomplete(text::Cat("Unsupported AWS 'algorithm': '", failure.value,
                                  "' (only AWS4-HMAC-SHA256 for now). "));
    case Reason::kMalformedCredential:
    case Reason::kWrongTerminator:
    case Reason::kScopeDateMismatch:
      return JsonCredentialError(failure);
    case Reason::kUnknownAccessKey:  // [sm-token], [dynalite]
      return {"UnrecognizedClientException",
              "The security token included in the request is invalid.", 400};
    case Reason::kSignatureMismatch:  // [sm-sig], [dynalite]; HTTP 400 per [sm-scope]
      return Invalid(
          text::Cat(kJsonMismatch, "\n\nThe Canonical String for this request should have been\n'",
                    failure.canonical_request, "'\n\nThe String-to-Sign should have been\n'",
                    failure.string_to_sign, "'\n"));
    case Reason::kUnsupportedPayload:     // ours: JSON clients never stream
    case Reason::kContentSha256Mismatch:  // ours: the mismatch text without the echo
      break;
  }
  return Invalid(std::string(kJsonMismatch));
}

AwsAuthError S3AuthError(const AuthFailure& failure) {
  switch (failure.reason) {
    case Reason::kMissingAuthentication:
      if (failure.signature_version_2) {  // Signature Version 2, header or query [s3-v2]
        return {"InvalidRequest",
                "The authorization mechanism you have provided is not supported. Please use "
                "AWS4-HMAC-SHA256.",
                400};
      }
      if (failure.authorization.empty()) return {"AccessDenied", "Access Denied", 403};
      // Any other scheme [s3-type].
      return {"InvalidArgument", "Unsupported Authorization Type", 400};
    case Reason::kAmbiguousAuthentication:  // [s3-one]
      return {"InvalidArgument",
              "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, "
              "Signature query string parameter or the Authorization header should be specified",
              400};
    case Reason::kMalformedAuthorization:
    case Reason::kIncompleteSignature:
    case Reason::kMalformedDate:
    case Reason::kUnsupportedAlgorithm:
    case Reason::kMalformedCredential:
    case Reason::kWrongTerminator:
    case Reason::kScopeDateMismatch:
      return S3FormError(failure);
    case Reason::kRequestTooOld:
    case Reason::kRequestTooNew:
      if (failure.presigned) {  // only a presigned URL from the future gets here [s3-not-yet]
        return {"AccessDenied", "Request is not yet valid", 403};
      }
      // [s3-skew]
      return {"RequestTimeTooSkewed",
              "The difference between the request time and the current time is too large.", 403};
    case Reason::kInvalidExpires:  // [versitygw], [minio]
      return {"AuthorizationQueryParametersError", ExpiresMessage(failure), 400};
    case Reason::kPresignedUrlExpired:  // [s3-expired]
      return {"AccessDenied", "Request has expired", 403};
    case Reason::kUnknownAccessKey:  // [s3-key]
      return {"InvalidAccessKeyId",
              "The AWS Access Key Id you provided does not exist in our records.", 403};
    case Reason::kUnsupportedPayload:  // [minio]
      return {"NotImplemented",
              "A header you provided implies functionality that is not implemented", 501};
    case Reason::kContentSha256Mismatch:  // [minio], [versitygw]
      return {"XAmzContentSHA256Mismatch",
              "The provided 'x-amz-content-sha256' header does not match what was computed.", 400};
    case Reason::kHostNotSigned:      // ours: S3's own text for this was not found
    case Reason::kSignatureMismatch:  // [s3-sig]
      break;
  }
  return {"SignatureDoesNotMatch",
          "The request signature we calculated does not match the signature you provided. "
          "Check your key and signing method.",
          403};
}

}  // namespace amt::auth
