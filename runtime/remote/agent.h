#pragma once

#include <string>

#include "remote/connection.h"

namespace ipu::runtime::remote {

struct AgentOptions {
  Credentials credentials;
  int port = 0;                // 0: any free port (tests), announced on stderr
  std::string hostName;        // answered to a Ping, for the launch's log
  std::string terminationLog;  // where to write the termination message when the launch says finish
  std::string worker;          // for the termination message
  std::string instance;
};

// `ipu-runtime agent`: the process of every worker of a multi-worker instance except worker 0. Serves remote
// starts from the instance's launch (mpirun's daemons through `rsh`), each connection in a process of its
// own, until the launch sends Finish(code); then exits with that code, so the pod ends with the instance's
// outcome. Refuses any connection whose certificate is not of this job. SIGTERM ends what it serves, then the
// agent.
int runAgent(const AgentOptions& options);

}  // namespace ipu::runtime::remote
