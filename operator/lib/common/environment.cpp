#include "common/environment.h"

#include <cstdlib>

namespace ipu {

std::optional<std::string> processEnvironment(const std::string& variable) {
  const char* value = std::getenv(variable.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace ipu
