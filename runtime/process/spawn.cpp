#include "process/spawn.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/signals.h"

namespace ipu::runtime::process {
namespace {

// Everything the child needs, prepared before fork: after fork only async-signal-safe calls are allowed.
struct PreparedExec {
  std::vector<std::string> argStorage;
  std::vector<char*> argv;
  std::vector<std::string> envStorage;
  std::vector<char*> envp;
};

// The parent's environment with the overrides applied, as "NAME=value" strings.
std::vector<std::string> mergedEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    std::string_view name = text.substr(0, text.find('='));
    bool replaced = false;
    for (const auto& [overrideName, value] : overrides) replaced = replaced || overrideName == name;
    if (!replaced) merged.emplace_back(text);
  }
  for (const auto& [name, value] : overrides) merged.push_back(name + "=" + value);
  return merged;
}

PreparedExec prepare(const std::vector<std::string>& argv, const SpawnOptions& options) {
  PreparedExec prepared{argv, {}, mergedEnvironment(options.environment), {}};
  for (auto& arg : prepared.argStorage) prepared.argv.push_back(arg.data());
  prepared.argv.push_back(nullptr);
  for (auto& entry : prepared.envStorage) prepared.envp.push_back(entry.data());
  prepared.envp.push_back(nullptr);
  return prepared;
}

[[noreturn]] void execChild(const PreparedExec& prepared, const SpawnOptions& options, int errorPipe) {
  restoreChildSignals();
  if (options.newProcessGroup) setpgid(0, 0);
  if (options.stdinFd >= 0) dup2(options.stdinFd, STDIN_FILENO);
  if (options.stdoutFd >= 0) dup2(options.stdoutFd, STDOUT_FILENO);
  if (options.stderrFd >= 0) dup2(options.stderrFd, STDERR_FILENO);
  execvpe(prepared.argv[0], prepared.argv.data(), prepared.envp.data());
  int error = errno;
  ssize_t ignored = write(errorPipe, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

}  // namespace

pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw SpawnError("no command to run", 127);
  PreparedExec prepared = prepare(argv, options);

  int errorPipe[2];
  if (pipe2(errorPipe, O_CLOEXEC) != 0) throw SpawnError(std::string("pipe: ") + std::strerror(errno), 126);
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    close(errorPipe[0]);
    close(errorPipe[1]);
    throw SpawnError(std::string("fork: ") + std::strerror(error), 126);
  }
  if (pid == 0) execChild(prepared, options, errorPipe[1]);
  close(errorPipe[1]);
  int execError = 0;
  ssize_t got;
  do {
    got = read(errorPipe[0], &execError, sizeof execError);
  } while (got < 0 && errno == EINTR);
  close(errorPipe[0]);
  if (got == static_cast<ssize_t>(sizeof execError)) {
    waitpid(pid, nullptr, 0);
    int code = execError == ENOENT ? 127 : 126;
    throw SpawnError("cannot run " + argv[0] + ": " + std::strerror(execError), code);
  }
  return pid;
}

ExitStatus exitStatusFrom(int waitStatus) {
  if (WIFSIGNALED(waitStatus)) return {128 + WTERMSIG(waitStatus), WTERMSIG(waitStatus)};
  return {WEXITSTATUS(waitStatus), 0};
}

bool onPath(const std::string& name) {
  auto executable = [](const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name);
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (executable((dir.empty() ? "." : dir) + "/" + name)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace ipu::runtime::process
