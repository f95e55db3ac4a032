#include "orchestrator/gateway/s3/s3_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace amt::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::Pair;

HttpRequest Request(std::string method, std::string target) {
  HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  return request;
}

TEST(DecodeS3Request, ReadsTheOperationBucketKeyAndQuery) {
  const HttpRequest http = Request("GET", "/bucket/a%20dir/key?list-type=2&prefix=p");
  std::variant<S3Request, S3Error> decoded = DecodeS3Request(http);
  ASSERT_TRUE(std::holds_alternative<S3Request>(decoded));
  const S3Request& request = std::get<S3Request>(decoded);
  EXPECT_EQ(request.operation, S3Operation::kGetObject);
  EXPECT_EQ(request.bucket, "bucket");
  EXPECT_EQ(request.key, "a dir/key");
  EXPECT_EQ(request.Param("prefix"), "p");
  EXPECT_TRUE(request.Has("list-type"));
  EXPECT_EQ(request.Param("absent"), "");
}

TEST(DecodeS3Request, ChoosesTheOperationByMethodPathAndSubresource) {
  const std::vector<std::pair<HttpRequest, S3Operation>> cases = {
      {Request("GET", "/"), S3Operation::kListBuckets},
      {Request("PUT", "/b"), S3Operation::kCreateBucket},
      {Request("GET", "/b?list-type=2"), S3Operation::kListObjectsV2},
      {Request("GET", "/b"), S3Operation::kListObjects},
      {Request("GET", "/b?location"), S3Operation::kGetBucketLocation},
      {Request("POST", "/b?delete"), S3Operation::kDeleteObjects},
      {Request("PUT", "/b/k?partNumber=1&uploadId=u"), S3Operation::kUploadPart},
      {Request("POST", "/b/k?uploads"), S3Operation::kCreateMultipartUpload},
      {Request("POST", "/b/k?uploadId=u"), S3Operation::kCompleteMultipartUpload},
      {Request("DELETE", "/b/k?uploadId=u"), S3Operation::kAbortMultipartUpload},
      {Request("HEAD", "/b/k"), S3Operation::kGetObject},
  };
  for (const auto& [http, operation] : cases) {
    std::variant<S3Request, S3Error> decoded = DecodeS3Request(http);
    ASSERT_TRUE(std::holds_alternative<S3Request>(decoded)) << http.method << " " << http.target;
    EXPECT_EQ(std::get<S3Request>(decoded).operation, operation)
        << http.method << " " << http.target;
  }
}

TEST(DecodeS3Request, RefusesBadUrisUnservedSubresourcesAndMethods) {
  const auto code = [](const HttpRequest& http) {
    std::variant<S3Request, S3Error> decoded = DecodeS3Request(http);
    return std::holds_alternative<S3Error>(decoded) ? std::get<S3Error>(decoded).code : "";
  };
  EXPECT_EQ(code(Request("GET", "/b/%zz")), "InvalidURI");
  EXPECT_EQ(code(Request("GET", "/b?acl")), "NotImplemented");
  EXPECT_EQ(code(Request("GET", "/b/k?uploadId=u")), "NotImplemented");  // ListParts
  EXPECT_EQ(code(Request("POST", "/")), "MethodNotAllowed");
  HttpRequest copy_part = Request("PUT", "/b/k?partNumber=1&uploadId=u");
  copy_part.headers["x-amz-copy-source"] = "/b/src";
  std::variant<S3Request, S3Error> decoded = DecodeS3Request(copy_part);
  ASSERT_TRUE(std::holds_alternative<S3Error>(decoded));
  EXPECT_THAT(std::get<S3Error>(decoded).message, HasSubstr("UploadPartCopy"));
}

TEST(VirtualHostedBucket, ReadsTheBucketOfEachVirtualHostedEndpoint) {
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.us-west-2.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3-us-west-2.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.dualstack.eu-central-1.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3-accelerate.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3-accelerate.dualstack.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3-fips.us-gov-west-1.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3-external-1.amazonaws.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.cn-north-1.amazonaws.com.cn"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.amazonaws.com.cn"), "mybucket");
}

TEST(VirtualHostedBucket, KeepsDotsDropsThePortAndIgnoresCase) {
  EXPECT_EQ(VirtualHostedBucket("my.bucket.s3.us-east-1.amazonaws.com"), "my.bucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.us-west-2.amazonaws.com:443"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("MyBucket.S3.US-WEST-2.AmazonAWS.com"), "mybucket");
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.amazonaws.com."), "mybucket");  // fully qualified
  // A label "s3" may be part of the bucket's name: the endpoint is the first from the left.
  EXPECT_EQ(VirtualHostedBucket("s3.s3.amazonaws.com"), "s3");
  EXPECT_EQ(VirtualHostedBucket("logs.s3.data.s3.us-east-1.amazonaws.com"), "logs.s3.data");
}

TEST(VirtualHostedBucket, IsNulloptForPathStyleAndOtherHosts) {
  EXPECT_EQ(VirtualHostedBucket("s3.amazonaws.com"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("s3.us-east-1.amazonaws.com"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("s3-us-west-2.amazonaws.com"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("s3.dualstack.us-east-1.amazonaws.com:443"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("s3.cn-north-1.amazonaws.com.cn"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("127.0.0.1:7071"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("[::1]:7071"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("localhost"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket(""), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("sts.amazonaws.com"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("sagemaker.us-east-1.amazonaws.com"), std::nullopt);
  // Static website endpoints are not S3's REST API; nor is a look-alike outside amazonaws.com.
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3-website-us-east-1.amazonaws.com"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.us-east-1.amazonaws.com.example.org"), std::nullopt);
  EXPECT_EQ(VirtualHostedBucket("mybucket.s3.us-east-1.example.com"), std::nullopt);
}

TEST(IsS3EndpointHost, IsTrueForS3sAwsNamesPathStyleOrVirtualHosted) {
  EXPECT_TRUE(IsS3EndpointHost("s3.amazonaws.com"));
  EXPECT_TRUE(IsS3EndpointHost("s3.us-west-2.amazonaws.com:443"));
  EXPECT_TRUE(IsS3EndpointHost("mybucket.s3.us-west-2.amazonaws.com"));
  EXPECT_FALSE(IsS3EndpointHost("127.0.0.1:7071"));
  EXPECT_FALSE(IsS3EndpointHost("localhost"));
  EXPECT_FALSE(IsS3EndpointHost("sts.amazonaws.com"));
}

TEST(DecodeS3Request, VirtualHostedTakesTheBucketFromHostAndTheKeyFromTheWholePath) {
  const auto to = [](std::string method, std::string target, std::string host) {
    HttpRequest http = Request(std::move(method), std::move(target));
    http.headers["host"] = std::move(host);
    return http;
  };
  const std::string host = "mybucket.s3.us-west-2.amazonaws.com";
  struct Case {
    HttpRequest http;
    S3Operation operation;
    std::string key;
  };
  const std::vector<Case> cases = {
      {to("GET", "/a/b.txt", host), S3Operation::kGetObject, "a/b.txt"},
      {to("PUT", "/a%20dir/b.txt", host), S3Operation::kPutObject, "a dir/b.txt"},
      {to("GET", "/?list-type=2&prefix=x", host), S3Operation::kListObjectsV2, ""},
      {to("GET", "/", host), S3Operation::kListObjects, ""},
      {to("PUT", "/", host), S3Operation::kCreateBucket, ""},
      {to("HEAD", "/", host), S3Operation::kHeadBucket, ""},
      {to("POST", "/?delete", host), S3Operation::kDeleteObjects, ""},
      {to("POST", "/big?uploads", host), S3Operation::kCreateMultipartUpload, "big"},
      // The path's first segment is part of the key, not a bucket.
      {to("GET", "/otherbucket/k", host), S3Operation::kGetObject, "otherbucket/k"},
  };
  for (const Case& c : cases) {
    std::variant<S3Request, S3Error> decoded = DecodeS3Request(c.http);
    ASSERT_TRUE(std::holds_alternative<S3Request>(decoded))
        << c.http.method << " " << c.http.target;
    const S3Request& request = std::get<S3Request>(decoded);
    EXPECT_EQ(request.operation, c.operation) << c.http.method << " " << c.http.target;
    EXPECT_EQ(request.bucket, "mybucket") << c.http.method << " " << c.http.target;
    EXPECT_EQ(request.key, c.key) << c.http.method << " " << c.http.target;
    EXPECT_TRUE(request.virtual_hosted);
  }
  std::variant<S3Request, S3Error> list = DecodeS3Request(cases[2].http);
  ASSERT_TRUE(std::holds_alternative<S3Request>(list));
  EXPECT_EQ(std::get<S3Request>(list).Param("prefix"), "x");
  // The target is read, never rewritten: SigV4 signed it as sent.
  EXPECT_EQ(std::get<S3Request>(list).http.target, "/?list-type=2&prefix=x");
}

TEST(DecodeS3Request, PathStyleOnS3sAwsNameReadsTheBucketFromThePath) {
  for (const std::string host :
       {"s3.us-west-2.amazonaws.com", "s3.amazonaws.com:443", "127.0.0.1:7071", "localhost"}) {
    HttpRequest http = Request("GET", "/bucket/a/b.txt");
    http.headers["host"] = host;
    std::variant<S3Request, S3Error> decoded = DecodeS3Request(http);
    ASSERT_TRUE(std::holds_alternative<S3Request>(decoded)) << host;
    const S3Request& request = std::get<S3Request>(decoded);
    EXPECT_EQ(request.operation, S3Operation::kGetObject) << host;
    EXPECT_EQ(request.bucket, "bucket") << host;
    EXPECT_EQ(request.key, "a/b.txt") << host;
    EXPECT_FALSE(request.virtual_hosted) << host;
  }
  HttpRequest list_buckets = Request("GET", "/");
  list_buckets.headers["host"] = "s3.us-west-2.amazonaws.com";
  std::variant<S3Request, S3Error> decoded = DecodeS3Request(list_buckets);
  ASSERT_TRUE(std::holds_alternative<S3Request>(decoded));
  EXPECT_EQ(std::get<S3Request>(decoded).operation, S3Operation::kListBuckets);
}

TEST(DecodeCopySource, ReadsBucketKeyAndDirective) {
  HttpRequest http = Request("PUT", "/b/k");
  http.headers["x-amz-copy-source"] = "/src-bucket/a%2Bb/c?versionId=1";
  http.headers["x-amz-metadata-directive"] = "REPLACE";
  std::variant<S3CopySource, S3Error> source = DecodeCopySource(http);
  ASSERT_TRUE(std::holds_alternative<S3CopySource>(source));
  EXPECT_EQ(std::get<S3CopySource>(source).bucket, "src-bucket");
  EXPECT_EQ(std::get<S3CopySource>(source).key, "a+b/c");
  EXPECT_TRUE(std::get<S3CopySource>(source).replace_metadata);

  http.headers["x-amz-copy-source"] = "bucket-only";
  source = DecodeCopySource(http);
  ASSERT_TRUE(std::holds_alternative<S3Error>(source));
  EXPECT_EQ(std::get<S3Error>(source).code, "InvalidArgument");
  EXPECT_THAT(std::get<S3Error>(source).extra,
              ElementsAre(Pair("ArgumentName", "x-amz-copy-source")));
}

TEST(DecodeDeleteObjects, ReadsKeysAndQuietAndRefusesAnEmptyDelete) {
  std::variant<S3DeleteRequest, S3Error> request = DecodeDeleteObjects(
      "<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object><Object/></Delete>");
  ASSERT_TRUE(std::holds_alternative<S3DeleteRequest>(request));
  EXPECT_THAT(std::get<S3DeleteRequest>(request).keys, ElementsAre("a", ""));
  EXPECT_TRUE(std::get<S3DeleteRequest>(request).quiet);
  request = DecodeDeleteObjects("<Delete></Delete>");
  ASSERT_TRUE(std::holds_alternative<S3Error>(request));
  EXPECT_EQ(std::get<S3Error>(request).code, "MalformedXML");
}

TEST(DecodeCompleteParts, NeedsANumberAndAnETagPerPart) {
  std::variant<std::vector<s3::PartRef>, S3Error> parts = DecodeCompleteParts(
      "<CompleteMultipartUpload><Part><PartNumber> 2 </PartNumber><ETag>\"e\"</ETag></Part>"
      "</CompleteMultipartUpload>");
  ASSERT_TRUE(std::holds_alternative<std::vector<s3::PartRef>>(parts));
  ASSERT_EQ(std::get<std::vector<s3::PartRef>>(parts).size(), 1u);
  EXPECT_EQ(std::get<std::vector<s3::PartRef>>(parts)[0].number, 2);
  EXPECT_EQ(std::get<std::vector<s3::PartRef>>(parts)[0].etag, "\"e\"");
  parts = DecodeCompleteParts(
      "<CompleteMultipartUpload><Part><PartNumber>x</PartNumber><ETag>e</ETag></Part>"
      "</CompleteMultipartUpload>");
  ASSERT_TRUE(std::holds_alternative<S3Error>(parts));
  EXPECT_EQ(std::get<S3Error>(parts).code, "MalformedXML");
}

TEST(DecodeListObjects, CapsMaxKeysAndRefusesBadArguments) {
  const HttpRequest http = Request("GET", "/b?max-keys=5000&encoding-type=url&marker=m");
  std::variant<S3Request, S3Error> decoded = DecodeS3Request(http);
  ASSERT_TRUE(std::holds_alternative<S3Request>(decoded));
  std::variant<S3ListRequest, S3Error> list = DecodeListObjects(std::get<S3Request>(decoded), 1);
  ASSERT_TRUE(std::holds_alternative<S3ListRequest>(list));
  EXPECT_EQ(std::get<S3ListRequest>(list).options.max_keys, 1000);
  EXPECT_EQ(std::get<S3ListRequest>(list).options.after, "m");
  EXPECT_TRUE(std::get<S3ListRequest>(list).url_encoded);

  const HttpRequest bad = Request("GET", "/b?max-keys=-1");
  std::variant<S3Request, S3Error> bad_decoded = DecodeS3Request(bad);
  ASSERT_TRUE(std::holds_alternative<S3Request>(bad_decoded));
  list = DecodeListObjects(std::get<S3Request>(bad_decoded), 2);
  ASSERT_TRUE(std::holds_alternative<S3Error>(list));
  EXPECT_EQ(std::get<S3Error>(list).code, "InvalidArgument");
}

TEST(ParseRange, ReadsOneRangeAndIgnoresWhatS3Ignores) {
  EXPECT_THAT(ParseRange("bytes=2-5", 10), Optional(Pair(2u, 4u)));
  EXPECT_THAT(ParseRange("bytes=7-", 10), Optional(Pair(7u, 3u)));
  EXPECT_THAT(ParseRange("bytes=-3", 10), Optional(Pair(7u, 3u)));
  EXPECT_THAT(ParseRange("bytes=0-1,3-4", 10), Optional(Pair(0u, 10u)));
  EXPECT_THAT(ParseRange("items=0-1", 10), Optional(Pair(0u, 10u)));
  EXPECT_EQ(ParseRange("bytes=10-", 10), std::nullopt);
}

}  // namespace
}  // namespace amt::gateway
