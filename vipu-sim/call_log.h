#pragma once

#include <chrono>
#include <mutex>
#include <ostream>
#include <string_view>

#include <grpcpp/support/status.h>

namespace ipu::vipu::sim {

// One line per call, so a test failure or an admin can see what vipu-sim was asked and what it answered:
//   2024-05-01T12:00:00.123Z CreatePartition id=job-0 size=16 -> OK (0.4 ms)
//   2024-05-01T12:00:00.200Z GetPartitionStatus id=nope -> NOT_FOUND: partition 'nope' not found (0.1 ms)
// Thread-safe: lines never interleave.
class CallLog {
 public:
  CallLog(std::ostream& out, bool enabled) : out_(out), enabled_(enabled) {}

  void record(std::string_view method, std::string_view arguments, const grpc::Status& status,
              std::chrono::steady_clock::duration duration);
  // Start-up and shutdown lines, same format without a result.
  void note(std::string_view message);

 private:
  std::ostream& out_;
  const bool enabled_;
  std::mutex mutex_;
};

std::string_view grpcCodeName(grpc::StatusCode code);

}  // namespace ipu::vipu::sim
