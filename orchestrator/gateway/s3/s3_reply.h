// The shapes of S3's replies, for s3_rest.cc: the XML error (its status from its code), the XML
// and empty replies with S3's request id header, an object's headers, and the formats S3 writes
// (ISO 8601 with milliseconds, HTTP dates, quoted ETags, encoding-type=url). Pure.
#ifndef AMT_ORCHESTRATOR_GATEWAY_S3_S3_REPLY_H_
#define AMT_ORCHESTRATOR_GATEWAY_S3_S3_REPLY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "orchestrator/gateway/protocol_handler.h"
#include "orchestrator/gateway/s3/s3_request.h"
#include "orchestrator/s3/object_store.h"

namespace amt::gateway::s3_reply {

inline constexpr char kXmlContentType[] = "application/xml";

// The HTTP status of an S3 error code (NoSuchKey 404, BucketNotEmpty 409, ...; 400 by default).
int StatusOfCode(std::string_view code);

// <Error><Code/><Message/>(extra fields)<RequestId/></Error> with `status` (0: StatusOfCode); a
// HEAD gets the status alone, as S3 sends it.
HttpResponse Render(const HttpRequest& request, const S3Error& error, int status = 0);

// The S3 error of an object store status, with BucketName or Key where S3 names them.
S3Error FromStatus(const absl::Status& status, std::string_view bucket, std::string_view key);

// "2026-12-01T00:00:00.000Z" of epoch milliseconds.
std::string Iso8601(int64_t ms);
// "Tue, 01 Dec 2026 00:00:00 GMT" of epoch milliseconds.
std::string HttpDate(int64_t ms);
// The ETag in double quotes, as S3's headers and XML carry it.
std::string Quoted(std::string_view etag);
// encoding-type=url: every byte but unreserved ones and '/' as %XX.
std::string UrlEncode(std::string_view text);

// Content-Type, ETag, Last-Modified, Accept-Ranges and x-amz-meta-* of an object.
void AddObjectHeaders(const s3::ObjectInfo& info, HttpResponse* response);

// An XML body with `status` and the request id header.
HttpResponse XmlReply(const HttpRequest& request, std::string body, int status = 200);
// No body: the status and the request id header.
HttpResponse EmptyReply(const HttpRequest& request, int status);

}  // namespace amt::gateway::s3_reply

#endif  // AMT_ORCHESTRATOR_GATEWAY_S3_S3_REPLY_H_
