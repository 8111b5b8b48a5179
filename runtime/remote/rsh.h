#pragma once

#include <string>
#include <vector>

#include "remote/connection.h"

namespace ipu::runtime::remote {

struct RshOptions {
  Credentials credentials;
  std::string host;                  // as mpirun names it; completed from the peers list
  std::vector<std::string> command;  // joined with spaces, as ssh does: the remote shell parses it
  std::vector<std::string> peers;    // IPU_RUNTIME_PEERS, when set
  int port = 0;
};

// `ipu-runtime rsh HOST CMD…`: mpirun's remote-start agent. Runs CMD on HOST's agent, relays this process's
// stdin there and the command's stdout/stderr here, passes SIGTERM/SIGINT/SIGHUP on, and exits with the
// command's code. A lost connection or a refusal exits 255 (as ssh does) with a message naming the host.
int runRsh(const RshOptions& options);

}  // namespace ipu::runtime::remote
