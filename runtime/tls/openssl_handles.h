#pragma once

// Internal to ipu_runtime_tls (and its tests): owning handles for the OpenSSL objects the library creates,
// the OpenSSL error queue as readable text, and the identity a certificate names. Users of the library
// include only tls/pki.h and tls/tls.h, which keep OpenSSL's headers out of their code.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace ipu::runtime::openssl {

// One deleter type per free function, so every handle is a plain unique_ptr with no per-object state.
template <auto FreeFn>
struct Deleter {
  template <typename T>
  void operator()(T* p) const noexcept {
    FreeFn(p);
  }
};

using Bio = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using BigNum = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using X509Store = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using X509Extension = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using GeneralNames = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;
using GeneralName = std::unique_ptr<GENERAL_NAME, Deleter<GENERAL_NAME_free>>;
using Ia5String = std::unique_ptr<ASN1_IA5STRING, Deleter<ASN1_IA5STRING_free>>;
using SslCtx = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX_free>>;
using Ssl = std::unique_ptr<SSL, Deleter<SSL_free>>;

// The scheme of the URI subject alternative name that carries a job identity: "ipujob://<identity>".
inline constexpr std::string_view kIdentityUriPrefix = "ipujob://";

// Drains this thread's OpenSSL error queue into "reason; reason" (OpenSSL's own reason strings), or
// `fallback` when the queue is empty. Draining matters: the queue is per thread and shared with any other
// OpenSSL user in the process (cpprestsdk in the operator), so a stale entry must not end up in a later
// message.
std::string drainErrors(std::string_view fallback = "no OpenSSL error reported");

// A read-only memory BIO over `pem` (no copy: the BIO must not outlive the string).
Bio memoryBio(std::string_view pem);

// The first certificate in `pem`, or nullopt (with OpenSSL's reason left in the error queue). Throws
// nothing: the caller names what it was reading in its own error.
std::optional<X509Ptr> readCertificate(std::string_view pem);

// The first private key in `pem`, or null (OpenSSL's reason left in the error queue). An encrypted key is
// refused rather than prompting for a passphrase on the terminal (OpenSSL's default).
PKey readPrivateKey(std::string_view pem);

// The job identity `cert` was issued for: its "ipujob://" URI SAN, else its CN; nullopt when it names
// neither.
std::optional<std::string> identityOf(const X509* cert);

// The PEM text of a certificate or of a private key (PKCS#8, unencrypted).
std::string certificateToPem(const X509* cert);
std::string privateKeyToPem(const EVP_PKEY* key);

}  // namespace ipu::runtime::openssl
