#include "process/descendants.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ipu::runtime::process {
namespace {

using Clock = std::chrono::steady_clock;
// How often stopDescendants looks again: ended processes that are not our children send us nothing.
constexpr auto kLookEvery = std::chrono::milliseconds(20);

struct ProcessEntry {
  pid_t parent = 0;
  bool zombie = false;
};

// /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses, so parse after the last
// ')'.
std::map<pid_t, ProcessEntry> processTable() {
  std::map<pid_t, ProcessEntry> table;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;  // ended while we looked
    const auto afterName = stat.rfind(')');
    if (afterName == std::string::npos || afterName + 4 > stat.size()) continue;
    char state = stat[afterName + 2];
    table[static_cast<pid_t>(std::stol(name))] = {static_cast<pid_t>(std::atol(stat.c_str() + afterName + 4)),
                                                  state == 'Z' || state == 'X'};
  }
  return table;
}

void signalAll(const std::vector<pid_t>& pids, int signal) {
  for (pid_t pid : pids) kill(pid, signal);
}

// Reaps and looks again until no descendant is left or the deadline passes; true when none is left.
bool waitForNone(Clock::time_point deadline) {
  while (true) {
    reapEndedChildren();
    if (descendantsOf(getpid()).empty()) return true;
    if (Clock::now() >= deadline) return false;
    usleep(std::chrono::duration_cast<std::chrono::microseconds>(kLookEvery).count());
  }
}

}  // namespace

std::vector<pid_t> descendantsOf(pid_t ancestor) {
  const std::map<pid_t, ProcessEntry> table = processTable();
  std::vector<pid_t> found;
  std::vector<pid_t> parents = {ancestor};
  while (!parents.empty()) {
    pid_t parent = parents.back();
    parents.pop_back();
    for (const auto& [pid, entry] : table) {
      if (entry.parent != parent || pid == ancestor) continue;
      parents.push_back(pid);  // a zombie's children are still alive, and still below us
      if (!entry.zombie) found.push_back(pid);
    }
  }
  return found;
}

void becomeSubreaper() {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
}

bool stopDescendants(std::chrono::milliseconds grace, std::chrono::milliseconds afterKill) {
  signalAll(descendantsOf(getpid()), SIGTERM);
  if (waitForNone(Clock::now() + grace)) return true;
  const auto deadline = Clock::now() + afterKill;
  // Again and again: a process may fork between one look and the SIGKILL that follows it.
  while (true) {
    signalAll(descendantsOf(getpid()), SIGKILL);
    if (waitForNone(std::min(deadline, Clock::now() + kLookEvery * 5))) return true;
    if (Clock::now() >= deadline) return false;
  }
}

void reapEndedChildren() {
  int status;
  while (waitpid(-1, &status, WNOHANG) > 0) {
  }
}

}  // namespace ipu::runtime::process
