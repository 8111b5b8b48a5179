#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "process/exit_status.h"

namespace ipu::runtime::process {

struct SpawnError : std::runtime_error {
  SpawnError(const std::string& message, int code) : std::runtime_error(message), exitCode(code) {}
  int exitCode;  // what a shell would report: 127 not found, 126 not executable
};

struct SpawnOptions {
  // File descriptors for the child's stdin/stdout/stderr; -1 keeps the parent's.
  int stdinFd = -1;
  int stdoutFd = -1;
  int stderrFd = -1;
  // Variables set (or replaced) in the child's environment on top of the parent's.
  std::vector<std::pair<std::string, std::string>> environment;
  // The child leads a process group of its own, so a forwarded signal reaches everything it starts.
  bool newProcessGroup = true;
};

// fork + execvp, reporting a failed exec to the caller as a SpawnError (through a close-on-exec pipe) rather
// than as an exit code of a child that never ran.
pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

ExitStatus exitStatusFrom(int waitStatus);

// Whether `name` is an executable file on PATH (or a path to one).
bool onPath(const std::string& name);

}  // namespace ipu::runtime::process
