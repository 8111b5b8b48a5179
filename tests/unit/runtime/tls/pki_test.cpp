#include "tls/pki.h"

#include <chrono>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/x509_vfy.h>

#include "tls/openssl_handles.h"

namespace ipu::runtime::pki {
namespace {

using namespace std::chrono_literals;
using openssl::PKey;
using openssl::X509Ptr;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kIdentity = "ipujob/default/bert/2c1e7f3a-0d4b-4c55-9a8e-5f1b2a3c4d5e";

X509Ptr parse(const std::string& pem) {
  auto cert = openssl::readCertificate(pem);
  if (!cert) throw std::runtime_error("test: unreadable certificate");
  return std::move(*cert);
}

PKey parseKey(const std::string& pem) {
  PKey key = openssl::readPrivateKey(pem);
  if (!key) throw std::runtime_error("test: unreadable key");
  return key;
}

std::string serialHex(const X509* cert) {
  openssl::BigNum serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  char* hex = BN_bn2hex(serial.get());
  std::string text(hex);
  OPENSSL_free(hex);
  return text;
}

int serialBits(const X509* cert) {
  openssl::BigNum serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  return BN_num_bits(serial.get());
}

std::time_t toTimeT(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) throw std::runtime_error("test: bad time");
  return timegm(&tm);
}

std::string commonName(const X509* cert) {
  char buffer[256];
  const int length =
      X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buffer, sizeof buffer);
  return length < 0 ? std::string() : std::string(buffer, static_cast<size_t>(length));
}

// Verifies `leafPem` against a store holding only `caPem`, as a TLS peer would (purpose: TLS client).
int verifyAgainst(const std::string& caPem, const std::string& leafPem) {
  X509Ptr ca = parse(caPem);
  X509Ptr leaf = parse(leafPem);
  openssl::X509Store store(X509_STORE_new());
  X509_STORE_add_cert(store.get(), ca.get());
  std::unique_ptr<X509_STORE_CTX, openssl::Deleter<X509_STORE_CTX_free>> ctx(X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), nullptr);
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) == 1) return X509_V_OK;
  return X509_STORE_CTX_get_error(ctx.get());
}

TEST(PkiTest, TheCaIsASelfSignedP256CaThatMaySignCertificatesOnly) {
  const JobCredentials creds = issueJobCredentials(kIdentity, 24h);
  X509Ptr ca = parse(creds.caCertPem);
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  EXPECT_TRUE(X509_get_extension_flags(ca.get()) & EXFLAG_CA);
  EXPECT_EQ(X509_get_pathlen(ca.get()), 0);
  EXPECT_TRUE(X509_get_key_usage(ca.get()) & KU_KEY_CERT_SIGN);
  EXPECT_FALSE(X509_get_key_usage(ca.get()) & KU_DIGITAL_SIGNATURE);
  EXPECT_EQ(X509_check_issued(ca.get(), ca.get()), X509_V_OK);
  EXPECT_EQ(X509_verify(ca.get(), X509_get0_pubkey(ca.get())), 1);
  char group[64] = {};
  ASSERT_EQ(EVP_PKEY_get_group_name(X509_get0_pubkey(ca.get()), group, sizeof group, nullptr), 1);
  EXPECT_STREQ(group, "prime256v1");
  EXPECT_EQ(X509_get_version(ca.get()), X509_VERSION_3);
}

TEST(PkiTest, TheJobCertificateIsSignedByTheCaForBothEndsAndMatchesItsKey) {
  const JobCredentials creds = issueJobCredentials(kIdentity, 24h);
  X509Ptr ca = parse(creds.caCertPem);
  X509Ptr leaf = parse(creds.certPem);
  PKey key = parseKey(creds.keyPem);

  EXPECT_EQ(X509_check_issued(ca.get(), leaf.get()), X509_V_OK);
  EXPECT_EQ(X509_verify(leaf.get(), X509_get0_pubkey(ca.get())), 1);
  EXPECT_EQ(X509_check_private_key(leaf.get(), key.get()), 1);
  EXPECT_EQ(X509_check_ca(leaf.get()), 0);
  EXPECT_TRUE(X509_get_key_usage(leaf.get()) & KU_DIGITAL_SIGNATURE);
  EXPECT_FALSE(X509_get_key_usage(leaf.get()) & KU_KEY_CERT_SIGN);
  const uint32_t eku = X509_get_extended_key_usage(leaf.get());
  EXPECT_TRUE(eku & XKU_SSL_SERVER);
  EXPECT_TRUE(eku & XKU_SSL_CLIENT);
  EXPECT_TRUE(EVP_PKEY_is_a(key.get(), "EC"));
  EXPECT_EQ(verifyAgainst(creds.caCertPem, creds.certPem), X509_V_OK);
  EXPECT_THAT(creds.keyPem, StartsWith("-----BEGIN PRIVATE KEY-----"));
}

TEST(PkiTest, AnotherJobsCaDoesNotVerifyTheCertificate) {
  const JobCredentials a = issueJobCredentials(kIdentity, 24h);
  const JobCredentials b = issueJobCredentials(kIdentity, 24h);
  EXPECT_NE(verifyAgainst(b.caCertPem, a.certPem), X509_V_OK);
  EXPECT_NE(verifyAgainst(a.caCertPem, b.certPem), X509_V_OK);
}

TEST(PkiTest, TheIdentityRoundTripsThroughTheUriSanAndFitsTheCnWhenShort) {
  const JobCredentials creds = issueJobCredentials("ipujob/ns/a/1", 1h);
  EXPECT_EQ(identityOf(creds.certPem), "ipujob/ns/a/1");
  EXPECT_EQ(commonName(parse(creds.certPem).get()), "ipujob/ns/a/1");
}

TEST(PkiTest, AnIdentityLongerThanACnStillRoundTrips) {
  const std::string identity =
      "ipujob/a-rather-long-namespace-name/a-rather-long-job-name-for-bert-training/"
      "2c1e7f3a-0d4b-4c55-9a8e-5f1b2a3c4d5e";
  ASSERT_GT(identity.size(), 64u);
  const JobCredentials creds = issueJobCredentials(identity, 1h);
  EXPECT_EQ(identityOf(creds.certPem), identity);
  const std::string cn = commonName(parse(creds.certPem).get());
  EXPECT_EQ(cn.size(), 64u);
  EXPECT_THAT(cn, StartsWith("..."));
  EXPECT_THAT(cn, ::testing::EndsWith("2c1e7f3a-0d4b-4c55-9a8e-5f1b2a3c4d5e"));
  EXPECT_EQ(commonName(parse(creds.caCertPem).get()).size(), 64u);
}

TEST(PkiTest, EveryCallMakesNewKeysAndRandom128BitSerials) {
  std::set<std::string> serials;
  std::set<std::string> keys;
  std::set<std::string> cas;
  for (int i = 0; i < 5; ++i) {
    const JobCredentials creds = issueJobCredentials(kIdentity, 1h);
    X509Ptr ca = parse(creds.caCertPem);
    X509Ptr leaf = parse(creds.certPem);
    EXPECT_EQ(serialBits(ca.get()), 128);
    EXPECT_EQ(serialBits(leaf.get()), 128);
    serials.insert(serialHex(ca.get()));
    serials.insert(serialHex(leaf.get()));
    keys.insert(creds.keyPem);
    cas.insert(creds.caCertPem);
  }
  EXPECT_EQ(serials.size(), 10u);
  EXPECT_EQ(keys.size(), 5u);
  EXPECT_EQ(cas.size(), 5u);
}

TEST(PkiTest, ValidityRunsFromALittleBeforeNowForTheRequestedDuration) {
  const std::time_t now = std::time(nullptr);
  const JobCredentials creds = issueJobCredentials(kIdentity, 7 * 24h);
  for (const std::string& pem : {creds.caCertPem, creds.certPem}) {
    X509Ptr cert = parse(pem);
    const std::time_t notBefore = toTimeT(X509_get0_notBefore(cert.get()));
    const std::time_t notAfter = toTimeT(X509_get0_notAfter(cert.get()));
    EXPECT_NEAR(static_cast<double>(notBefore), static_cast<double>(now - kClockSkewAllowance.count()), 5);
    EXPECT_NEAR(static_cast<double>(notAfter), static_cast<double>(now + 7 * 24 * 3600), 5);
  }
}

TEST(PkiTest, AnExplicitWindowIsUsedAsGiven) {
  const auto now = std::chrono::system_clock::now();
  const Authority ca = newAuthority("job", {.notBefore = now - 1h, .notAfter = now + 1h});
  const JobCredentials expired = issueFrom(ca, "job", {.notBefore = now - 2h, .notAfter = now - 1h});
  X509Ptr leaf = parse(expired.certPem);
  EXPECT_NEAR(static_cast<double>(toTimeT(X509_get0_notAfter(leaf.get()))),
              static_cast<double>(std::chrono::system_clock::to_time_t(now - 1h)), 1);
  EXPECT_EQ(verifyAgainst(ca.certPem, expired.certPem), X509_V_ERR_CERT_HAS_EXPIRED);
  EXPECT_EQ(expired.caCertPem, ca.certPem);
}

TEST(PkiTest, RefusesIdentitiesThatAreEmptyTooLongOrNotUriSafe) {
  for (const std::string& bad : std::vector<std::string>{"", "has space", "a,b", "a\nb", "caf\xc3\xa9", "x=y",
                                                         std::string(1025, 'a')}) {
    EXPECT_THROW(issueJobCredentials(bad, 1h), PkiError) << bad;
  }
  EXPECT_NO_THROW(issueJobCredentials(std::string(1024, 'a'), 1h));
}

TEST(PkiTest, RefusesValidityThatIsNotPositive) {
  EXPECT_THROW(issueJobCredentials(kIdentity, 0s), PkiError);
  EXPECT_THROW(issueJobCredentials(kIdentity, -1s), PkiError);
  const auto now = std::chrono::system_clock::now();
  EXPECT_THROW(newAuthority(kIdentity, {.notBefore = now, .notAfter = now}), PkiError);
}

TEST(PkiTest, IdentityOfUnreadablePemThrowsWithOpenSslsReason) {
  try {
    identityOf("not a certificate");
    FAIL() << "no PkiError";
  } catch (const PkiError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reading the certificate: "));
    EXPECT_THAT(e.what(), HasSubstr("no start line"));
  }
  EXPECT_THROW(identityOf(""), PkiError);
  const JobCredentials creds = issueJobCredentials(kIdentity, 1h);
  EXPECT_THROW(identityOf(creds.certPem.substr(0, creds.certPem.size() / 2)), PkiError);
}

TEST(PkiTest, IssuingFromAnUnreadableAuthorityThrows) {
  const auto now = std::chrono::system_clock::now();
  const ValidityWindow window{.notBefore = now, .notAfter = now + 1h};
  const Authority ca = newAuthority("job", window);
  EXPECT_THROW(issueFrom({.certPem = "garbage", .keyPem = ca.keyPem}, "job", window), PkiError);
  EXPECT_THROW(issueFrom({.certPem = ca.certPem, .keyPem = "garbage"}, "job", window), PkiError);
}

}  // namespace
}  // namespace ipu::runtime::pki
