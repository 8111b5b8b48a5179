#include "fake_transport.h"

namespace ipu::testing {

FakeTransport& FakeTransport::expect(std::string method, std::string pathAndQuery, int status,
                                     std::string body, std::map<std::string, std::string> headers) {
  std::lock_guard lock(mutex_);
  script_.push_back(Step{
      std::move(method), std::move(pathAndQuery), {status, std::move(headers), std::move(body)}, {}, {}, {}});
  return *this;
}

FakeTransport& FakeTransport::expectStream(std::string pathAndQuery, std::vector<std::string> chunks) {
  std::lock_guard lock(mutex_);
  script_.push_back(Step{"GET", std::move(pathAndQuery), {200, {}, ""}, std::move(chunks), {}, {}});
  return *this;
}

FakeTransport& FakeTransport::expectFailure(std::string method, std::string pathAndQuery, Error failure) {
  std::lock_guard lock(mutex_);
  script_.push_back(Step{std::move(method), std::move(pathAndQuery), {}, {}, std::move(failure), {}});
  return *this;
}

Result<FakeTransport::Step> FakeTransport::next(const kube::HttpRequest& request) {
  std::lock_guard lock(mutex_);
  std::string sent = request.method + " " + request.pathAndQuery;
  if (script_.empty()) {
    unexpected_.push_back(sent + " (the script had ended)");
    return makeError(ErrorCode::kInternal, "unexpected request " + sent);
  }
  Step step = std::move(script_.front());
  script_.pop_front();
  if (step.method != request.method || step.pathAndQuery != request.pathAndQuery) {
    unexpected_.push_back(sent + " (expected " + step.method + " " + step.pathAndQuery + ")");
    return makeError(ErrorCode::kInternal, "unexpected request " + sent);
  }
  step.seen = request;
  played_.push_back(step);
  return step;
}

Result<kube::HttpResponse> FakeTransport::send(const kube::HttpRequest& request, std::stop_token) {
  auto step = next(request);
  if (!step) return step.error();
  if (step->failure) return *step->failure;
  return step->response;
}

Result<kube::HttpResponse> FakeTransport::stream(const kube::HttpRequest& request,
                                                 const kube::LineHandler& onLine, std::stop_token stop) {
  auto step = next(request);
  if (!step) return step.error();
  if (step->failure) return *step->failure;
  if (step->response.status < 200 || step->response.status > 299) return step->response;
  kube::LineSplitter lines(maxLineBytes);
  for (const auto& chunk : step->chunks) {
    if (stop.stop_requested()) return makeError(ErrorCode::kCancelled, "cancelled");
    if (!lines.feed(chunk, onLine)) return kube::HttpResponse{step->response.status, {}, ""};
  }
  if (lines.hasPartialLine())
    return makeError(ErrorCode::kUnavailable, "the stream was cut in the middle of a line");
  return kube::HttpResponse{step->response.status, {}, ""};
}

std::vector<std::string> FakeTransport::unexpected() const {
  std::lock_guard lock(mutex_);
  return unexpected_;
}

size_t FakeTransport::remaining() const {
  std::lock_guard lock(mutex_);
  return script_.size();
}

std::vector<FakeTransport::Step> FakeTransport::played() const {
  std::lock_guard lock(mutex_);
  return played_;
}

}  // namespace ipu::testing
