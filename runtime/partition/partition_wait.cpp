#include "partition/partition_wait.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "contract/runtime_contract.h"
#include "net/socket.h"
#include "process/signals.h"

namespace ipu::runtime::partition {
namespace {

using Clock = std::chrono::steady_clock;

// The proxy knows a pod once the operator has seen its address, tens of milliseconds after it starts: ask
// again soon, then twice as long each time.
constexpr std::chrono::milliseconds kFirstRetry{20};
constexpr std::chrono::milliseconds kLongestRetry{1000};
constexpr std::chrono::milliseconds kConnectTimeout{2000};
constexpr std::chrono::milliseconds kRequestTimeout{5000};
// A reply is a few hundred bytes; more is not the proxy.
constexpr std::size_t kLongestReply = 64 * 1024;

// The reply's body, once its headers and as much of the body as Content-Length names have arrived.
bool complete(std::string_view reply) {
  const auto end = reply.find("\r\n\r\n");
  if (end == std::string_view::npos) return false;
  std::string headers(reply.substr(0, end));
  std::transform(headers.begin(), headers.end(), headers.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto at = headers.find("\r\ncontent-length:");
  if (at == std::string::npos) return false;  // read until the proxy closes
  std::size_t length = 0;
  std::string_view value = std::string_view(headers).substr(at + 17);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  std::from_chars(value.data(), value.data() + value.size(), length);
  return reply.size() >= end + 4 + length;
}

// One question: the whole reply, or what went wrong as a NetError.
std::string ask(const StatusUrl& url) {
  net::Fd fd = net::connectTcp(url.host, url.port, kConnectTimeout);
  const std::string request = statusRequest(url);
  const auto deadline = Clock::now() + kRequestTimeout;
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw net::NetError("cannot send the request to " + url.host);
    sent += static_cast<std::size_t>(n);
  }
  std::string reply;
  char buffer[4096];
  while (reply.size() < kLongestReply && !complete(reply)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) throw net::NetError("no reply from " + url.host + " within 5 s");
    pollfd wait{fd.get(), POLLIN, 0};
    const int ready = ::poll(&wait, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw net::NetError("the reply from " + url.host + " broke off");
    if (n == 0) break;  // the proxy closed: the reply is whole
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  return reply;
}

}  // namespace

std::optional<StatusUrl> parseStatusUrl(std::string_view text) {
  constexpr std::string_view scheme = "http://";
  if (!text.starts_with(scheme)) return std::nullopt;
  text.remove_prefix(scheme.size());
  const auto slash = text.find('/');
  std::string_view authority = text.substr(0, slash);
  StatusUrl url;
  url.path = slash == std::string_view::npos ? "/" : std::string(text.substr(slash));
  if (url.path.find_first_of("?# \r\n") != std::string::npos) return std::nullopt;
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return std::nullopt;
    if (!rest.empty()) port = rest.substr(1);
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || host.find_first_of(" \r\n") != std::string_view::npos) return std::nullopt;
  url.host = std::string(host);
  if (!port.empty() || authority.back() == ':') {
    const auto number = contract::portFrom(port);
    if (!number) return std::nullopt;
    url.port = *number;
  }
  return url;
}

std::string statusRequest(const StatusUrl& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  const std::string host = (v6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
  return "GET " + url.path + " HTTP/1.1\r\nHost: " + host +
         "\r\nAccept: application/json\r\nUser-Agent: ipu-runtime\r\nConnection: close\r\n\r\n";
}

StatusAnswer readStatusReply(std::string_view reply) {
  const auto lineEnd = reply.find("\r\n");
  const std::string_view statusLine = reply.substr(0, lineEnd);
  // "HTTP/1.1 200 OK"
  const auto space = statusLine.find(' ');
  if (!statusLine.starts_with("HTTP/") || space == std::string_view::npos)
    return {false, "not an HTTP reply"};
  const std::string_view code = statusLine.substr(space + 1, 3);
  const auto bodyAt = reply.find("\r\n\r\n");
  const std::string_view body = bodyAt == std::string_view::npos ? "" : reply.substr(bodyAt + 4);
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const auto text = [&parsed](const char* key) -> std::string {
    if (!parsed.is_object()) return "";
    const auto found = parsed.find(key);
    return found != parsed.end() && found->is_string() ? found->get<std::string>() : "";
  };
  if (code != "200") {
    const std::string message = text("message");
    return {false, "HTTP " + std::string(code) + (message.empty() ? "" : ": " + message)};
  }
  const std::string state = text("readyState");
  if (state.empty()) return {false, "a reply without the partition's readyState"};
  return {state == "PS_ACTIVE", state};
}

WaitOutcome waitUntilActive(const WaitOptions& options) {
  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  process::SignalFd signals({SIGTERM, SIGINT});
  WaitOutcome outcome;
  std::chrono::milliseconds retry = kFirstRetry;
  const auto elapsed = [&start] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  };
  for (;;) {
    StatusAnswer answer;
    try {
      answer = readStatusReply(ask(options.url));
    } catch (const std::exception& error) {
      answer = {false, error.what()};
    }
    if (answer.detail != outcome.lastAnswer) {
      if (answer.active && !outcome.lastAnswer.empty()) {
        std::fprintf(stderr, "ipu-runtime: V-IPU partition %s is active after %.2f s\n",
                     options.partition.c_str(), static_cast<double>(elapsed().count()) / 1000);
      } else if (!answer.active) {
        std::fprintf(stderr, "ipu-runtime: waiting for V-IPU partition %s to be active (%s)\n",
                     options.partition.c_str(), answer.detail.c_str());
      }
      outcome.lastAnswer = answer.detail;
    }
    if (answer.active) {
      outcome.kind = WaitOutcome::Kind::kActive;
      outcome.waited = elapsed();
      return outcome;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      outcome.kind = WaitOutcome::Kind::kTimedOut;
      outcome.waited = elapsed();
      return outcome;
    }
    const auto sleep = std::min<std::chrono::milliseconds>(
        retry, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
    pollfd wait{signals.fd(), POLLIN, 0};
    if (::poll(&wait, 1, static_cast<int>(sleep.count())) > 0) {
      for (const int signal : signals.drain()) {
        outcome.kind = WaitOutcome::Kind::kStopped;
        outcome.signal = signal;
        outcome.waited = elapsed();
        return outcome;
      }
    }
    retry = std::min(retry * 2, kLongestRetry);
  }
}

}  // namespace ipu::runtime::partition
