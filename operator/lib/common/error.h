#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ipu {

// What went wrong, in terms a caller can act on. Kubernetes HTTP statuses and gRPC status codes both map
// onto these, so one switch (retryClassOf) decides whether and how to retry, whatever the peer.
enum class ErrorCode {
  kCancelled,           // the caller gave up (shutdown, cancellation token)
  kInvalidArgument,     // 400/422, gRPC INVALID_ARGUMENT: the request can never succeed as written
  kNotFound,            // 404, gRPC NOT_FOUND
  kAlreadyExists,       // 409 AlreadyExists, gRPC ALREADY_EXISTS
  kConflict,            // 409 Conflict (stale resourceVersion), gRPC ABORTED: re-read and retry
  kGone,                // 410: the resourceVersion or continue token expired: relist
  kUnauthenticated,     // 401, gRPC UNAUTHENTICATED
  kPermissionDenied,    // 403, gRPC PERMISSION_DENIED
  kResourceExhausted,   // 429, gRPC RESOURCE_EXHAUSTED: back off (honour retryAfter)
  kFailedPrecondition,  // the system is not in a state to do this now; wait for it to change
  kUnavailable,         // 5xx, connection refused/reset, gRPC UNAVAILABLE
  kDeadlineExceeded,    // timeout
  kInternal,            // a bug or a malformed reply from a peer
};

// How a controller should treat an error: this is the requeue decision.
enum class RetryClass {
  kTransient,  // retry with backoff
  kConflict,   // re-read the object and retry at once
  kGone,       // drop cached state and relist
  kNotFound,   // the object is gone: usually nothing left to do
  kTerminal,   // retrying cannot help: report it
};

// One reason a request was invalid, as the Kubernetes API server lists them (Status.details.causes).
struct FieldCause {
  std::string field;    // e.g. "spec.ipusPerJobInstance"
  std::string message;  // e.g. "must be a power of two"
  std::string reason;   // e.g. "FieldValueInvalid"
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  // Set when the peer said how long to wait (HTTP Retry-After).
  std::optional<std::chrono::seconds> retryAfter;
  // From an HTTP peer: the status code and Kubernetes' machine-readable reason ("AlreadyExists", "Expired").
  int httpStatus = 0;
  std::string reason;
  std::vector<FieldCause> causes;

  RetryClass retryClass() const;
  // "NotFound: configmaps \"x\" not found": the code's name, then the message.
  std::string toString() const;
};

std::string_view toString(ErrorCode code);
RetryClass retryClassOf(ErrorCode code);

}  // namespace ipu
