#include "metrics/http_endpoints.h"

#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <cpprest/containerstream.h>
#include <cpprest/http_listener.h>

#include "common/log.h"

namespace ipu::metrics {
namespace {

using web::http::http_request;
using web::http::http_response;
using web::http::methods;
using web::http::experimental::listener::http_listener;

// cpprestsdk listens on a resolved host name; every IPv4 interface is 0.0.0.0.
std::string listenHost(const BindAddress& address) {
  return address.host.empty() ? "0.0.0.0" : address.host;
}

// As Kubernetes writes a pod's address: an IPv4 client reaching an IPv6 socket is "::ffff:10.0.0.7".
std::string clientAddress(std::string address) {
  constexpr std::string_view mapped = "::ffff:";
  if (address.starts_with(mapped) && address.find('.') != std::string::npos) address.erase(0, mapped.size());
  return address;
}

http_response toCppRest(HttpReply reply, bool withBody) {
  http_response response(static_cast<web::http::status_code>(reply.status));
  for (const auto& [name, value] : reply.headers) response.headers().add(name, value);
  if (withBody) {
    // Not set_body(std::string): that one reads a char stream buffer through an unsigned char one, which
    // UBSan reports. A byte vector's stream is unsigned char already.
    const auto length = reply.body.size();
    response.set_body(concurrency::streams::bytestream::open_istream(
                          std::vector<unsigned char>(reply.body.begin(), reply.body.end())),
                      length, reply.contentType);
  } else {
    response.headers().set_content_type(reply.contentType);  // HEAD: the headers GET would have, no body
  }
  return response;
}

// cpprestsdk keeps one process-wide table of listening host:ports, and when registering a listener on a
// host:port it already serves fails, it erases that entry: the server already there stops answering and
// cannot be closed. So the host:ports this process serves are claimed here first, and a second claim fails.
class HostPortClaim {
 public:
  explicit HostPortClaim(std::string hostPort) : hostPort_(std::move(hostPort)) {
    std::lock_guard lock(mutex());
    if (!claimed().insert(hostPort_).second) throw std::runtime_error("this process already serves it");
  }
  ~HostPortClaim() {
    std::lock_guard lock(mutex());
    claimed().erase(hostPort_);
  }
  HostPortClaim(const HostPortClaim&) = delete;
  HostPortClaim& operator=(const HostPortClaim&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex instance;
    return instance;
  }
  static std::set<std::string>& claimed() {
    static std::set<std::string> instance;
    return instance;
  }

  const std::string hostPort_;
};

}  // namespace

class HttpEndpoints::Listener {
 public:
  Listener(const std::string& hostPort, RequestHandler handler)
      : claim_(hostPort), handler_(std::move(handler)), listener_("http://" + hostPort + "/") {
    auto handle = [this](const http_request& request) { serve(request); };
    listener_.support(handle);
    // cpprestsdk answers OPTIONS and TRACE itself unless a handler is registered for them by name, and
    // TRACE echoes the request back (cross-site tracing); here they get a 405 like any other non-GET.
    listener_.support(methods::OPTIONS, handle);
    listener_.support(methods::TRCE, handle);
    listener_.open().wait();  // throws if it cannot listen
  }

  ~Listener() {
    // close() unregisters the listener under its write lock, which waits for running handlers to return.
    try {
      listener_.close().wait();
    } catch (const std::exception& e) {
      log::warning("closing the HTTP endpoints failed", {{"error", e.what()}});
    }
  }

  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

 private:
  void serve(const http_request& request) const {
    try {
      const auto& uri = request.request_uri();
      const bool head = request.method() == methods::HEAD;
      const auto authorization = request.headers().find(web::http::header_names::authorization);
      const HttpRequest asked{
          .method = request.method(),
          .path = uri.path(),
          .query = uri.query(),
          .authorization = authorization == request.headers().end() ? "" : authorization->second,
          .remoteAddress = clientAddress(request.remote_address())};
      http_response response = toCppRest(handler_(asked), !head);
      replyAndWait(request, response);
    } catch (const std::exception& e) {
      log::error("HTTP endpoint failed", {{"error", e.what()}});
    }
  }

  // close() waits only for running handlers, then stops cpprestsdk's server when it was the last listener; a
  // reply still being written then crashes inside cpprestsdk. So a handler returns only once its reply is
  // written (or the bound passes: a client that stops reading must not hold shutdown forever).
  static void replyAndWait(const http_request& request, const http_response& response) {
    auto written = std::make_shared<std::promise<void>>();
    auto done = written->get_future();
    // The reply's task fails if the client has gone; pplx raises SIGTRAP for a failed task nobody looked
    // at, so look at it.
    request.reply(response).then([written](const pplx::task<void>& sent) {
      try {
        sent.get();
      } catch (const std::exception& e) {
        log::debug("HTTP reply not sent", {{"error", e.what()}});
      }
      written->set_value();
    });
    if (done.wait_for(kReplyWriteBound) != std::future_status::ready) {
      log::warning("HTTP reply still unwritten; the handler returns without it",
                   {{"waitedSeconds", std::to_string(kReplyWriteBound.count())}});
    }
  }

  static constexpr std::chrono::seconds kReplyWriteBound{10};

  const HostPortClaim claim_;  // first: released only after the listener is closed and destroyed
  const RequestHandler handler_;
  http_listener listener_;
};

HttpEndpoints::HttpEndpoints(Key /*onlyFromStart*/, BindAddress address, RequestHandler handler)
    : address_(std::move(address)),
      listener_(std::make_unique<Listener>(listenHost(address_) + ":" + std::to_string(address_.port),
                                           std::move(handler))) {}

HttpEndpoints::~HttpEndpoints() = default;

std::string HttpEndpoints::url() const {
  return "http://" + listenHost(address_) + ":" + std::to_string(address_.port);
}

Result<std::unique_ptr<HttpEndpoints>> HttpEndpoints::start(const BindAddress& address,
                                                            RequestHandler handler, const std::string& what) {
  if (address.disabled) {
    return makeError(ErrorCode::kInvalidArgument, "the " + what + "'s bind address is \"0\" (disabled)");
  }
  if (address.host.find(':') != std::string::npos) {
    return makeError(ErrorCode::kInvalidArgument, "cannot listen on " + address.toString() +
                                                      ": cpprestsdk's listener does not support IPv6");
  }
  std::unique_ptr<HttpEndpoints> server;
  try {
    server = std::make_unique<HttpEndpoints>(Key(), address, std::move(handler));
  } catch (const std::exception& e) {
    return makeError(ErrorCode::kUnavailable, "cannot listen on " + address.toString() + ": " + e.what());
  }
  log::info("serving " + what, {{"address", server->url()}});
  return server;
}

Result<std::unique_ptr<HttpEndpoints>> HttpEndpoints::start(const BindAddress& address, Endpoints endpoints) {
  std::string served;
  for (const auto& [path, on] : {std::pair{"/metrics", endpoints.metrics != nullptr},
                                 std::pair{"/healthz", endpoints.healthz != nullptr},
                                 std::pair{"/readyz", endpoints.readyz != nullptr}}) {
    if (on) served += std::string(served.empty() ? "" : " ") + path;
  }
  return start(
      address,
      [endpoints](const HttpRequest& request) {
        return route(endpoints, request.method, request.path, request.query);
      },
      "HTTP endpoints " + served);
}

}  // namespace ipu::metrics
