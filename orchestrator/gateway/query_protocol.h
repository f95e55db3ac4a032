// The AWS query protocol, as STS and (for botocore before 1.36) CloudWatch speak it: a request is
// `POST /` with a form-encoded body (`Action=GetCallerIdentity&Version=2011-06-15&...`,
// application/x-www-form-urlencoded), a reply is XML, `<{Action}Response xmlns="..."><{Action}
// Result>...</{Action}Result><ResponseMetadata><RequestId>...</RequestId></ResponseMetadata>
// </{Action}Response>`, an error is `<ErrorResponse><Error><Type>Sender</Type><Code>...</Code>
// <Message>...</Message></Error><RequestId>...</RequestId></ErrorResponse>`.
//
// Nothing here names a service: the helpers decode the form, tell which service a request is for
// (its SigV4 credential scope, or the Version of an unsigned one), write the two reply shapes and
// the ISO 8601 timestamps the protocol carries. Pure code over strings.
#ifndef AMT_ORCHESTRATOR_GATEWAY_QUERY_PROTOCOL_H_
#define AMT_ORCHESTRATOR_GATEWAY_QUERY_PROTOCOL_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/auth/sigv4.h"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway::query {

// The form's name=value pairs in order, names and values percent-decoded ('+' is a space). A pair
// without '=' has an empty value; empty pairs ("a=1&&b=2") are skipped. A '%' not followed by two
// hex digits is kept as it is, as AWS's front ends do not refuse it either.
using Form = std::vector<std::pair<std::string, std::string>>;
Form ParseForm(std::string_view body);

// The value of the first pair named `name`, nullptr when there is none.
const std::string* FormValue(const Form& form, std::string_view name);

// The service of the request's SigV4 credential scope ("sts" of "AWS4-HMAC-SHA256 Credential=
// AKID/20261201/us-east-1/sts/aws4_request, ..."), from the Authorization header or a presigned
// URL's X-Amz-Credential; nullopt when the request is not signed or the scope has no service.
std::optional<std::string> ScopeService(const HttpRequest& request);

// Whether `request` is one of the query protocol for `service` (the credential scope's name,
// "sts", "monitoring") whose API version is `version` ("2011-06-15"): a POST to / whose scope
// names `service`, or, unsigned, a form POSTed to / with Action= and Version=`version`. The body of
// a request over the server's limit is empty, so an unsigned one is not recognised then.
bool IsQueryRequest(const HttpRequest& request, std::string_view service, std::string_view version);

// Whether a request body is a form (the query protocol's content type, charset ignored).
bool IsFormContentType(const HttpRequest& request);

// A reply of the protocol: status, content type text/xml, `body`, and the request id header
// (x-amzn-RequestId) with `request_id`.
HttpResponse Reply(int status, std::string body, const std::string& request_id);

// <ErrorResponse xmlns="xmlns"><Error><Type>Sender|Receiver</Type><Code>code</Code><Message>
// message</Message></Error><RequestId>request_id</RequestId></ErrorResponse>; Type is Receiver
// for a status of 500 and over, Sender otherwise. As Reply, with that status.
HttpResponse ErrorReply(std::string_view xmlns, int status, std::string_view code,
                        std::string_view message, const std::string& request_id);

// The refusal of a request whose signature the server refused, as the query services (STS,
// CloudWatch) send it: the AWS JSON services' text (auth/auth_errors.h) under the query
// protocol's code, e.g. SignatureDoesNotMatch (403) for InvalidSignatureException,
// InvalidClientTokenId (403) for an unknown key, IncompleteSignature (400),
// MissingAuthenticationToken (403). As ErrorReply.
HttpResponse AuthErrorReply(std::string_view xmlns, const auth::AuthFailure& failure,
                            const std::string& request_id);

// "2026-12-01T00:00:00Z", with milliseconds (".250Z") when the time has a fraction: what AWS's
// query replies carry and every botocore parses.
std::string FormatIso8601(double epoch_seconds);

// Epoch seconds of an ISO 8601 date-time as botocore's query serializer writes it
// ("2026-12-01T00:00:00Z", "2026-12-01T00:00:00.123456Z"), also with an offset ("+01:00") or
// none (UTC), or of plain epoch seconds ("1764547200"); nullopt for anything else.
std::optional<double> ParseTimestamp(std::string_view text);

}  // namespace amt::gateway::query

#endif  // AMT_ORCHESTRATOR_GATEWAY_QUERY_PROTOCOL_H_
