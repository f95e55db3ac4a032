// S3RestHandler: S3's REST-XML protocol over the local S3 folder (s3/object_store.h), so that a
// client pointed at amtd (AWS_ENDPOINT_URL) reads and writes the files training jobs use:
// the SageMaker Python SDK's `upload_data`, `S3Uploader`/`S3Downloader` and its uploads of
// source code, boto3's `s3` client and transfer manager, and `aws s3` / `aws s3api`.
//
// Path-style addressing (http://127.0.0.1:PORT/bucket/key: what botocore uses for an IP
// endpoint, and s3.<region>.amazonaws.com/bucket/key) and virtual-hosted-style addressing
// (bucket.s3.<region>.amazonaws.com/key, boto3's default for AWS's names, which reach amtd
// through its TLS proxy): there the Host names the bucket (VirtualHostedBucket, s3_request.h) and
// each path below reads without its /bucket (GET / lists the bucket, PUT / creates it).
// Operations, by method, path and subresource:
//   GET /                              ListBuckets
//   PUT|HEAD|DELETE /bucket            CreateBucket, HeadBucket, DeleteBucket
//   GET /bucket                        ListObjects (v1: prefix, delimiter, marker, max-keys,
//                                      encoding-type=url); ?list-type=2 ListObjectsV2
//                                      (continuation-token, start-after, fetch-owner)
//   GET /bucket?location               GetBucketLocation
//   POST /bucket?delete                DeleteObjects (Quiet)
//   PUT /bucket/key                    PutObject; with x-amz-copy-source, CopyObject
//                                      (x-amz-metadata-directive COPY or REPLACE)
//   GET|HEAD /bucket/key               GetObject, HeadObject (Range: one range, 206)
//   DELETE /bucket/key                 DeleteObject
//   POST /bucket/key?uploads           CreateMultipartUpload
//   PUT /bucket/key?partNumber&uploadId  UploadPart
//   POST /bucket/key?uploadId          CompleteMultipartUpload
//   DELETE /bucket/key?uploadId        AbortMultipartUpload
// Any other subresource (?acl, ?tagging, ?versioning, ...) answers 501 NotImplemented at once,
// so no client retries. Bodies are checked against Content-MD5 and x-amz-checksum-crc32 /
// -sha256 when sent (BadDigest); aws-chunked bodies (STREAMING-* payloads) are decoded, their
// trailing checksum checked too. Errors are S3's <Error> XML with S3's codes and statuses (HEAD:
// the status alone), and every reply has x-amz-request-id.
//
// One body is at most the server's limit (16 MiB by default): larger uploads go in parts, as
// boto3's transfer manager and the SDK do above 8 MB. A GET reads the object (or its range) into
// memory; clients that download large objects (the transfer manager) ask for 8 MB ranges.
//
// The handler answers (calls the ObjectStore, writes S3's XML); what a request asks is decoded
// apart, in s3_request.h, and the bodies of uploads in s3_payload.h.
#ifndef AMT_ORCHESTRATOR_GATEWAY_S3_S3_REST_H_
#define AMT_ORCHESTRATOR_GATEWAY_S3_S3_REST_H_

#include <string_view>

#include "orchestrator/gateway/protocol_handler.h"
#include "orchestrator/s3/object_store.h"

namespace amt::gateway {

class S3RestHandler final : public ProtocolHandler {
 public:
  explicit S3RestHandler(s3::ObjectStore store) : store_(std::move(store)) {}

  std::string_view Description() const override;
  // Never a request with X-Amz-Target. A request signed for service "s3" (Authorization header or
  // presigned query); unsigned, one whose Host is an S3 endpoint's AWS name (IsS3EndpointHost:
  // any path, / included), or else whose path names a bucket (GET / unsigned to amtd's own name
  // stays the server's banner).
  bool Accepts(const HttpRequest& request) const override;
  HttpResponse Handle(const HttpRequest& request) const override;
  // PutObject and UploadPart: their bodies go to a file as they arrive (HttpRequest::body_file)
  // and into the object as they are read, so an upload's memory is a block whatever its size.
  bool SpoolsBody(const HttpRequest& request) const override;
  // Every S3 call reads or writes the folder (fsync included): handled on the disk pool.
  bool DiskBound() const override { return true; }
  // 400 EntityTooLarge.
  HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const override;
  // S3's own error XML (auth/auth_errors.h: S3AuthError).
  HttpResponse Unauthenticated(const HttpRequest& request,
                               const auth::AuthFailure& failure) const override;

 private:
  s3::ObjectStore store_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_S3_S3_REST_H_
