// The decoding half of S3's REST-XML protocol (s3_rest.h answers): what an HTTP request asks of
// S3, as an operation on a bucket and key with its query parameters, and the arguments of each
// operation (a copy's source, a list's options, a Delete or CompleteMultipartUpload body, a
// Range), each with the error S3 gives when it is malformed; and which bucket, if any, a Host
// header names (virtual-hosted-style addressing). Pure: no store, no I/O; the bodies of PutObject
// and UploadPart are decoded apart (s3_payload.h), as they stream.
#ifndef AMT_ORCHESTRATOR_GATEWAY_S3_S3_REQUEST_H_
#define AMT_ORCHESTRATOR_GATEWAY_S3_S3_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "orchestrator/gateway/protocol_handler.h"
#include "orchestrator/s3/object_store.h"

namespace amt::gateway {

// An S3 error's code, message and extra elements (e.g. BucketName, Key), as S3RestHandler
// renders it in S3's <Error> XML.
struct S3Error {
  std::string code;
  std::string message;
  std::vector<std::pair<std::string, std::string>> extra;
};

// NotImplemented, naming what amt-local's S3 does not serve.
S3Error S3NotImplemented(std::string_view what);

// The operations served (s3_rest.h lists them by method, path and subresource).
enum class S3Operation {
  kListBuckets,
  kCreateBucket,
  kHeadBucket,
  kDeleteBucket,
  kGetBucketLocation,
  kListObjects,    // v1
  kListObjectsV2,  // ?list-type=2
  kDeleteObjects,
  kPutObject,
  kCopyObject,
  kGetObject,  // GET or HEAD
  kDeleteObject,
  kCreateMultipartUpload,
  kUploadPart,
  kCompleteMultipartUpload,
  kAbortMultipartUpload,
  kListMultipartUploads,  // GET /bucket?uploads
};

// The bucket that a Host header value names in S3's virtual-hosted-style addressing, read case-
// insensitively with any port ignored: "my.bucket.s3.us-east-1.amazonaws.com:443" -> "my.bucket".
// The endpoints read are s3, s3.<region>, s3-<region>, s3.dualstack.<region>, s3-fips.<region>,
// s3-fips.dualstack.<region>, s3-external-1, s3-accelerate and s3-accelerate.dualstack, under
// amazonaws.com or amazonaws.com.cn. nullopt for a path-style S3 endpoint (s3.amazonaws.com,
// s3.us-east-1.amazonaws.com), for any other host (127.0.0.1:7071, localhost,
// sts.amazonaws.com, "").
std::optional<std::string> VirtualHostedBucket(std::string_view host_header);
// The same, of `request`'s Host header (nullopt when it has none).
std::optional<std::string> VirtualHostedBucket(const HttpRequest& request);

// Whether a Host header value names one of S3's AWS endpoints, path-style or virtual-hosted (the
// names VirtualHostedBucket reads, with or without a bucket): such a request is S3's even
// unsigned, whatever its path. false for amtd's own names (127.0.0.1:7071, localhost).
bool IsS3EndpointHost(std::string_view host_header);

// A request as S3 reads it: the operation, the bucket and key it addresses (percent-decoded;
// empty when absent) and its query parameters, in order. Path-style, the bucket and key are the
// path's (/bucket/key); virtual-hosted (VirtualHostedBucket of the Host header), the bucket is the
// Host's and the key the whole path after its first '/'.
struct S3Request {
  const HttpRequest& http;
  S3Operation operation;
  std::string bucket;
  std::string key;
  std::vector<std::pair<std::string, std::string>> query;
  // Whether the bucket came from the Host header rather than the path.
  bool virtual_hosted = false;

  bool Has(std::string_view name) const;
  // The first value of parameter `name`, "" when absent.
  std::string Param(std::string_view name) const;
};

// What `request` asks, or the error S3 answers: InvalidURI (a path or query that is badly
// percent-encoded), NotImplemented (a subresource not served: ?acl, ?tagging, ListParts,
// UploadPartCopy, ...), MethodNotAllowed. `request` must outlive the result.
std::variant<S3Request, S3Error> DecodeS3Request(const HttpRequest& request);

// Content-Type and x-amz-meta-* of a PUT (or CopyObject's REPLACE, CreateMultipartUpload).
s3::PutOptions PutOptionsOf(const HttpRequest& request);

// CreateBucket's body, when there is one, must be XML (its CreateBucketConfiguration is not
// read further): MalformedXML otherwise.
std::optional<S3Error> CheckCreateBucketBody(std::string_view body);

// ListObjects (version 1) or ListObjectsV2 (2): the store's options from prefix, delimiter,
// max-keys (capped at 1000), marker or start-after and continuation-token, and whether keys are
// to be URL-encoded (encoding-type=url). InvalidArgument for a bad max-keys, encoding-type or
// continuation token.
struct S3ListRequest {
  s3::ListOptions options;
  bool url_encoded = false;
};
std::variant<S3ListRequest, S3Error> DecodeListObjects(const S3Request& request, int version);

// ListMultipartUploads: the store's options from prefix, delimiter, key-marker, upload-id-marker
// and max-uploads (capped at 1000), and encoding-type=url. InvalidArgument for a bad max-uploads
// or encoding-type.
struct S3UploadListRequest {
  s3::UploadListOptions options;
  bool url_encoded = false;
};
std::variant<S3UploadListRequest, S3Error> DecodeListUploads(const S3Request& request);

// DeleteObjects' body: <Delete> with 1 to 1000 <Object><Key>, and <Quiet>. MalformedXML
// otherwise.
struct S3DeleteRequest {
  std::vector<std::string> keys;  // in the body's order; "" for an Object without a Key
  bool quiet = false;
};
std::variant<S3DeleteRequest, S3Error> DecodeDeleteObjects(std::string_view body);

// CopyObject's x-amz-copy-source ("[/]bucket/key", percent-encoded; ?versionId ignored) and
// x-amz-metadata-directive (COPY, the default, or REPLACE). InvalidArgument otherwise.
struct S3CopySource {
  std::string bucket;
  std::string key;
  bool replace_metadata = false;
};
std::variant<S3CopySource, S3Error> DecodeCopySource(const HttpRequest& request);

// UploadPart's partNumber: InvalidArgument when it is not an integer (the store checks its
// range).
std::variant<int, S3Error> DecodePartNumber(const S3Request& request);

// CompleteMultipartUpload's body: the parts it lists, each with PartNumber and ETag.
// MalformedXML otherwise.
std::variant<std::vector<s3::PartRef>, S3Error> DecodeCompleteParts(std::string_view body);

// bytes=a-b, bytes=a-, bytes=-n of an object of `size` bytes: (first, count); nullopt when
// unsatisfiable. A header S3 would ignore (another unit, several ranges) reads as the whole
// object: (0, size) with count 0 standing for "no range" when size is 0.
std::optional<std::pair<uint64_t, uint64_t>> ParseRange(std::string_view header, uint64_t size);

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_S3_S3_REQUEST_H_
