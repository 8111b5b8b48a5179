#include "subprocess.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd/fd.h"

extern char** environ;

namespace ipu::testing {
namespace {

using Clock = std::chrono::steady_clock;

using runtime::Fd;  // runtime/fd/fd.h

struct Pipe {
  Fd read, write;
};

Pipe makePipe() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

int decodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Spawns argv with the given fds as stdin/stdout/stderr, in a new process group so that a kill reaches
// the child's own children too.
pid_t spawn(const std::vector<std::string>& argv, int in, int out, int err,
            const std::vector<std::string>& extraEnv) {
  if (argv.empty()) throw std::invalid_argument("spawn: empty argv");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  // extraEnv's variables replace inherited ones of the same name (with both, which one a child reads
  // depends on its libc or runtime: Go's takes the first).
  const auto overridden = [&extraEnv](std::string_view entry) {
    const std::string_view name = entry.substr(0, entry.find('='));
    return std::any_of(extraEnv.begin(), extraEnv.end(), [name](const std::string& extra) {
      return std::string_view(extra).substr(0, extra.find('=')) == name;
    });
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (!overridden(*e)) env.push_back(*e);
  }
  for (const auto& e : extraEnv) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// Waits for pid up to timeout; returns its decoded status or nullopt.
std::optional<int> waitFor(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return decodeWaitStatus(status);
    if (r < 0 && errno != EINTR) return -1;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int terminate(pid_t pid) {
  ::kill(-pid, SIGTERM);
  if (auto status = waitFor(pid, std::chrono::seconds(5))) return *status;
  ::kill(-pid, SIGKILL);
  return waitFor(pid, std::chrono::seconds(30)).value_or(-1);
}

}  // namespace

std::string RunResult::describe() const {
  std::ostringstream s;
  s << (timedOut ? "timed out" : "exit " + std::to_string(exitCode));
  if (!err.empty()) s << ": " << err;
  if (!out.empty()) s << " [stdout: " << out << "]";
  return s.str();
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  Pipe in = makePipe(), out = makePipe(), err = makePipe();
  pid_t pid = spawn(argv, in.read.get(), out.write.get(), err.write.get(), options.extraEnv);
  in.read.reset();
  out.write.reset();
  err.write.reset();

  RunResult result;
  std::string_view pendingInput = options.input;
  if (pendingInput.empty()) {
    in.write.reset();
  } else {
    ::fcntl(in.write.get(), F_SETFL, O_NONBLOCK);
  }
  auto deadline = Clock::now() + options.timeout;
  std::array<char, 65536> chunk{};
  while (out.read.get() >= 0 || err.read.get() >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      result.timedOut = true;
      break;
    }
    std::array<pollfd, 3> fds{pollfd{out.read.get(), POLLIN, 0}, pollfd{err.read.get(), POLLIN, 0},
                              pollfd{in.write.get(), POLLOUT, 0}};
    if (::poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = ::read(fds[i].fd, chunk.data(), chunk.size());
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(chunk.data(), static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        (i == 0 ? out.read : err.read).reset();
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      ssize_t n = ::write(in.write.get(), pendingInput.data(), pendingInput.size());
      if (n > 0) pendingInput.remove_prefix(static_cast<size_t>(n));
      if (n < 0 || pendingInput.empty()) in.write.reset();
    }
  }
  in.write.reset();
  if (result.timedOut) {
    result.exitCode = terminate(pid);
  } else {
    result.exitCode = waitFor(pid, std::chrono::hours(1)).value_or(-1);
  }
  return result;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& extraEnv) {
  char pathTemplate[] = "/tmp/ipu-test-stderr-XXXXXX";
  Fd errFile(::mkstemp(pathTemplate));
  if (errFile.get() < 0) throw std::runtime_error("mkstemp failed");
  stderrPath_ = pathTemplate;
  Fd devNull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  Pipe out = makePipe();
  pid_ = spawn(argv, devNull.get(), out.write.get(), errFile.get(), extraEnv);
  stdoutFd_ = out.read.release();
}

BackgroundProcess::~BackgroundProcess() {
  stop();
  if (stdoutFd_ >= 0) ::close(stdoutFd_);
  if (!stderrPath_.empty()) ::unlink(stderrPath_.c_str());
}

std::optional<int> BackgroundProcess::wait(std::chrono::milliseconds timeout) {
  if (!exitStatus_ && pid_ > 0) exitStatus_ = waitFor(pid_, timeout);
  return exitStatus_;
}

int BackgroundProcess::stop() {
  if (!exitStatus_ && pid_ > 0) exitStatus_ = terminate(pid_);
  return exitStatus_.value_or(-1);
}

std::optional<std::string> BackgroundProcess::readLine(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (eof_) return std::nullopt;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd fd{stdoutFd_, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(left)) <= 0) continue;
    std::array<char, 65536> chunk{};
    ssize_t n = ::read(stdoutFd_, chunk.data(), chunk.size());
    if (n > 0) {
      buffer_.append(chunk.data(), static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      eof_ = true;
    }
  }
}

std::string BackgroundProcess::stderrText() const {
  std::ifstream file(stderrPath_);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace ipu::testing
