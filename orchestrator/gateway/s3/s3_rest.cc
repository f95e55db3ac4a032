#include "orchestrator/gateway/s3/s3_rest.h"

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
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "common/crypto.h"
#include "common/text.h"
#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/query_protocol.h"
#include "orchestrator/gateway/request_parts.h"
#include "orchestrator/gateway/s3/s3_payload.h"
#include "orchestrator/gateway/s3/s3_reply.h"
#include "orchestrator/gateway/s3/s3_request.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

using ::amt::auth::text::Cat;
using ::amt::gateway::s3_reply::AddObjectHeaders;
using ::amt::gateway::s3_reply::EmptyReply;
using ::amt::gateway::s3_reply::FromStatus;
using ::amt::gateway::s3_reply::Iso8601;
using ::amt::gateway::s3_reply::Quoted;
using ::amt::gateway::s3_reply::Render;
using ::amt::gateway::s3_reply::UrlEncode;
using ::amt::gateway::s3_reply::XmlReply;

constexpr std::string_view kXmlns = "http://s3.amazonaws.com/doc/2006-03-01/";
constexpr std::string_view kOwnerId =
    "75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a";
constexpr std::string_view kOwnerName = "amt-local";

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

// ---- Operations -----------------------------------------------------------------------------

class Operations {
 public:
  Operations(const s3::ObjectStore& store, const S3Request& request)
      : store_(store), r_(request), http_(request.http) {}

  HttpResponse Dispatch() {
    switch (r_.operation) {
      case S3Operation::kListBuckets:
        return ListBuckets();
      case S3Operation::kCreateBucket:
        return CreateBucket();
      case S3Operation::kHeadBucket:
        return HeadBucket();
      case S3Operation::kDeleteBucket:
        return DeleteBucket();
      case S3Operation::kGetBucketLocation:
        return GetBucketLocation();
      case S3Operation::kListObjects:
        return ListObjects(1);
      case S3Operation::kListObjectsV2:
        return ListObjects(2);
      case S3Operation::kListMultipartUploads:
        return ListMultipartUploads();
      case S3Operation::kDeleteObjects:
        return DeleteObjects();
      case S3Operation::kPutObject:
        return PutObject();
      case S3Operation::kCopyObject:
        return CopyObject();
      case S3Operation::kGetObject:
        return GetObject();
      case S3Operation::kDeleteObject:
        return DeleteObject();
      case S3Operation::kCreateMultipartUpload:
        return StartUpload();
      case S3Operation::kUploadPart:
        return UploadPart();
      case S3Operation::kCompleteMultipartUpload:
        return CompleteUpload();
      case S3Operation::kAbortMultipartUpload:
        return AbortUpload();
    }
    return Render(http_, {"InternalError", "The request could not be handled.", {}});
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
    if (std::optional<S3Error> bad = CheckCreateBucketBody(http_.body)) return Render(http_, *bad);
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
    std::variant<S3ListRequest, S3Error> decoded = DecodeListObjects(r_, version);
    if (const S3Error* bad = std::get_if<S3Error>(&decoded)) return Render(http_, *bad);
    const s3::ListOptions& options = std::get<S3ListRequest>(decoded).options;
    const bool url = std::get<S3ListRequest>(decoded).url_encoded;
    const auto out = [&](std::string_view text) {
      return url ? UrlEncode(text) : std::string(text);
    };
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

  HttpResponse ListMultipartUploads() {
    std::variant<S3UploadListRequest, S3Error> decoded = DecodeListUploads(r_);
    if (const S3Error* bad = std::get_if<S3Error>(&decoded)) return Render(http_, *bad);
    const s3::UploadListOptions& options = std::get<S3UploadListRequest>(decoded).options;
    const bool url = std::get<S3UploadListRequest>(decoded).url_encoded;
    const auto out = [&](std::string_view text) {
      return url ? UrlEncode(text) : std::string(text);
    };
    const absl::StatusOr<s3::UploadPage> page = store_.ListUploads(r_.bucket, options);
    if (!page.ok()) return Fail(page.status());

    xml::Writer w("ListMultipartUploadsResult", kXmlns);
    w.Leaf("Bucket", r_.bucket)
        .Leaf("KeyMarker", out(options.key_marker))
        .Leaf("UploadIdMarker", options.upload_id_marker)
        .Leaf("NextKeyMarker", out(page->next_key_marker))
        .Leaf("NextUploadIdMarker", page->next_upload_id_marker)
        .Leaf("Prefix", out(options.prefix));
    if (!options.delimiter.empty()) w.Leaf("Delimiter", out(options.delimiter));
    w.Leaf("MaxUploads", Cat(options.max_uploads))
        .Leaf("IsTruncated", page->truncated ? "true" : "false");
    if (url) w.Leaf("EncodingType", "url");
    for (const s3::UploadInfo& upload : page->uploads) {
      w.Open("Upload")
          .Leaf("Key", out(upload.key))
          .Leaf("UploadId", upload.upload_id)
          .Open("Initiator")
          .Leaf("ID", kOwnerId)
          .Leaf("DisplayName", kOwnerName)
          .Close()
          .Open("Owner")
          .Leaf("ID", kOwnerId)
          .Leaf("DisplayName", kOwnerName)
          .Close()
          .Leaf("StorageClass", "STANDARD")
          .Leaf("Initiated", Iso8601(upload.initiated_ms))
          .Close();
    }
    for (const std::string& prefix : page->common_prefixes) {
      w.Open("CommonPrefixes").Leaf("Prefix", out(prefix)).Close();
    }
    return XmlReply(http_, std::move(w).Finish());
  }

  HttpResponse DeleteObjects() {
    std::variant<S3DeleteRequest, S3Error> decoded = DecodeDeleteObjects(http_.body);
    if (const S3Error* bad = std::get_if<S3Error>(&decoded)) return Render(http_, *bad);
    const S3DeleteRequest& request = std::get<S3DeleteRequest>(decoded);
    if (const absl::Status status = store_.HeadBucket(r_.bucket); !status.ok()) return Fail(status);
    xml::Writer w("DeleteResult", kXmlns);
    for (const std::string& name : request.keys) {
      const absl::Status status = store_.Delete(r_.bucket, name);
      if (status.ok()) {
        if (!request.quiet) w.Open("Deleted").Leaf("Key", name).Close();
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
      S3SpooledPayload payload(http_);
      info = store_.PutStream(
          r_.bucket, r_.key,
          [&payload](char* buffer, size_t capacity) { return payload.Read(buffer, capacity); },
          PutOptionsOf(http_));
      if (const std::optional<S3PayloadError>& bad = payload.error()) {
        return Render(http_, {bad->code, bad->message, {}});
      }
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
    std::variant<S3CopySource, S3Error> decoded = DecodeCopySource(http_);
    if (const S3Error* bad = std::get_if<S3Error>(&decoded)) return Render(http_, *bad);
    const S3CopySource& source = std::get<S3CopySource>(decoded);
    const s3::PutOptions options = PutOptionsOf(http_);
    const absl::StatusOr<s3::ObjectInfo> info = store_.Copy(
        source.bucket, source.key, r_.bucket, r_.key, source.replace_metadata ? &options : nullptr);
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
    std::variant<int, S3Error> part = DecodePartNumber(r_);
    if (const S3Error* bad = std::get_if<S3Error>(&part)) return Render(http_, *bad);
    const int number = std::get<int>(part);
    absl::StatusOr<std::string> etag;
    if (!http_.body_file.empty()) {
      S3SpooledPayload payload(http_);
      etag = store_.PutPartStream(
          r_.bucket, r_.key, r_.Param("uploadId"), number,
          [&payload](char* buffer, size_t capacity) { return payload.Read(buffer, capacity); });
      if (const std::optional<S3PayloadError>& bad = payload.error()) {
        return Render(http_, {bad->code, bad->message, {}});
      }
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
    std::variant<std::vector<s3::PartRef>, S3Error> parts = DecodeCompleteParts(http_.body);
    if (const S3Error* bad = std::get_if<S3Error>(&parts)) return Render(http_, *bad);
    const absl::StatusOr<s3::ObjectInfo> info = store_.CompleteUpload(
        r_.bucket, r_.key, r_.Param("uploadId"), std::get<std::vector<s3::PartRef>>(parts));
    if (!info.ok()) return Fail(info.status());
    const std::string* host = http_.Header("host");
    // An AWS name reaches amtd through its TLS proxy (clients speak https to AWS's names); the
    // bucket is in the path unless the Host names it.
    const bool aws_name = host != nullptr && IsS3EndpointHost(*host);
    const std::string bucket_path = r_.virtual_hosted ? "" : Cat("/", UrlEncode(r_.bucket));
    xml::Writer w("CompleteMultipartUploadResult", kXmlns);
    w.Leaf("Location", Cat(aws_name ? "https://" : "http://", host != nullptr ? *host : "127.0.0.1",
                           bucket_path, "/", UrlEncode(r_.key)))
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
  return "S3 (REST-XML, path-style /bucket/key and virtual-hosted bucket.s3.amazonaws.com/key, "
         "over the local S3 folder)";
}

bool S3RestHandler::Accepts(const HttpRequest& request) const {
  if (request.Header("x-amz-target") != nullptr) return false;
  if (const std::optional<std::string> service = query::ScopeService(request)) {
    return *service == "s3";
  }
  if (request.method != "GET" && request.method != "HEAD" && request.method != "PUT" &&
      request.method != "DELETE" && request.method != "POST") {
    return false;
  }
  // Unsigned to one of S3's own names (s3.amazonaws.com, bucket.s3.<region>.amazonaws.com): S3's
  // whatever the path, / included (virtual-hosted, it is the Host's bucket).
  if (const std::string* host = request.Header("host");
      host != nullptr && IsS3EndpointHost(*host)) {
    return true;
  }
  // Unsigned to amtd's name: a path that names a bucket (GET / stays the server's banner; POST /
  // is a query protocol's).
  const std::string_view path = SplitTarget(request.target).first;
  return path.size() > 1 && path.front() == '/' && !path.starts_with("/service/");
}

HttpResponse S3RestHandler::Handle(const HttpRequest& request) const {
  std::variant<S3Request, S3Error> decoded = DecodeS3Request(request);
  if (const S3Error* bad = std::get_if<S3Error>(&decoded)) return Render(request, *bad);
  return Operations(store_, std::get<S3Request>(decoded)).Dispatch();
}

bool S3RestHandler::SpoolsBody(const HttpRequest& request) const {
  // PutObject and UploadPart: a PUT of a key (bucket, '/', key), not a copy.
  if (request.method != "PUT" || request.Header("x-amz-copy-source") != nullptr) return false;
  const std::string_view path = SplitTarget(request.target).first;
  // Virtual-hosted, any path but / names a key; path-style, the key follows the bucket's '/'.
  if (VirtualHostedBucket(request).has_value()) return path.size() > 1 && path.starts_with('/');
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
