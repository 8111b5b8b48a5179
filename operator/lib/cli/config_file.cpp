#include "cli/config_file.h"

#include <algorithm>

#include <yaml-cpp/yaml.h>

namespace ipu::cli {

Status applyConfigFile(Flags& flags, const std::string& path) {
  const std::string where = "config file '" + path + "'";
  YAML::Node document;
  try {
    document = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return makeError(ErrorCode::kInvalidArgument, "cannot read " + where);
  } catch (const YAML::Exception& error) {
    return makeError(ErrorCode::kInvalidArgument,
                     where + ": line " + std::to_string(error.mark.line + 1) + ": " + error.msg);
  }
  if (!document || document.IsNull()) return {};
  if (!document.IsMap()) {
    return makeError(ErrorCode::kInvalidArgument, where + ": expected a mapping of setting: value");
  }
  for (const auto& entry : document) {
    if (!entry.first.IsScalar())
      return makeError(ErrorCode::kInvalidArgument, where + ": a key is not a name");
    std::string key = entry.first.Scalar();
    std::replace(key.begin(), key.end(), '_', '-');
    const std::string at = where + ": '" + entry.first.Scalar() + "'";
    if (key == "config" || key == "help" || !flags.has(key)) {
      return makeError(ErrorCode::kInvalidArgument, at + " is not a setting (see --help)");
    }
    const YAML::Node& value = entry.second;
    std::vector<std::string> values;
    if (value.IsScalar()) {
      values.push_back(value.Scalar());
    } else if (value.IsSequence()) {
      for (const auto& item : value) {
        if (!item.IsScalar())
          return makeError(ErrorCode::kInvalidArgument, at + ": list items must be plain values");
        values.push_back(item.Scalar());
      }
    } else {
      return makeError(ErrorCode::kInvalidArgument, at + " needs a value or a list of values");
    }
    for (const std::string& item : values) {
      if (Status applied = flags.preset(key, item); !applied) {
        return makeError(ErrorCode::kInvalidArgument, where + ": " + applied.error().message);
      }
    }
  }
  return {};
}

}  // namespace ipu::cli
