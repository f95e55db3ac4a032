// The credential amt's gRPC clients (the amt CLI, amt-worker) present to an amtd started with
// --credentials: metadata "x-amt-credential: <access key id> <unix seconds> <signature>", where
// the signature is the hex HMAC-SHA256, under the key's secret, of "amt-grpc\n<key id>\n<unix
// seconds>". It is made from a key of the same AWS shared-credentials file amtd reads
// (credentials.h), so the secret itself never travels. amtd accepts it within the clock skew AWS
// allows SigV4 (15 minutes either way); within that window a captured value can be replayed
// (gRPC runs without TLS here: loopback or a trusted network). Streams are checked when they
// open.
#ifndef AMT_COMMON_GRPC_CREDENTIAL_H_
#define AMT_COMMON_GRPC_CREDENTIAL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/credentials.h"

namespace amt::auth {

inline constexpr char kGrpcCredentialMetadata[] = "x-amt-credential";
// Workers register with a key of this profile when the file has one (then no other key may);
// otherwise any key of the file may.
inline constexpr char kWorkerProfile[] = "amt-worker";

// The metadata value for `key_id` and its `secret` at `now` (Unix seconds).
std::string MakeGrpcCredential(std::string_view key_id, std::string_view secret, int64_t now);

// The key id a valid `value` was made with. Unauthenticated, with the reason, when it is empty
// or malformed, names a key not in `credentials`, is further than `max_skew_seconds` from
// `now`, or its signature does not match.
absl::StatusOr<std::string> VerifyGrpcCredential(std::string_view value,
                                                 const Credentials& credentials, int64_t now,
                                                 int64_t max_skew_seconds = 900);

// The key a client presents: `profile`'s when given (NotFound when the file has no key in it);
// else the "default" profile's; else the file's only key; else InvalidArgument asking for a
// profile. Returns the key id (its secret: credentials.Find(id)).
absl::StatusOr<std::string> ClientKeyId(const Credentials& credentials, std::string_view profile);

// Reads the credentials file at `path` and picks a key as ClientKeyId does (`fallback_profile`,
// when the file has it, before "default" if no `profile` is given). The returned function makes
// a fresh credential from the system clock at each call (one per connection or call).
absl::StatusOr<std::function<std::string()>> GrpcCredentialMaker(
    const std::string& path, std::string_view profile, std::string_view fallback_profile = "");

}  // namespace amt::auth

#endif  // AMT_COMMON_GRPC_CREDENTIAL_H_
