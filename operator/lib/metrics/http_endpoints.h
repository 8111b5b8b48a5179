#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "metrics/bind_address.h"
#include "metrics/endpoint_router.h"

namespace ipu::metrics {

// An HTTP server for /metrics, /healthz and /readyz (whichever `Endpoints` names), or for any handler, on
// cpprestsdk's listener. Listening starts in start() and stops in the destructor, which returns only once no
// request handler is running any more: after it, nothing `Endpoints` (or the handler) points to is touched
// again.
//
// Limitation: cpprestsdk's listener splits "host:port" at the first colon, so it cannot listen on an IPv6
// address; start() refuses one with InvalidArgument rather than fail obscurely. ":port" listens on every
// IPv4 interface (0.0.0.0).
class HttpEndpoints {
 public:
  // InvalidArgument for a disabled or IPv6 address; Unavailable when it cannot listen (port in use, a host
  // name that does not resolve to a local address).
  static Result<std::unique_ptr<HttpEndpoints>> start(const BindAddress& address, Endpoints endpoints);
  // The same for a server of its own (the POD map page): every request goes to `handler`; `what` names the
  // server in logs.
  static Result<std::unique_ptr<HttpEndpoints>> start(const BindAddress& address, RequestHandler handler,
                                                      const std::string& what);

  // Only start() can make the key: a constructor that throws is kept away from callers.
  class Key {
    friend class HttpEndpoints;
    Key() = default;
  };
  HttpEndpoints(Key, BindAddress address, RequestHandler handler);
  ~HttpEndpoints();
  HttpEndpoints(const HttpEndpoints&) = delete;
  HttpEndpoints& operator=(const HttpEndpoints&) = delete;

  const BindAddress& address() const { return address_; }
  // "http://127.0.0.1:8081", for logs.
  std::string url() const;

 private:
  class Listener;  // keeps cpprestsdk out of this header

  const BindAddress address_;
  std::unique_ptr<Listener> listener_;
};

}  // namespace ipu::metrics
