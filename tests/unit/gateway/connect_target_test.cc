#include "orchestrator/gateway/connect_target.h"

#include <gtest/gtest.h>

namespace amt::gateway {
namespace {

TEST(ParseConnectTarget, TakesHostAndPortLowerCased) {
  const auto target = ParseConnectTarget("STS.us-east-1.AmazonAWS.com:443");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->host, "sts.us-east-1.amazonaws.com");
  EXPECT_EQ(target->port, 443);
}

TEST(ParseConnectTarget, TakesABracketedIpv6Literal) {
  const auto target = ParseConnectTarget("[::1]:8443");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->host, "::1");
  EXPECT_EQ(target->port, 8443);
}

TEST(ParseConnectTarget, RefusesWhatIsNoAuthority) {
  for (const char* bad : {"", "example.com", "example.com:", ":443", "example.com:0",
                          "example.com:65536", "example.com:44x", "::1:443", "[::1]443",
                          "exa mple.com:443", "example.com/x:443", "https://example.com:443"}) {
    EXPECT_FALSE(ParseConnectTarget(bad).has_value()) << bad;
  }
}

TEST(IsAwsHost, KnowsAwsServiceNames) {
  for (const char* host :
       {"sts.amazonaws.com", "sts.us-east-1.amazonaws.com", "api.sagemaker.us-west-2.amazonaws.com",
        "my.bucket.s3.eu-west-1.amazonaws.com", "logs.cn-north-1.amazonaws.com.cn",
        "sagemaker.us-east-1.api.aws", "iam.amazonaws.com."}) {
    EXPECT_TRUE(IsAwsHost(host)) << host;
  }
  for (const char* host : {"amazonaws.com", "evilamazonaws.com", "amazonaws.com.evil.org",
                           "pypi.org", "127.0.0.1", "localhost"}) {
    EXPECT_FALSE(IsAwsHost(host)) << host;
  }
}

TEST(RouteConnect, TerminatesAwsTunnelsOthersOnLoopbackOnly) {
  const ConnectTarget aws{"s3.us-east-1.amazonaws.com", 443};
  const ConnectTarget other{"pypi.org", 443};
  EXPECT_EQ(RouteConnect(aws, /*loopback_only=*/true), ConnectRoute::kTerminate);
  EXPECT_EQ(RouteConnect(aws, /*loopback_only=*/false), ConnectRoute::kTerminate);
  EXPECT_EQ(RouteConnect(other, /*loopback_only=*/true), ConnectRoute::kTunnel);
  EXPECT_EQ(RouteConnect(other, /*loopback_only=*/false), ConnectRoute::kRefuse);
}

}  // namespace
}  // namespace amt::gateway
