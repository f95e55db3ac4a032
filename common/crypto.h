// MD5 for S3's ETags, and the three primitives SigV4 needs, over OpenSSL's libcrypto: SHA-256,
// HMAC-SHA256 and a comparison whose time does not depend on where two strings first differ. Pure
// functions of their inputs; callable from any thread.
#ifndef AMT_COMMON_CRYPTO_H_
#define AMT_COMMON_CRYPTO_H_

#include <string>
#include <string_view>

namespace amt::auth {

// SHA-256 of `data` as 64 lower-case hex digits (SigV4's HexEncode(Hash(...))).
std::string Sha256Hex(std::string_view data);

// HMAC-SHA256 of `data` under `key`: the 32 raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

// MD5, for what S3 calls an ETag (not for security): Md5 of a whole string, Md5Hasher of a
// stream (a file read in blocks). Both give the 16 raw bytes.
std::string Md5(std::string_view data);

// The digest of a stream (a file read in blocks): Update with each block, then Finish.
class StreamHasher {
 public:
  enum class Algorithm { kMd5, kSha256 };
  explicit StreamHasher(Algorithm algorithm);
  ~StreamHasher();
  StreamHasher(const StreamHasher&) = delete;
  StreamHasher& operator=(const StreamHasher&) = delete;
  void Update(std::string_view data);
  // The digest (raw bytes) of everything given to Update; the hasher is spent.
  std::string Finish();

 private:
  void* context_;  // EVP_MD_CTX, kept out of this header
};

// MD5 of a stream: 16 raw bytes.
class Md5Hasher : public StreamHasher {
 public:
  Md5Hasher() : StreamHasher(Algorithm::kMd5) {}
};

// SHA-256 of a stream (a request body spooled to a file, for its SigV4 payload hash): 32 raw
// bytes.
class Sha256Hasher : public StreamHasher {
 public:
  Sha256Hasher() : StreamHasher(Algorithm::kSha256) {}
};

// Lower-case hex of raw bytes.
std::string HexEncode(std::string_view bytes);

// True iff `a` and `b` are equal. For strings of equal length the time taken does not depend on
// their contents (CRYPTO_memcmp), so a signature cannot be guessed byte by byte from response
// times; a length difference is not secret (every valid signature has 64 characters).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace amt::auth

#endif  // AMT_COMMON_CRYPTO_H_
