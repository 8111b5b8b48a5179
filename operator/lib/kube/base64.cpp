#include "kube/base64.h"

#include <array>
#include <cctype>
#include <cstdint>

namespace ipu::kube {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
  auto position = kAlphabet.find(c);
  return position == std::string_view::npos ? -1 : static_cast<int>(position);
}

}  // namespace

std::string base64Encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  for (size_t i = 0; i < data.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(data[i]) << 16;
    if (i + 1 < data.size()) chunk |= static_cast<uint8_t>(data[i + 1]) << 8;
    if (i + 2 < data.size()) chunk |= static_cast<uint8_t>(data[i + 2]);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < data.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

std::optional<std::string> base64Decode(std::string_view text) {
  std::string symbols;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) symbols += c;
  }
  if (symbols.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < symbols.size(); i += 4) {
    std::array<int, 4> v{};
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      char c = symbols[i + j];
      if (c == '=') {
        // Padding only at the very end, in the last one or two places.
        if (i + 4 != symbols.size() || j < 2) return std::nullopt;
        ++padding;
        v[j] = 0;
      } else {
        if (padding > 0) return std::nullopt;
        v[j] = sextet(c);
        if (v[j] < 0) return std::nullopt;
      }
    }
    uint32_t chunk = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>((chunk >> 16) & 0xff);
    if (padding < 2) out += static_cast<char>((chunk >> 8) & 0xff);
    if (padding < 1) out += static_cast<char>(chunk & 0xff);
  }
  return out;
}

}  // namespace ipu::kube
