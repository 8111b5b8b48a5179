#include "tls/openssl_handles.h"

#include <openssl/err.h>
#include <openssl/pem.h>

namespace ipu::runtime::openssl {

std::string drainErrors(std::string_view fallback) {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    if (!text.empty()) text += "; ";
    // The reason alone ("certificate verify failed") reads better than ERR_error_string's
    // "error:0A000086:SSL routines::…"; codes without a registered reason fall back to the latter.
    if (const char* reason = ERR_reason_error_string(code)) {
      text += reason;
    } else {
      char buffer[256];
      ERR_error_string_n(code, buffer, sizeof buffer);
      text += buffer;
    }
  }
  return text.empty() ? std::string(fallback) : text;
}

Bio memoryBio(std::string_view pem) {
  // BIO_new_mem_buf takes an int length; PEM inputs here are a few kilobytes, anything near INT_MAX is
  // garbage anyway and is cut to an empty (hence unreadable) buffer.
  const int length = pem.size() > 1'000'000 ? 0 : static_cast<int>(pem.size());
  return Bio(BIO_new_mem_buf(pem.data(), length));
}

std::optional<X509Ptr> readCertificate(std::string_view pem) {
  Bio bio = memoryBio(pem);
  if (!bio) return std::nullopt;
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return std::nullopt;
  return cert;
}

namespace {

int refusePassphrase(char* /*buffer*/, int /*size*/, int /*rwflag*/, void* /*userdata*/) {
  return -1;
}

}  // namespace

PKey readPrivateKey(std::string_view pem) {
  Bio bio = memoryBio(pem);
  if (!bio) return nullptr;
  return PKey(PEM_read_bio_PrivateKey(bio.get(), nullptr, refusePassphrase, nullptr));
}

namespace {

std::optional<std::string> uriSanIdentity(const X509* cert) {
  GeneralNames names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return std::nullopt;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type != GEN_URI) continue;
    const ASN1_IA5STRING* uri = name->d.uniformResourceIdentifier;
    const std::string_view text(reinterpret_cast<const char*>(ASN1_STRING_get0_data(uri)),
                                static_cast<size_t>(ASN1_STRING_length(uri)));
    if (text.starts_with(kIdentityUriPrefix)) return std::string(text.substr(kIdentityUriPrefix.size()));
  }
  return std::nullopt;
}

std::optional<std::string> commonName(const X509* cert) {
  const X509_NAME* subject = X509_get_subject_name(cert);
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0) return std::nullopt;
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, data);
  if (length < 0) return std::nullopt;
  std::string name(reinterpret_cast<const char*>(utf8), static_cast<size_t>(length));
  OPENSSL_free(utf8);
  return name;
}

}  // namespace

std::optional<std::string> identityOf(const X509* cert) {
  if (auto identity = uriSanIdentity(cert)) return identity;
  return commonName(cert);
}

namespace {

std::string bioContents(BIO* bio) {
  char* data = nullptr;
  // BIO_get_mem_data without its macro's C-style cast.
  const long length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data);
  return length > 0 ? std::string(data, static_cast<size_t>(length)) : std::string();
}

}  // namespace

std::string certificateToPem(const X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return {};
  return bioContents(bio.get());
}

std::string privateKeyToPem(const EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) return {};
  return bioContents(bio.get());
}

}  // namespace ipu::runtime::openssl
