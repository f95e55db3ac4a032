// The proxy CA over OpenSSL 3: EC P-256 keys, X.509 v3 certificates with the extensions that
// strict verifiers want (OpenSSL's X509_V_FLAG_X509_STRICT, which Python 3.13 turns on for
// botocore), PEM files written owner-only, and Boost.Asio TLS server contexts per host.
#include "orchestrator/gateway/certificate_authority.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "common/status_macros.h"

namespace amt::gateway {
namespace {

namespace ssl = boost::asio::ssl;

// unique_ptr deleters for OpenSSL's objects, each freed by its own function.
template <auto kFree>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* object) const {
    kFree(object);
  }
};
using Asn1OctetStringPtr =
    std::unique_ptr<ASN1_OCTET_STRING, OpenSslDeleter<ASN1_OCTET_STRING_free>>;
using Asn1StringPtr = std::unique_ptr<ASN1_STRING, OpenSslDeleter<ASN1_STRING_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslDeleter<BN_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO_free_all>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY_free>>;
using GeneralNamePtr = std::unique_ptr<GENERAL_NAME, OpenSslDeleter<GENERAL_NAME_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, OpenSslDeleter<GENERAL_NAMES_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509_free>>;
using X509ExtensionPtr = std::unique_ptr<X509_EXTENSION, OpenSslDeleter<X509_EXTENSION_free>>;

constexpr int kLeafDays = 397;
constexpr int kCaDays = 3650;
// Certificates start a day in the past, so that a client whose clock runs behind accepts them.
constexpr long kBackdateSeconds = 24 * 60 * 60;
// X.509's upper bound on a commonName (ub-common-name, RFC 5280); a longer host (a long bucket
// name in a virtual-hosted S3 endpoint) is named by its subjectAltName alone.
constexpr size_t kMaxCommonName = 64;

// Concatenates strings. Not absl::StrCat: Debian's Abseil has its own absl::string_view, which
// std::string_view does not convert to.
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string text;
  (text.append(std::string_view(parts)), ...);
  return text;
}

std::string ToLower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = absl::ascii_tolower(static_cast<unsigned char>(c));
  return lower;
}

// A file's permission bits as chmod takes them, e.g. "0644".
std::string OctalMode(mode_t mode) {
  std::array<char, 8> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), mode & 07777, 8);
  return Cat("0", std::string_view(digits.data(), static_cast<size_t>(end.ptr - digits.data())));
}

// A file descriptor, closed on destruction.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  // Closes now, so that the caller sees close's error (a write the kernel could not complete).
  int Close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

// OpenSSL's queued errors of this thread as text, oldest first; the queue is emptied.
std::string OpenSslErrors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    std::array<char, 256> buffer{};
    ERR_error_string_n(code, buffer.data(), buffer.size());
    if (!text.empty()) text += "; ";
    text += buffer.data();
  }
  return text.empty() ? "no OpenSSL error reported" : text;
}

absl::Status OpenSslError(std::string_view what) {
  return absl::InternalError(Cat(what, ": ", OpenSslErrors()));
}

std::string ErrnoText(int error) { return std::strerror(error); }

std::string JoinPath(const std::string& dir, std::string_view file) {
  if (dir.empty()) return std::string(file);
  return dir.back() == '/' ? Cat(dir, file) : Cat(dir, "/", file);
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::StatusOr<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    return OpenSslError("cannot draw random bytes");
  }
  return absl::BytesToHexString(raw);
}

// Whether `path` exists; an error other than "no such file" (a permission, a file where a
// folder should be) is reported, not taken for absence.
absl::StatusOr<bool> Exists(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) return true;
  if (errno == ENOENT) return false;
  return absl::FailedPreconditionError(Cat("cannot look for ", path, ": ", ErrnoText(errno)));
}

// The whole of a regular file. With `owner_only`, refuses a file whose mode gives its group or
// others any access; the mode is read from the open descriptor, so it is the mode of what is read.
absl::StatusOr<std::string> ReadFile(const std::string& path, bool owner_only) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return absl::FailedPreconditionError(Cat("cannot open ", path, ": ", ErrnoText(errno)));
  }
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) {
    return absl::FailedPreconditionError(Cat("cannot stat ", path, ": ", ErrnoText(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(Cat(path, " is not a regular file"));
  }
  if (owner_only && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::FailedPreconditionError(
        Cat(path, " (the proxy CA's private key) is open to others than its owner (mode ",
            OctalMode(info.st_mode), "); make it owner-only: chmod 600 ", path));
  }
  std::string contents;
  std::array<char, 16384> buffer;
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::FailedPreconditionError(Cat("cannot read ", path, ": ", ErrnoText(errno)));
    }
    contents.append(buffer.data(), static_cast<size_t>(n));
  }
  return contents;
}

// Writes `contents` to `path` with exactly `mode` (whatever the umask), all or nothing: into a
// new temporary file beside it (O_EXCL, so never into a file someone else opened), synced, then
// renamed over `path`, and the folder synced so that the rename survives a crash.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents, mode_t mode) {
  ASSIGN_OR_RETURN(const std::string suffix, RandomHex(8));
  const std::string temp = Cat(path, ".tmp-", suffix);
  const auto fail = [&](std::string_view what, int error) {
    ::unlink(temp.c_str());
    return absl::InternalError(Cat("cannot ", what, " ", path, ": ", ErrnoText(error)));
  };
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (fd.get() < 0) {
    // Nothing was made, so there is nothing to unlink (and the name may be someone else's).
    return absl::InternalError(Cat("cannot write ", path, ": ", ErrnoText(errno)));
  }
  if (::fchmod(fd.get(), mode) != 0) return fail("set the mode of", errno);
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd.get(), contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write", errno);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("sync", errno);
  if (fd.Close() != 0) return fail("write", errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail("rename a temporary file to", errno);
  const std::string dir = DirOf(path);
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0 || ::fsync(dir_fd.get()) != 0) {
    return absl::InternalError(Cat("cannot sync ", dir, ": ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<EvpPkeyPtr> NewP256Key() {
  EvpPkeyPtr key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslError("cannot make an EC P-256 key");
  return key;
}

absl::StatusOr<std::string> CertificatePem(X509* certificate) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), certificate) != 1) {
    return OpenSslError("cannot write a certificate as PEM");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// The key as unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY"), which every TLS stack reads.
absl::StatusOr<std::string> PrivateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr ||
      PEM_write_bio_PKCS8PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslError("cannot write a private key as PEM");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// A new certificate with what the CA's and the leaves have in common: version 3, a random
// positive 16-byte serial (CA/Browser Forum: at least 64 random bits), validity from a day
// before `now` for `days`, `public_key`, and the subject O=amt-local plus `common_name` (none
// when empty).
absl::StatusOr<X509Ptr> NewCertificate(EVP_PKEY* public_key, std::string_view common_name, int days,
                                       time_t now) {
  X509Ptr certificate(X509_new());
  if (certificate == nullptr || X509_set_version(certificate.get(), X509_VERSION_3) != 1) {
    return OpenSslError("cannot make a certificate");
  }
  std::array<unsigned char, 16> serial;
  if (RAND_bytes(serial.data(), serial.size()) != 1) return OpenSslError("cannot draw a serial");
  // The top bit clear keeps the DER INTEGER positive, the next one set keeps it 16 bytes long.
  serial[0] = (serial[0] & 0x7f) | 0x40;
  BignumPtr serial_number(BN_bin2bn(serial.data(), serial.size(), nullptr));
  if (serial_number == nullptr ||
      BN_to_ASN1_INTEGER(serial_number.get(), X509_get_serialNumber(certificate.get())) ==
          nullptr) {
    return OpenSslError("cannot set a certificate's serial number");
  }
  if (X509_time_adj_ex(X509_getm_notBefore(certificate.get()), 0, -kBackdateSeconds, &now) ==
          nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(certificate.get()), days, -kBackdateSeconds, &now) ==
          nullptr) {
    return OpenSslError("cannot set a certificate's validity");
  }
  if (X509_set_pubkey(certificate.get(), public_key) != 1) {
    return OpenSslError("cannot set a certificate's public key");
  }
  X509_NAME* subject = X509_get_subject_name(certificate.get());
  static constexpr char kOrganization[] = "amt-local";
  if (X509_NAME_add_entry_by_NID(subject, NID_organizationName, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(kOrganization), -1, -1,
                                 0) != 1 ||
      (!common_name.empty() &&
       X509_NAME_add_entry_by_NID(subject, NID_commonName, MBSTRING_UTF8,
                                  reinterpret_cast<const unsigned char*>(common_name.data()),
                                  static_cast<int>(common_name.size()), -1, 0) != 1)) {
    return OpenSslError("cannot set a certificate's subject");
  }
  return certificate;
}

// Adds the extension `nid` written in OpenSSL's configuration syntax (`value`, e.g.
// "critical,CA:TRUE"). `context` names the subject and the issuer, for the key identifiers.
absl::Status AddExtension(X509* certificate, X509V3_CTX* context, int nid, const char* value) {
  X509ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, context, nid, value));
  if (extension == nullptr || X509_add_ext(certificate, extension.get(), -1) != 1) {
    return OpenSslError(Cat("cannot add the extension ", OBJ_nid2sn(nid), "=", value));
  }
  return absl::OkStatus();
}

// The one subjectAltName of a leaf: an IP address (its 4 or 16 bytes) or a DNS name. Built as
// a GENERAL_NAME rather than through the configuration syntax, so no host text is ever parsed
// as configuration.
absl::Status AddSubjectAltName(X509* certificate, const std::string& host,
                               std::string_view ip_bytes) {
  GeneralNamePtr name(GENERAL_NAME_new());
  if (name == nullptr) return OpenSslError("cannot make a subjectAltName");
  if (!ip_bytes.empty()) {
    Asn1OctetStringPtr address(ASN1_OCTET_STRING_new());
    if (address == nullptr ||
        ASN1_OCTET_STRING_set(address.get(),
                              reinterpret_cast<const unsigned char*>(ip_bytes.data()),
                              static_cast<int>(ip_bytes.size())) != 1) {
      return OpenSslError("cannot make an IP subjectAltName");
    }
    GENERAL_NAME_set0_value(name.get(), GEN_IPADD, address.release());
  } else {
    Asn1StringPtr dns(ASN1_IA5STRING_new());
    if (dns == nullptr ||
        ASN1_STRING_set(dns.get(), host.data(), static_cast<int>(host.size())) != 1) {
      return OpenSslError("cannot make a DNS subjectAltName");
    }
    GENERAL_NAME_set0_value(name.get(), GEN_DNS, dns.release());
  }
  GeneralNamesPtr names(GENERAL_NAMES_new());
  if (names == nullptr || sk_GENERAL_NAME_push(names.get(), name.get()) == 0) {
    return OpenSslError("cannot make a subjectAltName");
  }
  name.release();  // names owns it now
  if (X509_add1_ext_i2d(certificate, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) !=
      1) {
    return OpenSslError("cannot add the subjectAltName extension");
  }
  return absl::OkStatus();
}

absl::Status Sign(X509* certificate, EVP_PKEY* key) {
  if (X509_sign(certificate, key, EVP_sha256()) <= 0) {
    return OpenSslError("cannot sign a certificate");
  }
  return absl::OkStatus();
}

// `host` (lower-case) as a DNS name: letters, digits, '-' and '_' (which S3's older bucket names
// have) in dot-separated labels of 1 to 63 characters, 253 in all.
absl::Status CheckDnsName(std::string_view host, std::string_view as_given) {
  const auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        Cat("cannot issue a certificate for \"",
            absl::CEscape(absl::string_view(as_given.data(), as_given.size())), "\": ", why));
  };
  if (host.empty()) return invalid("the host is empty");
  if (host.size() > 253) return invalid("a DNS name has at most 253 characters");
  for (const char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return invalid(
          "not an IP address, and a DNS name has only letters, digits, '-', '_' and '.'");
    }
  }
  std::string_view last_label;
  for (size_t start = 0; start <= host.size();) {
    const size_t dot = std::min(host.find('.', start), host.size());
    last_label = host.substr(start, dot - start);
    if (last_label.empty()) return invalid("a DNS name has no empty label");
    if (last_label.size() > 63) return invalid("a DNS label has at most 63 characters");
    start = dot + 1;
  }
  // An all-digit last label is a malformed IPv4 address (e.g. 1.2.3.999), never a DNS name.
  if (std::all_of(last_label.begin(), last_label.end(),
                  [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); })) {
    return invalid("not a valid IPv4 address");
  }
  return absl::OkStatus();
}

// The 4 or 16 bytes of an IPv4 or IPv6 address literal; empty for anything else.
std::string IpAddressBytes(const std::string& host) {
  // inet_pton reads up to a NUL: "127.0.0.1\0x" must not pass for an address.
  if (host.find('\0') != std::string::npos) return "";
  in_addr v4;
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return std::string(reinterpret_cast<const char*>(&v4), sizeof v4);
  }
  in6_addr v6;
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return std::string(reinterpret_cast<const char*>(&v6), sizeof v6);
  }
  return "";
}

// A CA's key and certificate, as NewCa makes them and LoadCa reads them.
struct KeyAndCertificate {
  EvpPkeyPtr key;
  X509Ptr certificate;
};

// A new self-signed CA: CA:TRUE with pathlen 0 and keyUsage (both critical), and a
// subjectKeyIdentifier for the leaves' authorityKeyIdentifier.
absl::StatusOr<KeyAndCertificate> NewCa() {
  ASSIGN_OR_RETURN(EvpPkeyPtr key, NewP256Key());
  // A random part in the name, so that the CAs of two data dirs in one trust store (each has
  // its own key) are told apart by name, not only by key identifier.
  ASSIGN_OR_RETURN(const std::string tag, RandomHex(8));
  ASSIGN_OR_RETURN(X509Ptr certificate, NewCertificate(key.get(), "amt-local proxy CA " + tag,
                                                       kCaDays, std::time(nullptr)));
  if (X509_set_issuer_name(certificate.get(), X509_get_subject_name(certificate.get())) != 1) {
    return OpenSslError("cannot set the CA's issuer");
  }
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate.get(), certificate.get(), nullptr, nullptr, 0);
  RETURN_IF_ERROR(AddExtension(certificate.get(), &context, NID_basic_constraints,
                               "critical,CA:TRUE,pathlen:0"));
  RETURN_IF_ERROR(
      AddExtension(certificate.get(), &context, NID_key_usage, "critical,keyCertSign,cRLSign"));
  RETURN_IF_ERROR(AddExtension(certificate.get(), &context, NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(Sign(certificate.get(), key.get()));
  return KeyAndCertificate{std::move(key), std::move(certificate)};
}

// The CA in `certificate_path` and `key_path`, checked: a CA certificate with a key identifier
// (or its leaves fail strict verification), an owner-only key file, and a key that is the
// certificate's.
absl::StatusOr<KeyAndCertificate> LoadCa(const std::string& certificate_path,
                                         const std::string& key_path) {
  const std::string start_over = Cat("; to make a new CA, remove both ", certificate_path, " and ",
                                     key_path, " (clients must then trust the new certificate)");
  ASSIGN_OR_RETURN(const std::string certificate_pem, ReadFile(certificate_path, false));
  BioPtr certificate_bio(
      BIO_new_mem_buf(certificate_pem.data(), static_cast<int>(certificate_pem.size())));
  if (certificate_bio == nullptr) return OpenSslError("cannot read a certificate");
  X509Ptr certificate(PEM_read_bio_X509(certificate_bio.get(), nullptr, nullptr, nullptr));
  if (certificate == nullptr) {
    return absl::FailedPreconditionError(
        Cat(certificate_path, " is not a PEM certificate (", OpenSslErrors(), ")", start_over));
  }
  // A certificate this proxy made, or its leaves would not verify: CA:TRUE, and a key identifier
  // for their authorityKeyIdentifier.
  if (X509_check_ca(certificate.get()) != 1 ||
      X509_get0_subject_key_id(certificate.get()) == nullptr) {
    return absl::FailedPreconditionError(
        Cat(certificate_path,
            " is not a CA certificate with CA:TRUE and a subjectKeyIdentifier, as this proxy makes",
            start_over));
  }
  // Not even parsed when others can read it: the mode is the problem to fix first.
  ASSIGN_OR_RETURN(const std::string key_pem, ReadFile(key_path, true));
  BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  if (key_bio == nullptr) return OpenSslError("cannot read a private key");
  // A callback that gives no passphrase: OpenSSL's default would ask on the terminal.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return 0; };
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr));
  if (key == nullptr) {
    return absl::FailedPreconditionError(Cat(key_path, " is not an unencrypted PEM private key (",
                                             OpenSslErrors(), ")", start_over));
  }
  if (X509_check_private_key(certificate.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::FailedPreconditionError(
        Cat(key_path, " does not hold the private key of ", certificate_path, start_over));
  }
  return KeyAndCertificate{std::move(key), std::move(certificate)};
}

}  // namespace

struct CertificateAuthority::Keys {
  EvpPkeyPtr key;
  X509Ptr certificate;
};

absl::StatusOr<std::unique_ptr<CertificateAuthority>> CertificateAuthority::LoadOrCreate(
    const std::string& dir) {
  ERR_clear_error();  // so that the messages below carry only this call's errors
  const std::string certificate_path = JoinPath(dir, kCertificateFile);
  const std::string key_path = JoinPath(dir, kKeyFile);
  ASSIGN_OR_RETURN(const bool has_certificate, Exists(certificate_path));
  ASSIGN_OR_RETURN(const bool has_key, Exists(key_path));
  if (has_certificate != has_key) {
    const std::string& present = has_certificate ? certificate_path : key_path;
    const std::string& missing = has_certificate ? key_path : certificate_path;
    return absl::FailedPreconditionError(Cat(
        "the proxy CA has ", present, " but not ", missing, ": restore ", missing, ", or remove ",
        present, " to make a new CA (clients must then trust the new certificate)"));
  }
  KeyAndCertificate ca;
  if (has_certificate) {
    ASSIGN_OR_RETURN(ca, LoadCa(certificate_path, key_path));
  } else {
    ASSIGN_OR_RETURN(ca, NewCa());
    ASSIGN_OR_RETURN(const std::string key_pem, PrivateKeyPem(ca.key.get()));
    ASSIGN_OR_RETURN(const std::string certificate_pem, CertificatePem(ca.certificate.get()));
    // The key first: a crash between the two leaves a key without a certificate, which the
    // next start reports, rather than a trusted certificate whose key is lost.
    RETURN_IF_ERROR(WriteFileAtomically(key_path, key_pem, 0600));
    RETURN_IF_ERROR(WriteFileAtomically(certificate_path, certificate_pem, 0644));
  }
  // The PEM that OpenSSL writes for the certificate, not the file's bytes: the same certificate
  // gives the same text, whatever else the file holds.
  ASSIGN_OR_RETURN(std::string certificate_pem, CertificatePem(ca.certificate.get()));
  auto keys = std::make_unique<Keys>(Keys{std::move(ca.key), std::move(ca.certificate)});
  return std::unique_ptr<CertificateAuthority>(
      new CertificateAuthority(std::move(keys), certificate_path, std::move(certificate_pem)));
}

CertificateAuthority::CertificateAuthority(std::unique_ptr<Keys> keys, std::string certificate_path,
                                           std::string certificate_pem)
    : keys_(std::move(keys)),
      certificate_path_(std::move(certificate_path)),
      certificate_pem_(std::move(certificate_pem)) {}

CertificateAuthority::~CertificateAuthority() = default;

absl::StatusOr<IssuedCertificate> CertificateAuthority::Issue(std::string_view host) const {
  ERR_clear_error();
  const std::string name = ToLower(host);
  const std::string ip_bytes = IpAddressBytes(name);
  if (ip_bytes.empty()) RETURN_IF_ERROR(CheckDnsName(name, host));
  ASSIGN_OR_RETURN(EvpPkeyPtr key, NewP256Key());
  ASSIGN_OR_RETURN(X509Ptr certificate,
                   NewCertificate(key.get(), name.size() <= kMaxCommonName ? name : "", kLeafDays,
                                  std::time(nullptr)));
  if (X509_set_issuer_name(certificate.get(), X509_get_subject_name(keys_->certificate.get())) !=
      1) {
    return OpenSslError("cannot set a certificate's issuer");
  }
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, keys_->certificate.get(), certificate.get(), nullptr, nullptr, 0);
  RETURN_IF_ERROR(
      AddExtension(certificate.get(), &context, NID_basic_constraints, "critical,CA:FALSE"));
  RETURN_IF_ERROR(
      AddExtension(certificate.get(), &context, NID_key_usage, "critical,digitalSignature"));
  RETURN_IF_ERROR(AddExtension(certificate.get(), &context, NID_ext_key_usage, "serverAuth"));
  RETURN_IF_ERROR(AddExtension(certificate.get(), &context, NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(
      AddExtension(certificate.get(), &context, NID_authority_key_identifier, "keyid:always"));
  RETURN_IF_ERROR(AddSubjectAltName(certificate.get(), name, ip_bytes));
  RETURN_IF_ERROR(Sign(certificate.get(), keys_->key.get()));
  IssuedCertificate issued;
  ASSIGN_OR_RETURN(issued.certificate_pem, CertificatePem(certificate.get()));
  ASSIGN_OR_RETURN(issued.private_key_pem, PrivateKeyPem(key.get()));
  return issued;
}

absl::StatusOr<std::shared_ptr<ssl::context>> CertificateAuthority::ServerContext(
    std::string_view host) {
  const std::string name = ToLower(host);
  {
    MutexLock lock(&mu_);
    if (const auto it = contexts_.find(name); it != contexts_.end()) return it->second;
  }
  // Issued without the lock (a key and a signature take a while); two threads that ask for a
  // new host at once both issue, and the first to store its context wins.
  ASSIGN_OR_RETURN(const IssuedCertificate issued, Issue(name));
  std::shared_ptr<ssl::context> context;
  try {
    context = std::make_shared<ssl::context>(ssl::context::tls_server);
  } catch (const boost::system::system_error& error) {
    return absl::InternalError(Cat("cannot make a TLS context: ", error.what()));
  }
  boost::system::error_code error;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                       error);
  if (error) {
    return absl::InternalError(Cat("cannot set TLS options: ", error.message()));
  }
  // The options above forbid the old versions one by one; the floor also covers any version
  // OpenSSL's defaults might still allow.
  if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
    return OpenSslError("cannot require TLS 1.2");
  }
  const std::string chain = issued.certificate_pem + certificate_pem_;
  context->use_certificate_chain(boost::asio::buffer(chain), error);
  if (error) {
    return absl::InternalError(Cat("cannot use the certificate of ", name, ": ", error.message()));
  }
  context->use_private_key(boost::asio::buffer(issued.private_key_pem), ssl::context::pem, error);
  if (error) {
    return absl::InternalError(Cat("cannot use the key of ", name, ": ", error.message()));
  }
  MutexLock lock(&mu_);
  return contexts_.try_emplace(name, std::move(context)).first->second;
}

}  // namespace amt::gateway
