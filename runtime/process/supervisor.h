#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "process/exit_status.h"
#include "process/spawn.h"

namespace ipu::runtime::process {

struct Supervised {
  ExitStatus status;
  std::chrono::steady_clock::duration ran{};
  std::string spawnError;  // set when the command could not be started (status.code 126/127)
  int lastForwardedSignal = 0;
};

// Runs `argv` as a child leading its own process group and waits for it, doing what PID 1 of a container
// must: SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 are passed on to the child's group (so a shell's
// children get them too), and every child that ends is reaped, the command's and orphans alike.
// `onStarted`, when set, is called with the child's pid once it runs, on this thread with those signals
// blocked (a thread it starts inherits the mask, so the signals still reach the supervisor).
Supervised supervise(const std::vector<std::string>& argv, const SpawnOptions& options = {},
                     const std::function<void(pid_t)>& onStarted = {});

}  // namespace ipu::runtime::process
