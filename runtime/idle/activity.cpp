#include "idle/activity.h"

#include <map>
#include <tuple>

namespace ipu::runtime::idle {
namespace {

using State = SocketSample::State;

// A connection's four-tuple, as seen from one end.
using Endpoints = std::tuple<std::string, int, std::string, int>;

Endpoints endpointsOf(const SocketSample& socket) {
  return {socket.localAddress, socket.localPort, socket.remoteAddress, socket.remotePort};
}

Endpoints reversed(const Endpoints& ends) {
  return {std::get<2>(ends), std::get<3>(ends), std::get<0>(ends), std::get<1>(ends)};
}

std::set<int> listeningPorts(const Look& look) {
  std::set<int> ports;
  for (const SocketSample& socket : look.sockets) {
    if (socket.state == State::kListen) ports.insert(socket.localPort);
  }
  return ports;
}

std::string describe(const SocketSample& socket) {
  return socket.localAddress + ":" + std::to_string(socket.localPort) + " - " + socket.remoteAddress + ":" +
         std::to_string(socket.remotePort);
}

void execActivity(const Look& now, const ActivityRules& rules, Activity& activity) {
  std::map<int, int> parentOf;
  for (const ProcessSample& process : now.processes) parentOf[process.pid] = process.ppid;
  const auto inCommand = [&](int pid) {
    // Bounded: a parent chain read at one moment from /proc cannot loop, but a torn read must not hang.
    for (std::size_t hops = 0; pid > 0 && hops <= parentOf.size(); ++hops) {
      if (pid == rules.commandPid) return true;
      const auto parent = parentOf.find(pid);
      if (parent == parentOf.end()) return false;
      pid = parent->second;
    }
    return false;
  };
  for (const ProcessSample& process : now.processes) {
    if (process.pid == rules.runtimePid || inCommand(process.pid)) continue;
    activity.exec = true;
    activity.what += "a process kubectl exec started (pid " + std::to_string(process.pid) + "); ";
    return;
  }
}

void cpuActivity(const Look& before, const Look& now, const ActivityRules& rules, Activity& activity) {
  std::map<int, std::uint64_t> earlier;
  for (const ProcessSample& process : before.processes) earlier[process.pid] = process.cpuTicks;
  std::uint64_t used = 0;
  for (const ProcessSample& process : now.processes) {
    if (process.pid == rules.runtimePid) continue;  // its own looks are not the user's activity
    const auto then = earlier.find(process.pid);
    // A pid reused by a new process reads fewer ticks than its predecessor: counted from zero.
    if (then == earlier.end() || process.cpuTicks < then->second) {
      used += process.cpuTicks;
    } else {
      used += process.cpuTicks - then->second;
    }
  }
  if (used > rules.idleCpuTicks) {
    activity.cpu = true;
    activity.what += "CPU " + std::to_string(used) + " ticks; ";
  }
}

void portForwardActivity(const Look& before, const Look& now, Activity& activity) {
  std::set<int> listening = listeningPorts(now);
  for (int port : listeningPorts(before)) listening.insert(port);
  std::map<std::uint64_t, const SocketSample*> earlierByInode;
  std::map<Endpoints, const SocketSample*> earlierByEnds;
  for (const SocketSample& socket : before.sockets) {
    if (socket.inode != 0) earlierByInode[socket.inode] = &socket;
    earlierByEnds[endpointsOf(socket)] = &socket;
  }
  for (const SocketSample& socket : now.sockets) {
    if (socket.state == State::kEstablished && socket.inode != 0 && listening.contains(socket.remotePort) &&
        !now.containerSockets.contains(socket.inode)) {
      const auto then = earlierByInode.find(socket.inode);
      if (then == earlierByInode.end() || then->second->bytes != socket.bytes) {
        activity.portForward = true;
        activity.what += "port-forward traffic (" + describe(socket) + "); ";
        return;
      }
    }
    if (socket.state != State::kTimeWait || earlierByEnds.contains(endpointsOf(socket))) continue;
    const bool serverSide = listening.contains(socket.localPort);
    if (!serverSide && !listening.contains(socket.remotePort)) continue;  // not a connection to a listener
    // The client's end as it was while connected: a process of the container's makes it internal.
    const auto client = earlierByEnds.find(serverSide ? reversed(endpointsOf(socket)) : endpointsOf(socket));
    if (client != earlierByEnds.end() && client->second->state == State::kEstablished &&
        before.containerSockets.contains(client->second->inode)) {
      continue;
    }
    activity.portForward = true;
    activity.what += "a port-forward connection ended (" + describe(socket) + "); ";
    return;
  }
}

}  // namespace

Activity activityBetween(const Look& before, const Look& now, const ActivityRules& rules) {
  Activity activity;
  execActivity(now, rules, activity);
  cpuActivity(before, now, rules, activity);
  portForwardActivity(before, now, activity);
  return activity;
}

}  // namespace ipu::runtime::idle
