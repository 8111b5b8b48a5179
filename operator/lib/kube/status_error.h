#pragma once

#include "common/error.h"
#include "kube/transport.h"

namespace ipu::kube {

// The Error for a non-2xx response: code from the HTTP status and the Status body's reason, the server's
// message, field causes of an Invalid, and Retry-After. A body that is not a Status (a proxy's HTML page)
// still gives a sensible error.
Error errorFromResponse(const HttpResponse& response, const std::string& what);

}  // namespace ipu::kube
