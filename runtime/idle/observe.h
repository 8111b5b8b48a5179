#pragma once

#include <string>

#include "idle/activity.h"

// Reading one look at the container (activity.h) from the kernel: its processes from /proc (PID 1's view:
// the container's PID namespace), the sockets its processes hold from /proc/PID/fd, and every TCP socket of
// the pod's network namespace from sock_diag (NETLINK_SOCK_DIAG, which any process may dump in its own
// namespace), with tcp_info's byte counts.
namespace ipu::runtime::idle {

// The processes under `procRoot` and the socket inodes they hold (processes that end while they are read
// are left out; a process whose descriptors cannot be read counts as holding none).
Look lookAtProcesses(const std::string& procRoot = "/proc");

// Every TCP socket (IPv4 and IPv6) of this network namespace. Throws std::system_error when sock_diag
// cannot be used.
std::vector<SocketSample> tcpSockets();

// Both: what the idle watch compares.
Look lookAtContainer();

}  // namespace ipu::runtime::idle
