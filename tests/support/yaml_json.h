#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ipu::testing {

// A YAML document as the API server would see it in JSON: plain scalars that read as integers, floats or
// booleans become those; quoted scalars stay strings (so ipusPerJobInstance: "4" stays "4").
nlohmann::json yamlToJson(const std::string& yaml);
nlohmann::json yamlFileToJson(const std::string& path);

}  // namespace ipu::testing
