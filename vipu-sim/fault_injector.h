#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>

namespace ipu::vipu::sim {

struct FaultOptions {
  std::chrono::milliseconds latency{0};  // added to every call
  double createFailureRate = 0.0;  // share of CreatePartition calls that fail with UNAVAILABLE, in [0, 1]
  std::set<std::string> errorPartitions;  // these partition ids go to PS_ERROR instead of PS_ACTIVE
  std::uint64_t seed = 1;                 // makes the failure sequence reproducible
};

// Decides which calls fail, so that clients' retry and error paths can be exercised on purpose. Thread-safe.
class FaultInjector {
 public:
  explicit FaultInjector(FaultOptions options = {}) : options_(std::move(options)), random_(options_.seed) {}

  std::chrono::milliseconds latency() const { return options_.latency; }
  bool failThisCreate();
  bool isErrorPartition(const std::string& id) const { return options_.errorPartitions.count(id) != 0; }
  const FaultOptions& options() const { return options_; }

 private:
  const FaultOptions options_;
  std::mutex mutex_;
  std::mt19937_64 random_;
};

}  // namespace ipu::vipu::sim
