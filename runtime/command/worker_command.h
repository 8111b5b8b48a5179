#pragma once

#include <string>
#include <string_view>
#include <vector>

// What a worker container's command is, read without running it: a rank program (run once per worker by the
// launch), a launcher that starts the ranks itself (poprun, mpirun, mpiexec: run once, on worker 0), or
// something a reading cannot see into. The operator decides with it how worker 0 of a multi-worker instance
// starts (docs/user-guide.md, "Your own poprun/mpirun"); the launch describes with it what it runs.
namespace ipu::runtime::command {

enum class CommandKind {
  kRankProgram,  // e.g. python3 train.py, or a sh -c script that runs no launcher
  kLauncher,     // poprun/mpirun/mpiexec as the program, or in command position in a sh -c/bash -c script
  kUnclear,      // runs a script file, eval, or a program named by a variable: only running it could tell
};

struct CommandReading {
  CommandKind kind = CommandKind::kRankProgram;
  // kLauncher: the command that starts the ranks (with its VAR=value prefixes); kUnclear: the command that
  // hides what runs.
  std::vector<std::string> found;
  std::string why;      // kUnclear: what cannot be seen into, in words ("runs the script file ./train.sh")
  int scriptLines = 0;  // the worker command is a sh -c script of this many lines (0: it is not a script)
  bool operator==(const CommandReading&) const = default;
};

// Reads a container's command and args (as Kubernetes joins them: command, then args). Kubernetes' own
// $(VAR) references count as unknown until run. A launcher anywhere wins over something unclear elsewhere:
// the launch must then run the command once. A sourced file (`source venv/bin/activate`) is read as setting
// up the environment: a launcher inside one is not seen.
CommandReading readWorkerCommand(const std::vector<std::string>& argv);

// poprun, mpirun, mpiexec and their distribution-suffixed names (mpirun.openmpi, mpiexec.hydra, orterun...).
bool isLauncherProgram(std::string_view program);

}  // namespace ipu::runtime::command
