#include "orchestrator/gateway/s3/s3_payload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "absl/strings/escaping.h"
#include "common/crypto.h"

namespace amt::gateway {
namespace {

HttpRequest Put(std::map<std::string, std::string, std::less<>> headers) {
  HttpRequest request;
  request.method = "PUT";
  request.target = "/bucket/key";
  request.headers = std::move(headers);
  return request;
}

std::string Crc32Base64(std::string_view data) {
  const uLong crc =
      crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xff);
  return absl::Base64Escape(bytes);
}

// Feeds `body` in pieces of `step` bytes; the payload, and Finish's verdict.
std::pair<std::string, std::optional<S3PayloadError>> Decode(const HttpRequest& request,
                                                             std::string_view body, size_t step) {
  S3PayloadDecoder decoder(request);
  std::string payload;
  for (size_t i = 0; i < body.size(); i += step) decoder.Feed(body.substr(i, step), &payload);
  return {payload, decoder.Finish()};
}

const char kChunked[] =
    "5;chunk-signature=abc\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:";

TEST(S3PayloadDecoder, APlainBodyIsItsPayloadInAnyPieces) {
  const HttpRequest request = Put({});
  for (size_t step : {1u, 3u, 100u}) {
    auto [payload, error] = Decode(request, "plain bytes", step);
    EXPECT_EQ(payload, "plain bytes");
    EXPECT_FALSE(error.has_value());
  }
}

TEST(S3PayloadDecoder, DecodesAwsChunkedSplitAnywhereAndChecksItsTrailer) {
  const HttpRequest request = Put({{"content-encoding", "aws-chunked"}});
  const std::string body = std::string(kChunked) + Crc32Base64("hello world") + "\r\n\r\n";
  for (size_t step = 1; step <= body.size(); ++step) {
    auto [payload, error] = Decode(request, body, step);
    EXPECT_EQ(payload, "hello world") << "step " << step;
    EXPECT_FALSE(error.has_value()) << "step " << step << ": " << error->message;
  }
  const std::string wrong = std::string(kChunked) + Crc32Base64("other") + "\r\n\r\n";
  auto [payload, error] = Decode(request, wrong, 7);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, "BadDigest");
  EXPECT_EQ(error->message, "The CRC32 you specified did not match the calculated checksum.");
}

TEST(S3PayloadDecoder, AChunkedBodyCutShortOrMalformedIsAnIncompleteBody) {
  const HttpRequest request = Put({{"x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"}});
  for (const char* body :
       {"5\r\nhello\r\n", "5\r\nhelloXX", "zz\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n6\r\n wor"}) {
    auto [payload, error] = Decode(request, body, 2);
    ASSERT_TRUE(error.has_value()) << body;
    EXPECT_EQ(error->code, "IncompleteBody") << body;
  }
  // A size line without end is refused once it is longer than any real one.
  S3PayloadDecoder decoder(request);
  std::string payload;
  EXPECT_FALSE(decoder.Feed(std::string(5000, '1'), &payload));
}

TEST(S3PayloadDecoder, ChecksContentMd5AndSha256Headers) {
  const std::string md5 = absl::Base64Escape(auth::Md5("data"));
  EXPECT_FALSE(Decode(Put({{"content-md5", md5}}), "data", 1).second.has_value());
  auto bad = Decode(Put({{"content-md5", md5}}), "date", 2).second;
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->code, "BadDigest");
  auto invalid = Decode(Put({{"content-md5", "not base64!"}}), "data", 2).second;
  ASSERT_TRUE(invalid.has_value());
  EXPECT_EQ(invalid->code, "InvalidDigest");
  const std::string sha = absl::Base64Escape(absl::HexStringToBytes(auth::Sha256Hex("data")));
  EXPECT_FALSE(Decode(Put({{"x-amz-checksum-sha256", sha}}), "data", 3).second.has_value());
  auto sha_bad = Decode(Put({{"x-amz-checksum-sha256", sha}}), "DATA", 3).second;
  ASSERT_TRUE(sha_bad.has_value());
  EXPECT_EQ(sha_bad->message, "The SHA256 you specified did not match the calculated checksum.");
}

}  // namespace
}  // namespace amt::gateway
