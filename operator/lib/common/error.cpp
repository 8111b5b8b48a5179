#include "common/error.h"

namespace ipu {

std::string_view toString(ErrorCode code) {
  switch (code) {
    case ErrorCode::kCancelled:
      return "Cancelled";
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kAlreadyExists:
      return "AlreadyExists";
    case ErrorCode::kConflict:
      return "Conflict";
    case ErrorCode::kGone:
      return "Gone";
    case ErrorCode::kUnauthenticated:
      return "Unauthenticated";
    case ErrorCode::kPermissionDenied:
      return "PermissionDenied";
    case ErrorCode::kResourceExhausted:
      return "ResourceExhausted";
    case ErrorCode::kFailedPrecondition:
      return "FailedPrecondition";
    case ErrorCode::kUnavailable:
      return "Unavailable";
    case ErrorCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case ErrorCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

RetryClass retryClassOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kResourceExhausted:
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kFailedPrecondition:
      return RetryClass::kTransient;
    case ErrorCode::kConflict:
      return RetryClass::kConflict;
    case ErrorCode::kGone:
      return RetryClass::kGone;
    case ErrorCode::kNotFound:
      return RetryClass::kNotFound;
    case ErrorCode::kCancelled:
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kUnauthenticated:
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kInternal:
      return RetryClass::kTerminal;
  }
  return RetryClass::kTerminal;
}

RetryClass Error::retryClass() const {
  return retryClassOf(code);
}

std::string Error::toString() const {
  std::string out{ipu::toString(code)};
  if (!message.empty()) out += ": " + message;
  return out;
}

}  // namespace ipu
