#include "sim_process.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ipu::vipu::testing {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Starts argv with stdout and stderr appended to `outputPath`.
pid_t spawn(const std::vector<std::string>& argv, const std::string& outputPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outputPath.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> arguments;
  for (const std::string& arg : argv) arguments.push_back(const_cast<char*>(arg.c_str()));
  arguments.push_back(nullptr);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, arguments.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

int exitStatusOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Waits for pid up to `timeout`; kills it after that. Returns the exit status.
int waitFor(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return exitStatusOf(status);
    if (done < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return exitStatusOf(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::string simBinary() {
  return VIPU_SIM_BINARY;
}
std::string ctlBinary() {
  return VIPU_CTL_BINARY;
}

CommandResult runCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  static std::atomic<int> counter{0};
  const std::string outputPath =
      (std::filesystem::temp_directory_path() /
       ("vipu-it-cmd-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
          .string();
  std::filesystem::remove(outputPath);
  CommandResult result;
  const pid_t pid = spawn(argv, outputPath);
  if (pid < 0) {
    result.output = "cannot start " + argv[0];
    return result;
  }
  result.exitCode = waitFor(pid, timeout);
  result.output = readFile(outputPath);
  std::filesystem::remove(outputPath);
  return result;
}

std::unique_ptr<SimProcess> SimProcess::start(const std::string& workDirectory,
                                              const std::vector<std::string>& args, int port,
                                              std::string& failure) {
  static std::atomic<int> counter{0};
  const std::string suffix = std::to_string(counter++);
  const std::string portFile = workDirectory + "/port-" + suffix;
  const std::string logPath = workDirectory + "/vipu-sim-" + suffix + ".log";
  std::vector<std::string> argv{simBinary(), "--listen", "127.0.0.1:" + std::to_string(port), "--port-file",
                                portFile};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = spawn(argv, logPath);
  if (pid < 0) {
    failure = "cannot start " + simBinary();
    return nullptr;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = readFile(portFile);
    if (!text.empty() && text.back() == '\n') {
      return std::make_unique<SimProcess>(pid, std::stoi(text), logPath);
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      failure = "vipu-sim exited with " + std::to_string(exitStatusOf(status)) + ":\n" + readFile(logPath);
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  failure = "vipu-sim did not start serving within 20 s:\n" + readFile(logPath);
  return nullptr;
}

SimProcess::~SimProcess() {
  stop();
}

int SimProcess::stop(bool crash) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, crash ? SIGKILL : SIGTERM);
  const int status = waitFor(pid_, std::chrono::seconds(10));
  pid_ = -1;
  return status;
}

std::string SimProcess::log() const {
  return readFile(logPath_);
}

}  // namespace ipu::vipu::testing
