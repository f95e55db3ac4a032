// Credentials: the access keys amtd accepts, read from an AWS shared-credentials file (the INI
// format of ~/.aws/credentials):
//
//   # comment            ; comment too
//   [default]
//   aws_access_key_id = AKIDEXAMPLE
//   aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
//   aws_session_token = ...        (any other key is ignored)
//
// As Python's configparser reads it (botocore's reader): '=' or ':' separates a key from its
// value, whitespace around both is dropped, key names are case-insensitive, a line is a comment
// only when '#' or ';' is its first non-blank character (so a secret may contain them), and a
// profile or a key may appear only once. A profile with neither key (a role or SSO profile) is
// skipped; one with only one of them is an error. Immutable once built; safe to share between
// threads.
#ifndef AMT_COMMON_CREDENTIALS_H_
#define AMT_COMMON_CREDENTIALS_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace amt::auth {

// One access key's secret and the profile ([section]) that defined it.
struct Credential {
  std::string secret_access_key;
  std::string profile;
};

class Credentials {
 public:
  // Reads and parses the file at `path`. NotFound when it cannot be read; otherwise as Parse,
  // with `path` as the source name in messages.
  static absl::StatusOr<Credentials> Load(const std::string& path);

  // Parses the text of a credentials file. InvalidArgument, with "<source_name>:<line>: " in front,
  // for a line that is neither a [profile], a key = value, a comment nor blank; a key outside any
  // profile; a repeated profile or key; an empty access key id or secret; a profile with only
  // one of the two keys; and an access key id given twice with different secrets (the same
  // secret twice is allowed: the first profile is kept). InvalidArgument "no access key in
  // <source_name>" when no profile has both keys. Messages never contain a secret.
  static absl::StatusOr<Credentials> Parse(std::string_view contents, std::string_view source_name);

  // The credential of `access_key_id` (compared exactly: key ids are case-sensitive), or nullptr.
  // The pointer stays valid as long as this object.
  const Credential* Find(std::string_view access_key_id) const;

  // The access key id of `profile` (its credential: Find(id)), or "" when the file has no key in
  // that profile.
  std::string KeyIdOfProfile(std::string_view profile) const;

  // The access key id when there is exactly one, else "".
  std::string OnlyKeyId() const { return size() == 1 ? by_key_id_.begin()->first : ""; }

  // Number of distinct access key ids.
  size_t size() const { return by_key_id_.size(); }

 private:
  std::map<std::string, Credential, std::less<>> by_key_id_;
};

}  // namespace amt::auth

#endif  // AMT_COMMON_CREDENTIALS_H_
