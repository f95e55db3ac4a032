#include "cli/env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

namespace amt::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A fake environment.
std::function<std::optional<std::string>(const char*)> Env(
    std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

EnvOptions Options(std::string endpoint_url, std::string credentials_file = "",
                   std::string profile = "") {
  EnvOptions options;
  options.endpoint_url = std::move(endpoint_url);
  options.credentials_file = std::move(credentials_file);
  options.profile = std::move(profile);
  return options;
}

TEST(ShellQuote, QuotesForPosixShells) {
  EXPECT_EQ(ShellQuote("plain"), "'plain'");
  EXPECT_EQ(ShellQuote("it's $HOME"), "'it'\\''s $HOME'");
  EXPECT_EQ(ShellQuote(""), "''");
}

TEST(EnvExports, PointsEveryClientAtTheDefaultEndpointWithDummyKeysAndARegion) {
  const absl::StatusOr<std::string> out = EnvExports(EnvOptions{}, Env({}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "export AWS_ENDPOINT_URL='http://127.0.0.1:7071'\n"
            "export AWS_ACCESS_KEY_ID='amt-local'\n"
            "export AWS_SECRET_ACCESS_KEY='amt-local'\n"
            "export AWS_DEFAULT_REGION='us-east-1'\n"
            "export AWS_REGION='us-east-1'\n");
}

TEST(EnvExports, KeepsTheUsersRegionAndUnsetsAProfileAndASessionToken) {
  const absl::StatusOr<std::string> out =
      EnvExports(Options("http://10.0.0.5:9000/"), Env({{"AWS_REGION", "eu-west-1"},
                                                        {"AWS_PROFILE", "work"},
                                                        {"AWS_SESSION_TOKEN", "t"},
                                                        {"AMT_ENDPOINT_URL", "http://ignored:1"}}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "unset AWS_PROFILE\n"
            "unset AWS_SESSION_TOKEN\n"
            "export AWS_ENDPOINT_URL='http://10.0.0.5:9000'\n"
            "export AWS_ACCESS_KEY_ID='amt-local'\n"
            "export AWS_SECRET_ACCESS_KEY='amt-local'\n");
}

TEST(EnvExports, TakesTheEndpointFromTheEnvironmentAndRefusesANonHttpOne) {
  absl::StatusOr<std::string> out = EnvExports(
      EnvOptions{},
      Env({{"AMT_ENDPOINT_URL", "http://127.0.0.1:8123"}, {"AWS_DEFAULT_REGION", "us-west-2"}}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("export AWS_ENDPOINT_URL='http://127.0.0.1:8123'\n"));
  EXPECT_THAT(*out, ::testing::Not(HasSubstr("REGION")));
  out = EnvExports(Options("127.0.0.1:7071"), Env({}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("must start with http:// or https://"));
}

TEST(EnvExports, ExportsTheKeyOfAmtdsCredentialsFile) {
  const std::string path =
      ::testing::TempDir() + "amt_env_test_credentials_" + std::to_string(::getpid());
  {
    std::ofstream file(path);
    file << "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s3cr3t\n"
         << "[ci]\naws_access_key_id = AKIDCI\naws_secret_access_key = ci'secret\n";
  }
  absl::StatusOr<std::string> out = EnvExports(Options("", path), Env({}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("export AWS_ACCESS_KEY_ID='AKIDDEFAULT'\n"
                              "export AWS_SECRET_ACCESS_KEY='s3cr3t'\n"));
  out = EnvExports(Options("", path, "ci"), Env({}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("export AWS_ACCESS_KEY_ID='AKIDCI'\n"
                              "export AWS_SECRET_ACCESS_KEY='ci'\\''secret'\n"));
  out = EnvExports(Options("", path, "nope"), Env({}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  std::remove(path.c_str());
  out = EnvExports(Options("", path), Env({}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
}

TEST(EnvExports, WithTheProxysCaAlsoExportsTheTransparentWayIn) {
  EnvOptions options;
  options.proxy_ca_file = "/data/.amt/proxy-ca.pem";
  const absl::StatusOr<std::string> out =
      EnvExports(options, Env({{"AWS_REGION", "eu-west-1"}, {"no_proxy", "intranet,localhost"}}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "export AWS_ENDPOINT_URL='http://127.0.0.1:7071'\n"
            "export AWS_ACCESS_KEY_ID='amt-local'\n"
            "export AWS_SECRET_ACCESS_KEY='amt-local'\n"
            "export HTTPS_PROXY='http://127.0.0.1:7071'\n"
            "export https_proxy='http://127.0.0.1:7071'\n"
            "export NO_PROXY='intranet,localhost,127.0.0.1,::1'\n"
            "export no_proxy='intranet,localhost,127.0.0.1,::1'\n"
            "export AWS_CA_BUNDLE='/data/.amt/proxy-ca.pem'\n");
}

TEST(EnvExports, TheProxyBypassNamesARemoteEndpointsHost) {
  EnvOptions options = Options("http://tuner.lan:7071");
  options.proxy_ca_file = "/ca.pem";
  const absl::StatusOr<std::string> out = EnvExports(options, Env({{"AWS_REGION", "us-east-1"}}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("export HTTPS_PROXY='http://tuner.lan:7071'\n"));
  EXPECT_THAT(*out, HasSubstr("export NO_PROXY='127.0.0.1,localhost,::1,tuner.lan'\n"));
}

TEST(EnvExports, AnHttpsEndpointIsNoProxy) {
  EnvOptions options = Options("https://tuner.lan");
  options.proxy_ca_file = "/ca.pem";
  const absl::StatusOr<std::string> out = EnvExports(options, Env({{"AWS_REGION", "us-east-1"}}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, Not(HasSubstr("PROXY")));
  EXPECT_THAT(*out, Not(HasSubstr("AWS_CA_BUNDLE")));
}

TEST(ProxyCaFile, IsTheCaCertificateInTheDataDir) {
  EXPECT_EQ(ProxyCaFile(".amt"), ".amt/proxy-ca.pem");
  EXPECT_EQ(ProxyCaFile("/var/amt/"), "/var/amt/proxy-ca.pem");
}

}  // namespace
}  // namespace amt::cli
