#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ipu::cli {

// YAML manifests as the API server would see them in JSON: plain scalars that read as integers, floats or
// booleans become those; quoted scalars stay strings (so ipusPerJobInstance: "4" stays "4"). These throw
// yaml-cpp's exceptions on text that is not YAML.
nlohmann::json yamlToJson(const std::string& yaml);
nlohmann::json yamlFileToJson(const std::string& path);
// Every document of a multi-document stream ("---" between them, as `helm template` prints), empty ones
// (comments only) left out.
std::vector<nlohmann::json> yamlDocumentsToJson(const std::string& yaml);
// yamlDocumentsToJson for text from users: InvalidArgument with yaml-cpp's message (line and column) instead
// of an exception.
Result<std::vector<nlohmann::json>> readYamlDocuments(const std::string& yaml);

}  // namespace ipu::cli
