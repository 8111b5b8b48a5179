#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ipu::kube {

// Standard base64 (RFC 4648 with padding), as kubeconfig *-data fields and Secret data use it.
std::string base64Encode(std::string_view data);
// nullopt on characters outside the alphabet or bad padding; whitespace (line breaks) is skipped.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace ipu::kube
