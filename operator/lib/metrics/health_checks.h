#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace ipu::metrics {

// One named condition a probe asks about ("informers-synced", "leader-election"); an Error's message says
// what is wrong. Runs on an HTTP thread, possibly on several at once: it must be thread-safe and quick.
using HealthCheck = std::function<Status()>;

// The checks behind one probe endpoint, reported the way Kubernetes' own /healthz and /readyz do
// (k8s.io/apiserver/pkg/server/healthz):
//
//   all pass           "ok"
//   all pass, verbose  "[+]a ok\n[+]b ok\nreadyz check passed\n"
//   some fail          "[-]b failed: <message>\nreadyz check failed\n"  (verbose: the [+] lines as well)
//
// Unlike the API server, failures carry their message rather than "reason withheld": this endpoint is for
// the kubelet and the people debugging the operator, and says nothing secret. Thread-safe: checks may be
// added while the endpoint is serving.
class HealthChecks {
 public:
  // `endpoint`: "healthz" or "readyz", the word on the report's last line.
  explicit HealthChecks(std::string endpoint);

  // `name`: letters, digits, '-', '_' and '.', unique. std::invalid_argument otherwise, or for an empty
  // check.
  void add(std::string name, HealthCheck check);

  struct Report {
    bool passed = true;
    std::string text;
  };
  // Runs every check in the order added. A check that throws has failed, with the exception's message.
  Report run(bool verbose) const;

 private:
  const std::string endpoint_;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, HealthCheck>> checks_;
};

}  // namespace ipu::metrics
