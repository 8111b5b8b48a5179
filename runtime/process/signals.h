#pragma once

#include <csignal>
#include <initializer_list>
#include <vector>

// Signals as file-descriptor events: the runtime's loops wait on poll() for sockets, pipes and signals at
// once, with no handler running at an arbitrary point.
namespace ipu::runtime::process {

// The signals a supervisor passes on to the process it runs (what a container runtime or a user sends).
const std::vector<int>& forwardedSignals();

// Blocks the signals for this thread for its lifetime and reads them from a signalfd. Children made with
// spawn() start with the mask the process had before (restoreChildSignals).
class SignalFd {
 public:
  explicit SignalFd(std::initializer_list<int> signals);
  explicit SignalFd(const std::vector<int>& signals);
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;
  ~SignalFd();

  int fd() const { return fd_; }
  // The signals that arrived since the last call (each pending one once); empty when none.
  std::vector<int> drain();

 private:
  int fd_ = -1;
  sigset_t previous_{};
};

// In a freshly forked child before exec: default dispositions and an empty mask, whatever the parent blocked.
void restoreChildSignals();

}  // namespace ipu::runtime::process
