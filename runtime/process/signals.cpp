#include "process/signals.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <sys/signalfd.h>
#include <unistd.h>

namespace ipu::runtime::process {

const std::vector<int>& forwardedSignals() {
  static const std::vector<int> signals = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  return signals;
}

SignalFd::SignalFd(std::initializer_list<int> signals) : SignalFd(std::vector<int>(signals)) {}

SignalFd::SignalFd(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : signals) sigaddset(&set, signal);
  if (pthread_sigmask(SIG_BLOCK, &set, &previous_) != 0) throw std::runtime_error("cannot block signals");
  fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd_ < 0) {
    int error = errno;
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    throw std::runtime_error(std::string("signalfd: ") + std::strerror(error));
  }
}

SignalFd::~SignalFd() {
  close(fd_);
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

std::vector<int> SignalFd::drain() {
  std::vector<int> arrived;
  signalfd_siginfo info{};
  while (read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    arrived.push_back(static_cast<int>(info.ssi_signo));
  }
  return arrived;
}

void restoreChildSignals() {
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal != SIGKILL && signal != SIGSTOP) std::signal(signal, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace ipu::runtime::process
