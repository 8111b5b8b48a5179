#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ipu::testing {

// The value of the environment variable `name` in a container as built ("<unset>" when it has none).
inline std::string envValue(const nlohmann::json& container, const std::string& name) {
  for (const auto& entry : container["env"]) {
    if (entry["name"] == name) return entry.value("value", "");
  }
  return "<unset>";
}

}  // namespace ipu::testing
