// S3PayloadDecoder: the payload of an S3 PUT (PutObject, UploadPart) from its request body, a
// block at a time, so an upload of any size streams from a spooled file (HttpRequest::body_file)
// through constant memory. It undoes the aws-chunked content encoding the SDKs use for streaming
// signatures and trailing checksums ("<hex size>[;chunk-signature=...]\r\n<data>\r\n" ... a "0"
// chunk, then trailer lines), and digests the payload on the way for the checks the client asked:
// Content-MD5, x-amz-checksum-crc32 and x-amz-checksum-sha256 (as a header or a trailer); CRC32C,
// CRC64NVME and SHA1 are taken on trust. Only the digests the body claims are computed (those of
// its headers, and the trailers x-amz-trailer announces; a chunked body that announces none may
// carry CRC32 or SHA-256 trailers, so both are computed for it).
//
// One decoder per body; not thread-safe. Pure: no I/O. S3SpooledPayload reads a spooled body's
// file through one.
#ifndef AMT_ORCHESTRATOR_GATEWAY_S3_S3_PAYLOAD_H_
#define AMT_ORCHESTRATOR_GATEWAY_S3_S3_PAYLOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "orchestrator/gateway/protocol_handler.h"
#include "orchestrator/s3/object_store.h"

namespace amt::gateway {

// An S3 error's code and message, as the handler renders it.
struct S3PayloadError {
  std::string code;  // IncompleteBody, InvalidDigest, BadDigest
  std::string message;
};

class S3PayloadDecoder {
 public:
  // Reads from `request`'s headers whether the body is aws-chunked and what digests it claims.
  explicit S3PayloadDecoder(const HttpRequest& request);
  ~S3PayloadDecoder();
  S3PayloadDecoder(const S3PayloadDecoder&) = delete;
  S3PayloadDecoder& operator=(const S3PayloadDecoder&) = delete;

  // Takes the next bytes of the body and appends the payload bytes they hold to `payload`. False
  // once the body is malformed (Finish then says IncompleteBody); later calls do nothing.
  bool Feed(std::string_view body, std::string* payload);

  // After the whole body: nullopt when it was whole and every digest it claims matches, else the
  // error S3 gives.
  std::optional<S3PayloadError> Finish();

  // Payload bytes seen so far.
  uint64_t payload_size() const { return payload_size_; }

 private:
  enum class State { kSizeLine, kData, kDataEnd, kTrailers, kDone, kBad };
  void Digest(std::string_view payload);
  bool FeedChunked(std::string_view body, std::string* payload);

  struct Hashers;
  std::unique_ptr<Hashers> hashers_;
  const bool chunked_;
  State state_;
  std::string line_;         // a size line or the trailers, as they arrive
  uint64_t chunk_left_ = 0;  // payload bytes of the current chunk still to come
  uint64_t payload_size_ = 0;
  std::map<std::string, std::string> checksums_;  // x-amz-checksum-* (lower case) -> base64
  std::optional<std::string> content_md5_;        // the header's value, as sent
};

// A body the server spooled to a file (HttpRequest::body_file), read once, a block at a time, as
// ObjectStore's streamed writes take it: decoded on the way, and its digests checked when the
// file ends; a body that is malformed or does not match fails the read, so the store keeps the
// object it had. Memory: a block or two, whatever the size. Not thread-safe.
class S3SpooledPayload {
 public:
  explicit S3SpooledPayload(const HttpRequest& request);

  // Up to `capacity` payload bytes into `buffer`; 0 at the end of a body that checks out.
  // DataLoss once the body is refused (error() says why).
  absl::StatusOr<size_t> Read(char* buffer, size_t capacity);

  // Why the body was refused, once Read has failed: InternalError (the file could not be read),
  // IncompleteBody, InvalidDigest, BadDigest.
  const std::optional<S3PayloadError>& error() const { return error_; }

 private:
  absl::Status Refuse(S3PayloadError error);

  s3::Fd fd_;
  S3PayloadDecoder decoder_;
  std::string block_;
  std::string pending_;  // decoded payload not yet given out, from taken_
  size_t taken_ = 0;
  bool at_end_ = false;
  std::optional<S3PayloadError> error_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_S3_S3_PAYLOAD_H_
