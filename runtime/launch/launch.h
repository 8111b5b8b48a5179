#pragma once

#include <string>
#include <vector>

#include "launch/launch_plan.h"
#include "remote/connection.h"

namespace ipu::runtime::launch {

struct LaunchOptions {
  remote::Credentials credentials;
  InstanceShape shape;
  std::vector<std::string> hosts;    // the instance's workers, this one (worker 0) first
  std::vector<std::string> command;  // the rank program, or with `userLauncher` the user's own launcher
  bool userLauncher = false;
  int agentPort = 0;
  std::chrono::seconds peerTimeout{600};
  std::string runtimeBinary;  // for OMPI_MCA_plm_rsh_agent
  std::string hostfilePath;   // written for a user's own mpirun
  std::string terminationLog;
  std::string worker;
  std::string instance;
};

// `ipu-runtime launch`: worker 0 of a job instance. Waits until the agent of every other worker of the
// instance answers, runs the user's launcher command or poprun/mpirun over the instance's workers, tells
// every peer the outcome (they exit 0 on success, with the launch's code otherwise) and exits with the
// launch's code, leaving a termination message that names the instance.
int runLaunch(const LaunchOptions& options);

// What the runtime's own poprun/mpirun line is built from: the options, and the variables of
// passedThroughVariables() set in the launcher's environment.
LaunchInputs launchInputs(const LaunchOptions& options, bool runAsRoot, const GetEnv& getEnv);

// The command the launch runs: the user's launcher as given; otherwise poprun when it is on PATH, else
// mpirun.
std::vector<std::string> launchCommand(const LaunchOptions& options, bool poprunAvailable, bool runAsRoot,
                                       const GetEnv& getEnv);

}  // namespace ipu::runtime::launch
