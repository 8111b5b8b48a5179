#pragma once

#include <string_view>

#include <grpcpp/support/status.h>

#include "common/error.h"
#include "common/result.h"

namespace ipu::vipu {

// gRPC status codes <-> the operator's ErrorCode, so one switch (retryClassOf) decides retries whatever the
// peer.
ErrorCode errorCodeFromGrpc(grpc::StatusCode code);
grpc::StatusCode grpcCodeFromError(ErrorCode code);

// "<context>: <the peer's message>" with the mapped code.
Error errorFromGrpc(const grpc::Status& status, std::string_view context);
grpc::Status grpcStatusFromError(const Error& error);

}  // namespace ipu::vipu
