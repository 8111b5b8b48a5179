#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include "fd/fd.h"

namespace ipu::runtime::net {

struct NetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using runtime::Fd;  // fd/fd.h

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
