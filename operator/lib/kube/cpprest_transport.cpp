#include "kube/cpprest_transport.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include <boost/asio/ssl.hpp>
#include <cpprest/http_client.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pplx/threadpool.h>

namespace ipu::kube {
namespace {

using web::http::http_request;
using web::http::http_response;
using web::http::client::http_client;
using web::http::client::http_client_config;

// cpprestsdk's Boost.Asio pool defaults to 40 threads; the operator blocks on its own threads and needs few.
void initialiseThreadPool() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      crossplat::threadpool::initialize_with_threads(4);
    } catch (const std::exception&) {
      // Someone else already started the pool: keep theirs.
    }
  });
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// cpprestsdk's messages for failures that happen before a complete request reached the server.
bool isBeforeTheServerGotTheRequest(const std::string& message) {
  for (const char* before : {"Failed to connect", "Failed to write request", "Error in SSL handshake",
                             "Failed to resolve address", "Error resolving address"}) {
    if (message.find(before) != std::string::npos) return true;
  }
  return false;
}

// Runs a cpprestsdk call, turning its exceptions into Errors: the one place that knows pplx and asio throw.
template <typename F>
auto guarded(F&& call, const std::string& what, const std::stop_token& stop) -> decltype(call()) {
  try {
    return call();
  } catch (const pplx::task_canceled&) {
    return makeError(ErrorCode::kCancelled, what + ": cancelled");
  } catch (const web::http::http_exception& e) {
    if (stop.stop_requested()) return makeError(ErrorCode::kCancelled, what + ": cancelled");
    std::string message = e.what();
    bool timedOut = e.error_code() == std::errc::timed_out || message.find("timed out") != std::string::npos;
    Error error =
        makeError(timedOut ? ErrorCode::kDeadlineExceeded : ErrorCode::kUnavailable, what + ": " + message);
    if (isBeforeTheServerGotTheRequest(message)) error.reason = kRequestNotSent;
    return error;
  } catch (const std::exception& e) {
    if (stop.stop_requested()) return makeError(ErrorCode::kCancelled, what + ": cancelled");
    return makeError(ErrorCode::kUnavailable, what + ": " + e.what());
  }
}

http_request toCppRest(const HttpRequest& request) {
  http_request out(request.method);
  out.set_request_uri(request.pathAndQuery);
  for (const auto& [name, value] : request.headers) out.headers().add(name, value);
  if (!request.body.empty()) {
    auto type = request.headers.find("Content-Type");
    out.set_body(request.body, type == request.headers.end() ? "application/json" : type->second);
  }
  return out;
}

HttpResponse headersOf(const http_response& response) {
  HttpResponse out;
  out.status = response.status_code();
  for (const auto& [name, value] : response.headers()) out.headers[lower(name)] = value;
  return out;
}

// The body, read until it ends; nullopt as soon as it is longer than maxBytes (the rest is never read).
std::optional<std::string> readBody(http_response& response, std::size_t maxBytes) {
  if (auto length = response.headers().content_length(); length > maxBytes) return std::nullopt;
  auto body = response.body().streambuf();
  std::string out;
  std::array<uint8_t, 64 * 1024> chunk{};
  while (true) {
    const size_t n = body.getn(chunk.data(), chunk.size()).get();
    if (n == 0) return out;
    if (out.size() + n > maxBytes) return std::nullopt;
    out.append(reinterpret_cast<const char*>(chunk.data()), n);
  }
}

Error bodyTooLarge(const HttpRequest& request, std::size_t maxBytes) {
  Error error = makeError(ErrorCode::kResourceExhausted, request.method + " " + request.pathAndQuery +
                                                             ": the response is larger than the " +
                                                             std::to_string(maxBytes) + " bytes read of one");
  error.reason = kBodyTooLarge;
  return error;
}

std::string opensslError() {
  unsigned long code = ERR_get_error();
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return code == 0 ? "unknown error" : text.data();
}

// The configured certificate authorities as one store every connection to the API server shares. A
// configuration that names a CA trusts only it, as client-go does. cpprestsdk gives each connection a
// context of its own with OpenSSL's default CA file loaded (skipDefaultCaFileLoads keeps that empty);
// replacing the context's store with this one holds one copy of what verification needs, not one per
// pooled connection.
std::shared_ptr<X509_STORE> certificateStore(const std::string& caPem) {
  std::shared_ptr<X509_STORE> store(X509_STORE_new(), X509_STORE_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(caPem.data(), static_cast<int>(caPem.size())),
                                                BIO_free);
  while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store.get(), certificate);  // takes its own reference
    X509_free(certificate);
  }
  ERR_clear_error();  // the end of the PEM text
  return store;
}

http_client_config clientConfig(const ClusterConfig& config, std::chrono::seconds timeout,
                                std::shared_ptr<X509_STORE> authorities) {
  http_client_config out;
  out.set_timeout(timeout);
  out.set_validate_certificates(true);
  std::string cert = config.clientCertPem, key = config.clientKeyPem;
  out.set_ssl_context_callback([authorities, cert, key](boost::asio::ssl::context& context) {
    // Without a CA in the configuration, the system's bundle cpprestsdk loaded is what verifies the server.
    if (authorities) SSL_CTX_set1_cert_store(context.native_handle(), authorities.get());
    if (!cert.empty()) {
      context.use_certificate_chain(boost::asio::buffer(cert));
      context.use_private_key(boost::asio::buffer(key), boost::asio::ssl::context::pem);
    }
  });
  return out;
}

}  // namespace

struct CppRestTransport::Clients {
  http_client requests;
  http_client streams;  // own pool and a longer idle timeout for watches
};

Status validateTlsMaterial(const ClusterConfig& config) {
  auto readCertificates = [](const std::string& pem, const std::string& what) -> Status {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                  BIO_free);
    int count = 0;
    while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      X509_free(certificate);
      ++count;
    }
    ERR_clear_error();
    if (count == 0) return makeError(ErrorCode::kInvalidArgument, what + " holds no PEM certificate");
    return {};
  };
  if (!config.caPem.empty()) {
    if (auto ok = readCertificates(config.caPem, "the certificate authority"); !ok) return ok;
  }
  if (config.clientCertPem.empty()) return {};
  if (auto ok = readCertificates(config.clientCertPem, "the client certificate"); !ok) return ok;

  std::unique_ptr<BIO, decltype(&BIO_free)> certBio(
      BIO_new_mem_buf(config.clientCertPem.data(), static_cast<int>(config.clientCertPem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> certificate(
      PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr), X509_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> keyBio(
      BIO_new_mem_buf(config.clientKeyPem.data(), static_cast<int>(config.clientKeyPem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!key)
    return makeError(ErrorCode::kInvalidArgument,
                     "the client key is not a PEM private key: " + opensslError());
  if (X509_check_private_key(certificate.get(), key.get()) != 1) {
    ERR_clear_error();
    return makeError(ErrorCode::kInvalidArgument, "the client key does not match the client certificate");
  }
  return {};
}

bool skipDefaultCaFileLoads(const ClusterConfig& config) {
  if (config.caPem.empty()) return false;  // the system's bundle is what verifies the server
  return skipDefaultCaFileLoads();
}

bool skipDefaultCaFileLoads() {
  return ::setenv("SSL_CERT_FILE", "/dev/null", /*overwrite=*/1) == 0;
}

Result<std::unique_ptr<CppRestTransport>> CppRestTransport::create(const ClusterConfig& config,
                                                                   TransportOptions options) {
  if (auto valid = validateTlsMaterial(config); !valid) {
    return makeError(valid.error().code, config.source + ": " + valid.error().message);
  }
  if (!config.tlsServerName.empty()) {
    return makeError(ErrorCode::kInvalidArgument,
                     config.source +
                         ": tls-server-name is not supported; use a server URL whose host is in the "
                         "server's certificate");
  }
  initialiseThreadPool();
  try {
    web::uri base(config.server);
    auto authorities = config.caPem.empty() ? nullptr : certificateStore(config.caPem);
    auto clients = std::make_unique<Clients>(
        Clients{http_client(base, clientConfig(config, options.requestTimeout, authorities)),
                http_client(base, clientConfig(config, options.streamIdleTimeout, authorities))});
    return std::make_unique<CppRestTransport>(ConstructionKey{}, std::move(clients), options);
  } catch (const std::exception& e) {
    return makeError(ErrorCode::kInvalidArgument,
                     config.source + ": bad server URL '" + config.server + "': " + e.what());
  }
}

CppRestTransport::CppRestTransport(ConstructionKey, std::unique_ptr<Clients> clients,
                                   TransportOptions options)
    : clients_(std::move(clients)), options_(options) {}
CppRestTransport::~CppRestTransport() = default;

Result<HttpResponse> CppRestTransport::send(const HttpRequest& request, std::stop_token stop) {
  pplx::cancellation_token_source cancel;
  std::stop_callback onStop(stop, [&cancel] { cancel.cancel(); });
  return guarded(
      [&]() -> Result<HttpResponse> {
        http_response response = clients_->requests.request(toCppRest(request), cancel.get_token()).get();
        HttpResponse out = headersOf(response);
        if (auto body = readBody(response, options_.maxBodyBytes); body) {
          out.body = std::move(*body);
          return out;
        }
        cancel.cancel();  // drop the connection rather than drain what will not be held
        return bodyTooLarge(request, options_.maxBodyBytes);
      },
      request.method + " " + request.pathAndQuery, stop);
}

Result<HttpResponse> CppRestTransport::stream(const HttpRequest& request, const LineHandler& onLine,
                                              std::stop_token stop) {
  pplx::cancellation_token_source cancel;
  std::stop_callback onStop(stop, [&cancel] { cancel.cancel(); });
  return guarded(
      [&]() -> Result<HttpResponse> {
        http_response response = clients_->streams.request(toCppRest(request), cancel.get_token()).get();
        HttpResponse out = headersOf(response);
        if (out.status < 200 || out.status > 299) {
          auto body = readBody(response, options_.maxBodyBytes);
          if (!body) {
            cancel.cancel();
            return bodyTooLarge(request, options_.maxBodyBytes);
          }
          out.body = std::move(*body);
          return out;
        }
        auto body = response.body().streambuf();
        LineSplitter lines(options_.maxLineBytes);
        std::array<uint8_t, 64 * 1024> chunk{};
        using Traits = concurrency::streams::streambuf<uint8_t>::traits;
        while (true) {
          if (stop.stop_requested()) return makeError(ErrorCode::kCancelled, "watch cancelled");
          // getn(n) waits for all n bytes; a watch must see each event as it comes. So wait for one byte,
          // then take whatever else has already arrived.
          auto first = body.bumpc().get();
          if (first == Traits::eof()) break;
          chunk[0] = static_cast<uint8_t>(first);
          size_t available = std::min(body.in_avail(), chunk.size() - 1);
          size_t n = 1 + (available > 0 ? body.getn(chunk.data() + 1, available).get() : 0);
          if (!lines.feed(std::string_view(reinterpret_cast<const char*>(chunk.data()), n), onLine)) {
            cancel.cancel();  // the caller has what it wanted: drop the connection rather than drain it
            return out;
          }
        }
        if (lines.hasPartialLine()) {
          return makeError(ErrorCode::kUnavailable, "the stream was cut in the middle of a line");
        }
        return out;
      },
      request.method + " " + request.pathAndQuery, stop);
}

}  // namespace ipu::kube
