#include "orchestrator/gateway/s3/s3_rest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "common/crypto.h"
#include "orchestrator/gateway/xml.h"
#include "tests/support/temp_dir.h"

namespace amt::gateway {
namespace {

namespace fs = std::filesystem;
using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kS3Authorization[] =
    "AWS4-HMAC-SHA256 Credential=test/20261201/us-east-1/s3/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0000";

class S3RestHandlerTest : public ::testing::Test {
 protected:
  // Handles the request as the server would: with `spool`, the body in a file (SpoolsBody);
  // a body the handler streams (body_reader) is read whole into the response's body.
  HttpResponse Send(const std::string& method, const std::string& target,
                    const std::string& body = "",
                    std::vector<std::pair<std::string, std::string>> headers = {},
                    bool spool = false) {
    HttpRequest request;
    request.method = method;
    request.target = target;
    if (spool) {
      request.body_file = (temp_.path() / ("spooled-" + std::to_string(++spooled_))).string();
      std::FILE* f = std::fopen(request.body_file.c_str(), "wb");
      std::fwrite(body.data(), 1, body.size(), f);
      std::fclose(f);
      request.body_file_size = body.size();
    } else {
      request.body = body;
    }
    request.request_id = "req-1";
    headers.emplace_back("authorization", kS3Authorization);
    // amtd's own name, unless the test names another Host (a repeated field keeps its first).
    headers.emplace_back("host", "127.0.0.1:7071");
    for (const auto& [name, value] : headers) {
      request.headers.emplace(name, value);
      request.header_list.emplace_back(name, value);
    }
    EXPECT_TRUE(handler_.Accepts(request)) << method << " " << target;
    if (spool) {
      EXPECT_TRUE(handler_.SpoolsBody(request)) << method << " " << target;
    }
    HttpResponse response = handler_.Handle(request);
    if (response.body_reader) {
      EXPECT_TRUE(response.body.empty());
      char block[3];  // small blocks: several reads even for short objects
      for (;;) {
        // A whole block each time: the reader itself stops at the end of the range.
        const absl::StatusOr<size_t> n = response.body_reader(block, sizeof(block));
        EXPECT_TRUE(n.ok()) << n.status();
        if (!n.ok() || *n == 0) break;
        response.body.append(block, *n);
      }
      EXPECT_EQ(response.body.size(), response.body_length);
    }
    return response;
  }

  static std::string Header(const HttpResponse& response, const std::string& name) {
    for (const auto& [n, v] : response.headers) {
      if (n == name) return v;
    }
    return "";
  }

  static xml::Element Xml(const HttpResponse& response) {
    auto parsed = xml::Parse(response.body);
    EXPECT_TRUE(parsed.ok()) << response.body;
    return parsed.ok() ? *parsed : xml::Element{};
  }

  static std::string ErrorCode(const HttpResponse& response) {
    const xml::Element error = Xml(response);
    const xml::Element* code = error.Child("Code");
    return code != nullptr ? code->text : "<none>";
  }

  TempDir temp_;
  S3RestHandler handler_{s3::ObjectStore(temp_.path() / "s3")};
  int spooled_ = 0;
};

TEST_F(S3RestHandlerTest, AcceptsS3SignedRequestsAndUnsignedBucketPathsOnly) {
  HttpRequest sagemaker;
  sagemaker.method = "POST";
  sagemaker.target = "/";
  sagemaker.headers["x-amz-target"] = "SageMaker.ListTrainingJobs";
  EXPECT_FALSE(handler_.Accepts(sagemaker));
  HttpRequest sts;
  sts.method = "POST";
  sts.target = "/";
  sts.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=test/20261201/us-east-1/sts/aws4_request, SignedHeaders=host, "
      "Signature=00";
  EXPECT_FALSE(handler_.Accepts(sts));
  HttpRequest banner;
  banner.method = "GET";
  banner.target = "/";
  EXPECT_FALSE(handler_.Accepts(banner));
  HttpRequest unsigned_get;
  unsigned_get.method = "GET";
  unsigned_get.target = "/bucket/key";
  EXPECT_TRUE(handler_.Accepts(unsigned_get));
}

TEST_F(S3RestHandlerTest, AcceptsUnsignedRequestsToS3sAwsNamesWhateverThePath) {
  const auto request = [](std::string method, std::string target, std::string host) {
    HttpRequest http;
    http.method = std::move(method);
    http.target = std::move(target);
    http.headers["host"] = std::move(host);
    return http;
  };
  constexpr char kVirtualHost[] = "data.s3.us-west-2.amazonaws.com";
  EXPECT_TRUE(handler_.Accepts(request("GET", "/", kVirtualHost)));
  EXPECT_TRUE(handler_.Accepts(request("PUT", "/", kVirtualHost)));
  EXPECT_TRUE(handler_.Accepts(request("GET", "/?list-type=2&prefix=x", kVirtualHost)));
  EXPECT_TRUE(handler_.Accepts(request("GET", "/service/key", kVirtualHost)));
  EXPECT_TRUE(handler_.Accepts(request("GET", "/", "s3.us-west-2.amazonaws.com")));
  EXPECT_TRUE(handler_.Accepts(request("GET", "/bucket/key", "s3.us-west-2.amazonaws.com")));
  // amtd's own name: GET / is still the server's banner.
  EXPECT_FALSE(handler_.Accepts(request("GET", "/", "127.0.0.1:7071")));
  EXPECT_FALSE(handler_.Accepts(request("GET", "/", "sts.amazonaws.com")));
  EXPECT_FALSE(handler_.Accepts(request("OPTIONS", "/", kVirtualHost)));
  // X-Amz-Target is never S3's, and a signature's scope decides whatever the Host.
  HttpRequest targeted = request("POST", "/", kVirtualHost);
  targeted.headers["x-amz-target"] = "SageMaker.ListTrainingJobs";
  EXPECT_FALSE(handler_.Accepts(targeted));
  HttpRequest sts = request("POST", "/", kVirtualHost);
  sts.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=test/20261201/us-east-1/sts/aws4_request, SignedHeaders=host, "
      "Signature=00";
  EXPECT_FALSE(handler_.Accepts(sts));
  HttpRequest signed_get = request("GET", "/", kVirtualHost);
  signed_get.headers["authorization"] = kS3Authorization;
  EXPECT_TRUE(handler_.Accepts(signed_get));

  // Virtual-hosted, every path but / names a key: those PUTs spool.
  EXPECT_TRUE(handler_.SpoolsBody(request("PUT", "/k", kVirtualHost)));
  EXPECT_TRUE(
      handler_.SpoolsBody(request("PUT", "/a/b.txt?partNumber=1&uploadId=u", kVirtualHost)));
  EXPECT_FALSE(handler_.SpoolsBody(request("PUT", "/", kVirtualHost)));
  EXPECT_FALSE(handler_.SpoolsBody(request("PUT", "/k", "127.0.0.1:7071")));
}

TEST_F(S3RestHandlerTest, VirtualHostedAndPathStyleAddressTheSameObjects) {
  const std::vector<std::pair<std::string, std::string>> virtual_host = {
      {"host", "data.s3.us-west-2.amazonaws.com"}};
  const std::vector<std::pair<std::string, std::string>> aws_path_style = {
      {"host", "s3.us-west-2.amazonaws.com"}};
  const HttpResponse created = Send("PUT", "/", "", virtual_host);
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(Header(created, "Location"), "/data");
  EXPECT_TRUE(fs::is_directory(temp_.path() / "s3/data"));
  EXPECT_EQ(Send("HEAD", "/", "", virtual_host).status, 200);

  ASSERT_EQ(Send("PUT", "/dir/hello%20world.txt", "hello", virtual_host).status, 200);
  ASSERT_EQ(Send("PUT", "/dir/spooled", "spooled bytes", virtual_host, /*spool=*/true).status, 200);
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/dir/hello world.txt"), "hello");
  EXPECT_EQ(Send("GET", "/dir/hello%20world.txt", "", virtual_host).body, "hello");
  EXPECT_EQ(Send("GET", "/data/dir/hello%20world.txt").body, "hello");
  EXPECT_EQ(Send("GET", "/data/dir/hello%20world.txt", "", aws_path_style).body, "hello");
  EXPECT_EQ(Send("GET", "/data/dir/spooled", "", aws_path_style).body, "spooled bytes");
  ASSERT_EQ(Send("PUT", "/data/path-style", "bytes").status, 200);
  EXPECT_EQ(Send("GET", "/path-style", "", virtual_host).body, "bytes");

  const xml::Element list = Xml(Send("GET", "/?list-type=2&prefix=dir/", "", virtual_host));
  EXPECT_EQ(list.name, "ListBucketResult");
  EXPECT_EQ(list.Child("Name")->text, "data");
  ASSERT_EQ(list.Children("Contents").size(), 2u);
  EXPECT_EQ(list.Children("Contents")[0]->Child("Key")->text, "dir/hello world.txt");
  EXPECT_EQ(list.Children("Contents")[1]->Child("Key")->text, "dir/spooled");
  EXPECT_EQ(Xml(Send("GET", "/", "", virtual_host)).Children("Contents").size(), 3u);  // v1
  // GET / path-style on the AWS name lists the buckets.
  EXPECT_EQ(Xml(Send("GET", "/", "", aws_path_style)).name, "ListAllMyBucketsResult");

  const HttpResponse missing = Send("GET", "/nope", "", virtual_host);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(ErrorCode(missing), "NoSuchKey");
  EXPECT_EQ(Xml(missing).Child("Key")->text, "nope");
  const HttpResponse no_bucket =
      Send("GET", "/", "", {{"host", "other.s3.us-west-2.amazonaws.com"}});
  EXPECT_EQ(no_bucket.status, 404);
  EXPECT_EQ(ErrorCode(no_bucket), "NoSuchBucket");
  EXPECT_EQ(Xml(no_bucket).Child("BucketName")->text, "other");

  const std::string id =
      Xml(Send("POST", "/big?uploads", "", virtual_host)).Child("UploadId")->text;
  const HttpResponse part =
      Send("PUT", "/big?partNumber=1&uploadId=" + id, "part", virtual_host, /*spool=*/true);
  ASSERT_EQ(part.status, 200) << part.body;
  const HttpResponse done =
      Send("POST", "/big?uploadId=" + id,
           "<CompleteMultipartUpload><Part><ETag>" + Header(part, "ETag") +
               "</ETag><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>",
           virtual_host);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(Xml(done).Child("Location")->text, "https://data.s3.us-west-2.amazonaws.com/big");
  EXPECT_EQ(Xml(done).Child("Bucket")->text, "data");
  EXPECT_EQ(Send("GET", "/data/big").body, "part");

  const HttpResponse copy =
      Send("PUT", "/copied", "",
           {{"host", "data.s3.us-west-2.amazonaws.com"}, {"x-amz-copy-source", "/data/big"}});
  ASSERT_EQ(copy.status, 200) << copy.body;
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/copied"), "part");
  const HttpResponse deleted =
      Send("POST", "/?delete",
           "<Delete><Object><Key>big</Key></Object><Object><Key>copied</Key></Object></Delete>",
           virtual_host);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(Xml(deleted).Children("Deleted").size(), 2u);
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data/big"));
  EXPECT_EQ(Send("DELETE", "/path-style", "", virtual_host).status, 204);
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data/path-style"));
}

TEST_F(S3RestHandlerTest, BucketLifecycleWithS3sStatusesAndErrors) {
  EXPECT_EQ(Send("HEAD", "/data").status, 404);
  EXPECT_TRUE(Send("HEAD", "/data").body.empty());
  const HttpResponse created = Send("PUT", "/data");
  EXPECT_EQ(created.status, 200);
  EXPECT_EQ(Header(created, "Location"), "/data");
  EXPECT_TRUE(fs::is_directory(temp_.path() / "s3/data"));
  EXPECT_EQ(Send("PUT", "/data").status, 200);  // us-east-1: its owner may create it again
  const HttpResponse elsewhere =
      Send("PUT", "/data",
           "<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint>"
           "</CreateBucketConfiguration>");
  EXPECT_EQ(elsewhere.status, 409);
  EXPECT_EQ(ErrorCode(elsewhere), "BucketAlreadyOwnedByYou");
  EXPECT_EQ(ErrorCode(Send("PUT", "/Bad_Bucket")), "InvalidBucketName");
  EXPECT_EQ(Send("HEAD", "/data").status, 200);

  const xml::Element list = Xml(Send("GET", "/"));
  EXPECT_EQ(list.name, "ListAllMyBucketsResult");
  ASSERT_NE(list.Child("Buckets"), nullptr);
  ASSERT_EQ(list.Child("Buckets")->Children("Bucket").size(), 1u);
  EXPECT_EQ(list.Child("Buckets")->Child("Bucket")->Child("Name")->text, "data");

  ASSERT_EQ(Send("PUT", "/data/k", "v").status, 200);
  const HttpResponse not_empty = Send("DELETE", "/data");
  EXPECT_EQ(not_empty.status, 409);
  EXPECT_EQ(ErrorCode(not_empty), "BucketNotEmpty");
  EXPECT_EQ(Send("DELETE", "/data/k").status, 204);
  EXPECT_EQ(Send("DELETE", "/data").status, 204);
  const HttpResponse gone = Send("GET", "/data?list-type=2");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(ErrorCode(gone), "NoSuchBucket");
  EXPECT_EQ(Xml(gone).Child("BucketName")->text, "data");
}

TEST_F(S3RestHandlerTest, PutGetHeadWithMetadataRangesAndChecksums) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  const std::string crc32 = absl::Base64Escape(std::string("\x36\x10\xa6\x86", 4));  // "hello"
  const HttpResponse put = Send("PUT", "/data/dir/hello%20world.txt", "hello",
                                {{"content-type", "text/plain"},
                                 {"x-amz-meta-origin", "test"},
                                 {"x-amz-checksum-crc32", crc32}});
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(Header(put, "ETag"), "\"5d41402abc4b2a76b9719d911017c592\"");
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/dir/hello world.txt"), "hello");

  const HttpResponse get = Send("GET", "/data/dir/hello%20world.txt");
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "hello");
  EXPECT_EQ(get.content_type, "text/plain");
  EXPECT_THAT(get.headers, Contains(Pair("x-amz-meta-origin", "test")));
  EXPECT_THAT(get.headers, Contains(Pair("Accept-Ranges", "bytes")));

  const HttpResponse head = Send("HEAD", "/data/dir/hello%20world.txt");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(Header(head, "Content-Length"), "5");

  const HttpResponse range =
      Send("GET", "/data/dir/hello%20world.txt", "", {{"range", "bytes=1-3"}});
  EXPECT_EQ(range.status, 206);
  EXPECT_EQ(range.body, "ell");
  EXPECT_EQ(Header(range, "Content-Range"), "bytes 1-3/5");
  EXPECT_EQ(Send("GET", "/data/dir/hello%20world.txt", "", {{"range", "bytes=-2"}}).body, "lo");
  EXPECT_EQ(Send("GET", "/data/dir/hello%20world.txt", "", {{"range", "bytes=2-"}}).body, "llo");
  const HttpResponse unsatisfiable =
      Send("GET", "/data/dir/hello%20world.txt", "", {{"range", "bytes=9-"}});
  EXPECT_EQ(unsatisfiable.status, 416);
  EXPECT_EQ(ErrorCode(unsatisfiable), "InvalidRange");

  const HttpResponse bad_crc = Send("PUT", "/data/x", "other", {{"x-amz-checksum-crc32", crc32}});
  EXPECT_EQ(bad_crc.status, 400);
  EXPECT_EQ(ErrorCode(bad_crc), "BadDigest");
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data/x"));
  EXPECT_EQ(
      ErrorCode(Send("PUT", "/data/x", "other", {{"content-md5", "XUFAKrxLKna5cZ2REBfFkg=="}})),
      "BadDigest");  // md5 of "hello"
  EXPECT_EQ(Send("PUT", "/data/x", "hello", {{"content-md5", "XUFAKrxLKna5cZ2REBfFkg=="}}).status,
            200);

  const HttpResponse missing = Send("GET", "/data/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(ErrorCode(missing), "NoSuchKey");
  EXPECT_EQ(Xml(missing).Child("Key")->text, "nope");
  EXPECT_EQ(Xml(missing).Child("RequestId")->text, "req-1");
  EXPECT_EQ(Send("HEAD", "/data/nope").status, 404);
  EXPECT_TRUE(Send("HEAD", "/data/nope").body.empty());
}

TEST_F(S3RestHandlerTest, AwsChunkedBodiesAreDecodedAndTheirTrailerChecked) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  const std::string crc32 = absl::Base64Escape(std::string("\x36\x10\xa6\x86", 4));
  const std::string body = "3\r\nhel\r\n2\r\nlo\r\n0\r\nx-amz-checksum-crc32:" + crc32 + "\r\n\r\n";
  const HttpResponse put = Send("PUT", "/data/chunked", body,
                                {{"x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
                                 {"content-encoding", "aws-chunked"}});
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/chunked"), "hello");
  const std::string wrong = "3\r\nhel\r\n0\r\nx-amz-checksum-crc32:" + crc32 + "\r\n\r\n";
  EXPECT_EQ(ErrorCode(Send("PUT", "/data/chunked", wrong,
                           {{"x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"}})),
            "BadDigest");
}

TEST_F(S3RestHandlerTest, SpoolsPutsAndPartsAndStoresWhatTheirFilesHold) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  // What spools: object and part uploads; not bucket creation nor copies.
  HttpRequest bucket;
  bucket.method = "PUT";
  bucket.target = "/data";
  EXPECT_FALSE(handler_.SpoolsBody(bucket));
  HttpRequest copy;
  copy.method = "PUT";
  copy.target = "/data/key";
  copy.headers.emplace("x-amz-copy-source", "/data/other");
  EXPECT_FALSE(handler_.SpoolsBody(copy));

  ASSERT_EQ(Send("PUT", "/data/plain", "spooled bytes", {}, /*spool=*/true).status, 200);
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/plain"), "spooled bytes");
  const std::string crc32 = absl::Base64Escape(std::string("\x36\x10\xa6\x86", 4));
  const std::string chunked =
      "3\r\nhel\r\n2\r\nlo\r\n0\r\nx-amz-checksum-crc32:" + crc32 + "\r\n\r\n";
  const std::vector<std::pair<std::string, std::string>> streaming = {
      {"x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"}};
  ASSERT_EQ(Send("PUT", "/data/chunked", chunked, streaming, true).status, 200);
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/chunked"), "hello");
  // A body whose digest does not match stores nothing: the object before stays.
  const std::string md5 = absl::Base64Escape(auth::Md5("other bytes"));
  EXPECT_EQ(ErrorCode(Send("PUT", "/data/plain", "new bytes", {{"content-md5", md5}}, true)),
            "BadDigest");
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/plain"), "spooled bytes");
  EXPECT_EQ(ErrorCode(Send("PUT", "/data/chunked", "3\r\nhel", streaming, true)), "IncompleteBody");
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/chunked"), "hello");

  const std::string id = Xml(Send("POST", "/data/parts?uploads")).Child("UploadId")->text;
  const HttpResponse part =
      Send("PUT", "/data/parts?partNumber=1&uploadId=" + id, "part one", {}, /*spool=*/true);
  ASSERT_EQ(part.status, 200) << part.body;
  const HttpResponse done =
      Send("POST", "/data/parts?uploadId=" + id,
           "<CompleteMultipartUpload><Part><ETag>" + Header(part, "ETag") +
               "</ETag><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>");
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/parts"), "part one");
}

TEST_F(S3RestHandlerTest, AwsChunkedSizeBeyondTheBodyIsIncompleteBody) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  // 2^64 - 1 and 2^64 - 2 wrapped `size + 2` to 1 and 0 and made substr throw.
  for (const std::string size : {"ffffffffffffffff", "fffffffffffffffe", "10", "4"}) {
    const HttpResponse put = Send("PUT", "/data/chunked", size + "\r\nhello\r\n0\r\n\r\n",
                                  {{"x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
                                   {"content-encoding", "aws-chunked"}});
    EXPECT_EQ(put.status, 400) << size;
    EXPECT_EQ(ErrorCode(put), "IncompleteBody") << size;
    EXPECT_EQ(Xml(put).Child("Message")->text, "The aws-chunked request body is malformed.")
        << size;
  }
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data/chunked"));
}

TEST_F(S3RestHandlerTest, ListObjectsV1AndV2WithDelimiterPagingAndUrlEncoding) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  for (const std::string key : {"a/1", "a/2", "b+c", "d e"}) {
    ASSERT_EQ(Send("PUT", "/data/" + key, key).status, 200) << key;
  }
  const xml::Element v1 = Xml(Send("GET", "/data?delimiter=%2F&encoding-type=url&prefix="));
  EXPECT_EQ(v1.Child("IsTruncated")->text, "false");
  ASSERT_EQ(v1.Children("Contents").size(), 2u);
  EXPECT_EQ(v1.Children("Contents")[0]->Child("Key")->text, "b%2Bc");
  EXPECT_EQ(v1.Children("Contents")[1]->Child("Key")->text, "d%20e");
  EXPECT_EQ(v1.Children("Contents")[1]->Child("ETag")->text,
            "\"450162cfa29e3a67ab8b112dd52ae0cf\"");  // md5("d e")
  EXPECT_EQ(v1.Child("CommonPrefixes")->Child("Prefix")->text, "a/");
  EXPECT_EQ(v1.Child("EncodingType")->text, "url");

  const xml::Element first = Xml(Send("GET", "/data?list-type=2&max-keys=3"));
  EXPECT_EQ(first.Child("IsTruncated")->text, "true");
  EXPECT_EQ(first.Child("KeyCount")->text, "3");
  EXPECT_EQ(first.Child("Contents")->Child("Owner"), nullptr);  // v2 without fetch-owner
  const std::string token = first.Child("NextContinuationToken")->text;
  const xml::Element second =
      Xml(Send("GET", "/data?list-type=2&max-keys=3&continuation-token=" + token));
  EXPECT_EQ(second.Child("IsTruncated")->text, "false");
  ASSERT_EQ(second.Children("Contents").size(), 1u);
  EXPECT_EQ(second.Child("Contents")->Child("Key")->text, "d e");
  EXPECT_EQ(ErrorCode(Send("GET", "/data?list-type=2&continuation-token=%25%25")),
            "InvalidArgument");
  EXPECT_EQ(ErrorCode(Send("GET", "/data?max-keys=-1")), "InvalidArgument");
}

TEST_F(S3RestHandlerTest, MultipartUploadAndCopyAndDeleteObjects) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  const xml::Element started =
      Xml(Send("POST", "/data/big?uploads", "", {{"content-type", "a/b"}}));
  const std::string id = started.Child("UploadId")->text;
  ASSERT_FALSE(id.empty());
  const std::string part1(s3::kMinPartBytes, 'x');
  const HttpResponse p1 = Send("PUT", "/data/big?partNumber=1&uploadId=" + id, part1);
  const HttpResponse p2 = Send("PUT", "/data/big?partNumber=2&uploadId=" + id, "end");
  ASSERT_EQ(p1.status, 200);
  ASSERT_EQ(p2.status, 200);
  const std::string complete =
      "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Part><ETag>" +
      Header(p1, "ETag") + "</ETag><PartNumber>1</PartNumber></Part><Part><ETag>" +
      Header(p2, "ETag") +
      "</ETag><PartNumber>2</PartNumber></Part>"
      "</CompleteMultipartUpload>";
  const HttpResponse done = Send("POST", "/data/big?uploadId=" + id, complete);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_THAT(Xml(done).Child("ETag")->text, ::testing::EndsWith("-2\""));
  EXPECT_EQ(Xml(done).Child("Location")->text, "http://127.0.0.1:7071/data/big");
  EXPECT_EQ(fs::file_size(temp_.path() / "s3/data/big"), s3::kMinPartBytes + 3);
  EXPECT_EQ(Send("HEAD", "/data/big").content_type, "a/b");
  EXPECT_EQ(ErrorCode(Send("POST", "/data/big?uploadId=" + id, complete)), "NoSuchUpload");
  EXPECT_EQ(ErrorCode(Send("POST", "/data/big?uploadId=" + id, "<not xml")), "MalformedXML");

  const HttpResponse copy = Send("PUT", "/data/copied", "", {{"x-amz-copy-source", "/data/big"}});
  ASSERT_EQ(copy.status, 200) << copy.body;
  EXPECT_EQ(Xml(copy).name, "CopyObjectResult");
  EXPECT_EQ(fs::file_size(temp_.path() / "s3/data/copied"), s3::kMinPartBytes + 3);

  const HttpResponse deleted =
      Send("POST", "/data?delete",
           "<Delete><Object><Key>big</Key></Object><Object><Key>copied</Key></Object>"
           "<Object><Key>a/../b</Key></Object></Delete>");
  ASSERT_EQ(deleted.status, 200);
  const xml::Element result = Xml(deleted);
  EXPECT_EQ(result.Children("Deleted").size(), 2u);
  ASSERT_EQ(result.Children("Error").size(), 1u);
  EXPECT_EQ(result.Child("Error")->Child("Code")->text, "InvalidArgument");
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data/big"));
}

TEST_F(S3RestHandlerTest, ListMultipartUploadsPagesByKeyWithPrefixesAndMarkers) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  std::vector<std::string> ids;
  for (const char* key : {"b/two", "a%20one", "b/two", "c"}) {
    ids.push_back(
        Xml(Send("POST", std::string("/data/") + key + "?uploads")).Child("UploadId")->text);
  }
  xml::Element all = Xml(Send("GET", "/data?uploads"));
  EXPECT_EQ(all.name, "ListMultipartUploadsResult");
  EXPECT_EQ(all.Child("Bucket")->text, "data");
  EXPECT_EQ(all.Child("MaxUploads")->text, "1000");
  EXPECT_EQ(all.Child("IsTruncated")->text, "false");
  std::vector<std::string> keys;
  for (const xml::Element* upload : all.Children("Upload")) {
    keys.push_back(upload->Child("Key")->text);
    EXPECT_THAT(upload->Child("Initiated")->text,
                ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T.*Z"));
  }
  EXPECT_THAT(keys, ::testing::ElementsAre("a one", "b/two", "b/two", "c"));
  EXPECT_EQ(all.Children("Upload")[1]->Child("UploadId")->text, ids[0]);  // the older first

  // A delimiter folds b/ into a common prefix; one per page, the markers carry on.
  xml::Element page = Xml(Send("GET", "/data?uploads&delimiter=/&max-uploads=2"));
  EXPECT_EQ(page.Child("IsTruncated")->text, "true");
  ASSERT_EQ(page.Children("Upload").size(), 1u);
  ASSERT_EQ(page.Children("CommonPrefixes").size(), 1u);
  EXPECT_EQ(page.Child("CommonPrefixes")->Child("Prefix")->text, "b/");
  EXPECT_EQ(page.Child("NextKeyMarker")->text, "b/");
  page = Xml(Send("GET", "/data?uploads&delimiter=/&key-marker=b/"));
  ASSERT_EQ(page.Children("Upload").size(), 1u);
  EXPECT_EQ(page.Child("Upload")->Child("Key")->text, "c");

  page = Xml(Send("GET", "/data?uploads&prefix=b/&max-uploads=1"));
  EXPECT_EQ(page.Child("NextKeyMarker")->text, "b/two");
  EXPECT_EQ(page.Child("NextUploadIdMarker")->text, ids[0]);
  page = Xml(Send("GET", "/data?uploads&prefix=b/&key-marker=b/two&upload-id-marker=" + ids[0]));
  ASSERT_EQ(page.Children("Upload").size(), 1u);
  EXPECT_EQ(page.Child("Upload")->Child("UploadId")->text, ids[2]);

  page = Xml(Send("GET", "/data?uploads&encoding-type=url&prefix=a"));
  EXPECT_EQ(page.Child("Upload")->Child("Key")->text, "a%20one");
  EXPECT_EQ(ErrorCode(Send("GET", "/data?uploads&max-uploads=x")), "InvalidArgument");
  EXPECT_EQ(ErrorCode(Send("GET", "/nobucket?uploads")), "NoSuchBucket");
}

TEST_F(S3RestHandlerTest, UnservedSubresourcesAnswerNotImplementedAtOnce) {
  ASSERT_EQ(Send("PUT", "/data").status, 200);
  const HttpResponse acl = Send("GET", "/data?acl");
  EXPECT_EQ(acl.status, 501);
  EXPECT_EQ(ErrorCode(acl), "NotImplemented");
  EXPECT_THAT(Xml(acl).Child("Message")->text, HasSubstr("?acl"));
  EXPECT_EQ(Send("PUT", "/data/k?tagging", "<Tagging/>").status, 501);
  EXPECT_EQ(ErrorCode(Send("POST", "/")), "MethodNotAllowed");
}

TEST_F(S3RestHandlerTest, BodyTooLargeIsEntityTooLarge) {
  HttpRequest request;
  request.method = "PUT";
  request.target = "/data/k";
  request.request_id = "r";
  const HttpResponse response = handler_.BodyTooLarge(request, 16);
  EXPECT_EQ(response.status, 400);
  EXPECT_THAT(response.body, HasSubstr("<Code>EntityTooLarge</Code>"));
}

}  // namespace
}  // namespace amt::gateway
