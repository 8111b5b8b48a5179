#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "kube/rest_client.h"

namespace ipu::kubectl_ipu {

// Exit codes scripts can use (docs/kubectl-ipu.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // the cluster could not be read (unreachable, refused, not installed)
inline constexpr int kExitUsage = 2;   // the command line is wrong
inline constexpr int kExitNeverFits = 3;  // fit: a job can never run here as it is (or cannot be read)

// Where the commands read the cluster: the kubeconfig (or in-cluster) config, like kubectl.
struct Connection {
  std::unique_ptr<kube::RestClient> client;
  std::string ns;  // the context's namespace, or -n's
};
using Connect = std::function<Result<Connection>(const std::string& kubeconfig, const std::string& context)>;

struct Terminal {
  std::ostream& out;
  std::ostream& err;
  bool tty = false;      // stdout is a terminal
  int width = 80;        // its columns ($COLUMNS or the terminal's; 80 otherwise)
  bool noColor = false;  // $NO_COLOR is set
  Clock::WallTime now;
  std::istream* in = nullptr;  // standard input, for `fit -f -`
};

// kubectl ipu <command> [flags]: status, quota, top, why, fit, logs, cp, version, help.
int runPlugin(const std::vector<std::string>& args, Terminal& terminal, const Connect& connect);

// The release this build is ("0.1.0"), as `kubectl ipu version` prints it.
std::string pluginVersion();

}  // namespace ipu::kubectl_ipu
