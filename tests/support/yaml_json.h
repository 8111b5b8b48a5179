#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::testing {

// A YAML document as the API server would see it in JSON: plain scalars that read as integers, floats or
// booleans become those; quoted scalars stay strings (so ipusPerJobInstance: "4" stays "4").
nlohmann::json yamlToJson(const std::string& yaml);
nlohmann::json yamlFileToJson(const std::string& path);
// Every document of a multi-document stream ("---" between them, as `helm template` prints), empty ones
// (comments only) left out.
std::vector<nlohmann::json> yamlDocumentsToJson(const std::string& yaml);

}  // namespace ipu::testing
