#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ipu {

// FNV-1a (64 bit): the same value on every platform and in every release, unlike std::hash, so names derived
// from it (partition ids, shortened child names) stay the same across operator upgrades.
std::uint64_t stableHash(std::string_view text);

// The low `digits` (1..16) hex digits of stableHash(text), lower case.
std::string stableHashHex(std::string_view text, int digits);

}  // namespace ipu
