#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace ipu::testing {

struct RunResult {
  int exitCode = -1;      // the process's exit status, or 128 + signal if it was killed
  bool timedOut = false;  // killed because it ran past the timeout
  std::string out;
  std::string err;

  bool ok() const { return exitCode == 0 && !timedOut; }
  // "exit 3: <stderr>" for assertion messages.
  std::string describe() const;
};

struct RunOptions {
  std::string input;  // written to the child's stdin, then closed
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  std::vector<std::string>
      extraEnv;  // "NAME=value" added to the inherited environment, replacing a variable of that name
};

// Runs argv[0] (looked up in PATH) to completion and captures its output. Never goes through a shell,
// so arguments need no quoting.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// A child that runs while the test goes on, such as `kubectl get --watch`. Its stdout is read line by
// line; stderr goes to a file so it can be shown when a test fails. Killed (with its process group) and
// reaped on destruction.
class BackgroundProcess {
 public:
  // extraEnv: "NAME=value" added to the inherited environment, replacing a variable of that name.
  explicit BackgroundProcess(const std::vector<std::string>& argv,
                             const std::vector<std::string>& extraEnv = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // The next complete stdout line, or nullopt at end of output or when the timeout passes.
  std::optional<std::string> readLine(std::chrono::milliseconds timeout);
  std::string stderrText() const;
  pid_t pid() const { return pid_; }
  // Stops the child (SIGTERM, then SIGKILL) and returns its exit status (128 + signal if killed).
  int stop();
  // Waits for the child to end by itself: its exit status (128 + signal if killed), or nullopt when the
  // timeout passes first (the child keeps running).
  std::optional<int> wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int stdoutFd_ = -1;
  std::string stderrPath_;
  std::string buffer_;
  bool eof_ = false;
  std::optional<int> exitStatus_;
};

}  // namespace ipu::testing
