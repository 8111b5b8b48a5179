#include "common/digest.h"

#include <algorithm>
#include <array>

#include <openssl/sha.h>

namespace ipu {

std::string sha256Hex(std::string_view text, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (unsigned char byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  hex.resize(static_cast<std::size_t>(std::clamp(digits, 1, 64)));
  return hex;
}

}  // namespace ipu
