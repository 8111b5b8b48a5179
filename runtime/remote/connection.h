#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "protocol/frame.h"
#include "tls/tls.h"

namespace ipu::runtime::remote {

// The job's credentials as the runtime loads them: the mounted Secret's files, read once (what is checked is
// what is used), and the identity its certificate names (a peer must present a certificate of the same job).
struct Credentials {
  std::string directory;
  std::string identity;
  std::string caPem, certPem, keyPem;

  // Reads the three files of `directory`. `pinnedCaDigest` (pki::pemDigest of the CA the operator issued;
  // empty: no pin) must match ca.crt, else TlsError: the Secret mounted is not the one the operator made
  // for this job. An unreadable file is a TlsError that says why (a user id that may not read the key).
  static Credentials load(const std::string& directory, const std::string& pinnedCaDigest);
  tls::Context context(tls::Role role) const;
};

// One framed, mutually authenticated connection to a peer.
class Connection {
 public:
  explicit Connection(std::unique_ptr<tls::Stream> stream) : stream_(std::move(stream)) {}
  // Going on where another reader left off (the agent's session, which read the request).
  Connection(std::unique_ptr<tls::Stream> stream, protocol::FrameReader alreadyRead)
      : stream_(std::move(stream)), reader_(std::move(alreadyRead)) {}

  void send(const protocol::Frame& frame);
  // Blocks until a whole frame arrives, or `timeout` passes (ProtocolError or TlsError, even when the peer
  // sent part of a TLS record and stopped). nullopt when the peer closed the connection between frames;
  // ProtocolError when it closed inside one or sent something malformed.
  std::optional<protocol::Frame> receive(std::chrono::milliseconds timeout);
  // For poll() loops: reads what the socket has (once, never waiting for the rest of a TLS record) and
  // returns false when the peer closed the connection.
  bool readAvailable();
  // A frame already read by readAvailable(), if any.
  std::optional<protocol::Frame> nextFrame() { return reader_.next(); }
  // Whether data is waiting that poll() on fd() would not report (decrypted bytes buffered by TLS).
  bool hasBufferedData() const { return stream_->hasBufferedData(); }
  int fd() const { return stream_->fd(); }
  void close() noexcept { stream_->shutdown(); }
  std::string peerIdentity() const { return stream_->peerIdentity(); }

 private:
  // Feeds what a read returned to the frame reader; false (and a check for a cut frame) at the end.
  bool take(std::span<const std::byte> received);

  std::unique_ptr<tls::Stream> stream_;
  protocol::FrameReader reader_;
};

// Connects to the agent on `host`, authenticates both ends and returns the connection.
Connection connectToAgent(const Credentials& credentials, const std::string& host, int port,
                          std::chrono::milliseconds timeout);

// The agent's port: IPU_RUNTIME_AGENT_PORT when set (validated), else the contract's.
int agentPort();
// The credentials directory: IPU_RUNTIME_TLS_DIR when set, else the contract's mount path.
std::string credentialsDirectory();
// The CA digest the operator pinned in the pod (IPU_RUNTIME_CA_SHA256), empty when it pinned none.
std::string pinnedCaDigest();
// The job's credentials as this pod must use them: credentialsDirectory(), checked against pinnedCaDigest().
Credentials podCredentials();

}  // namespace ipu::runtime::remote
