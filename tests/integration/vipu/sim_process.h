#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

namespace ipu::vipu::testing {

// Output and exit status of a finished command.
struct CommandResult {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

// Runs `argv` to completion (killed after `timeout`), capturing its output.
CommandResult runCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A vipu-sim process on 127.0.0.1, the real binary, for tests of the client over real gRPC.
// Its stderr (the call log) goes to a file the test can read; the destructor stops it.
class SimProcess {
 public:
  // Starts vipu-sim with `args` plus --listen 127.0.0.1:<port> (0 = any free port) and a port file, and waits
  // until it serves. Returns nullptr (with the log in `failure`) when it does not start.
  static std::unique_ptr<SimProcess> start(const std::string& workDirectory,
                                           const std::vector<std::string>& args, int port,
                                           std::string& failure);
  ~SimProcess();
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  // SIGTERM (graceful) or SIGKILL (crash); returns the exit status (128 + signal when killed).
  int stop(bool crash = false);
  std::string log() const;

  SimProcess(pid_t pid, int port, std::string logPath)
      : pid_(pid), port_(port), logPath_(std::move(logPath)) {}

 private:
  pid_t pid_;
  int port_;
  std::string logPath_;
};

std::string simBinary();
std::string ctlBinary();

}  // namespace ipu::vipu::testing
