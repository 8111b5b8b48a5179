#pragma once

#include <cstdint>
#include <string>

namespace ipu::testing {

// A loopback TCP port nothing listens on right now: bind to port 0, read what the kernel chose, close.
// Another process could take it before the caller does; tests that must not flake retry. Throws
// std::runtime_error when no socket can be bound.
std::uint16_t freeLoopbackPort();

// The same on the IPv4 address `ipv4` (an address of this machine, like a bridge's).
std::uint16_t freePortOn(const std::string& ipv4);

}  // namespace ipu::testing
