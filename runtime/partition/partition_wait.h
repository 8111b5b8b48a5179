#pragma once

// Before a worker's command runs, its V-IPU partition must be active: the operator creates the pods while
// the partition activates (so the kubelet's start of the pod and V-IPU's activation overlap), and the
// runtime asks the operator's V-IPU proxy, over HTTP, until the proxy says the partition is active. The
// proxy answers a pod only about its own job's partitions.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ipu::runtime::partition {

// IPU_RUNTIME_PARTITION_STATUS_URL: "http://HOST:PORT/PATH" (HOST a name, an IPv4 address or a bracketed
// IPv6 one). nullopt for anything else: no https, no user info, no query or fragment. Pure.
struct StatusUrl {
  std::string host;
  int port = 80;
  std::string path;
  bool operator==(const StatusUrl&) const = default;
};
std::optional<StatusUrl> parseStatusUrl(std::string_view text);

// What one reply of the proxy says. Pure: `reply` is the whole HTTP response as read.
struct StatusAnswer {
  bool active = false;
  // For the log: the partition's state ("PS_PENDING"), or the HTTP status and the proxy's message.
  std::string detail;
};
StatusAnswer readStatusReply(std::string_view reply);

// The request sent for `url`. Pure.
std::string statusRequest(const StatusUrl& url);

struct WaitOptions {
  StatusUrl url;
  std::string partition;  // for the log only
  std::chrono::seconds timeout{600};
};

struct WaitOutcome {
  enum class Kind { kActive, kTimedOut, kStopped };
  Kind kind = Kind::kActive;
  std::string lastAnswer;  // what the proxy said last (kTimedOut: why the partition never was active)
  int signal = 0;          // kStopped: the signal that ended the wait
  std::chrono::milliseconds waited{0};
};

// Asks until the partition is active (the first question at once, then after 50 ms, doubling to 1 s), the
// timeout passes, or SIGTERM/SIGINT arrives (the pod deleted: the runtime is PID 1, which no default
// disposition ends). Logs the first answer and every change of it on stderr.
WaitOutcome waitUntilActive(const WaitOptions& options);

}  // namespace ipu::runtime::partition
