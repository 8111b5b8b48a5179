#pragma once

#include <string>

#include "common/result.h"
#include "vipu/cli/flag_set.h"

namespace ipu::vipu::cli {

// Applies a YAML file of flag settings: a mapping from flag names (dashes or underscores) to a value, or to a
// list of values for repeatable flags. E.g.
//   pod: pod128
//   activation_delay_ms: 250
//   allocation: [team-a=0, team-b=1]
// Errors name the file, and the line or key at fault. An empty file sets nothing.
Status applyConfigFile(FlagSet& flags, const std::string& path);

}  // namespace ipu::vipu::cli
