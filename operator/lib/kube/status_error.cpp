#include "kube/status_error.h"

#include <nlohmann/json.hpp>

namespace ipu::kube {
namespace {

// `object`'s string `key`; "" when it is absent or not a string (a Status from something that is not an API
// server must not make reading it throw).
std::string stringAt(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

ErrorCode codeFor(int status, const std::string& reason) {
  if (reason == "AlreadyExists") return ErrorCode::kAlreadyExists;
  if (reason == "Conflict") return ErrorCode::kConflict;
  if (reason == "Expired" || reason == "Gone") return ErrorCode::kGone;
  switch (status) {
    case 400:
      return ErrorCode::kInvalidArgument;
    case 401:
      return ErrorCode::kUnauthenticated;
    case 403:
      return ErrorCode::kPermissionDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 405:
      return ErrorCode::kInvalidArgument;
    case 409:
      return ErrorCode::kConflict;
    case 410:
      return ErrorCode::kGone;
    case 415:
      return ErrorCode::kInvalidArgument;
    case 422:
      return ErrorCode::kInvalidArgument;
    case 429:
      return ErrorCode::kResourceExhausted;
    case 504:
      return ErrorCode::kDeadlineExceeded;
    default:
      break;
  }
  if (status >= 500) return ErrorCode::kUnavailable;
  return ErrorCode::kInternal;
}

}  // namespace

Error errorFromResponse(const HttpResponse& response, const std::string& what) {
  Error error;
  error.httpStatus = response.status;
  std::string serverMessage;
  auto status = nlohmann::json::parse(response.body, nullptr, false);
  if (status.is_object() && stringAt(status, "kind") == "Status") {
    error.reason = stringAt(status, "reason");
    serverMessage = stringAt(status, "message");
    if (auto details = status.find("details"); details != status.end() && details->is_object()) {
      if (auto causes = details->find("causes"); causes != details->end() && causes->is_array()) {
        for (const auto& cause : *causes) {
          if (!cause.is_object()) continue;
          error.causes.push_back(
              {stringAt(cause, "field"), stringAt(cause, "message"), stringAt(cause, "reason")});
        }
      }
    }
  } else if (!response.body.empty()) {
    serverMessage = response.body.substr(0, 200);
  }
  error.code = codeFor(response.status, error.reason);
  error.message = what + ": HTTP " + std::to_string(response.status);
  if (!serverMessage.empty()) error.message += ": " + serverMessage;
  if (auto retryAfter = response.header("retry-after")) {
    try {
      long seconds = std::stol(*retryAfter);
      if (seconds >= 0) error.retryAfter = std::chrono::seconds(seconds);
    } catch (const std::exception&) {
      // An HTTP date or garbage: fall back to our own backoff.
    }
  }
  return error;
}

}  // namespace ipu::kube
