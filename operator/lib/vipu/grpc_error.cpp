#include "vipu/grpc_error.h"

#include <string>

namespace ipu::vipu {

ErrorCode errorCodeFromGrpc(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED:
      return ErrorCode::kCancelled;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return ErrorCode::kInvalidArgument;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return ErrorCode::kDeadlineExceeded;
    case grpc::StatusCode::NOT_FOUND:
      return ErrorCode::kNotFound;
    case grpc::StatusCode::ALREADY_EXISTS:
      return ErrorCode::kAlreadyExists;
    case grpc::StatusCode::PERMISSION_DENIED:
      return ErrorCode::kPermissionDenied;
    case grpc::StatusCode::UNAUTHENTICATED:
      return ErrorCode::kUnauthenticated;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ErrorCode::kResourceExhausted;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return ErrorCode::kFailedPrecondition;
    case grpc::StatusCode::ABORTED:
      return ErrorCode::kConflict;
    case grpc::StatusCode::UNAVAILABLE:
      return ErrorCode::kUnavailable;
    case grpc::StatusCode::OK:  // an OK status is never an error; treat a caller's mistake as a bug
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::UNIMPLEMENTED:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::DATA_LOSS:
    default:
      return ErrorCode::kInternal;
  }
}

grpc::StatusCode grpcCodeFromError(ErrorCode code) {
  switch (code) {
    case ErrorCode::kCancelled:
      return grpc::StatusCode::CANCELLED;
    case ErrorCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::kConflict:
      return grpc::StatusCode::ABORTED;
    case ErrorCode::kGone:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::kUnauthenticated:
      return grpc::StatusCode::UNAUTHENTICATED;
    case ErrorCode::kPermissionDenied:
      return grpc::StatusCode::PERMISSION_DENIED;
    case ErrorCode::kResourceExhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ErrorCode::kInternal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

Error errorFromGrpc(const grpc::Status& status, std::string_view context) {
  std::string message(context);
  if (!status.error_message().empty()) message += ": " + status.error_message();
  return makeError(errorCodeFromGrpc(status.error_code()), std::move(message));
}

grpc::Status grpcStatusFromError(const Error& error) {
  return grpc::Status(grpcCodeFromError(error.code), error.message);
}

}  // namespace ipu::vipu
