#include "orchestrator/gateway/s3_rest.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "common/crypto.h"
#include "common/text.h"
#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/query_protocol.h"
#include "orchestrator/gateway/request_parts.h"
#include "orchestrator/gateway/s3_payload.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

using ::amt::auth::text::Cat;

constexpr std::string_view kXmlns = "http://s3.amazonaws.com/doc/2006-03-01/";
constexpr char kXmlContentType[] = "application/xml";
constexpr std::string_view kOwnerId =
    "75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a";
constexpr std::string_view kOwnerName = "amt-local";
constexpr int kMaxListKeys = 1000;
constexpr size_t kMaxDeleteObjects = 1000;

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

struct S3Error {
  std::string code;
  std::string message;
  std::vector<std::pair<std::string, std::string>> extra;  // e.g. BucketName, Key
};

HttpResponse Render(const HttpRequest& request, const S3Error& error, int status = 0) {
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

S3Error NotImplemented(std::string_view what) {
  return {"NotImplemented",
          Cat("A header or query you provided implies functionality that is not "
              "implemented: amt-local's S3 does not serve ",
              what),
          {}};
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

// ---- The parsed request ---------------------------------------------------------------------

struct S3Request {
  const HttpRequest& http;
  std::string bucket;
  std::string key;
  std::vector<std::pair<std::string, std::string>> query;

  bool Has(std::string_view name) const {
    return std::any_of(query.begin(), query.end(), [&](const auto& p) { return p.first == name; });
  }
  std::string Param(std::string_view name) const {
    for (const auto& [n, v] : query) {
      if (n == name) return v;
    }
    return "";
  }
};

// Subresources that name an operation this handler serves, for a bucket and for an object;
// anything else in the query that is not a plain parameter is refused as NotImplemented.
bool IsKnownParameter(std::string_view name) {
  static const std::vector<std::string_view> kKnown = {
      "prefix", "delimiter", "marker", "max-keys", "encoding-type", "list-type",
      "continuation-token", "start-after", "fetch-owner", "location", "delete", "uploads",
      "uploadId", "partNumber", "x-id", "versionId",
      // Presigned URLs and response overrides.
      "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
      "X-Amz-Signature", "X-Amz-Security-Token", "response-content-type",
      "response-content-disposition", "response-cache-control", "response-content-encoding",
      "response-content-language", "response-expires"};
  return std::find(kKnown.begin(), kKnown.end(), name) != kKnown.end();
}

s3::PutOptions PutOptionsOf(const HttpRequest& request) {
  s3::PutOptions options;
  if (const std::string* type = request.Header("content-type")) options.content_type = *type;
  for (const auto& [name, value] : request.header_list) {
    if (name.starts_with("x-amz-meta-") && name.size() > 11) {
      options.metadata.emplace(name.substr(11), value);
    }
  }
  return options;
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

HttpResponse XmlReply(const HttpRequest& request, std::string body, int status = 200) {
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

// ---- Bodies: aws-chunked and checksums (s3_payload.h) -----------------------------------

// The payload of a PUT whose body is in memory, checked against the digests the client sent.
std::optional<S3Error> PayloadOf(const HttpRequest& request, std::string* payload) {
  S3PayloadDecoder decoder(request);
  decoder.Feed(request.body, payload);
  if (std::optional<S3PayloadError> bad = decoder.Finish()) {
    return S3Error{std::move(bad->code), std::move(bad->message), {}};
  }
  return std::nullopt;
}

constexpr size_t kSpoolBlock = 256 << 10;

// A body the server spooled to a file (HttpRequest::body_file), read once, a block at a time, as
// ObjectStore's streamed writes take it: decoded on the way, and its digests checked when the
// file ends; a body that is malformed or does not match fails the read, so the store keeps the
// object it had. Memory: a block or two, whatever the size.
class SpooledPayload {
 public:
  explicit SpooledPayload(const HttpRequest& request)
      : fd_(::open(request.body_file.c_str(), O_RDONLY | O_CLOEXEC)), decoder_(request) {}

  // Up to `capacity` payload bytes into `buffer`; 0 at the end of a body that checks out.
  absl::StatusOr<size_t> Read(char* buffer, size_t capacity) {
    while (pending_.size() - taken_ < capacity && !at_end_) {
      if (!fd_.valid()) return Refuse({"InternalError", "The request body could not be read.", {}});
      pending_.erase(0, taken_);
      taken_ = 0;
      if (block_.empty()) block_.resize(kSpoolBlock);
      ssize_t n;
      do {
        n = ::read(fd_.get(), block_.data(), block_.size());
      } while (n < 0 && errno == EINTR);
      if (n < 0) return Refuse({"InternalError", "The request body could not be read.", {}});
      if (n == 0) {
        at_end_ = true;
        if (std::optional<S3PayloadError> bad = decoder_.Finish()) {
          return Refuse({std::move(bad->code), std::move(bad->message), {}});
        }
        break;
      }
      if (!decoder_.Feed(std::string_view(block_.data(), static_cast<size_t>(n)), &pending_)) {
        at_end_ = true;
        return Refuse({"IncompleteBody", "The aws-chunked request body is malformed.", {}});
      }
    }
    const size_t n = std::min(capacity, pending_.size() - taken_);
    std::memcpy(buffer, pending_.data() + taken_, n);
    taken_ += n;
    return n;
  }

  // Why the body was refused, once Read has failed.
  const std::optional<S3Error>& error() const { return error_; }

 private:
  absl::Status Refuse(S3Error error) {
    error_ = std::move(error);
    return absl::DataLossError(error_->message);
  }

  s3::Fd fd_;
  S3PayloadDecoder decoder_;
  std::string block_;
  std::string pending_;  // decoded payload not yet given out, from taken_
  size_t taken_ = 0;
  bool at_end_ = false;
  std::optional<S3Error> error_;
};

// ---- Operations -----------------------------------------------------------------------------

class Operations {
 public:
  Operations(const s3::ObjectStore& store, const S3Request& request)
      : store_(store), r_(request), http_(request.http) {}

  HttpResponse Dispatch() {
    const std::string& method = http_.method;
    for (const auto& [name, value] : r_.query) {
      if (!IsKnownParameter(name)) return Render(http_, NotImplemented("?" + name));
    }
    if (r_.bucket.empty()) {
      if (method == "GET") return ListBuckets();
      return Render(
          http_,
          {"MethodNotAllowed", "The specified method is not allowed against this resource.", {}});
    }
    if (r_.key.empty()) {
      if (method == "PUT") return CreateBucket();
      if (method == "HEAD") return HeadBucket();
      if (method == "DELETE") return DeleteBucket();
      if (method == "GET" && r_.Has("location")) return GetBucketLocation();
      if (method == "GET" && r_.Has("uploads"))
        return Render(http_, NotImplemented("ListMultipartUploads"));
      if (method == "GET") return r_.Param("list-type") == "2" ? ListObjects(2) : ListObjects(1);
      if (method == "POST" && r_.Has("delete")) return DeleteObjects();
    } else {
      if (method == "PUT" && r_.Has("uploadId")) return UploadPart();
      if (method == "PUT" && http_.Header("x-amz-copy-source") != nullptr) return CopyObject();
      if (method == "PUT") return PutObject();
      if (method == "GET" && r_.Has("uploadId")) return Render(http_, NotImplemented("ListParts"));
      if (method == "GET" || method == "HEAD") return GetObject();
      if (method == "DELETE" && r_.Has("uploadId")) return AbortUpload();
      if (method == "DELETE") return DeleteObject();
      if (method == "POST" && r_.Has("uploads")) return StartUpload();
      if (method == "POST" && r_.Has("uploadId")) return CompleteUpload();
    }
    return Render(
        http_,
        {"MethodNotAllowed", "The specified method is not allowed against this resource.", {}});
  }

 private:
  HttpResponse Fail(const absl::Status& status) {
    return Render(http_, FromStatus(status, r_.bucket, r_.key));
  }

  HttpResponse ListBuckets() {
    const absl::StatusOr<std::vector<s3::BucketInfo>> buckets = store_.ListBuckets();
    if (!buckets.ok()) return Fail(buckets.status());
    xml::Writer w("ListAllMyBucketsResult", kXmlns);
    w.Open("Owner").Leaf("ID", kOwnerId).Leaf("DisplayName", kOwnerName).Close();
    w.Open("Buckets");
    for (const s3::BucketInfo& bucket : *buckets) {
      w.Open("Bucket").Leaf("Name", bucket.name).Leaf("CreationDate", Iso8601(bucket.creation_ms));
      w.Close();
    }
    w.Close();
    return XmlReply(http_, std::move(w).Finish());
  }

  HttpResponse CreateBucket() {
    if (!http_.body.empty()) {
      if (const absl::StatusOr<xml::Element> config = xml::Parse(http_.body); !config.ok()) {
        return Render(http_, {"MalformedXML",
                              Cat("The XML you provided was not well-formed or did not "
                                  "validate against our published schema: ",
                                  std::string(config.status().message())),
                              {}});
      }
    }
    const absl::Status created = store_.CreateBucket(r_.bucket);
    // us-east-1 answers 200 to its owner creating a bucket again; other regions 409.
    const bool legacy_region =
        http_.body.empty() || http_.body.find("us-east-1") != std::string::npos;
    if (!created.ok() && !(s3::CodeOf(created) == "BucketAlreadyOwnedByYou" && legacy_region)) {
      return Fail(created);
    }
    HttpResponse response = EmptyReply(http_, 200);
    response.headers.emplace_back("Location", "/" + r_.bucket);
    return response;
  }

  HttpResponse HeadBucket() {
    const absl::Status status = store_.HeadBucket(r_.bucket);
    if (!status.ok()) return Fail(status);
    HttpResponse response = EmptyReply(http_, 200);
    response.headers.emplace_back("x-amz-bucket-region", "us-east-1");
    return response;
  }

  HttpResponse DeleteBucket() {
    const absl::Status status = store_.DeleteBucket(r_.bucket);
    return status.ok() ? EmptyReply(http_, 204) : Fail(status);
  }

  HttpResponse GetBucketLocation() {
    if (const absl::Status status = store_.HeadBucket(r_.bucket); !status.ok()) return Fail(status);
    // us-east-1 is the empty LocationConstraint.
    return XmlReply(http_, std::move(xml::Writer("LocationConstraint", kXmlns)).Finish());
  }

  HttpResponse ListObjects(int version) {
    s3::ListOptions options;
    options.prefix = r_.Param("prefix");
    options.delimiter = r_.Param("delimiter");
    if (r_.Has("max-keys")) {
      int max_keys = 0;
      if (!absl::SimpleAtoi(r_.Param("max-keys"), &max_keys) || max_keys < 0) {
        return Render(http_,
                      {"InvalidArgument",
                       "Provided max-keys not an integer or within "
                       "integer range",
                       {{"ArgumentName", "max-keys"}, {"ArgumentValue", r_.Param("max-keys")}}});
      }
      options.max_keys = std::min(max_keys, kMaxListKeys);
    }
    const std::string encoding = r_.Param("encoding-type");
    if (!encoding.empty() && encoding != "url") {
      return Render(http_, {"InvalidArgument",
                            "Invalid Encoding Method specified in Request",
                            {{"ArgumentName", "encoding-type"}, {"ArgumentValue", encoding}}});
    }
    const bool url = encoding == "url";
    const auto out = [&](std::string_view text) {
      return url ? UrlEncode(text) : std::string(text);
    };
    std::string token;
    if (version == 1) {
      options.after = r_.Param("marker");
    } else {
      options.after = r_.Param("start-after");
      if (r_.Has("continuation-token")) {
        if (!absl::WebSafeBase64Unescape(r_.Param("continuation-token"), &token)) {
          return Render(http_, {"InvalidArgument",
                                "The continuation token provided is incorrect",
                                {{"ArgumentName", "continuation-token"}}});
        }
        options.after = std::max(options.after, token);
      }
    }
    const absl::StatusOr<s3::ListPage> page = store_.List(r_.bucket, options);
    if (!page.ok()) return Fail(page.status());

    xml::Writer w("ListBucketResult", kXmlns);
    w.Leaf("Name", r_.bucket).Leaf("Prefix", out(options.prefix));
    if (version == 1) {
      w.Leaf("Marker", out(r_.Param("marker")));
    } else {
      if (r_.Has("start-after")) w.Leaf("StartAfter", out(r_.Param("start-after")));
      if (r_.Has("continuation-token")) w.Leaf("ContinuationToken", r_.Param("continuation-token"));
    }
    w.Leaf("MaxKeys", Cat(options.max_keys));
    if (!options.delimiter.empty()) w.Leaf("Delimiter", out(options.delimiter));
    w.Leaf("IsTruncated", page->truncated ? "true" : "false");
    if (version == 1 && page->truncated && !options.delimiter.empty()) {
      w.Leaf("NextMarker", out(page->last));
    }
    if (version == 2) {
      w.Leaf("KeyCount", Cat(page->objects.size() + page->common_prefixes.size()));
      if (page->truncated) w.Leaf("NextContinuationToken", absl::WebSafeBase64Escape(page->last));
    }
    if (url) w.Leaf("EncodingType", "url");
    const bool owner = version == 1 || r_.Param("fetch-owner") == "true";
    for (const s3::ObjectInfo& object : page->objects) {
      w.Open("Contents")
          .Leaf("Key", out(object.key))
          .Leaf("LastModified", Iso8601(object.last_modified_ms))
          .Leaf("ETag", Quoted(object.etag))
          .Leaf("Size", Cat(object.size));
      if (owner) w.Open("Owner").Leaf("ID", kOwnerId).Leaf("DisplayName", kOwnerName).Close();
      w.Leaf("StorageClass", "STANDARD").Close();
    }
    for (const std::string& prefix : page->common_prefixes) {
      w.Open("CommonPrefixes").Leaf("Prefix", out(prefix)).Close();
    }
    return XmlReply(http_, std::move(w).Finish());
  }

  HttpResponse DeleteObjects() {
    const absl::StatusOr<xml::Element> doc = xml::Parse(http_.body);
    const std::vector<const xml::Element*> objects =
        doc.ok() ? doc->Children("Object") : std::vector<const xml::Element*>{};
    if (!doc.ok() || doc->name != "Delete" || objects.empty() ||
        objects.size() > kMaxDeleteObjects) {
      return Render(http_, {"MalformedXML",
                            "The XML you provided was not well-formed or did not validate "
                            "against our published schema (a Delete of 1 to 1000 Objects)",
                            {}});
    }
    const xml::Element* quiet = doc->Child("Quiet");
    const bool is_quiet = quiet != nullptr && absl::AsciiStrToLower(quiet->text) == "true";
    if (const absl::Status status = store_.HeadBucket(r_.bucket); !status.ok()) return Fail(status);
    xml::Writer w("DeleteResult", kXmlns);
    for (const xml::Element* object : objects) {
      const xml::Element* key = object->Child("Key");
      const std::string name = key != nullptr ? key->text : "";
      const absl::Status status = store_.Delete(r_.bucket, name);
      if (status.ok()) {
        if (!is_quiet) w.Open("Deleted").Leaf("Key", name).Close();
      } else {
        w.Open("Error")
            .Leaf("Key", name)
            .Leaf("Code", s3::CodeOf(status))
            .Leaf("Message", std::string(status.message()))
            .Close();
      }
    }
    return XmlReply(http_, std::move(w).Finish());
  }

  HttpResponse PutObject() {
    absl::StatusOr<s3::ObjectInfo> info;
    if (!http_.body_file.empty()) {
      // Spooled (S3RestHandler::SpoolsBody): checked, then written as it is read.
      SpooledPayload payload(http_);
      info = store_.PutStream(
          r_.bucket, r_.key,
          [&payload](char* buffer, size_t capacity) { return payload.Read(buffer, capacity); },
          PutOptionsOf(http_));
      if (payload.error().has_value()) return Render(http_, *payload.error());
    } else {
      std::string payload;
      if (std::optional<S3Error> bad = PayloadOf(http_, &payload)) return Render(http_, *bad);
      info = store_.Put(r_.bucket, r_.key, payload, PutOptionsOf(http_));
    }
    if (!info.ok()) return Fail(info.status());
    HttpResponse response = EmptyReply(http_, 200);
    response.headers.emplace_back("ETag", Quoted(info->etag));
    return response;
  }

  HttpResponse CopyObject() {
    std::string source = *http_.Header("x-amz-copy-source");
    source = source.substr(0, source.find('?'));  // ?versionId: there is one version
    const std::optional<std::string> decoded = PercentDecode(source, /*plus_is_space=*/false);
    std::string_view path = decoded.has_value() ? std::string_view(*decoded) : std::string_view();
    if (path.starts_with('/')) path.remove_prefix(1);
    const size_t slash = path.find('/');
    if (!decoded.has_value() || slash == std::string_view::npos || slash == 0 ||
        slash + 1 == path.size()) {
      return Render(http_, {"InvalidArgument",
                            "Copy Source must mention the source bucket and key: "
                            "sourcebucket/sourcekey",
                            {{"ArgumentName", "x-amz-copy-source"}}});
    }
    const std::string* directive = http_.Header("x-amz-metadata-directive");
    const bool replace = directive != nullptr && *directive == "REPLACE";
    if (directive != nullptr && !replace && *directive != "COPY") {
      return Render(http_, {"InvalidArgument",
                            "Unknown metadata directive.",
                            {{"ArgumentName", "x-amz-metadata-directive"}}});
    }
    const s3::PutOptions options = PutOptionsOf(http_);
    const absl::StatusOr<s3::ObjectInfo> info =
        store_.Copy(path.substr(0, slash), path.substr(slash + 1), r_.bucket, r_.key,
                    replace ? &options : nullptr);
    if (!info.ok()) return Fail(info.status());
    xml::Writer w("CopyObjectResult", kXmlns);
    w.Leaf("LastModified", Iso8601(info->last_modified_ms)).Leaf("ETag", Quoted(info->etag));
    return XmlReply(http_, std::move(w).Finish());
  }

  HttpResponse GetObject() {
    // The file is opened once: what is described is what is sent, even if a PUT replaces the key
    // meanwhile.
    absl::StatusOr<s3::ReadHandle> object = store_.OpenRead(r_.bucket, r_.key);
    if (!object.ok()) return Fail(object.status());
    const s3::ObjectInfo* info = &object->info;
    uint64_t first = 0;
    uint64_t count = info->size;
    bool partial = false;
    if (const std::string* range = http_.Header("range")) {
      const std::optional<std::pair<uint64_t, uint64_t>> span = ParseRange(*range, info->size);
      if (!span.has_value()) {
        return Render(http_, {"InvalidRange",
                              "The requested range is not satisfiable",
                              {{"RangeRequested", *range}, {"ActualObjectSize", Cat(info->size)}}});
      }
      if (span->second != 0 || info->size != 0) {
        first = span->first;
        count = span->second;
        partial = true;
      }
    }
    HttpResponse response = EmptyReply(http_, partial ? 206 : 200);
    AddObjectHeaders(*info, &response);
    if (partial) {
      response.headers.emplace_back("Content-Range",
                                    Cat("bytes ", first, "-", first + count - 1, "/", info->size));
    }
    for (const auto& [name, header] :
         {std::pair<std::string_view, std::string_view>{"response-content-type", "Content-Type"},
          {"response-content-disposition", "Content-Disposition"},
          {"response-cache-control", "Cache-Control"},
          {"response-content-encoding", "Content-Encoding"},
          {"response-content-language", "Content-Language"},
          {"response-expires", "Expires"}}) {
      if (!r_.Has(name)) continue;
      if (header == "Content-Type") {
        response.content_type = r_.Param(name);
      } else {
        response.headers.emplace_back(std::string(header), r_.Param(name));
      }
    }
    if (http_.method == "HEAD") {
      // The length a GET would send; the server writes no body for a HEAD.
      response.headers.emplace_back("Content-Length", Cat(count));
      return response;
    }
    if (count == 0) return response;
    // Streamed: a block at a time as the client reads (HttpResponse::body_reader).
    auto fd = std::make_shared<s3::Fd>(std::move(object->fd));
    response.body_length = count;
    response.body_reader = [fd, offset = first, end = first + count](
                               char* buffer, size_t capacity) mutable -> absl::StatusOr<size_t> {
      capacity = static_cast<size_t>(std::min<uint64_t>(capacity, end - offset));  // the range's
      if (capacity == 0) return 0;
      ssize_t n;
      do {
        n = ::pread(fd->get(), buffer, capacity, static_cast<off_t>(offset));
      } while (n < 0 && errno == EINTR);
      if (n < 0)
        return absl::InternalError(std::string("reading the object: ") + std::strerror(errno));
      offset += static_cast<uint64_t>(n);
      return static_cast<size_t>(n);
    };
    return response;
  }

  // bytes=a-b, bytes=a-, bytes=-n of an object of `size` bytes: (first, count); nullopt when
  // unsatisfiable. A header S3 would ignore (another unit, several ranges) reads as the whole
  // object: (0, size) with count 0 standing for "no range" when size is 0.
  static std::optional<std::pair<uint64_t, uint64_t>> ParseRange(std::string_view header,
                                                                 uint64_t size) {
    if (!header.starts_with("bytes=") || header.find(',') != std::string_view::npos) {
      return std::make_pair(uint64_t{0}, size);
    }
    header.remove_prefix(6);
    const size_t dash = header.find('-');
    if (dash == std::string_view::npos) return std::make_pair(uint64_t{0}, size);
    const std::string_view a = header.substr(0, dash);
    const std::string_view b = header.substr(dash + 1);
    uint64_t first = 0;
    uint64_t last = 0;
    if (a.empty()) {  // the last n bytes
      uint64_t n = 0;
      if (!absl::SimpleAtoi(std::string(b), &n) || n == 0 || size == 0) return std::nullopt;
      n = std::min(n, size);
      return std::make_pair(size - n, n);
    }
    if (!absl::SimpleAtoi(std::string(a), &first)) return std::make_pair(uint64_t{0}, size);
    if (first >= size) return std::nullopt;
    if (b.empty()) {
      last = size - 1;
    } else if (!absl::SimpleAtoi(std::string(b), &last) || last < first) {
      return std::make_pair(uint64_t{0}, size);
    }
    last = std::min(last, size - 1);
    return std::make_pair(first, last - first + 1);
  }

  HttpResponse DeleteObject() {
    const absl::Status status = store_.Delete(r_.bucket, r_.key);
    return status.ok() ? EmptyReply(http_, 204) : Fail(status);
  }

  HttpResponse StartUpload() {
    const absl::StatusOr<std::string> id =
        store_.StartUpload(r_.bucket, r_.key, PutOptionsOf(http_));
    if (!id.ok()) return Fail(id.status());
    xml::Writer w("InitiateMultipartUploadResult", kXmlns);
    w.Leaf("Bucket", r_.bucket).Leaf("Key", r_.key).Leaf("UploadId", *id);
    return XmlReply(http_, std::move(w).Finish());
  }

  HttpResponse UploadPart() {
    if (http_.Header("x-amz-copy-source") != nullptr) {
      return Render(http_, NotImplemented("UploadPartCopy"));
    }
    int number = 0;
    if (!absl::SimpleAtoi(r_.Param("partNumber"), &number)) {
      return Render(http_, {"InvalidArgument",
                            Cat("Part number must be an integer between 1 and ", s3::kMaxPartNumber,
                                ", inclusive"),
                            {{"ArgumentName", "partNumber"}}});
    }
    absl::StatusOr<std::string> etag;
    if (!http_.body_file.empty()) {
      SpooledPayload payload(http_);
      etag = store_.PutPartStream(
          r_.bucket, r_.key, r_.Param("uploadId"), number,
          [&payload](char* buffer, size_t capacity) { return payload.Read(buffer, capacity); });
      if (payload.error().has_value()) return Render(http_, *payload.error());
    } else {
      std::string payload;
      if (std::optional<S3Error> bad = PayloadOf(http_, &payload)) return Render(http_, *bad);
      etag = store_.PutPart(r_.bucket, r_.key, r_.Param("uploadId"), number, payload);
    }
    if (!etag.ok()) return Fail(etag.status());
    HttpResponse response = EmptyReply(http_, 200);
    response.headers.emplace_back("ETag", Quoted(*etag));
    return response;
  }

  HttpResponse CompleteUpload() {
    const absl::StatusOr<xml::Element> doc = xml::Parse(http_.body);
    std::vector<s3::PartRef> parts;
    bool well_formed = doc.ok() && doc->name == "CompleteMultipartUpload";
    if (well_formed) {
      for (const xml::Element* part : doc->Children("Part")) {
        const xml::Element* number = part->Child("PartNumber");
        const xml::Element* etag = part->Child("ETag");
        s3::PartRef ref;
        if (number == nullptr || etag == nullptr ||
            !absl::SimpleAtoi(absl::StripAsciiWhitespace(number->text), &ref.number)) {
          well_formed = false;
          break;
        }
        ref.etag = std::string(absl::StripAsciiWhitespace(etag->text));
        parts.push_back(std::move(ref));
      }
    }
    if (!well_formed) {
      return Render(http_, {"MalformedXML",
                            "The XML you provided was not well-formed or did not validate "
                            "against our published schema",
                            {}});
    }
    const absl::StatusOr<s3::ObjectInfo> info =
        store_.CompleteUpload(r_.bucket, r_.key, r_.Param("uploadId"), parts);
    if (!info.ok()) return Fail(info.status());
    const std::string* host = http_.Header("host");
    xml::Writer w("CompleteMultipartUploadResult", kXmlns);
    w.Leaf("Location", Cat("http://", host != nullptr ? *host : "127.0.0.1", "/",
                           UrlEncode(r_.bucket), "/", UrlEncode(r_.key)))
        .Leaf("Bucket", r_.bucket)
        .Leaf("Key", r_.key)
        .Leaf("ETag", Quoted(info->etag));
    return XmlReply(http_, std::move(w).Finish());
  }

  HttpResponse AbortUpload() {
    const absl::Status status = store_.AbortUpload(r_.bucket, r_.key, r_.Param("uploadId"));
    return status.ok() ? EmptyReply(http_, 204) : Fail(status);
  }

  const s3::ObjectStore& store_;
  const S3Request& r_;
  const HttpRequest& http_;
};

}  // namespace

std::string_view S3RestHandler::Description() const {
  return "S3 (REST-XML, path-style /bucket/key, over the local S3 folder)";
}

bool S3RestHandler::Accepts(const HttpRequest& request) const {
  if (request.Header("x-amz-target") != nullptr) return false;
  if (const std::optional<std::string> service = query::ScopeService(request)) {
    return *service == "s3";
  }
  // Unsigned: a path that names a bucket (GET / stays the server's banner; POST / is a query
  // protocol's).
  const std::string_view path = SplitTarget(request.target).first;
  return path.size() > 1 && path.front() == '/' && !path.starts_with("/service/") &&
         (request.method == "GET" || request.method == "HEAD" || request.method == "PUT" ||
          request.method == "DELETE" || request.method == "POST");
}

HttpResponse S3RestHandler::Handle(const HttpRequest& request) const {
  const auto [raw_path, raw_query] = SplitTarget(request.target);
  std::optional<std::string> path = PercentDecode(raw_path, /*plus_is_space=*/false);
  std::optional<std::vector<std::pair<std::string, std::string>>> query = ParseQuery(raw_query);
  if (!path.has_value() || !query.has_value() || path->empty() || path->front() != '/') {
    return Render(request, {"InvalidURI", "Couldn't parse the specified URI.", {}});
  }
  S3Request parsed{request, "", "", std::move(*query)};
  const std::string_view rest = std::string_view(*path).substr(1);
  const size_t slash = rest.find('/');
  parsed.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) parsed.key = std::string(rest.substr(slash + 1));
  return Operations(store_, parsed).Dispatch();
}

bool S3RestHandler::SpoolsBody(const HttpRequest& request) const {
  // PutObject and UploadPart: a PUT of a key (bucket, '/', key), not a copy.
  if (request.method != "PUT" || request.Header("x-amz-copy-source") != nullptr) return false;
  const std::string_view path = SplitTarget(request.target).first;
  const size_t slash = path.find('/', 1);
  return path.starts_with('/') && slash != std::string_view::npos && slash + 1 < path.size();
}

HttpResponse S3RestHandler::BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const {
  return Render(request, {"EntityTooLarge",
                          Cat("Your proposed upload exceeds the maximum allowed object size: "
                              "amtd takes bodies of at most ",
                              limit_bytes,
                              " bytes (--http-max-body-bytes); upload larger objects in parts "
                              "(boto3's upload_file does above 8 MB)"),
                          {{"MaxSizeAllowed", Cat(limit_bytes)}}});
}

HttpResponse S3RestHandler::Unauthenticated(const HttpRequest& request,
                                            const auth::AuthFailure& failure) const {
  const auth::AwsAuthError error = auth::S3AuthError(failure);
  return Render(request, {error.code, error.message, {}}, error.http_status);
}

}  // namespace amt::gateway
