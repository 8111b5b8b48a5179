#pragma once

#include <string>
#include <vector>

namespace ipu::runtime::remote {

// The peer a host name given to rsh means: itself when it is listed, else the listed peer it abbreviates
// (mpirun drops the domain: "job-worker-1" for "job-worker-1.job"), else the name unchanged.
std::string completePeerName(const std::string& host, const std::vector<std::string>& peers);

}  // namespace ipu::runtime::remote
