#include "vipu/vipu_controllers.h"

#include <utility>

#include "vipu/vipu_client.h"

namespace ipu::vipu {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

Status validateEndpoint(std::string_view endpoint) {
  const auto colon = endpoint.rfind(':');
  if (endpoint.empty() || colon == std::string_view::npos || colon == 0 || colon + 1 == endpoint.size()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "V-IPU endpoint '" + std::string(endpoint) + "' is not of the form host:port");
  }
  for (char c : endpoint.substr(colon + 1)) {
    if (c < '0' || c > '9') {
      return makeError(ErrorCode::kInvalidArgument,
                       "V-IPU endpoint '" + std::string(endpoint) + "' has a port that is not a number");
    }
  }
  return {};
}

}  // namespace

Status VipuControllers::add(const std::string& name, std::shared_ptr<VipuApi> api) {
  if (name.empty()) return makeError(ErrorCode::kInvalidArgument, "a V-IPU controller needs a name");
  if (!api) return makeError(ErrorCode::kInvalidArgument, "V-IPU controller '" + name + "' has no client");
  std::lock_guard lock(mutex_);
  if (!controllers_.emplace(name, std::move(api)).second) {
    return makeError(ErrorCode::kAlreadyExists, "V-IPU controller '" + name + "' is registered twice");
  }
  return {};
}

Status VipuControllers::connect(const ClientOptions& options) {
  Result<std::unique_ptr<VipuClient>> client = VipuClient::create(options);
  if (!client) return client.error();
  return add(options.name, std::shared_ptr<VipuApi>(std::move(*client)));
}

Result<std::shared_ptr<VipuApi>> VipuControllers::get(std::string_view name) const {
  std::lock_guard lock(mutex_);
  if (auto found = controllers_.find(name); found != controllers_.end()) return found->second;
  std::string known;
  for (const auto& [controllerName, api] : controllers_)
    known += (known.empty() ? "" : ", ") + controllerName;
  return makeError(ErrorCode::kNotFound, "no V-IPU controller named '" + std::string(name) +
                                             "' (known: " + (known.empty() ? "none" : known) + ")");
}

std::vector<std::string> VipuControllers::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> result;
  for (const auto& [name, api] : controllers_) result.push_back(name);
  return result;
}

Result<std::vector<ClientOptions>> VipuControllers::parseEndpoints(std::string_view spec,
                                                                   const ClientOptions& defaults) {
  std::vector<ClientOptions> result;
  std::vector<std::string> seen;
  std::string_view rest = spec;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "V-IPU controller list '" + std::string(spec) + "' has an empty entry");
    }
    ClientOptions options = defaults;
    const auto equals = item.find('=');
    if (equals == std::string_view::npos) {
      if (spec.find(',') != std::string_view::npos) {
        return makeError(ErrorCode::kInvalidArgument,
                         "V-IPU controller '" + std::string(item) +
                             "' needs a name (name=host:port) when several are given");
      }
      options.name = "default";
      options.endpoint = std::string(item);
    } else {
      options.name = std::string(trim(item.substr(0, equals)));
      options.endpoint = std::string(trim(item.substr(equals + 1)));
      if (options.name.empty()) {
        return makeError(ErrorCode::kInvalidArgument,
                         "V-IPU controller '" + std::string(item) + "' has no name");
      }
    }
    if (Status valid = validateEndpoint(options.endpoint); !valid) return valid.error();
    for (const std::string& name : seen) {
      if (name == options.name) {
        return makeError(ErrorCode::kInvalidArgument, "V-IPU controller '" + name + "' is listed twice");
      }
    }
    seen.push_back(options.name);
    result.push_back(std::move(options));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return result;
}

}  // namespace ipu::vipu
