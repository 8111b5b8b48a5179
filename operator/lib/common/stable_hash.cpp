#include "common/stable_hash.h"

#include <algorithm>

namespace ipu {

std::uint64_t stableHash(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string stableHashHex(std::string_view text, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  digits = std::clamp(digits, 1, 16);
  std::uint64_t hash = stableHash(text);
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, hash >>= 4) out[static_cast<std::size_t>(i)] = kHex[hash & 0xf];
  return out;
}

}  // namespace ipu
