#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ipu::controllers {

// The IP address of a gRPC peer ("ipv4:10.0.0.7:51234", "ipv6:[fd00::7]:51234", or with the brackets
// percent-encoded as newer gRPC writes them), in the form Kubernetes writes status.podIP: an IPv4 peer that
// reached an IPv6 socket ("[::ffff:10.0.0.7]") is its IPv4 address. nullopt for any other peer (a Unix
// socket), which then identifies nobody. Pure.
std::optional<std::string> callerAddressOf(std::string_view peer);

}  // namespace ipu::controllers
