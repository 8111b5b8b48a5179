#include "process/supervisor.h"

#include <cerrno>

#include <poll.h>
#include <sys/wait.h>

#include "process/signals.h"

namespace ipu::runtime::process {
namespace {

std::vector<int> supervisedSignals() {
  std::vector<int> signals = forwardedSignals();
  signals.push_back(SIGCHLD);
  return signals;
}

// Reaps every child that has ended; true when `pid` was among them (its status in *status).
bool reapChildren(pid_t pid, ExitStatus* status) {
  bool ended = false;
  int waitStatus = 0;
  pid_t reaped;
  while ((reaped = waitpid(-1, &waitStatus, WNOHANG)) > 0) {
    if (reaped == pid) {
      *status = exitStatusFrom(waitStatus);
      ended = true;
    }
  }
  return ended;
}

}  // namespace

Supervised supervise(const std::vector<std::string>& argv, const SpawnOptions& options,
                     const std::function<void(pid_t)>& onStarted) {
  SignalFd signals(supervisedSignals());
  Supervised result;
  auto started = std::chrono::steady_clock::now();
  pid_t pid;
  try {
    pid = spawn(argv, options);
  } catch (const SpawnError& error) {
    result.status = {error.exitCode, 0};
    result.spawnError = error.what();
    return result;
  }
  pid_t group = options.newProcessGroup ? -pid : pid;
  if (onStarted) onStarted(pid);
  while (true) {
    pollfd wait{signals.fd(), POLLIN, 0};
    if (poll(&wait, 1, -1) < 0 && errno != EINTR) break;
    bool childEnded = false;
    for (int signal : signals.drain()) {
      if (signal == SIGCHLD) {
        childEnded = reapChildren(pid, &result.status) || childEnded;
      } else {
        kill(group, signal);
        result.lastForwardedSignal = signal;
      }
    }
    // A SIGCHLD that arrived before the mask took effect is not queued twice: reap once more to be sure.
    if (!childEnded) childEnded = reapChildren(pid, &result.status);
    if (childEnded) break;
  }
  result.ran = std::chrono::steady_clock::now() - started;
  return result;
}

}  // namespace ipu::runtime::process
