#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ipu {

// Reading API objects whose fields may be missing or of the wrong type (a status not written yet, an object
// from an older version): member() is the field, or null when `object` is not an object or lacks it, so
// that chains like member(member(job, "status"), "phase") never throw.
inline const nlohmann::json& member(const nlohmann::json& object, std::string_view name) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

// The field as a string; "" when missing or not a string.
inline std::string stringMember(const nlohmann::json& object, std::string_view name) {
  const nlohmann::json& value = member(object, name);
  return value.is_string() ? value.get<std::string>() : std::string();
}

// The field when it is the boolean true; false when missing, false or of another type.
inline bool trueMember(const nlohmann::json& object, std::string_view name) {
  const nlohmann::json& value = member(object, name);
  return value.is_boolean() && value.get<bool>();
}

// The field when it is an array; an empty array when missing or of another type (for range-for loops).
inline const nlohmann::json& arrayMember(const nlohmann::json& object, std::string_view name) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  const nlohmann::json& value = member(object, name);
  return value.is_array() ? value : kEmpty;
}

}  // namespace ipu
