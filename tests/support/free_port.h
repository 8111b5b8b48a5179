#pragma once

#include <cstdint>

namespace ipu::testing {

// A loopback TCP port nothing listens on right now: bind to port 0, read what the kernel chose, close.
// Another process could take it before the caller does; tests that must not flake retry. Throws
// std::runtime_error when no socket can be bound.
std::uint16_t freeLoopbackPort();

}  // namespace ipu::testing
