#pragma once

// Per-job PKI of ipu-runtime. For every IPUJob the operator issues a fresh CA and ONE key pair signed by it,
// stores them in the job's Secret and mounts it into each worker pod. The runtime's agent (server) and rsh
// (client) both present that key pair and accept only a peer whose certificate chains to the job's CA and
// names the same job (tls/tls.h). The CA's private key is never stored: once the job's key pair is signed
// nobody can sign another certificate for that CA, so a leaked Secret exposes one job only.
//
// Include as "tls/pki.h" (the library's include directory is runtime/). No global state beyond OpenSSL's
// own; safe to call from several threads.

#include <chrono>
#include <stdexcept>
#include <string>

namespace ipu::runtime::pki {

struct PkiError : std::runtime_error {
  using runtime_error::runtime_error;
};

struct JobCredentials {
  std::string caCertPem;  // the job's CA certificate (the only trust anchor of the job's connections)
  std::string certPem;    // the job's certificate, presented by both ends
  std::string keyPem;     // its private key (PKCS#8 PEM, unencrypted: the Secret is the protection)
};

// How far before "now" certificates start to be valid, so that a node whose clock is a little behind the
// operator's does not refuse a job's certificate during its first minutes.
inline constexpr std::chrono::seconds kClockSkewAllowance{300};

// A new CA (EC P-256 key, self-signed, CA:TRUE with pathlen 0, keyCertSign) and one EC P-256 key pair signed
// by it for both ends (CA:FALSE, digitalSignature, extendedKeyUsage serverAuth + clientAuth). Both are valid
// from now - kClockSkewAllowance to now + validity and have random 128-bit serial numbers.
//
// The identity (e.g. "ipujob/<namespace>/<name>/<uid>") is carried as the URI subject alternative name
// "ipujob://<jobIdentity>", which is what identityOf() and the TLS peer check read. It is also the leaf's
// subject CN when it fits X.509's 64-character limit (a Kubernetes namespace, name and UID often do not);
// longer identities get a CN shortened with "..." for people reading the certificate, never for checks.
//
// The identity must be 1 to 1024 characters from [A-Za-z0-9] and "-._~/:@" (URI-safe, no escaping needed);
// validity must be positive. Throws PkiError (with OpenSSL's reason when OpenSSL fails).
JobCredentials issueJobCredentials(const std::string& jobIdentity, std::chrono::seconds validity);

// The identity a certificate was issued for: its "ipujob://" URI SAN (else its CN, for certificates made by
// other tools). PkiError for unreadable PEM or a certificate that names no identity.
std::string identityOf(const std::string& certPem);

// SHA-256 of a PEM text exactly as given (lower-case hex, 64 digits): the operator pins the job's CA in
// its worker pods by this digest of ca.crt, and the runtime refuses a mounted CA whose digest differs.
std::string pemDigest(const std::string& pem);

// --- Lower level: what issueJobCredentials is made of. Tests use it to make certificates the runtime must
// refuse (expired, another identity under the same CA); the operator has no reason to.

struct ValidityWindow {
  std::chrono::system_clock::time_point notBefore;
  std::chrono::system_clock::time_point notAfter;  // must be after notBefore (PkiError otherwise)
};

// A CA together with its private key.
struct Authority {
  std::string certPem;
  std::string keyPem;
};

// A new self-signed CA for `jobIdentity` (see issueJobCredentials for its form).
Authority newAuthority(const std::string& jobIdentity, ValidityWindow window);

// A new key pair for `jobIdentity` signed by `ca` (serverAuth + clientAuth, CA:FALSE). The returned
// caCertPem is ca.certPem. Nothing checks that `jobIdentity` matches the CA's: that is the point of tests
// that need a certificate for another identity under the right CA.
JobCredentials issueFrom(const Authority& ca, const std::string& jobIdentity, ValidityWindow window);

}  // namespace ipu::runtime::pki
