#include "orchestrator/gateway/s3/s3_payload.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "common/crypto.h"
#include "common/text.h"

namespace amt::gateway {
namespace {

// A size line is a few dozen bytes ("<hex>;chunk-signature=<64 hex>"); trailers a few headers.
constexpr size_t kMaxSizeLine = 4096;
constexpr size_t kMaxTrailers = 64 << 10;
// A spooled body is read this much at a time.
constexpr size_t kSpoolBlock = 256 << 10;

std::string BigEndian32(uint32_t value) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((value >> (24 - 8 * i)) & 0xff);
  return bytes;
}

bool IsChunked(const HttpRequest& request) {
  const std::string* sha = request.Header("x-amz-content-sha256");
  const std::string* encoding = request.Header("content-encoding");
  return (sha != nullptr && sha->starts_with("STREAMING-")) ||
         (encoding != nullptr && encoding->find("aws-chunked") != std::string::npos);
}

}  // namespace

// The digests of a payload that its checks need; a hasher that is not needed is not made.
struct S3PayloadDecoder::Hashers {
  std::optional<auth::Md5Hasher> md5;
  std::optional<auth::Sha256Hasher> sha256;
  std::optional<uLong> crc32;
};

S3PayloadDecoder::S3PayloadDecoder(const HttpRequest& request)
    : hashers_(std::make_unique<Hashers>()),
      chunked_(IsChunked(request)),
      state_(chunked_ ? State::kSizeLine : State::kData) {
  for (const auto& [name, value] : request.headers) {
    if (name.starts_with("x-amz-checksum-") && name != "x-amz-checksum-type") {
      checksums_.emplace(name, value);
    }
  }
  if (const std::string* md5 = request.Header("content-md5")) content_md5_ = *md5;
  const std::string* trailer = request.Header("x-amz-trailer");
  const auto claims = [&](std::string_view name) {
    return checksums_.count(std::string(name)) > 0 ||
           (chunked_ &&
            (trailer == nullptr || auth::text::Lower(*trailer).find(name) != std::string::npos));
  };
  if (content_md5_.has_value()) hashers_->md5.emplace();
  if (claims("x-amz-checksum-sha256")) hashers_->sha256.emplace();
  if (claims("x-amz-checksum-crc32")) hashers_->crc32 = ::crc32(0L, Z_NULL, 0);
}

S3PayloadDecoder::~S3PayloadDecoder() = default;

void S3PayloadDecoder::Digest(std::string_view payload) {
  if (payload.empty()) return;
  payload_size_ += payload.size();
  if (hashers_->md5.has_value()) hashers_->md5->Update(payload);
  if (hashers_->sha256.has_value()) hashers_->sha256->Update(payload);
  // zlib takes a uInt at a time.
  while (hashers_->crc32.has_value() && !payload.empty()) {
    const size_t n = std::min<size_t>(payload.size(), 1u << 30);
    hashers_->crc32 = ::crc32(*hashers_->crc32, reinterpret_cast<const Bytef*>(payload.data()),
                              static_cast<uInt>(n));
    payload.remove_prefix(n);
  }
}

bool S3PayloadDecoder::Feed(std::string_view body, std::string* payload) {
  if (state_ == State::kBad) return false;
  if (!chunked_) {
    Digest(body);
    payload->append(body);
    return true;
  }
  if (!FeedChunked(body, payload)) state_ = State::kBad;
  return state_ != State::kBad;
}

bool S3PayloadDecoder::FeedChunked(std::string_view body, std::string* payload) {
  while (!body.empty()) {
    switch (state_) {
      case State::kSizeLine: {
        const size_t end = body.find('\n');
        line_.append(body.substr(0, end == std::string_view::npos ? body.size() : end + 1));
        if (line_.size() > kMaxSizeLine) return false;
        if (end == std::string_view::npos) return true;
        body.remove_prefix(end + 1);
        if (!line_.ends_with("\r\n")) return false;
        std::string_view size_text(line_.data(), line_.size() - 2);
        size_text = size_text.substr(0, size_text.find(';'));
        uint64_t size = 0;
        if (size_text.empty() || !absl::SimpleHexAtoi(std::string(size_text), &size)) return false;
        line_.clear();
        chunk_left_ = size;
        state_ = size == 0 ? State::kTrailers : State::kData;
        break;
      }
      case State::kData: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_left_, body.size()));
        Digest(body.substr(0, n));
        payload->append(body.substr(0, n));
        body.remove_prefix(n);
        chunk_left_ -= n;
        if (chunk_left_ == 0) state_ = State::kDataEnd;
        break;
      }
      case State::kDataEnd: {
        // "\r\n" after the data, which may arrive split across two blocks.
        line_.push_back(body.front());
        body.remove_prefix(1);
        if (line_.size() < 2) break;
        if (line_ != "\r\n") return false;
        line_.clear();
        state_ = State::kSizeLine;
        break;
      }
      case State::kTrailers:
        line_.append(body);
        if (line_.size() > kMaxTrailers) return false;
        return true;
      case State::kDone:
      case State::kBad:
        return state_ != State::kBad;
    }
  }
  return true;
}

std::optional<S3PayloadError> S3PayloadDecoder::Finish() {
  if (chunked_) {
    if (state_ != State::kTrailers) {
      return S3PayloadError{"IncompleteBody", "The aws-chunked request body is malformed."};
    }
    // Trailers: "name:value\r\n" lines up to an empty line (or the end).
    std::string_view rest = line_;
    while (!rest.empty()) {
      const size_t line_end = rest.find("\r\n");
      const std::string_view line = rest.substr(0, line_end);
      if (line.empty()) break;
      const size_t colon = line.find(':');
      if (colon != std::string_view::npos) {
        const std::string name = auth::text::Lower(line.substr(0, colon));
        if (name.starts_with("x-amz-checksum-") && name != "x-amz-checksum-type") {
          checksums_.insert_or_assign(name, std::string(auth::text::Strip(line.substr(colon + 1))));
        }
      }
      if (line_end == std::string_view::npos) break;
      rest.remove_prefix(line_end + 2);
    }
  }
  state_ = State::kDone;
  if (content_md5_.has_value()) {
    std::string raw;
    if (!absl::Base64Unescape(*content_md5_, &raw) || raw.size() != 16) {
      return S3PayloadError{"InvalidDigest", "The Content-MD5 you specified is not valid."};
    }
    if (raw != hashers_->md5->Finish()) {
      return S3PayloadError{"BadDigest",
                            "The Content-MD5 you specified did not match what we received."};
    }
  }
  for (const auto& [name, value] : checksums_) {
    std::string expected;
    std::string algorithm;
    if (name == "x-amz-checksum-crc32" && hashers_->crc32.has_value()) {
      algorithm = "CRC32";
      expected = BigEndian32(static_cast<uint32_t>(*hashers_->crc32));
    } else if (name == "x-amz-checksum-sha256" && hashers_->sha256.has_value()) {
      algorithm = "SHA256";
      expected = hashers_->sha256->Finish();
    } else {
      // CRC32C, CRC64NVME, SHA1, or a trailer x-amz-trailer did not announce: taken on trust.
      continue;
    }
    std::string raw;
    if (!absl::Base64Unescape(value, &raw) || raw != expected) {
      return S3PayloadError{
          "BadDigest",
          "The " + algorithm + " you specified did not match the calculated checksum."};
    }
  }
  return std::nullopt;
}

S3SpooledPayload::S3SpooledPayload(const HttpRequest& request)
    : fd_(::open(request.body_file.c_str(), O_RDONLY | O_CLOEXEC)), decoder_(request) {}

absl::StatusOr<size_t> S3SpooledPayload::Read(char* buffer, size_t capacity) {
  while (pending_.size() - taken_ < capacity && !at_end_) {
    if (!fd_.valid()) return Refuse({"InternalError", "The request body could not be read."});
    pending_.erase(0, taken_);
    taken_ = 0;
    if (block_.empty()) block_.resize(kSpoolBlock);
    ssize_t n;
    do {
      n = ::read(fd_.get(), block_.data(), block_.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) return Refuse({"InternalError", "The request body could not be read."});
    if (n == 0) {
      at_end_ = true;
      if (std::optional<S3PayloadError> bad = decoder_.Finish()) {
        return Refuse(std::move(*bad));
      }
      break;
    }
    if (!decoder_.Feed(std::string_view(block_.data(), static_cast<size_t>(n)), &pending_)) {
      at_end_ = true;
      return Refuse({"IncompleteBody", "The aws-chunked request body is malformed."});
    }
  }
  const size_t n = std::min(capacity, pending_.size() - taken_);
  std::memcpy(buffer, pending_.data() + taken_, n);
  taken_ += n;
  return n;
}

absl::Status S3SpooledPayload::Refuse(S3PayloadError error) {
  error_ = std::move(error);
  return absl::DataLossError(error_->message);
}

}  // namespace amt::gateway
