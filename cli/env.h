// `amt env`: the shell lines that point every AWS client in a shell at amtd, for
// `eval "$(amt env)"` before running unchanged SageMaker code (boto3, the SageMaker Python SDK,
// the aws cli):
//   export AWS_ENDPOINT_URL='http://127.0.0.1:7071'
//   export AWS_ACCESS_KEY_ID='amt-local'          (or the key of amtd's --credentials file)
//   export AWS_SECRET_ACCESS_KEY='amt-local'
//   export AWS_DEFAULT_REGION='us-east-1'         (only when neither AWS_REGION nor
//   export AWS_REGION='us-east-1'                  AWS_DEFAULT_REGION is set)
// preceded by `unset AWS_PROFILE` and `unset AWS_SESSION_TOKEN` when those are set (a profile
// makes botocore ignore keys from the environment). With amtd's HTTPS proxy (its CA file is
// given), also the transparent way in, for clients that pin AWS's own endpoints (the SDK's STS
// calls) or ignore AWS_ENDPOINT_URL (Debian's aws cli v2):
//   export HTTPS_PROXY='http://127.0.0.1:7071'     (and https_proxy, which curl and wget read)
//   export NO_PROXY='127.0.0.1,localhost,::1'      (and no_proxy; after what was there)
//   export AWS_CA_BUNDLE='/abs/.amt/proxy-ca.pem'
// so that HTTPS to *.amazonaws.com reaches amtd through the proxy, and other hosts' go through
// it untouched.
// Each value is quoted for POSIX shells. Pure: the environment comes in as a function.
#ifndef AMT_CLI_ENV_H_
#define AMT_CLI_ENV_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace amt::cli {

// amtd's default HTTP endpoint (amtd --http-port 7071 on loopback).
inline constexpr char kDefaultHttpEndpoint[] = "http://127.0.0.1:7071";
// The keys exported when amtd runs without --credentials (it then takes any key).
inline constexpr char kDummyKey[] = "amt-local";

struct EnvOptions {
  // amtd's HTTP endpoint; empty: $AMT_ENDPOINT_URL, else kDefaultHttpEndpoint.
  std::string endpoint_url;
  // The AWS credentials file amtd was started with (--credentials) and the profile whose key to
  // export (as the amt client's own --credentials/--profile pick it); empty: dummy keys.
  std::string credentials_file;
  std::string profile;
  // The region exported when the environment has none.
  std::string region = "us-east-1";
  // The HTTPS proxy's CA certificate (amtd's <data-dir>/proxy-ca.pem, absolute); empty: no
  // proxy exports.
  std::string proxy_ca_file;
};

// Where amtd keeps its proxy's CA certificate in `data_dir` (gateway/certificate_authority.h).
std::string ProxyCaFile(std::string_view data_dir);

// `value` in single quotes for a POSIX shell ('it'\''s').
std::string ShellQuote(std::string_view value);

// The `unset` and `export NAME='value'` lines, one per line; `getenv` answers nullopt for a
// variable that is unset or empty. InvalidArgument for an endpoint that is not
// http:// or https://; the credentials file's errors (NotFound, a profile it lacks) as they are.
absl::StatusOr<std::string> EnvExports(
    const EnvOptions& options,
    const std::function<std::optional<std::string>(const char* name)>& getenv);

}  // namespace amt::cli

#endif  // AMT_CLI_ENV_H_
