#include "tls/tls.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <unistd.h>

#include "tls/openssl_handles.h"

namespace ipu::runtime::tls {

namespace {

using namespace ipu::runtime::openssl;
using Clock = std::chrono::steady_clock;

// What the verify callback learns about one connection's peer. The SSL object points at it (ex_data slot 0,
// the application's slot), so the callback can say in words why a certificate was refused.
struct PeerCheck {
  std::string expectedIdentity;
  std::string failure;      // why the peer's certificate was refused; empty while it was not
  bool ticketSeen = false;  // client: the server has sent its session ticket, i.e. accepted us
};

PeerCheck* peerCheckOf(const SSL* ssl) {
  return static_cast<PeerCheck*>(SSL_get_ex_data(ssl, 0));
}

bool isForeignIssuer(int verifyError) {
  switch (verifyError) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return true;
    default:
      return false;
  }
}

std::string describeVerifyError(int verifyError) {
  const std::string reason = X509_verify_cert_error_string(verifyError);
  if (isForeignIssuer(verifyError)) return "peer certificate is not signed by this job's CA (" + reason + ")";
  return "peer certificate refused: " + reason;
}

// Runs after OpenSSL's own check of each certificate of the peer's chain, the peer's own last (depth 0).
// Chain failures are only put into words here; the identity of an otherwise valid peer is checked here.
// Refusing with X509_V_ERR_CERT_REJECTED makes OpenSSL send a bad_certificate alert, which the peer reports
// as "the peer refused our certificate".
int verifyPeer(int preverifyOk, X509_STORE_CTX* store) noexcept {
  const auto* ssl =
      static_cast<const SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  PeerCheck* check = ssl ? peerCheckOf(ssl) : nullptr;
  if (check == nullptr) return 0;  // never happens for our SSL objects; refuse rather than guess
  try {
    if (!preverifyOk) {
      if (check->failure.empty()) check->failure = describeVerifyError(X509_STORE_CTX_get_error(store));
      return 0;
    }
    if (X509_STORE_CTX_get_error_depth(store) != 0) return 1;
    const auto identity = openssl::identityOf(X509_STORE_CTX_get_current_cert(store));
    if (!identity) {
      check->failure = "peer certificate names no job identity";
    } else if (*identity != check->expectedIdentity) {
      check->failure =
          "peer certificate was issued for " + *identity + ", not for " + check->expectedIdentity;
    } else {
      return 1;
    }
  } catch (...) {  // bad_alloc: must not unwind through OpenSSL's C frames
    check->failure = "peer certificate check failed";
  }
  X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
  return 0;
}

// Client side: the server's session ticket arrives only after the server accepted our certificate (see
// Stream::handshake). Returning 0 leaves the session to OpenSSL, which frees it: it is never resumed.
int onNewSession(SSL* ssl, SSL_SESSION* /*session*/) noexcept {
  if (PeerCheck* check = peerCheckOf(ssl)) check->ticketSeen = true;
  return 0;
}

// --- Building a Context.

// Where a PEM came from, for error messages: "CA certificate" or "CA certificate /etc/ipu/ca.crt".
struct Sources {
  std::string ca = "CA certificate";
  std::string cert = "certificate";
  std::string key = "private key";
};

[[noreturn]] void failReading(const std::string& what, const std::string& pem) {
  if (pem.empty()) {
    ERR_clear_error();
    throw TlsError(what + " is empty");
  }
  throw TlsError("cannot read " + what + ": " + drainErrors());
}

// Every certificate of the CA PEM into a store of its own: the store the Context verifies against is this
// one and nothing else (never the system's CA bundle, which a static binary could not find anyway).
X509Store trustStoreFrom(const std::string& caPem, const std::string& what) {
  X509Store store(X509_STORE_new());
  if (!store) throw TlsError("cannot create a certificate store: " + drainErrors());
  Bio bio = memoryBio(caPem);
  int count = 0;
  while (bio) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    if (X509_STORE_add_cert(store.get(), cert.get()) != 1)
      throw TlsError("cannot trust " + what + ": " + drainErrors());
    ++count;
  }
  if (count == 0) failReading(what, caPem);
  ERR_clear_error();  // the read that ended the loop reports "no start line": the normal end of the PEM
  return store;
}

void useCertificateAndKey(SSL_CTX* ctx, const std::string& certPem, const std::string& keyPem,
                          const Sources& from) {
  auto cert = readCertificate(certPem);
  if (!cert) failReading(from.cert, certPem);
  if (SSL_CTX_use_certificate(ctx, cert->get()) != 1)
    throw TlsError("cannot use " + from.cert + ": " + drainErrors());
  PKey key = readPrivateKey(keyPem);
  if (!key) failReading(from.key, keyPem);
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    throw TlsError(from.key + " does not match " + from.cert + ": " + drainErrors());
  }
}

void configureProtocol(SSL_CTX* ctx, Role role) {
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1) {
    throw TlsError("cannot restrict the context to TLS 1.3: " + drainErrors());
  }
  // Peers already hold the CA: send our certificate alone rather than a chain built from the trust store.
  SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
  const int verifyMode =
      role == Role::kServer ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER;
  SSL_CTX_set_verify(ctx, verifyMode, verifyPeer);
  if (role == Role::kServer) {
    // One ticket, sent once the client's certificate is accepted: the client's handshake waits for it. No
    // server-side cache: nothing is ever resumed.
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (SSL_CTX_set_num_tickets(ctx, 1) != 1)
      throw TlsError("cannot configure session tickets: " + drainErrors());
  } else {
    // The new-session callback fires only with client caching on; NO_INTERNAL_STORE keeps nothing.
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, onNewSession);
  }
}

SslCtx newContext(Role role, const std::string& caPem, const std::string& certPem, const std::string& keyPem,
                  const std::string& expectedPeerIdentity, const Sources& from) {
  initOpenSsl();
  ERR_clear_error();
  if (expectedPeerIdentity.empty()) throw TlsError("the expected peer identity is empty");
  SslCtx ctx(SSL_CTX_new(role == Role::kServer ? TLS_server_method() : TLS_client_method()));
  if (!ctx) throw TlsError("cannot create a TLS context: " + drainErrors());
  configureProtocol(ctx.get(), role);
  SSL_CTX_set_cert_store(ctx.get(), trustStoreFrom(caPem, from.ca).release());  // takes ownership
  useCertificateAndKey(ctx.get(), certPem, keyPem, from);
  return ctx;
}

std::string readFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TlsError("cannot open " + what + " " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw TlsError("cannot read " + what + " " + path);
  return text.str();
}

// --- Stream helpers.

// The fd non-blocking for as long as this lives (the handshake), then as it was.
class NonBlocking {
 public:
  explicit NonBlocking(int fd) : fd_(fd), flags_(::fcntl(fd, F_GETFL)) {
    if (flags_ < 0 || ::fcntl(fd, F_SETFL, flags_ | O_NONBLOCK) < 0) {
      throw TlsError(std::string("cannot make the socket non-blocking: ") + std::strerror(errno));
    }
  }
  ~NonBlocking() { ::fcntl(fd_, F_SETFL, flags_); }
  NonBlocking(const NonBlocking&) = delete;
  NonBlocking& operator=(const NonBlocking&) = delete;

 private:
  int fd_;
  int flags_;
};

bool wantsWrite(int sslError) {
  return sslError == SSL_ERROR_WANT_WRITE;
}

// Waits until `fd` is ready for what OpenSSL asked (SSL_ERROR_WANT_READ/WRITE), or throws `late` at the
// deadline.
void waitUntilReady(int fd, bool write, Clock::time_point deadline, const std::string& late) {
  pollfd entry{.fd = fd, .events = static_cast<short>(write ? POLLOUT : POLLIN)};
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left <= std::chrono::milliseconds::zero()) throw TlsError(late);
    const int ready = ::poll(&entry, 1, static_cast<int>(left.count()));
    if (ready > 0) return;  // readable, writable, or hung up: the next OpenSSL call says which
    if (ready < 0 && errno != EINTR) throw TlsError(std::string("poll failed: ") + std::strerror(errno));
  }
}

// Blocking I/O that OpenSSL still reports as "want read/write" (a signal interrupted it, or the caller made
// the fd non-blocking): wait without a deadline, then retry.
void waitUntilReady(int fd, int sslError) {
  pollfd entry{.fd = fd, .events = static_cast<short>(wantsWrite(sslError) ? POLLOUT : POLLIN)};
  while (::poll(&entry, 1, -1) < 0 && errno == EINTR) {
  }
}

std::string timedOut(std::string_view doing, std::chrono::milliseconds timeout) {
  return std::string(doing) + " timed out after " + std::to_string(timeout.count()) + " ms";
}

bool isCertificateAlert(int alert) {
  switch (alert) {
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_CERTIFICATE_REVOKED:
    case SSL_AD_CERTIFICATE_EXPIRED:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_UNKNOWN_CA:
    case SSL_AD_ACCESS_DENIED:
    case SSL_AD_CERTIFICATE_REQUIRED:
      return true;
    default:
      return false;
  }
}

// Why an OpenSSL call on the connection failed, in words: our own verdict on the peer's certificate first,
// then an alert the peer sent (its verdict on ours), then whatever OpenSSL and the socket say.
std::string describeFailure(int sslError, const PeerCheck& check) {
  if (!check.failure.empty()) {
    ERR_clear_error();
    return check.failure;
  }
  if (sslError == SSL_ERROR_SYSCALL) {
    const int savedErrno = errno;
    const std::string queued = drainErrors("");
    if (!queued.empty()) return queued;
    return savedErrno != 0 ? std::string(std::strerror(savedErrno)) : "the peer closed the connection";
  }
  if (sslError != SSL_ERROR_SSL) return "OpenSSL error " + std::to_string(sslError) + ": " + drainErrors();
  const unsigned long first = ERR_peek_error();
  const int reason = ERR_GET_REASON(first);
  if (ERR_GET_LIB(first) == ERR_LIB_SSL && reason >= SSL_AD_REASON_OFFSET) {
    const bool aboutUs = isCertificateAlert(reason - SSL_AD_REASON_OFFSET);
    return std::string(aboutUs ? "the peer refused our certificate (" : "the peer refused the connection (") +
           drainErrors() + ")";
  }
  if (ERR_GET_LIB(first) == ERR_LIB_SSL && reason == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    return "the connection ended without close_notify (truncated): " + drainErrors();
  }
  return drainErrors();
}

}  // namespace

void initOpenSsl() {
  if (OPENSSL_init_ssl(
          OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS,
          nullptr) != 1) {
    throw TlsError("cannot initialise OpenSSL: " + drainErrors());
  }
}

// --- Context.

Context::Context(Role role, ssl_ctx_st* ctx, std::string expectedPeerIdentity)
    : role_(role), ctx_(ctx), expectedPeerIdentity_(std::move(expectedPeerIdentity)) {}

Context::Context(Context&& other) noexcept
    : role_(other.role_),
      ctx_(std::exchange(other.ctx_, nullptr)),
      expectedPeerIdentity_(std::move(other.expectedPeerIdentity_)) {}

Context& Context::operator=(Context&& other) noexcept {
  if (this != &other) {
    SSL_CTX_free(ctx_);
    role_ = other.role_;
    ctx_ = std::exchange(other.ctx_, nullptr);
    expectedPeerIdentity_ = std::move(other.expectedPeerIdentity_);
  }
  return *this;
}

Context::~Context() {
  SSL_CTX_free(ctx_);
}

Context Context::fromPem(Role role, const std::string& caPem, const std::string& certPem,
                         const std::string& keyPem, std::string expectedPeerIdentity) {
  SslCtx ctx = newContext(role, caPem, certPem, keyPem, expectedPeerIdentity, Sources{});
  return Context(role, ctx.release(), std::move(expectedPeerIdentity));
}

Context Context::fromFiles(Role role, const std::string& caPath, const std::string& certPath,
                           const std::string& keyPath, std::string expectedPeerIdentity) {
  const Sources from{
      .ca = "CA certificate " + caPath, .cert = "certificate " + certPath, .key = "private key " + keyPath};
  const std::string caPem = readFile(caPath, "CA certificate");
  const std::string certPem = readFile(certPath, "certificate");
  const std::string keyPem = readFile(keyPath, "private key");
  SslCtx ctx = newContext(role, caPem, certPem, keyPem, expectedPeerIdentity, from);
  return Context(role, ctx.release(), std::move(expectedPeerIdentity));
}

// --- Stream.

struct Stream::State {
  int fd;
  Role role;
  PeerCheck check;
  Ssl ssl;
  bool established = false;

  State(int fdIn, Role roleIn, std::string expectedIdentity)
      : fd(fdIn), role(roleIn), check{.expectedIdentity = std::move(expectedIdentity)} {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    ssl.reset();
    ::close(fd);
  }

  void throwFailure(std::string_view doing, int sslError) const {
    throw TlsError(std::string(doing) + " failed: " + describeFailure(sslError, check));
  }

  // One SSL_read: the byte count (0 at close_notify), or nullopt with what OpenSSL waits for in `wanted`.
  std::optional<size_t> tryRead(std::span<std::byte> buf, int& wanted) {
    if (buf.empty()) return 0;
    ERR_clear_error();
    size_t got = 0;
    if (SSL_read_ex(ssl.get(), buf.data(), buf.size(), &got) == 1) return got;
    const int error = SSL_get_error(ssl.get(), 0);
    if (error == SSL_ERROR_ZERO_RETURN) return 0;  // close_notify
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) throwFailure("TLS read", error);
    wanted = error;
    return std::nullopt;
  }
};

Stream::Stream(const Context& context, int connectedFd) {
  try {
    state_ = std::make_unique<State>(connectedFd, context.role_, context.expectedPeerIdentity_);
  } catch (...) {
    ::close(connectedFd);
    throw;
  }
  ERR_clear_error();
  state_->ssl.reset(SSL_new(context.ctx_));
  if (!state_->ssl) throw TlsError("cannot create a TLS connection: " + drainErrors());
  SSL* ssl = state_->ssl.get();
  // The State lives on the heap, so this pointer stays valid when the Stream is moved.
  if (SSL_set_fd(ssl, connectedFd) != 1 || SSL_set_ex_data(ssl, 0, &state_->check) != 1) {
    throw TlsError("cannot attach the TLS connection to its socket: " + drainErrors());
  }
  if (context.role_ == Role::kServer) {
    SSL_set_accept_state(ssl);
  } else {
    SSL_set_connect_state(ssl);
  }
}

Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&&) noexcept = default;
Stream::~Stream() = default;

void Stream::handshake(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const NonBlocking nonBlocking(state_->fd);
  for (HandshakeStep step; (step = continueHandshake()) != HandshakeStep::kDone;) {
    waitUntilReady(state_->fd, step == HandshakeStep::kWantWrite, deadline,
                   timedOut("TLS handshake", timeout));
  }
}

Stream::HandshakeStep Stream::continueHandshake() {
  State& s = *state_;
  const auto stepFor = [](int sslError) {
    return wantsWrite(sslError) ? HandshakeStep::kWantWrite : HandshakeStep::kWantRead;
  };
  if (s.established) return HandshakeStep::kDone;
  ERR_clear_error();
  if (const int result = SSL_do_handshake(s.ssl.get()); result != 1) {
    const int error = SSL_get_error(s.ssl.get(), result);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) s.throwFailure("TLS handshake", error);
    return stepFor(error);
  }
  // A client waits for the server's verdict on its certificate: the server's session ticket (accepted) or
  // its alert (refused). Application data first would mean accepted as well; peeking leaves it unread.
  while (s.role == Role::kClient && !s.check.ticketSeen) {
    ERR_clear_error();
    std::byte first;
    size_t got = 0;
    if (SSL_peek_ex(s.ssl.get(), &first, 1, &got) == 1) break;
    const int error = SSL_get_error(s.ssl.get(), 0);
    if (error == SSL_ERROR_ZERO_RETURN) {
      throw TlsError("TLS handshake failed: the peer closed the connection before accepting our certificate");
    }
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) s.throwFailure("TLS handshake", error);
    if (!s.check.ticketSeen) return stepFor(error);
  }
  s.established = true;
  return HandshakeStep::kDone;
}

size_t Stream::read(std::span<std::byte> buf) {
  for (;;) {
    int wanted = SSL_ERROR_NONE;
    if (auto got = state_->tryRead(buf, wanted)) return *got;
    waitUntilReady(state_->fd, wanted);
  }
}

size_t Stream::read(std::span<std::byte> buf, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const NonBlocking nonBlocking(state_->fd);
  for (;;) {
    int wanted = SSL_ERROR_NONE;
    if (auto got = state_->tryRead(buf, wanted)) return *got;
    waitUntilReady(state_->fd, wantsWrite(wanted), deadline, timedOut("TLS read", timeout));
  }
}

std::optional<size_t> Stream::readAvailable(std::span<std::byte> buf) {
  const NonBlocking nonBlocking(state_->fd);
  int wanted = SSL_ERROR_NONE;
  return state_->tryRead(buf, wanted);
}

void Stream::writeAll(std::span<const std::byte> data) {
  State& s = *state_;
  while (!data.empty()) {
    ERR_clear_error();
    size_t written = 0;
    if (SSL_write_ex(s.ssl.get(), data.data(), data.size(), &written) == 1) {
      data = data.subspan(written);
      continue;
    }
    const int error = SSL_get_error(s.ssl.get(), 0);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) s.throwFailure("TLS write", error);
    waitUntilReady(s.fd, error);
  }
}

bool Stream::hasBufferedData() const {
  return state_ && SSL_pending(state_->ssl.get()) > 0;
}

int Stream::fd() const {
  return state_ ? state_->fd : -1;
}

void Stream::shutdown() noexcept {
  if (!state_ || !state_->established) return;
  // One call sends close_notify; not waiting for the peer's is fine, as the socket is closed afterwards
  // anyway.
  SSL_shutdown(state_->ssl.get());
  ERR_clear_error();
}

std::string Stream::peerIdentity() const {
  if (!state_ || !state_->established) return {};
  const X509* peer = SSL_get0_peer_certificate(state_->ssl.get());
  if (peer == nullptr) return {};
  return openssl::identityOf(peer).value_or(std::string());
}

}  // namespace ipu::runtime::tls
