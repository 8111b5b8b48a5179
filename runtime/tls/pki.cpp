#include "tls/pki.h"

#include <algorithm>
#include <ctime>
#include <string_view>

#include <openssl/pem.h>
#include <openssl/sha.h>

#include "tls/openssl_handles.h"

namespace ipu::runtime::pki {

namespace {

using namespace ipu::runtime::openssl;

constexpr size_t kMaxIdentityLength = 1024;
constexpr size_t kMaxCommonNameLength = 64;  // ub-common-name (RFC 5280); OpenSSL refuses longer
constexpr int kSerialBits = 128;

[[noreturn]] void fail(std::string_view what) {
  throw PkiError(std::string(what) + ": " + drainErrors());
}

void check(int result, std::string_view what) {
  if (result != 1) fail(what);
}

bool isIdentityChar(char c) {
  static constexpr std::string_view kExtra = "-._~/:@";
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         kExtra.find(c) != std::string_view::npos;
}

// The identity ends up verbatim in a URI and a CN; restricting it to URI-safe characters means neither needs
// escaping and two different identities can never encode to the same certificate.
void validateIdentity(const std::string& identity) {
  if (identity.empty() || identity.size() > kMaxIdentityLength) {
    throw PkiError("job identity must be 1 to 1024 characters, got " + std::to_string(identity.size()));
  }
  if (!std::ranges::all_of(identity, isIdentityChar)) {
    throw PkiError("job identity \"" + identity + "\" may contain only letters, digits and -._~/:@");
  }
}

void validateWindow(const ValidityWindow& window) {
  if (window.notAfter <= window.notBefore) throw PkiError("certificate validity must end after it begins");
}

// The leaf's CN for people reading the certificate: the identity if it fits, else its end (the UID part of
// "ipujob/<namespace>/<name>/<uid>", the part that tells jobs apart) behind "...".
std::string commonNameFor(const std::string& identity, std::string_view prefix = {}) {
  std::string name = std::string(prefix) + identity;
  if (name.size() <= kMaxCommonNameLength) return name;
  return std::string(prefix) + "..." +
         identity.substr(identity.size() - (kMaxCommonNameLength - 3 - prefix.size()));
}

PKey newEcKey() {
  // EVP_PKEY_Q_keygen uses the built-in default provider: nothing is loaded from disk.
  PKey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) fail("generating an EC P-256 key");
  return key;
}

PKey readCaKey(const std::string& pem) {
  PKey key = readPrivateKey(pem);
  if (!key) fail("reading the CA's private key");
  return key;
}

X509Ptr readCa(const std::string& pem) {
  auto cert = readCertificate(pem);
  if (!cert) fail("reading the CA certificate");
  return std::move(*cert);
}

void setRandomSerial(X509* cert) {
  BigNum serial(BN_new());
  // Top bit set: every serial has exactly 128 bits, so it is positive, non-zero and of one length.
  if (!serial || BN_rand(serial.get(), kSerialBits, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) != 1) {
    fail("drawing a serial number");
  }
  if (!BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert))) fail("setting the serial number");
}

void setValidity(X509* cert, const ValidityWindow& window) {
  const auto toTimeT = [](std::chrono::system_clock::time_point t) {
    return std::chrono::system_clock::to_time_t(t);
  };
  if (!ASN1_TIME_set(X509_getm_notBefore(cert), toTimeT(window.notBefore)) ||
      !ASN1_TIME_set(X509_getm_notAfter(cert), toTimeT(window.notAfter))) {
    fail("setting the validity period");
  }
}

void setSubjectCn(X509* cert, const std::string& commonName) {
  X509_NAME* name = X509_get_subject_name(cert);
  check(X509_NAME_add_entry_by_NID(name, NID_commonName, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(commonName.data()),
                                   static_cast<int>(commonName.size()), -1, 0),
        "setting the subject name");
}

// Adds one extension written in OpenSSL's configuration syntax ("critical,CA:TRUE"); `issuer` is the
// certificate whose key identifier authorityKeyIdentifier refers to.
void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  X509Extension extension(X509V3_EXT_nconf_nid(nullptr, &context, nid, value));
  if (!extension) fail(std::string("building extension ") + OBJ_nid2sn(nid));
  check(X509_add_ext(cert, extension.get(), -1), "adding an extension");
}

// The identity as a URI SAN, built as a GENERAL_NAME rather than through the configuration syntax so that no
// character of the identity is ever parsed as syntax.
void addIdentitySan(X509* cert, const std::string& identity) {
  const std::string uri = std::string(kIdentityUriPrefix) + identity;
  Ia5String value(ASN1_IA5STRING_new());
  if (!value || ASN1_STRING_set(value.get(), uri.data(), static_cast<int>(uri.size())) != 1) {
    fail("building the identity URI");
  }
  GeneralName name(GENERAL_NAME_new());
  if (!name) fail("building the identity URI");
  GENERAL_NAME_set0_value(name.get(), GEN_URI, value.release());
  GeneralNames names(sk_GENERAL_NAME_new_null());
  if (!names || sk_GENERAL_NAME_push(names.get(), name.get()) == 0) fail("building the identity URI");
  name.release();  // owned by `names` now
  check(X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT),
        "adding the identity URI");
}

// A certificate with everything but its extensions and signature: version 3, random serial, validity,
// subject CN, public key.
X509Ptr newCertificate(const std::string& commonName, const ValidityWindow& window, EVP_PKEY* publicKey) {
  X509Ptr cert(X509_new());
  if (!cert) fail("allocating a certificate");
  check(X509_set_version(cert.get(), X509_VERSION_3), "setting the certificate version");
  setRandomSerial(cert.get());
  setValidity(cert.get(), window);
  setSubjectCn(cert.get(), commonName);
  check(X509_set_pubkey(cert.get(), publicKey), "setting the public key");
  return cert;
}

void sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) <= 0) fail("signing the certificate");
}

ValidityWindow windowFromNow(std::chrono::seconds validity) {
  if (validity <= std::chrono::seconds::zero()) throw PkiError("certificate validity must be positive");
  const auto now = std::chrono::system_clock::now();
  return {.notBefore = now - kClockSkewAllowance, .notAfter = now + validity};
}

}  // namespace

Authority newAuthority(const std::string& jobIdentity, ValidityWindow window) {
  validateIdentity(jobIdentity);
  validateWindow(window);
  PKey key = newEcKey();
  X509Ptr cert = newCertificate(commonNameFor(jobIdentity, "CA "), window, key.get());
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())), "setting the issuer name");
  // pathlen:0: the CA signs the job's certificate and nothing that could sign further.
  addExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
  addExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  addExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  addIdentitySan(cert.get(), jobIdentity);
  sign(cert.get(), key.get());
  return {.certPem = certificateToPem(cert.get()), .keyPem = privateKeyToPem(key.get())};
}

JobCredentials issueFrom(const Authority& ca, const std::string& jobIdentity, ValidityWindow window) {
  validateIdentity(jobIdentity);
  validateWindow(window);
  X509Ptr caCert = readCa(ca.certPem);
  PKey caKey = readCaKey(ca.keyPem);
  PKey key = newEcKey();
  X509Ptr cert = newCertificate(commonNameFor(jobIdentity), window, key.get());
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(caCert.get())), "setting the issuer name");
  addExtension(cert.get(), caCert.get(), NID_basic_constraints, "critical,CA:FALSE");
  addExtension(cert.get(), caCert.get(), NID_key_usage, "critical,digitalSignature");
  addExtension(cert.get(), caCert.get(), NID_ext_key_usage, "serverAuth,clientAuth");
  addExtension(cert.get(), caCert.get(), NID_subject_key_identifier, "hash");
  addExtension(cert.get(), caCert.get(), NID_authority_key_identifier, "keyid:always");
  addIdentitySan(cert.get(), jobIdentity);
  sign(cert.get(), caKey.get());
  return {
      .caCertPem = ca.certPem, .certPem = certificateToPem(cert.get()), .keyPem = privateKeyToPem(key.get())};
}

JobCredentials issueJobCredentials(const std::string& jobIdentity, std::chrono::seconds validity) {
  const ValidityWindow window = windowFromNow(validity);
  // The CA's key goes out of scope here, after its only signature.
  return issueFrom(newAuthority(jobIdentity, window), jobIdentity, window);
}

std::string identityOf(const std::string& certPem) {
  auto cert = readCertificate(certPem);
  if (!cert) fail("reading the certificate");
  auto identity = openssl::identityOf(cert->get());
  if (!identity) throw PkiError("the certificate names no job identity (no ipujob:// URI and no CN)");
  return *identity;
}

std::string pemDigest(const std::string& pem) {
  static constexpr char kHex[] = "0123456789abcdef";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(pem.data()), pem.size(), digest);
  std::string hex;
  for (unsigned char byte : digest) hex += {kHex[byte >> 4], kHex[byte & 0xf]};
  return hex;
}

}  // namespace ipu::runtime::pki
