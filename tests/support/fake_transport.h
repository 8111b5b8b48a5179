#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "kube/transport.h"

namespace ipu::testing {

// A Transport that plays a script: each expected request (method + exact path and query) with the reply
// to give. Anything not in the script, or out of order, is an error that fails the test through
// unexpected(); a script left unfinished shows in remaining().
class FakeTransport final : public kube::Transport {
 public:
  struct Step {
    std::string method;
    std::string pathAndQuery;
    // For send(), and for stream() when status is not 2xx.
    kube::HttpResponse response;
    // For stream() with a 2xx status: the body in the chunks it arrives in.
    std::vector<std::string> chunks;
    // Instead of a response: a transport failure (a refused connection, a timeout).
    std::optional<Error> failure;
    // Filled in when the step is played: what was sent.
    kube::HttpRequest seen;
  };

  // Replies `status` with `body` to the request.
  FakeTransport& expect(std::string method, std::string pathAndQuery, int status, std::string body,
                        std::map<std::string, std::string> headers = {});
  // Streams the chunks as a 200 response to the request.
  FakeTransport& expectStream(std::string pathAndQuery, std::vector<std::string> chunks);
  FakeTransport& expectFailure(std::string method, std::string pathAndQuery, Error failure);

  Result<kube::HttpResponse> send(const kube::HttpRequest& request, std::stop_token stop = {}) override;
  Result<kube::HttpResponse> stream(const kube::HttpRequest& request, const kube::LineHandler& onLine,
                                    std::stop_token stop = {}) override;

  // Lines of streams longer than this reach the handler cut, as the real transport's maxLineBytes does.
  std::size_t maxLineBytes = std::string::npos;

  std::vector<std::string> unexpected() const;
  size_t remaining() const;
  // The requests played so far, in order.
  std::vector<Step> played() const;

 private:
  Result<Step> next(const kube::HttpRequest& request);

  mutable std::mutex mutex_;
  std::deque<Step> script_;
  std::vector<Step> played_;
  std::vector<std::string> unexpected_;
};

}  // namespace ipu::testing
