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
// One decoder per body; not thread-safe. Pure: no I/O.
#ifndef AMT_ORCHESTRATOR_GATEWAY_S3_PAYLOAD_H_
#define AMT_ORCHESTRATOR_GATEWAY_S3_PAYLOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/gateway/protocol_handler.h"

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

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_S3_PAYLOAD_H_
