#include "vipu_proxy/partition_status_endpoint.h"

#include <nlohmann/json.hpp>

#include "contract/runtime_contract.h"

namespace ipu::controllers {
namespace {

constexpr const char* kJson = "application/json";

metrics::HttpReply failure(int status, std::string_view code, const std::string& message) {
  return {status, kJson, nlohmann::json{{"code", code}, {"message", message}}.dump(), {}};
}

int httpStatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kInvalidArgument:
      return 400;
    default:
      return 502;  // V-IPU's own trouble, passed on
  }
}

}  // namespace

metrics::HttpReply partitionStatusReply(const metrics::HttpRequest& request,
                                        const PartitionStatusLookup& lookup) {
  const std::string_view prefix = runtime::contract::kPartitionStatusPath;
  const std::string_view path = request.path;
  if (!path.starts_with(prefix) || path.size() == prefix.size() ||
      path.find('/', prefix.size()) != std::string_view::npos) {
    return failure(404, "NotFound", "not a path of the V-IPU proxy: ask GET " + std::string(prefix) + "<id>");
  }
  if (request.method != "GET" && request.method != "HEAD") {
    metrics::HttpReply refused = failure(405, "MethodNotAllowed", "only GET is served here");
    refused.headers.emplace_back("Allow", "GET");
    return refused;
  }
  const std::string id(path.substr(prefix.size()));
  const auto state = lookup(request.remoteAddress, id);
  if (!state) {
    const Error& error = state.error();
    return failure(httpStatusOf(error.code), toString(error.code), error.message);
  }
  return {
      200,
      kJson,
      nlohmann::json{{"partition", id}, {"readyState", virmgrpc::PartitionReadyState_Name(*state)}}.dump(),
      {}};
}

}  // namespace ipu::controllers
