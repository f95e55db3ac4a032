#include "cli/env.h"

#include <utility>

#include "common/credentials.h"
#include "common/grpc_credential.h"

namespace amt::cli {

std::string ShellQuote(std::string_view value) {
  std::string quoted = "'";
  for (const char c : value) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

absl::StatusOr<std::string> EnvExports(
    const EnvOptions& options,
    const std::function<std::optional<std::string>(const char* name)>& getenv) {
  std::string endpoint = options.endpoint_url;
  if (endpoint.empty()) endpoint = getenv("AMT_ENDPOINT_URL").value_or(kDefaultHttpEndpoint);
  if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
    return absl::InvalidArgumentError(
        "the endpoint URL must start with http:// or https://, not '" + endpoint + "'");
  }
  while (endpoint.size() > 8 && endpoint.back() == '/') endpoint.pop_back();

  std::string key_id = kDummyKey;
  std::string secret = kDummyKey;
  if (!options.credentials_file.empty()) {
    absl::StatusOr<auth::Credentials> credentials =
        auth::Credentials::Load(options.credentials_file);
    if (!credentials.ok()) return credentials.status();
    absl::StatusOr<std::string> id = auth::ClientKeyId(*credentials, options.profile);
    if (!id.ok()) return id.status();
    key_id = *id;
    secret = credentials->Find(key_id)->secret_access_key;
  }

  std::string out;
  auto line = [&out](std::string_view name, std::string_view value) {
    out += "export ";
    out += name;
    out += "=" + ShellQuote(value) + "\n";
  };
  // A profile in the environment makes botocore ignore the exported keys; a session token
  // belongs to other keys.
  for (const char* name : {"AWS_PROFILE", "AWS_SESSION_TOKEN"}) {
    if (getenv(name).has_value()) out += std::string("unset ") + name + "\n";
  }
  line("AWS_ENDPOINT_URL", endpoint);
  line("AWS_ACCESS_KEY_ID", key_id);
  line("AWS_SECRET_ACCESS_KEY", secret);
  if (!getenv("AWS_REGION").has_value() && !getenv("AWS_DEFAULT_REGION").has_value()) {
    line("AWS_DEFAULT_REGION", options.region);
    line("AWS_REGION", options.region);
  }
  return out;
}

}  // namespace amt::cli
