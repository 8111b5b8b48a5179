#include "metrics/bind_address.h"

#include <algorithm>
#include <array>
#include <charconv>

#include <arpa/inet.h>

namespace ipu::metrics {
namespace {

constexpr std::string_view kExpectedShape =
    "expected [host]:port with a port in 1-65535 (\":8080\", \"127.0.0.1:8080\", \"[::1]:8080\"), or \"0\" "
    "to "
    "disable";

Error invalid(std::string_view text, std::string_view reason) {
  return makeError(ErrorCode::kInvalidArgument, "invalid bind address \"" + std::string(text) + "\": " +
                                                    std::string(reason) + "; " + std::string(kExpectedShape));
}

bool isIpv6Address(const std::string& host) {
  std::array<unsigned char, 16> address{};
  return inet_pton(AF_INET6, host.c_str(), address.data()) == 1;
}

bool isIpv4Address(const std::string& host) {
  std::array<unsigned char, 4> address{};
  return inet_pton(AF_INET, host.c_str(), address.data()) == 1;
}

// A DNS name (letters, digits, '-' and '.'), or if it is all digits and dots, a well-formed IPv4 address:
// "300.1.1.1" is a typo, not a host name.
bool isHostNameOrIpv4(const std::string& host) {
  const bool allowedCharacters = std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
  if (!allowedCharacters) return false;
  const bool numeric =
      std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  return numeric ? isIpv4Address(host) : true;
}

}  // namespace

std::string BindAddress::toString() const {
  if (disabled) return "0";
  const std::string shownHost = host.find(':') == std::string::npos ? host : "[" + host + "]";
  return shownHost + ":" + std::to_string(port);
}

Result<BindAddress> parseBindAddress(std::string_view text) {
  if (text == "0") return BindAddress{.disabled = true};
  if (text.empty()) return invalid(text, "it is empty");

  // Split at the colon before the port: after "]" for a bracketed IPv6 host, else the only colon.
  std::string_view host;
  std::string_view port;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return invalid(text, "\"[\" is not closed");
    host = text.substr(1, close - 1);
    if (host.empty()) return invalid(text, "the brackets hold no address");
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return invalid(text, "no \":port\" after the brackets");
    port = text.substr(close + 2);
    if (!isIpv6Address(std::string(host)))
      return invalid(text, "\"" + std::string(host) + "\" is not an IPv6 address");
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return invalid(text, "there is no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return invalid(text, "an IPv6 host needs brackets");
    if (!host.empty() && !isHostNameOrIpv4(std::string(host))) {
      return invalid(text, "\"" + std::string(host) + "\" is not a host name or IPv4 address");
    }
  }

  if (port.empty()) return invalid(text, "there is no port");
  // from_chars alone would accept a leading '-' and stop quietly at the first non-digit.
  if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return invalid(text, "the port \"" + std::string(port) + "\" is not a number");
  }
  unsigned long number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (error != std::errc() || end != port.data() + port.size() || number < 1 || number > 65535) {
    return invalid(text, "the port " + std::string(port) + " is out of range");
  }
  return BindAddress{.host = std::string(host), .port = static_cast<std::uint16_t>(number)};
}

}  // namespace ipu::metrics
