#pragma once

#include <map>
#include <string>
#include <vector>

namespace ipu::testing {

// The lines each rank printed, from mpirun --tag-output ("[<job>,<rank>]<stdout>:<text>"). OpenMPI tags each
// chunk it forwards, not each line, and may put two ranks' chunks on one line, so the text is split at every
// tag: a rank's line is the concatenation of its chunks up to the newline that ends it.
std::map<int, std::vector<std::string>> linesByRank(const std::string& taggedOutput);

}  // namespace ipu::testing
