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

// Error::reason of a response whose body was larger than the transport reads (TransportOptions): the
// request succeeded, its answer is not held. Asking again gets the same answer; ask for less (a smaller
// page).
inline constexpr const char* kBodyTooLarge = "BodyTooLarge";

// One line of a streamed body. A line longer than the stream's cap is not held: `text` is its first
// kOversizedLinePrefix bytes (enough for the metadata of a Kubernetes object) and `bytes` its real length.
struct StreamLine {
  std::string_view text;
  std::size_t bytes = 0;
  bool cut() const { return bytes > text.size(); }
};
inline constexpr std::size_t kOversizedLinePrefix = 16 * 1024;

// Called for each complete line of a streamed body; returning false stops reading.
using LineHandler = std::function<bool(const StreamLine& line)>;

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

// Splits arriving chunks into lines (without the '\n'; a trailing '\r' is dropped too). A line longer than
// `maxLineBytes` is counted, not kept: past its prefix its bytes are dropped as they arrive.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t maxLineBytes = std::string::npos) : maxLineBytes_(maxLineBytes) {}
  // Feeds a chunk; calls onLine per complete line. Returns false if the handler asked to stop.
  bool feed(std::string_view chunk, const LineHandler& onLine);
  bool hasPartialLine() const { return lineBytes_ > 0; }

 private:
  void take(std::string_view part);

  std::size_t maxLineBytes_;
  std::string pending_;
  std::size_t lineBytes_ = 0;  // of the line being read, held or not
};

}  // namespace ipu::kube
