#pragma once

// Mutual TLS 1.3 between the pods of one job (ipu-runtime's agent and rsh), trusting only the job's CA
// (tls/pki.h). Include as "tls/tls.h". OpenSSL's headers stay out of this one.
//
// Who is accepted: a peer whose certificate chains to the CA given to the Context (never the system store)
// and whose identity (pki::identityOf: the "ipujob://" URI SAN) equals `expectedPeerIdentity`. Since every
// pod of a job presents the job's one certificate, that is "the same job".
//
// Two things callers must know:
//  - SIGPIPE: writing to a socket the peer has closed raises SIGPIPE, which kills a process that has not
//    ignored it. The library does not touch signal dispositions (process-wide state that belongs to main);
//    a program using Stream must ignore SIGPIPE, and writeAll then reports TlsError instead.
//  - A static binary: call initOpenSsl() first thing in main, so that OpenSSL never reads openssl.cnf (which
//    could name providers or engines that a static binary cannot load). Context::fromPem calls it too.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

struct ssl_ctx_st;

namespace ipu::runtime::tls {

struct TlsError : std::runtime_error {
  using runtime_error::runtime_error;  // the message includes OpenSSL's reason where there is one
};

enum class Role { kServer, kClient };

// Initialises OpenSSL without loading any configuration file (OPENSSL_INIT_NO_LOAD_CONFIG). Idempotent and
// thread-safe. Only the first initialisation in a process decides: in the operator, where cpprestsdk may have
// initialised OpenSSL with its configuration already, this changes nothing.
void initOpenSsl();

// An SSL_CTX for one end of the job's connections: TLS 1.3 only, the given CA as the only trust anchor, the
// job's certificate and key presented, the peer's certificate required (a client without one is refused)
// and checked against expectedPeerIdentity. Movable, not copyable. Streams keep what they need of it, so a
// Context may be destroyed while its Streams live on.
class Context {
 public:
  // Throws TlsError naming the part that is wrong: empty or unreadable CA certificate, certificate or key,
  // a key that does not match the certificate, an empty expectedPeerIdentity.
  static Context fromPem(Role role, const std::string& caPem, const std::string& certPem,
                         const std::string& keyPem, std::string expectedPeerIdentity);
  // The same from files (the job's mounted Secret); errors name the file.
  static Context fromFiles(Role role, const std::string& caPath, const std::string& certPath,
                           const std::string& keyPath, std::string expectedPeerIdentity);

  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  Role role() const { return role_; }
  const std::string& expectedPeerIdentity() const { return expectedPeerIdentity_; }

 private:
  friend class Stream;
  Context(Role role, ssl_ctx_st* ctx, std::string expectedPeerIdentity);

  Role role_;
  ssl_ctx_st* ctx_;  // owned (SSL_CTX_free); a raw pointer only to keep <openssl/ssl.h> out of this header
  std::string expectedPeerIdentity_;
};

// One TLS connection over a connected stream socket, which the Stream owns from construction on (even when
// the constructor throws) and closes when destroyed. Movable, not copyable; a moved-from Stream may only be
// destroyed or assigned to. Not thread-safe: one thread at a time per Stream (OpenSSL's rule for an SSL
// object).
class Stream {
 public:
  Stream(const Context& context, int connectedFd);  // throws TlsError (then the fd is closed already)

  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();  // frees the SSL and closes the fd; does not send close_notify (that is shutdown())

  // Runs the handshake with the fd non-blocking and poll()ed, so a peer that connects and says nothing, or
  // one that is not TLS at all, fails it with TlsError within `timeout` instead of hanging. Afterwards the fd
  // is blocking again. Errors say what happened: "peer certificate was issued for <x>, not for <y>", "peer
  // certificate is not signed by this job's CA (…)", "peer certificate refused: certificate has expired",
  // "the peer refused our certificate (…alert…)", "timed out after … ms", OpenSSL's reason otherwise.
  //
  // A client returns only once the server has accepted it. TLS 1.3 lets a client finish its handshake
  // before the server has even looked at the client's certificate, so a refused client would otherwise learn
  // it only on its first read. Our server sends one session ticket right after accepting the client, and a
  // client's handshake waits for it (or for the server's refusal). Tickets are never used for resumption.
  void handshake(std::chrono::milliseconds timeout);

  // The handshake one step at a time, for a server that runs many on non-blocking sockets in one poll() loop
  // (the agent): kDone once it is established, else what to poll() the fd for before calling again. The
  // caller keeps the time; errors are handshake()'s. The fd's blocking mode is left as the caller set it.
  enum class HandshakeStep { kDone, kWantRead, kWantWrite };
  HandshakeStep continueHandshake();

  // Blocking. Reads up to buf.size() bytes (at least 1 when buf is not empty) and returns how many; returns
  // 0 when the peer closed the connection cleanly (close_notify). Throws TlsError on errors, including a
  // connection that ends without close_notify ("truncated": the peer died, or someone cut the stream).
  size_t read(std::span<std::byte> buf);
  // The same within `timeout`, whatever the peer does: one that sends nothing, trickles bytes, or sends part
  // of a TLS record and stops fails it with TlsError "TLS read timed out after … ms" (a plain read() would
  // wait inside OpenSSL for the rest of the record, past any poll() the caller did).
  size_t read(std::span<std::byte> buf, std::chrono::milliseconds timeout);
  // Never waits: nullopt while no whole record has arrived (the bytes of a partial one stay inside OpenSSL
  // until the rest comes), otherwise as read().
  std::optional<size_t> readAvailable(std::span<std::byte> buf);

  // Blocking; writes everything or throws TlsError.
  void writeAll(std::span<const std::byte> data);

  // True when decrypted bytes are waiting inside OpenSSL: read() returns them at once, but poll() on fd()
  // does not see them. Check this before poll()ing for readability.
  bool hasBufferedData() const;

  int fd() const;

  // Sends close_notify (best effort, never throws), so that the peer's read() returns 0. The connection can
  // still be read until the peer closes its side.
  void shutdown() noexcept;

  // The peer's identity; empty before a successful handshake.
  std::string peerIdentity() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ipu::runtime::tls
