#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::kubectl_ipu {

using Json = nlohmann::json;

// One worker pod of a job, as `kubectl ipu logs` reads it. Pure parts of the command (logs_command.h does the
// reading).
struct WorkerPod {
  std::string name;
  std::string uid;
  int attempt = 0;        // graphcore.ai/attempt: the job's restart count when the pod was made
  int instance = 0;       // graphcore.ai/job-instance
  int worker = 0;         // graphcore.ai/worker-index
  std::string container;  // the worker container: the first of the pod
  bool started = false;   // the worker container runs or has run: its log can be read
  bool finished = false;  // it has terminated
  bool deleting = false;
};

// The pods in `pods` (a PodList's items) that are workers of the job with uid `jobUid`: a controller owner
// reference to it and the operator's labels; by attempt, then worker index.
std::vector<WorkerPod> workerPodsOf(const std::string& jobUid, const Json& pods);

// "a1 i0 w3 | ": attempt, instance and worker, before each line.
std::string linePrefix(const WorkerPod& pod);

// A log line as the API server gives it with timestamps=true: "<RFC 3339 with nanoseconds> <text>".
struct LogLine {
  std::chrono::system_clock::time_point time;
  std::string text;
};
// nullopt when the line does not start with a timestamp.
std::optional<LogLine> parseLogLine(std::string_view line);

// Lines of several workers in time order (stable: a worker's own lines keep their order), each with its
// worker's prefix.
std::string mergeLogs(const std::vector<std::pair<WorkerPod, std::vector<LogLine>>>& workers);

}  // namespace ipu::kubectl_ipu
