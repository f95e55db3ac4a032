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
  if (!options.proxy_ca_file.empty() && endpoint.starts_with("http://")) {
    const std::string proxy = endpoint;
    line("HTTPS_PROXY", proxy);
    line("https_proxy", proxy);
    // The endpoint itself is reached directly, whatever a client's proxy settings.
    std::string no_proxy = getenv("NO_PROXY").value_or(getenv("no_proxy").value_or(""));
    const std::string authority = endpoint.substr(7, endpoint.find('/', 7) - 7);
    std::string host = authority.starts_with('[') ? authority.substr(1, authority.find(']') - 1)
                                                  : authority.substr(0, authority.rfind(':'));
    for (const std::string& name :
         {std::string("127.0.0.1"), std::string("localhost"), std::string("::1"), host}) {
      if (name.empty() || ("," + no_proxy + ",").find("," + name + ",") != std::string::npos) {
        continue;
      }
      if (!no_proxy.empty()) no_proxy += ",";
      no_proxy += name;
    }
    line("NO_PROXY", no_proxy);
    line("no_proxy", no_proxy);
    line("AWS_CA_BUNDLE", options.proxy_ca_file);
  }
  return out;
}

std::string ProxyCaFile(std::string_view data_dir) {
  std::string path(data_dir);
  if (!path.empty() && path.back() != '/') path += '/';
  return path + "proxy-ca.pem";
}

}  // namespace amt::cli
