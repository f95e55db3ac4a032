// CertificateAuthority: the CA of amtd's HTTPS proxy (the transparent endpoint, http_server.h).
// A client that reaches AWS through amtd as its HTTPS proxy (HTTPS_PROXY, `amt env`) asks to
// CONNECT to e.g. sts.us-east-1.amazonaws.com:443; amtd answers the TLS handshake itself with a
// certificate for that host, issued on the fly by this CA, which the client trusts through
// AWS_CA_BUNDLE (the CA's certificate file). The CA is made once, in amtd's data dir, and kept:
// its key file is 0600, owner only; a restart loads the same CA, so a trusted bundle stays good.
//
// Leaf certificates: EC P-256 keys, SHA-256 signatures, the host (lower-cased) as subject CN
// (when it fits X.509's 64 characters; a longer one, e.g. a long bucket's S3 endpoint, is named
// by its subjectAltName alone) and as the one subjectAltName (DNS, or IP for an address), valid
// from a day before issue for 397 days, serverAuth, with the key identifiers that strict
// verifiers (Python 3.13's VERIFY_X509_STRICT) require. Issued once per host and kept in memory
// (as a ready TLS server context).
#ifndef AMT_ORCHESTRATOR_GATEWAY_CERTIFICATE_AUTHORITY_H_
#define AMT_ORCHESTRATOR_GATEWAY_CERTIFICATE_AUTHORITY_H_

#include <boost/asio/ssl/context.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace amt::gateway {

struct IssuedCertificate {
  std::string certificate_pem;  // the leaf's certificate, PEM
  std::string private_key_pem;  // its key, PEM (PKCS#8)
};

class CertificateAuthority {
 public:
  // The file names in the folder LoadOrCreate is given.
  static constexpr char kCertificateFile[] = "proxy-ca.pem";
  static constexpr char kKeyFile[] = "proxy-ca-key.pem";

  // Loads the CA from `dir`/proxy-ca.pem and `dir`/proxy-ca-key.pem, or, when neither exists,
  // makes a new one there (EC P-256, self-signed, CN "amt-local proxy CA <random hex>", CA:TRUE
  // with pathlen 0, keyCertSign, valid 10 years), the key written 0600 through a temporary file
  // and rename. FailedPrecondition when only one file exists, a file does not parse, the key does
  // not match the certificate, the certificate is not a CA with a subjectKeyIdentifier, a file
  // cannot be read, or the key file is readable by others than its owner (it then says which
  // file and what to do: `chmod 600 <path>`); Internal when a file cannot be written (with
  // strerror).
  static absl::StatusOr<std::unique_ptr<CertificateAuthority>> LoadOrCreate(const std::string& dir);

  ~CertificateAuthority();
  CertificateAuthority(const CertificateAuthority&) = delete;
  CertificateAuthority& operator=(const CertificateAuthority&) = delete;

  // The path of the CA's certificate (what AWS_CA_BUNDLE names).
  const std::string& certificate_path() const { return certificate_path_; }
  // The CA's certificate, PEM.
  const std::string& certificate_pem() const { return certificate_pem_; }

  // A new leaf certificate for `host` (a DNS name, or an IPv4/IPv6 address literal without
  // brackets), signed by this CA; from any thread. InvalidArgument for an empty host or one
  // with characters no DNS name has (a DNS name has letters, digits, '-', '_' and '.'), an empty
  // label or one over 63 characters, or an all-digit last label that is no IPv4 address.
  absl::StatusOr<IssuedCertificate> Issue(std::string_view host) const;

  // A TLS server context (TLS 1.2 and later) holding the leaf of `host` (Issue, once per host,
  // lower-cased) and the CA's certificate as its chain; from any thread.
  absl::StatusOr<std::shared_ptr<boost::asio::ssl::context>> ServerContext(std::string_view host);

 private:
  struct Keys;  // the CA's OpenSSL key and certificate
  CertificateAuthority(std::unique_ptr<Keys> keys, std::string certificate_path,
                       std::string certificate_pem);

  std::unique_ptr<Keys> keys_;
  const std::string certificate_path_;
  const std::string certificate_pem_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<boost::asio::ssl::context>, std::less<>> contexts_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_CERTIFICATE_AUTHORITY_H_
