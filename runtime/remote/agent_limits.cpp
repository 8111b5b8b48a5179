#include "remote/agent_limits.h"

#include <cstdlib>

#include "settings/whole_number.h"

namespace ipu::runtime::remote {
namespace {

constexpr int kMostAllowed = 4096;

std::size_t limitFromEnvironment(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return static_cast<std::size_t>(settings::wholeNumberIn(name, text, 1, kMostAllowed));
}

}  // namespace

ConnectionLimits connectionLimitsFromEnvironment() {
  return {limitFromEnvironment(kEnvMaxUnauthenticated, kDefaultMaxUnauthenticated),
          limitFromEnvironment(kEnvMaxUnauthenticatedPerSource, kDefaultMaxUnauthenticatedPerSource)};
}

bool ConnectionLimiter::admit(const std::string& source) {
  std::size_t& fromSource = perSource_[source];
  if (held_ >= limits_.total || fromSource >= limits_.perSource) {
    if (fromSource == 0) perSource_.erase(source);
    return false;
  }
  ++fromSource;
  ++held_;
  return true;
}

void ConnectionLimiter::release(const std::string& source) {
  auto found = perSource_.find(source);
  if (found == perSource_.end()) return;
  if (--found->second == 0) perSource_.erase(found);
  --held_;
}

std::string RefusedConnections::describe() const {
  return "refused " + std::to_string(total()) +
         " connection(s) (over the bound: " + std::to_string(overTheBound) +
         ", failed handshake: " + std::to_string(failedHandshake) + ")";
}

}  // namespace ipu::runtime::remote
