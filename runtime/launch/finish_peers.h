#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "remote/connection.h"

namespace ipu::runtime::launch {

// How long the launch may spend telling its peers that it ended: well inside a pod's default grace period
// of 30 s, which also has to hold the launch's own command stopping first when the pod is deleted.
inline constexpr std::chrono::seconds kFinishPeersWithin{10};

// Tells the agent of every host in `peers` how the instance ended (Finish: `code`, `message`), all of them
// at once, every one within `within` however many do not answer. Returns one line per peer that was not
// told, naming it and why.
std::vector<std::string> finishPeers(const remote::Credentials& credentials,
                                     const std::vector<std::string>& peers, int agentPort, int code,
                                     const std::string& message, std::chrono::milliseconds within);

}  // namespace ipu::runtime::launch
