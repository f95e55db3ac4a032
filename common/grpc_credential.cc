#include "common/grpc_credential.h"

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "common/crypto.h"
#include "common/text.h"

namespace amt::auth {
namespace {

std::string Signature(std::string_view key_id, std::string_view secret, std::string_view when) {
  std::string data = "amt-grpc\n";
  data.append(key_id).append("\n").append(when);
  return HexEncode(HmacSha256(secret, data));
}

}  // namespace

std::string MakeGrpcCredential(std::string_view key_id, std::string_view secret, int64_t now) {
  const std::string when = std::to_string(now);
  return std::string(key_id) + " " + when + " " + Signature(key_id, secret, when);
}

absl::StatusOr<std::string> VerifyGrpcCredential(std::string_view value,
                                                 const Credentials& credentials, int64_t now,
                                                 int64_t max_skew_seconds) {
  if (value.empty()) {
    return absl::UnauthenticatedError(
        "amtd requires credentials (it was started with --credentials): give the client "
        "--credentials FILE");
  }
  const std::vector<std::string_view> parts = text::Split(value, " ", /*skip_empty=*/false);
  int64_t when = 0;
  if (parts.size() != 3 ||
      std::from_chars(parts[1].data(), parts[1].data() + parts[1].size(), when).ec != std::errc()) {
    return absl::UnauthenticatedError("malformed x-amt-credential metadata");
  }
  const Credential* credential = credentials.Find(parts[0]);
  if (credential == nullptr) {
    return absl::UnauthenticatedError("The security token included in the request is invalid.");
  }
  if (std::llabs(now - when) > max_skew_seconds) {
    return absl::UnauthenticatedError("Signature expired: the credential was made at " +
                                      std::string(parts[1]) + ", now is " + std::to_string(now) +
                                      " (the clocks differ by more than " +
                                      std::to_string(max_skew_seconds) + " s)");
  }
  if (!ConstantTimeEquals(parts[2], Signature(parts[0], credential->secret_access_key, parts[1]))) {
    return absl::UnauthenticatedError(
        "The request signature we calculated does not match the signature you provided. Check "
        "your AWS Secret Access Key and signing method.");
  }
  return std::string(parts[0]);
}

absl::StatusOr<std::string> ClientKeyId(const Credentials& credentials, std::string_view profile) {
  if (!profile.empty()) {
    std::string id = credentials.KeyIdOfProfile(profile);
    if (id.empty()) {
      return absl::NotFoundError("the credentials file has no key in profile " +
                                 std::string(profile));
    }
    return id;
  }
  if (std::string id = credentials.KeyIdOfProfile("default"); !id.empty()) return id;
  if (credentials.size() == 1) return credentials.OnlyKeyId();
  return absl::InvalidArgumentError(
      "the credentials file has several keys and no [default] profile: choose one with --profile");
}

absl::StatusOr<std::function<std::string()>> GrpcCredentialMaker(
    const std::string& path, std::string_view profile, std::string_view fallback_profile) {
  auto credentials = Credentials::Load(path);
  if (!credentials.ok()) return credentials.status();
  if (profile.empty() && !fallback_profile.empty() &&
      !credentials->KeyIdOfProfile(fallback_profile).empty()) {
    profile = fallback_profile;
  }
  auto key_id = ClientKeyId(*credentials, profile);
  if (!key_id.ok()) return key_id.status();
  const std::string secret = credentials->Find(*key_id)->secret_access_key;
  return [key_id = *key_id, secret] {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return MakeGrpcCredential(key_id, secret, now.count());
  };
}

}  // namespace amt::auth
