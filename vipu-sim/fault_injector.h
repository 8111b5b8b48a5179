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
  double errorRate = 0.0;                 // share of other new partitions that go to PS_ERROR, in [0, 1]
  std::uint64_t seed = 1;                 // makes the failure sequence reproducible
};

// Decides which calls fail, so that clients' retry and error paths can be exercised on purpose. Thread-safe.
class FaultInjector {
 public:
  explicit FaultInjector(FaultOptions options = {}) : options_(std::move(options)), random_(options_.seed) {}

  std::chrono::milliseconds latency() const { return options_.latency; }
  bool failThisCreate();
  // Whether the partition being created goes to PS_ERROR: named by errorPartitions, or drawn at errorRate.
  bool faultThisPartition(const std::string& id);
  const FaultOptions& options() const { return options_; }

 private:
  bool draw(double rate);  // true with probability `rate`, from the seeded sequence

  const FaultOptions options_;
  std::mutex mutex_;
  std::mt19937_64 random_;
};

}  // namespace ipu::vipu::sim
