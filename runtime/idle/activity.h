#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

// What an interactive worker's container is doing, as ipu-runtime (its PID 1) sees it, and whether that is
// activity (docs/user-guide.md, "Idle reclaim"): pure functions of two looks at the container, so that every
// rule is a table in the unit tests. The looks themselves are read by observe.h.
namespace ipu::runtime::idle {

// One process of the container's PID namespace (/proc/PID/stat).
struct ProcessSample {
  int pid = 0;
  int ppid = 0;                // 0: its parent is outside the container (kubectl exec starts it so)
  std::uint64_t cpuTicks = 0;  // utime + stime
};

// One TCP socket of the pod's network namespace (sock_diag), IPv4 or IPv6.
struct SocketSample {
  enum class State { kEstablished, kListen, kTimeWait, kOther };
  State state = State::kOther;
  std::string localAddress;  // as text, e.g. "127.0.0.1" or "::1"
  int localPort = 0;
  std::string remoteAddress;
  int remotePort = 0;
  std::uint64_t inode = 0;  // 0 for a TIME_WAIT socket (no process holds it any more)
  std::uint64_t bytes = 0;  // received + acknowledged as sent (tcp_info), established sockets only
};

struct Look {
  std::vector<ProcessSample> processes;
  std::vector<SocketSample> sockets;
  std::set<std::uint64_t> containerSockets;  // inodes of the sockets the container's processes hold
};

// What counted as activity between two looks; all false: idle.
struct Activity {
  bool exec = false;         // a process that kubectl exec started (or one it left behind) runs
  bool portForward = false;  // bytes moved on, or a connection ended on, a port-forward connection
  bool cpu = false;          // the container's processes used more than the threshold of CPU
  std::string what;          // for the log: what was seen ("kubectl exec: pid 42", ...)
  bool any() const { return exec || portForward || cpu; }
};

struct ActivityRules {
  int runtimePid = 1;  // this runtime: neither exec nor the command
  int commandPid = 0;  // the worker's command: it and its descendants are not exec sessions
  // CPU ticks (1/100 s) the container's processes may use between two looks and still be idle.
  std::uint64_t idleCpuTicks = 0;
};

// Activity seen in `now` since `before`:
//  - exec: a process that is neither this runtime nor the command or a descendant of it. kubectl exec
//    starts its process from outside the container (its parent is 0 here); what it leaves running is
//    adopted by PID 1 (this runtime) and stays outside the command's tree;
//  - port-forward: kubectl port-forward reaches a port the container listens on from inside the pod's
//    network namespace, from a socket no process of the container holds (the container runtime's). Activity
//    is such a connection that is new or whose byte count moved, or one that ended since `before` (a
//    TIME_WAIT to or from a listening port not seen before that was not a connection between the container's
//    own processes);
//  - cpu: the container's processes but this runtime used more than rules.idleCpuTicks between the looks (a
//    process new since `before` counts all it used).
Activity activityBetween(const Look& before, const Look& now, const ActivityRules& rules);

}  // namespace ipu::runtime::idle
