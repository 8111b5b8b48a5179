#include "cli/yaml_json.h"

#include <charconv>
#include <regex>

#include <yaml-cpp/yaml.h>

namespace ipu::cli {
namespace {

nlohmann::json convert(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.as<std::string>()] = convert(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(convert(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      std::string text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted: always a string
      if (text == "true" || text == "false") return text == "true";
      if (text == "null" || text == "~") return nullptr;
      static const std::regex integer("^-?[0-9]+$"), number("^-?[0-9]*\\.[0-9]+([eE][-+]?[0-9]+)?$");
      if (std::regex_match(text, integer)) {
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size()) return value;
        return std::stod(text);  // beyond 64 bits: a number all the same, as the API server reads it
      }
      if (std::regex_match(text, number)) return std::stod(text);
      return text;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

nlohmann::json yamlToJson(const std::string& yaml) {
  return convert(YAML::Load(yaml));
}
nlohmann::json yamlFileToJson(const std::string& path) {
  return convert(YAML::LoadFile(path));
}

Result<std::vector<nlohmann::json>> readYamlDocuments(const std::string& yaml) {
  try {
    return yamlDocumentsToJson(yaml);
  } catch (const YAML::Exception& error) {
    return makeError(ErrorCode::kInvalidArgument, "not YAML: " + std::string(error.what()));
  } catch (const std::exception& error) {
    return makeError(ErrorCode::kInvalidArgument, "cannot be read: " + std::string(error.what()));
  }
}

std::vector<nlohmann::json> yamlDocumentsToJson(const std::string& yaml) {
  std::vector<nlohmann::json> documents;
  for (const auto& node : YAML::LoadAll(yaml)) {
    if (nlohmann::json document = convert(node); !document.is_null())
      documents.push_back(std::move(document));
  }
  return documents;
}

}  // namespace ipu::cli
