#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

namespace amt::auth {

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 0x0f]);
  }
  return hex;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest fails only on allocation failure or a broken libcrypto; neither is a request's
  // fault and there is no sensible answer to return, so stop (as operator new does).
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac,
           &length) == nullptr) {
    std::abort();  // as in Sha256Hex
  }
  return std::string(reinterpret_cast<const char*>(mac), length);
}

std::string Md5(std::string_view data) {
  Md5Hasher hasher;
  hasher.Update(data);
  return hasher.Finish();
}

// As in Sha256Hex, libcrypto fails here only when out of memory or broken: stop.
StreamHasher::StreamHasher(Algorithm algorithm) : context_(EVP_MD_CTX_new()) {
  const EVP_MD* md = algorithm == Algorithm::kMd5 ? EVP_md5() : EVP_sha256();
  if (context_ == nullptr ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), md, nullptr) != 1) {
    std::abort();
  }
}

StreamHasher::~StreamHasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void StreamHasher::Update(std::string_view data) {
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data.data(), data.size()) != 1) {
    std::abort();
  }
}

std::string StreamHasher::Finish() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest, &length) != 1) std::abort();
  return std::string(reinterpret_cast<const char*>(digest), length);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace amt::auth
