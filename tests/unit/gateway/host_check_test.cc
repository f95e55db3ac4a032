#include "orchestrator/gateway/host_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(HostNameTest, DropsThePortAndTheBracketsAndLowersTheCase) {
  EXPECT_EQ(HostName("127.0.0.1:7071"), "127.0.0.1");
  EXPECT_EQ(HostName("LocalHost:80"), "localhost");
  EXPECT_EQ(HostName("[::1]:7071"), "::1");
  EXPECT_EQ(HostName("[::1]"), "::1");
  EXPECT_EQ(HostName("example.com"), "example.com");
}

TEST(HostCheckTest, OnLoopbackAnswersLoopbackNamesOnly) {
  const HostCheck check = HostCheck::ForBinding("127.0.0.1", {});
  const std::string localhost = "localhost:7071", v4 = "127.0.0.1:7071", v6 = "[::1]:7071",
                    other_v4 = "127.1.2.3";
  for (const std::string* host : {&localhost, &v4, &v6, &other_v4}) {
    EXPECT_EQ(check.Refusal(host, nullptr), std::nullopt) << *host;
  }
  const std::string rebound = "evil.example:7071";
  EXPECT_THAT(check.Refusal(&rebound, nullptr),
              Optional(HasSubstr("amtd does not answer requests for host 'evil.example:7071'")));
  EXPECT_EQ(check.Refusal(nullptr, nullptr), std::nullopt);  // no Host: not a browser
}

TEST(HostCheckTest, RefusesAForeignOriginEvenForALoopbackHost) {
  const HostCheck check = HostCheck::ForBinding("127.0.0.1", {});
  const std::string host = "127.0.0.1:7071";
  const std::string same = "http://127.0.0.1:7071", foreign = "https://evil.example",
                    opaque = "null";
  EXPECT_EQ(check.Refusal(&host, &same), std::nullopt);
  EXPECT_THAT(check.Refusal(&host, &foreign),
              Optional(HasSubstr("requests from web pages of origin 'https://evil.example'")));
  EXPECT_NE(check.Refusal(&host, &opaque), std::nullopt);
}

TEST(HostCheckTest, ExtraNamesAreAllowed) {
  const HostCheck check = HostCheck::ForBinding("localhost", {"amt.internal", "Box:9"});
  const std::string internal = "AMT.internal:7071", box = "box";
  EXPECT_EQ(check.Refusal(&internal, nullptr), std::nullopt);
  EXPECT_EQ(check.Refusal(&box, nullptr), std::nullopt);
}

TEST(HostCheckTest, ANonLoopbackBindingChecksOnlyWhenNamesAreGiven) {
  const std::string lan = "192.168.1.20:7071", other = "evil.example";
  const HostCheck open = HostCheck::ForBinding("0.0.0.0", {});
  EXPECT_FALSE(open.enabled());
  EXPECT_EQ(open.Refusal(&other, nullptr), std::nullopt);
  const HostCheck named = HostCheck::ForBinding("0.0.0.0", {"192.168.1.20"});
  EXPECT_EQ(named.Refusal(&lan, nullptr), std::nullopt);
  EXPECT_NE(named.Refusal(&other, nullptr), std::nullopt);
}

}  // namespace
}  // namespace amt::gateway
