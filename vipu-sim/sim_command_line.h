#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "vipu-sim/sim_config.h"

namespace ipu::vipu::sim {

struct SimCommandLine {
  SimConfig config;
  bool helpRequested = false;
};

// Parses vipu-sim's arguments (without the program name): --config FILE first, then the flags, which win.
Result<SimCommandLine> parseSimCommandLine(const std::vector<std::string>& args);
std::string simUsage();

}  // namespace ipu::vipu::sim
