#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

namespace ipu::runtime::net {

struct NetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return fd_; }
  int release() noexcept;
  void reset() noexcept;
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A TCP socket listening on every address (IPv6 and IPv4 where the pod has IPv6, else IPv4) at `port`
// (0: any free port; see localPort).
Fd listenTcp(int port);
int localPort(int fd);

// Connects to host:port (a name resolved by the system resolver: /etc/hosts, then the pod's DNS), trying each
// address until one answers or `timeout` passes. NetError says which host and why.
Fd connectTcp(const std::string& host, int port, std::chrono::milliseconds timeout);

// The address of the connected peer, for logs ("10.200.1.7:51234").
std::string peerAddress(int fd);

// Keepalive probes, so a peer that vanished without closing (a deleted pod, a cut network) ends the
// connection within about a minute instead of never.
void enableKeepAlive(int fd);

}  // namespace ipu::runtime::net
