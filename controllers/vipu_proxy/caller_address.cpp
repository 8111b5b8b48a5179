#include "vipu_proxy/caller_address.h"

namespace ipu::controllers {
namespace {

// `text` without its `prefix`, or nullopt when it does not start with it.
std::optional<std::string_view> after(std::string_view text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return std::nullopt;
  return text.substr(prefix.size());
}

// "[address]:port" -> address; the brackets may be percent-encoded.
std::optional<std::string> bracketedAddress(std::string_view hostPort) {
  for (const auto& [open, close] :
       {std::pair<std::string_view, std::string_view>{"[", "]:"}, {"%5B", "%5D:"}}) {
    const auto rest = after(hostPort, open);
    if (!rest) continue;
    const std::size_t end = rest->find(close);
    if (end == std::string_view::npos || end == 0) return std::nullopt;
    return std::string(rest->substr(0, end));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> callerAddressOf(std::string_view peer) {
  if (const auto v4 = after(peer, "ipv4:")) {
    const std::size_t colon = v4->rfind(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    return std::string(v4->substr(0, colon));
  }
  const auto v6 = after(peer, "ipv6:");
  if (!v6) return std::nullopt;
  std::optional<std::string> address = bracketedAddress(*v6);
  if (!address) return std::nullopt;
  // An IPv4 client of a dual-stack socket: Kubernetes knows the pod by its IPv4 address.
  if (const auto mapped = after(*address, "::ffff:"); mapped && mapped->find('.') != std::string_view::npos)
    return std::string(*mapped);
  return address;
}

}  // namespace ipu::controllers
