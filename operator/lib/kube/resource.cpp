#include "kube/resource.h"

#include <array>
#include <cctype>

namespace ipu::kube {

std::string ResourceRef::basePath() const {
  return group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
}

std::string ResourceRef::path(const std::string& ns, const std::string& name,
                              const std::string& subresource) const {
  std::string out = basePath();
  if (namespaced && !ns.empty()) out += "/namespaces/" + ns;
  out += "/" + resource;
  if (!name.empty()) out += "/" + name;
  if (!subresource.empty()) out += "/" + subresource;
  return out;
}

std::string urlEncode(std::string_view value) {
  constexpr std::array<char, 16> kHex{'0', '1', '2', '3', '4', '5', '6', '7',
                                      '8', '9', 'A', 'B', 'C', 'D', 'E', 'F'};
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string queryString(const std::vector<std::pair<std::string, std::string>>& parameters) {
  std::string out;
  for (const auto& [name, value] : parameters) {
    if (value.empty()) continue;
    out += out.empty() ? '?' : '&';
    out += name + "=" + urlEncode(value);
  }
  return out;
}

}  // namespace ipu::kube
