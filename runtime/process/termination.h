#pragma once

#include <chrono>
#include <string>

#include "process/exit_status.h"

namespace ipu::runtime::process {

// Kubernetes reads at most 4096 bytes of a termination message; ours stays well inside it.
inline constexpr std::size_t kMaxTerminationMessage = 1024;

struct TerminationFacts {
  std::string worker;    // the pod's name or host name
  std::string instance;  // the job instance's index, as the operator set it
  std::string what;      // the command, shortened for the message
  ExitStatus status;
  std::chrono::steady_clock::duration ran{};
  std::string detail;  // why, when the runtime knows more than the code (a peer lost, a command not found)
};

// `text` cut to at most `max` characters, ending in "..." when it was cut (max >= 3).
std::string shortened(const std::string& text, std::size_t max);

// One line for the job's status, e.g.
//   "instance 0 (job-worker-0): python3 train.py exited with code 3 after 12.4 s"
//   "instance 1 (job-worker-2): mpirun killed by signal 9 (SIGKILL) after 3.0 s: peer job-worker-3.job lost"
std::string terminationMessage(const TerminationFacts& facts);

// Writes the message where the container's terminationMessagePath says (best effort: a read-only or missing
// path must not change the command's outcome). Empty path: nothing.
void writeTerminationMessage(const std::string& path, const std::string& message);

}  // namespace ipu::runtime::process
