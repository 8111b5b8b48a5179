#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace ipu::metrics {

// Where an HTTP endpoint listens, as controller-runtime's --metrics-bind-address and
// --health-probe-bind-address take it.
struct BindAddress {
  bool disabled = false;  // "0": serve nothing
  std::string host;       // empty: every interface; an IPv6 address without its brackets ("::1")
  std::uint16_t port = 0;

  // Back in flag form: ":8080", "127.0.0.1:8081", "[::1]:8081", "0".
  std::string toString() const;
  bool operator==(const BindAddress&) const = default;
};

// ":8080" (every interface), "127.0.0.1:8081", "localhost:8081", "[::1]:8081", or "0" to disable. The port
// must be 1-65535; IPv6 addresses need their brackets. Anything else is InvalidArgument naming the value and
// the expected shape.
Result<BindAddress> parseBindAddress(std::string_view text);

}  // namespace ipu::metrics
