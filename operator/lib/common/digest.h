#pragma once

#include <string>
#include <string_view>

namespace ipu {

// The first `digits` (1..64) hex digits of SHA-256(text), lower case: for names that must not collide even
// when someone searches for a collision (partition ids), where stableHash's 64 bits of FNV-1a are cheap to
// collide on purpose.
std::string sha256Hex(std::string_view text, int digits);

}  // namespace ipu
