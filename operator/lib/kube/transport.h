#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/result.h"

namespace ipu::kube {

struct HttpRequest {
  std::string method;        // GET, POST, PUT, PATCH, DELETE
  std::string pathAndQuery;  // "/api/v1/namespaces/ns/pods?limit=500", already escaped
  std::map<std::string, std::string> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::optional<std::string> header(const std::string& lowerCaseName) const;
};

// Error::reason of a transport failure that happened before the request could reach the server (no
// connection, TLS handshake failed, the request could not be written on a pooled connection the server had
// closed): safe to retry even for requests that are not idempotent.
inline constexpr const char* kRequestNotSent = "RequestNotSent";

// Called for each complete line of a streamed body; returning false stops reading.
using LineHandler = std::function<bool(std::string_view line)>;

// One HTTP exchange with the API server. Everything a library might throw stays behind this interface:
// network failures come back as Errors (Unavailable, DeadlineExceeded, Cancelled), HTTP errors as responses.
class Transport {
 public:
  virtual ~Transport() = default;

  virtual Result<HttpResponse> send(const HttpRequest& request, std::stop_token stop = {}) = 0;

  // For watches. A 2xx response's body is handed over line by line as it arrives, until it ends (the
  // response is returned with an empty body), the handler returns false, `stop` is requested (Cancelled),
  // no byte arrives within the stream idle timeout (DeadlineExceeded), or the connection drops: a body
  // that ends inside a line is a cut stream (Unavailable) and the partial line is not delivered.
  // A non-2xx response is returned whole, with no lines delivered.
  virtual Result<HttpResponse> stream(const HttpRequest& request, const LineHandler& onLine,
                                      std::stop_token stop = {}) = 0;
};

// Splits arriving chunks into lines (without the '\n'; a trailing '\r' is dropped too).
class LineSplitter {
 public:
  // Feeds a chunk; calls onLine per complete line. Returns false if the handler asked to stop.
  bool feed(std::string_view chunk, const LineHandler& onLine);
  bool hasPartialLine() const { return !pending_.empty(); }

 private:
  std::string pending_;
};

}  // namespace ipu::kube
