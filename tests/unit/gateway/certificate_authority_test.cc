// CertificateAuthority in a fresh folder per test: the files it makes and refuses, the leaves it
// issues checked with OpenSSL's strict verification, and real TLS handshakes on loopback (a
// Boost.Asio server with ServerContext, a client that trusts only the CA's file). Nothing sleeps:
// the handshake tests wait on the sockets.
#include "orchestrator/gateway/certificate_authority.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"

namespace amt::gateway {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

template <auto kFree>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* object) const {
    kFree(object);
  }
};
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO_free_all>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, OpenSslDeleter<X509_STORE_free>>;
using X509StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, OpenSslDeleter<X509_STORE_CTX_free>>;

using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;

X509Ptr ParseCertificate(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

EvpPkeyPtr ParseKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return EvpPkeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

// Verifies `leaf` against `ca` alone, with X509_V_FLAG_X509_STRICT (what Python 3.13's ssl
// turns on by default): X509_V_OK, or the error's text.
std::string VerifyStrictly(X509* leaf, X509* ca) {
  X509StorePtr store(X509_STORE_new());
  X509_STORE_add_cert(store.get(), ca);
  X509_STORE_set_flags(store.get(), X509_V_FLAG_X509_STRICT);
  X509StoreCtxPtr context(X509_STORE_CTX_new());
  X509_STORE_CTX_init(context.get(), store.get(), leaf, nullptr);
  X509_STORE_CTX_set_purpose(context.get(), X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(context.get()) == 1) return "ok";
  return X509_verify_cert_error_string(X509_STORE_CTX_get_error(context.get()));
}

// The extension `nid` of `certificate` is present and critical.
bool IsCritical(X509* certificate, int nid) {
  const int index = X509_get_ext_by_NID(certificate, nid, -1);
  return index >= 0 && X509_EXTENSION_get_critical(X509_get_ext(certificate, index)) == 1;
}

class CertificateAuthorityTest : public ::testing::Test {
 protected:
  std::string CertificatePath() const {
    return dir_.str() + "/" + CertificateAuthority::kCertificateFile;
  }
  std::string KeyPath() const { return dir_.str() + "/" + CertificateAuthority::kKeyFile; }

  // A CA made in this test's folder; fails the test when it cannot.
  std::unique_ptr<CertificateAuthority> MakeCa() {
    auto ca = CertificateAuthority::LoadOrCreate(dir_.str());
    EXPECT_THAT(ca, IsOk());
    return ca.ok() ? std::move(ca).value() : nullptr;
  }

  TempDir dir_;
};

TEST_F(CertificateAuthorityTest, CreatesBothFilesWithAnOwnerOnlyKeyInAnEmptyFolder) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  EXPECT_EQ(ca->certificate_path(), CertificatePath());
  EXPECT_EQ(ReadFile(CertificatePath()), ca->certificate_pem());
  EXPECT_THAT(ReadFile(KeyPath()), StartsWith("-----BEGIN PRIVATE KEY-----\n"));
  struct stat key_info;
  ASSERT_EQ(::stat(KeyPath().c_str(), &key_info), 0);
  EXPECT_EQ(key_info.st_mode & 07777, 0600u);
  // The temporary files were renamed, none is left behind.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_.str())) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("proxy-ca.pem", "proxy-ca-key.pem"));
}

TEST_F(CertificateAuthorityTest, NewCaIsASelfSignedP256CaWithKeyUsageAndKeyIdentifier) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const X509Ptr certificate = ParseCertificate(ca->certificate_pem());
  ASSERT_NE(certificate, nullptr);
  EXPECT_EQ(X509_check_ca(certificate.get()), 1);
  EXPECT_EQ(X509_get_pathlen(certificate.get()), 0);
  EXPECT_TRUE(IsCritical(certificate.get(), NID_basic_constraints));
  EXPECT_TRUE(IsCritical(certificate.get(), NID_key_usage));
  EXPECT_EQ(X509_get_key_usage(certificate.get()),
            static_cast<uint32_t>(KU_KEY_CERT_SIGN | KU_CRL_SIGN));
  EXPECT_NE(X509_get0_subject_key_id(certificate.get()), nullptr);
  EXPECT_TRUE(X509_get_extension_flags(certificate.get()) & EXFLAG_SS);
  EXPECT_TRUE(EVP_PKEY_is_a(X509_get0_pubkey(certificate.get()), "EC"));
  EXPECT_EQ(X509_get_signature_nid(certificate.get()), NID_ecdsa_with_SHA256);
  std::array<char, 256> common_name{};
  X509_NAME_get_text_by_NID(X509_get_subject_name(certificate.get()), NID_commonName,
                            common_name.data(), common_name.size());
  EXPECT_THAT(std::string(common_name.data()), StartsWith("amt-local proxy CA "));
  // Valid for ten years from a day ago.
  int days = 0;
  int seconds = 0;
  ASSERT_EQ(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(certificate.get()),
                           X509_get0_notAfter(certificate.get())),
            1);
  EXPECT_EQ(days, 3650);
  EXPECT_EQ(seconds, 0);
  EXPECT_LT(X509_cmp_current_time(X509_get0_notBefore(certificate.get())), 0);
}

TEST_F(CertificateAuthorityTest, LoadsTheSameCaWhenCalledAgain) {
  const auto first = MakeCa();
  ASSERT_NE(first, nullptr);
  const auto second = CertificateAuthority::LoadOrCreate(dir_.str());
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ((*second)->certificate_pem(), first->certificate_pem());
  // The same key too: a leaf of the loaded CA verifies against the first one's certificate.
  const auto issued = (*second)->Issue("sts.amazonaws.com");
  ASSERT_THAT(issued, IsOk());
  const X509Ptr leaf = ParseCertificate(issued->certificate_pem);
  const X509Ptr ca = ParseCertificate(first->certificate_pem());
  EXPECT_EQ(VerifyStrictly(leaf.get(), ca.get()), "ok");
}

TEST_F(CertificateAuthorityTest, LeafForAnAwsHostVerifiesStrictlyAndMatchesOnlyThatHost) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const auto issued = ca->Issue("sts.us-east-1.amazonaws.com");
  ASSERT_THAT(issued, IsOk());
  const X509Ptr leaf = ParseCertificate(issued->certificate_pem);
  ASSERT_NE(leaf, nullptr);
  const X509Ptr ca_certificate = ParseCertificate(ca->certificate_pem());
  EXPECT_EQ(VerifyStrictly(leaf.get(), ca_certificate.get()), "ok");
  EXPECT_EQ(X509_check_host(leaf.get(), "sts.us-east-1.amazonaws.com", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(leaf.get(), "iam.amazonaws.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_host(leaf.get(), "us-east-1.amazonaws.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(leaf.get(), "127.0.0.1", 0), 0);
}

TEST_F(CertificateAuthorityTest, LeafIsAServerAuthEndEntityWithKeyIdentifiersAndItsOwnKey) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const auto issued = ca->Issue("mybucket.s3.us-west-2.amazonaws.com");
  ASSERT_THAT(issued, IsOk());
  const X509Ptr leaf = ParseCertificate(issued->certificate_pem);
  ASSERT_NE(leaf, nullptr);
  const X509Ptr ca_certificate = ParseCertificate(ca->certificate_pem());
  EXPECT_EQ(X509_check_ca(leaf.get()), 0);
  EXPECT_EQ(X509_get_key_usage(leaf.get()), static_cast<uint32_t>(KU_DIGITAL_SIGNATURE));
  EXPECT_EQ(X509_get_extended_key_usage(leaf.get()), static_cast<uint32_t>(XKU_SSL_SERVER));
  ASSERT_NE(X509_get0_authority_key_id(leaf.get()), nullptr);
  EXPECT_EQ(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf.get()),
                                  X509_get0_subject_key_id(ca_certificate.get())),
            0);
  EXPECT_EQ(X509_check_issued(ca_certificate.get(), leaf.get()), X509_V_OK);
  std::array<char, 256> common_name{};
  X509_NAME_get_text_by_NID(X509_get_subject_name(leaf.get()), NID_commonName, common_name.data(),
                            common_name.size());
  EXPECT_EQ(std::string(common_name.data()), "mybucket.s3.us-west-2.amazonaws.com");
  // A positive serial of 16 bytes.
  const ASN1_INTEGER* serial = X509_get0_serialNumber(leaf.get());
  EXPECT_EQ(ASN1_STRING_length(serial), 16);
  EXPECT_EQ(ASN1_STRING_type(serial), V_ASN1_INTEGER);
  // 397 days from a day before issue.
  int days = 0;
  int seconds = 0;
  ASSERT_EQ(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(leaf.get()),
                           X509_get0_notAfter(leaf.get())),
            1);
  EXPECT_EQ(days, 397);
  EXPECT_EQ(seconds, 0);
  EXPECT_LT(X509_cmp_current_time(X509_get0_notBefore(leaf.get())), 0);
  // Its key is PKCS#8 PEM, the leaf's own, and not the CA's.
  EXPECT_THAT(issued->private_key_pem, StartsWith("-----BEGIN PRIVATE KEY-----\n"));
  const EvpPkeyPtr key = ParseKey(issued->private_key_pem);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(X509_check_private_key(leaf.get(), key.get()), 1);
  EXPECT_EQ(X509_check_private_key(ca_certificate.get(), key.get()), 0);
  ERR_clear_error();
}

TEST_F(CertificateAuthorityTest, IssuesAnIpSubjectAltNameForAnAddress) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const X509Ptr ca_certificate = ParseCertificate(ca->certificate_pem());
  const auto v4 = ca->Issue("127.0.0.1");
  ASSERT_THAT(v4, IsOk());
  const X509Ptr v4_leaf = ParseCertificate(v4->certificate_pem);
  EXPECT_EQ(X509_check_ip_asc(v4_leaf.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(v4_leaf.get(), "127.0.0.2", 0), 0);
  // Named by its IP subjectAltName, not by a DNS one (the subject's CN aside).
  EXPECT_EQ(
      X509_check_host(v4_leaf.get(), "127.0.0.1", 0, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, nullptr),
      0);
  EXPECT_EQ(VerifyStrictly(v4_leaf.get(), ca_certificate.get()), "ok");
  const auto v6 = ca->Issue("::1");
  ASSERT_THAT(v6, IsOk());
  const X509Ptr v6_leaf = ParseCertificate(v6->certificate_pem);
  EXPECT_EQ(X509_check_ip_asc(v6_leaf.get(), "0:0:0:0:0:0:0:1", 0), 1);
  EXPECT_EQ(VerifyStrictly(v6_leaf.get(), ca_certificate.get()), "ok");
}

TEST_F(CertificateAuthorityTest, HostLongerThanACommonNameIsNamedByItsSubjectAltName) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  // A 63-character bucket name in a virtual-hosted S3 endpoint: 90 characters, over the 64 an
  // X.509 commonName may have.
  const std::string host = std::string(63, 'b') + ".s3.us-west-2.amazonaws.com";
  const auto issued = ca->Issue(host);
  ASSERT_THAT(issued, IsOk());
  const X509Ptr leaf = ParseCertificate(issued->certificate_pem);
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(X509_NAME_get_index_by_NID(X509_get_subject_name(leaf.get()), NID_commonName, -1), -1);
  EXPECT_EQ(X509_check_host(leaf.get(), host.c_str(), host.size(), 0, nullptr), 1);
  const X509Ptr ca_certificate = ParseCertificate(ca->certificate_pem());
  EXPECT_EQ(VerifyStrictly(leaf.get(), ca_certificate.get()), "ok");
}

TEST_F(CertificateAuthorityTest, IssuesForTheLowerCaseName) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const auto issued = ca->Issue("STS.Amazonaws.COM");
  ASSERT_THAT(issued, IsOk());
  const X509Ptr leaf = ParseCertificate(issued->certificate_pem);
  std::array<char, 256> common_name{};
  X509_NAME_get_text_by_NID(X509_get_subject_name(leaf.get()), NID_commonName, common_name.data(),
                            common_name.size());
  EXPECT_EQ(std::string(common_name.data()), "sts.amazonaws.com");
  EXPECT_EQ(X509_check_host(leaf.get(), "sts.amazonaws.com", 0, 0, nullptr), 1);
}

TEST_F(CertificateAuthorityTest, RefusesHostsThatAreNeitherDnsNamesNorAddresses) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  EXPECT_THAT(ca->Issue(""), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "cannot issue a certificate for \"\": the host is empty"));
  EXPECT_THAT(ca->Issue("evil host.amazonaws.com"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot issue a certificate for \"evil host.amazonaws.com\": not an IP "
                       "address, and a DNS name has only letters, digits, '-', '_' and '.'"));
  EXPECT_THAT(ca->Issue("bucket/key"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"bucket/key\"")));
  EXPECT_THAT(ca->Issue("sts.amazonaws.com:443"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("only letters")));
  EXPECT_THAT(ca->Issue(std::string("a\0b", 3)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"a\\000b\"")));
  EXPECT_THAT(ca->Issue("sts..amazonaws.com"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no empty label")));
  EXPECT_THAT(ca->Issue(std::string(64, 'a') + ".com"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 63 characters")));
  EXPECT_THAT(ca->Issue(std::string("127.0.0.1\0.evil", 15)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"127.0.0.1\\000.evil\"")));
  EXPECT_THAT(ca->Issue("1.2.3.999"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a valid IPv4 address")));
}

TEST_F(CertificateAuthorityTest, RefusesACertificateWithoutItsKey) {
  ASSERT_NE(MakeCa(), nullptr);
  ASSERT_TRUE(fs::remove(KeyPath()));
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(dir_.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "the proxy CA has " + CertificatePath() + " but not " + KeyPath() +
                           ": restore " + KeyPath() + ", or remove " + CertificatePath() +
                           " to make a new CA (clients must then trust the new certificate)"));
  EXPECT_FALSE(fs::exists(KeyPath())) << "a new key was made beside the old certificate";
}

TEST_F(CertificateAuthorityTest, RefusesAKeyWithoutItsCertificate) {
  ASSERT_NE(MakeCa(), nullptr);
  ASSERT_TRUE(fs::remove(CertificatePath()));
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(dir_.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("has " + KeyPath() + " but not " + CertificatePath())));
}

TEST_F(CertificateAuthorityTest, RefusesAKeyFileOthersCanRead) {
  ASSERT_NE(MakeCa(), nullptr);
  ASSERT_EQ(::chmod(KeyPath().c_str(), 0644), 0);
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(dir_.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       KeyPath() +
                           " (the proxy CA's private key) is open to others than its "
                           "owner (mode 0644); make it owner-only: chmod 600 " +
                           KeyPath()));
  ASSERT_EQ(::chmod(KeyPath().c_str(), 0600), 0);
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(dir_.str()), IsOk());
}

TEST_F(CertificateAuthorityTest, RefusesACorruptCertificate) {
  ASSERT_NE(MakeCa(), nullptr);
  WriteFile(CertificatePath(),
            "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(dir_.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(CertificatePath() + " is not a PEM certificate (")));
}

TEST_F(CertificateAuthorityTest, RefusesACertificateThatIsNotACa) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const auto issued = ca->Issue("sts.amazonaws.com");
  ASSERT_THAT(issued, IsOk());
  WriteFile(CertificatePath(), issued->certificate_pem);
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(dir_.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(CertificatePath() + " is not a CA certificate")));
}

TEST_F(CertificateAuthorityTest, RefusesACorruptKey) {
  ASSERT_NE(MakeCa(), nullptr);
  WriteFile(KeyPath(), "not a key\n");  // keeps the file's 0600
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(dir_.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(KeyPath() + " is not an unencrypted PEM private key")));
}

TEST_F(CertificateAuthorityTest, RefusesAKeyThatIsNotTheCertificates) {
  ASSERT_NE(MakeCa(), nullptr);
  TempDir other_dir;
  ASSERT_THAT(CertificateAuthority::LoadOrCreate(other_dir.str()), IsOk());
  WriteFile(KeyPath(), ReadFile(other_dir.str() + "/" + CertificateAuthority::kKeyFile));
  EXPECT_THAT(
      CertificateAuthority::LoadOrCreate(dir_.str()),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr(KeyPath() + " does not hold the private key of " + CertificatePath())));
}

TEST_F(CertificateAuthorityTest, ReportsInternalWhenItCannotWriteTheFiles) {
  const std::string missing = dir_.str() + "/no-such-folder";
  EXPECT_THAT(CertificateAuthority::LoadOrCreate(missing),
              StatusIs(absl::StatusCode::kInternal,
                       "cannot write " + missing + "/proxy-ca-key.pem: No such file or directory"));
}

TEST_F(CertificateAuthorityTest, ServerContextIsMadeOncePerLowerCaseHost) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const auto upper = ca->ServerContext("STS.us-east-1.amazonaws.com");
  ASSERT_THAT(upper, IsOk());
  const auto lower = ca->ServerContext("sts.us-east-1.amazonaws.com");
  ASSERT_THAT(lower, IsOk());
  EXPECT_EQ(upper->get(), lower->get());
  const auto other = ca->ServerContext("iam.amazonaws.com");
  ASSERT_THAT(other, IsOk());
  EXPECT_NE(other->get(), lower->get());
  EXPECT_EQ(SSL_CTX_get_min_proto_version((*lower)->native_handle()), TLS1_2_VERSION);
  EXPECT_THAT(ca->ServerContext("a b"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(CertificateAuthorityTest, ServerContextGivesTheSamePointerToConcurrentCallers) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  constexpr int kThreads = 4;
  std::vector<asio::ssl::context*> seen(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const auto context = ca->ServerContext("logs.us-east-1.amazonaws.com");
      if (context.ok()) seen[i] = context->get();
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_NE(seen[0], nullptr);
  for (int i = 1; i < kThreads; ++i) EXPECT_EQ(seen[i], seen[0]) << "thread " << i;
}

// Serves one TLS connection on 127.0.0.1 (port 0) from its own thread: the handshake, then
// "hello", then a close_notify. The destructor stops it wherever it is.
class OneConnectionTlsServer {
 public:
  explicit OneConnectionTlsServer(std::shared_ptr<asio::ssl::context> context)
      : context_(std::move(context)),
        acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        socket_(io_) {
    acceptor_.async_accept(socket_, [this](const boost::system::error_code& error) {
      if (error) {
        handshake_result_.set_value(error);
        return;
      }
      stream_.emplace(socket_, *context_);
      stream_->async_handshake(
          asio::ssl::stream_base::server, [this](const boost::system::error_code& handshake_error) {
            handshake_result_.set_value(handshake_error);
            if (handshake_error) return;
            asio::async_write(*stream_, asio::buffer(kGreeting.data(), kGreeting.size()),
                              [this](const boost::system::error_code&, size_t) {
                                stream_->async_shutdown([](const boost::system::error_code&) {});
                              });
          });
    });
    thread_ = std::thread([this] { io_.run(); });
  }
  ~OneConnectionTlsServer() {
    io_.stop();
    thread_.join();
  }
  OneConnectionTlsServer(const OneConnectionTlsServer&) = delete;
  OneConnectionTlsServer& operator=(const OneConnectionTlsServer&) = delete;

  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  // The server's side of the handshake, once it has ended (the client connected).
  std::future<boost::system::error_code> handshake_result() {
    return handshake_result_.get_future();
  }

  static constexpr std::string_view kGreeting = "hello";

 private:
  std::shared_ptr<asio::ssl::context> context_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::socket socket_;
  std::optional<asio::ssl::stream<tcp::socket&>> stream_;
  std::promise<boost::system::error_code> handshake_result_;
  std::thread thread_;
};

// What a client that trusts only `ca_file` and expects `name` (sent as SNI, checked against the
// certificate as botocore's urllib3 does) gets from 127.0.0.1:`port`: its handshake's error, and
// on success the server's first bytes.
struct ClientResult {
  boost::system::error_code handshake_error;
  std::string received;
};
ClientResult ConnectAsClient(unsigned short port, const std::string& ca_file,
                             const std::string& name) {
  asio::io_context io;
  asio::ssl::context context(asio::ssl::context::tls_client);
  context.set_verify_mode(asio::ssl::verify_peer);
  context.load_verify_file(ca_file);
  asio::ssl::stream<tcp::socket> stream(io, context);
  stream.set_verify_callback(asio::ssl::host_name_verification(name));
  SSL_set_tlsext_host_name(stream.native_handle(), name.c_str());
  stream.lowest_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  ClientResult result;
  stream.handshake(asio::ssl::stream_base::client, result.handshake_error);
  if (result.handshake_error) return result;
  std::string buffer(OneConnectionTlsServer::kGreeting.size(), '\0');
  boost::system::error_code read_error;
  const size_t n = asio::read(stream, asio::buffer(buffer), read_error);
  result.received = buffer.substr(0, n);
  return result;
}

TEST_F(CertificateAuthorityTest, TlsClientTrustingTheCaFileCompletesAHandshakeForTheHost) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  auto context = ca->ServerContext("localhost");
  ASSERT_THAT(context, IsOk());
  OneConnectionTlsServer server(*context);
  auto server_handshake = server.handshake_result();
  const ClientResult client = ConnectAsClient(server.port(), ca->certificate_path(), "localhost");
  EXPECT_FALSE(client.handshake_error) << client.handshake_error.message();
  EXPECT_EQ(client.received, "hello");
  EXPECT_FALSE(server_handshake.get());
}

TEST_F(CertificateAuthorityTest, TlsClientExpectingAnotherNameFailsTheHandshake) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  auto context = ca->ServerContext("localhost");
  ASSERT_THAT(context, IsOk());
  OneConnectionTlsServer server(*context);
  auto server_handshake = server.handshake_result();
  const ClientResult client = ConnectAsClient(server.port(), ca->certificate_path(), "example.com");
  EXPECT_THAT(client.handshake_error.message(), HasSubstr("certificate verify failed"));
  EXPECT_TRUE(client.received.empty());
  // The client's alert (or its closed socket) ends the server's side too.
  EXPECT_TRUE(server_handshake.get());
}

TEST_F(CertificateAuthorityTest, TlsClientTrustingAnotherCaFailsTheHandshake) {
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  TempDir other_dir;
  const auto other_ca = CertificateAuthority::LoadOrCreate(other_dir.str());
  ASSERT_THAT(other_ca, IsOk());
  auto context = ca->ServerContext("localhost");
  ASSERT_THAT(context, IsOk());
  OneConnectionTlsServer server(*context);
  auto server_handshake = server.handshake_result();
  const ClientResult client =
      ConnectAsClient(server.port(), (*other_ca)->certificate_path(), "localhost");
  EXPECT_THAT(client.handshake_error.message(), HasSubstr("certificate verify failed"));
  EXPECT_TRUE(server_handshake.get());
}

// Python's ssl module (what botocore's urllib3 uses), where python3 is installed: a handshake
// over memory buffers between a server with the leaf and a client made as urllib3 makes it,
// trusting only the CA's file (AWS_CA_BUNDLE), with VERIFY_X509_STRICT as Python 3.13 sets it.
TEST_F(CertificateAuthorityTest, PythonSslClientAcceptsTheLeafUnderStrictVerification) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is not on PATH";
  }
  const auto ca = MakeCa();
  ASSERT_NE(ca, nullptr);
  const auto issued = ca->Issue("sts.us-east-1.amazonaws.com");
  ASSERT_THAT(issued, IsOk());
  WriteFile(dir_.str() + "/chain.pem", issued->certificate_pem + ca->certificate_pem());
  WriteFile(dir_.str() + "/leaf-key.pem", issued->private_key_pem);
  WriteFile(dir_.str() + "/handshake.py", R"(import ssl, sys
folder, name = sys.argv[1], sys.argv[2]
server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
server.load_cert_chain(folder + "/chain.pem", folder + "/leaf-key.pem")
client = ssl.create_default_context(cafile=folder + "/proxy-ca.pem")
client.verify_flags |= ssl.VERIFY_X509_STRICT
buffers = [ssl.MemoryBIO() for _ in range(4)]
c = client.wrap_bio(buffers[0], buffers[1], server_hostname=name)
s = server.wrap_bio(buffers[2], buffers[3], server_side=True)
done = set()
for _ in range(20):
    for side, end in ((c, "client"), (s, "server")):
        if end in done:
            continue
        try:
            side.do_handshake()
            done.add(end)
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLError as error:
            print(end, error)
            sys.exit(1)
    buffers[2].write(buffers[1].read())
    buffers[0].write(buffers[3].read())
    if len(done) == 2:
        print("ok")
        sys.exit(0)
print("no handshake")
sys.exit(1)
)");
  const auto run = [&](const std::string& name) {
    const std::string command =
        "python3 '" + dir_.str() + "/handshake.py' '" + dir_.str() + "' '" + name + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string output;
    if (pipe == nullptr) return output;
    std::array<char, 512> buffer;
    while (const size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
      output.append(buffer.data(), n);
    }
    const int status = ::pclose(pipe);
    return output + " exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  };
  EXPECT_EQ(run("sts.us-east-1.amazonaws.com"), "ok\n exit 0");
  EXPECT_THAT(run("iam.amazonaws.com"),
              HasSubstr("client [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
                        "Hostname mismatch"));
}

}  // namespace
}  // namespace amt::gateway
