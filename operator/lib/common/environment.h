#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ipu {

// Looks an environment variable up: the process's (processEnvironment), or a table in tests.
using Environment = std::function<std::optional<std::string>(const std::string& variable)>;

// The process environment: nullopt for a variable that is not set (an empty one is "").
std::optional<std::string> processEnvironment(const std::string& variable);

}  // namespace ipu
