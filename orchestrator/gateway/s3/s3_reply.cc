#include "orchestrator/gateway/s3/s3_reply.h"

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "common/text.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway::s3_reply {

using ::amt::auth::text::Cat;

// ---- Errors ---------------------------------------------------------------------------------

int StatusOfCode(std::string_view code) {
  static const std::map<std::string_view, int> kStatus = {{"NoSuchBucket", 404},
                                                          {"NoSuchKey", 404},
                                                          {"NoSuchUpload", 404},
                                                          {"BucketNotEmpty", 409},
                                                          {"BucketAlreadyOwnedByYou", 409},
                                                          {"InvalidRange", 416},
                                                          {"NotImplemented", 501},
                                                          {"MethodNotAllowed", 405},
                                                          {"InternalError", 500},
                                                          {"PreconditionFailed", 412}};
  const auto it = kStatus.find(code);
  return it == kStatus.end() ? 400 : it->second;
}

HttpResponse Render(const HttpRequest& request, const S3Error& error, int status) {
  HttpResponse response;
  response.status = status != 0 ? status : StatusOfCode(error.code);
  response.headers.emplace_back("x-amz-request-id", request.request_id);
  if (request.method == "HEAD") return response;  // S3 sends the status alone
  response.content_type = kXmlContentType;
  xml::Writer writer("Error");
  writer.Leaf("Code", error.code).Leaf("Message", error.message);
  for (const auto& [name, value] : error.extra) writer.Leaf(name, value);
  writer.Leaf("RequestId", request.request_id);
  response.body = std::move(writer).Finish();
  return response;
}

S3Error FromStatus(const absl::Status& status, std::string_view bucket, std::string_view key) {
  S3Error error{s3::CodeOf(status), std::string(status.message()), {}};
  if (error.code == "NoSuchBucket" || error.code == "BucketNotEmpty" ||
      error.code == "InvalidBucketName" || error.code == "BucketAlreadyOwnedByYou") {
    error.extra.emplace_back("BucketName", std::string(bucket));
  } else if (error.code == "NoSuchKey") {
    error.extra.emplace_back("Key", std::string(key));
  }
  return error;
}

// ---- Formats --------------------------------------------------------------------------------

std::string Iso8601(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof(millis), ".%03dZ", static_cast<int>(ms % 1000));
  return std::string(text) + millis;
}

std::string HttpDate(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char text[40];
  std::snprintf(text, sizeof(text), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return text;
}

std::string Quoted(std::string_view etag) { return Cat("\"", etag, "\""); }

// encoding-type=url: every byte but unreserved ones and '/' as %XX (botocore decodes with
// unquote_plus, so '+' and ' ' must be escaped too).
std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0x0f]);
    }
  }
  return out;
}

void AddObjectHeaders(const s3::ObjectInfo& info, HttpResponse* response) {
  response->content_type = info.content_type.empty() ? "binary/octet-stream" : info.content_type;
  response->headers.emplace_back("ETag", Quoted(info.etag));
  response->headers.emplace_back("Last-Modified", HttpDate(info.last_modified_ms));
  response->headers.emplace_back("Accept-Ranges", "bytes");
  for (const auto& [name, value] : info.metadata) {
    response->headers.emplace_back(Cat("x-amz-meta-", name), value);
  }
}

HttpResponse XmlReply(const HttpRequest& request, std::string body, int status) {
  HttpResponse response;
  response.status = status;
  response.content_type = kXmlContentType;
  response.headers.emplace_back("x-amz-request-id", request.request_id);
  response.body = std::move(body);
  return response;
}

HttpResponse EmptyReply(const HttpRequest& request, int status) {
  HttpResponse response;
  response.status = status;
  response.headers.emplace_back("x-amz-request-id", request.request_id);
  return response;
}

}  // namespace amt::gateway::s3_reply
