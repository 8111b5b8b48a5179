#pragma once

#include <string>

#include "cli/flags.h"
#include "common/result.h"

namespace ipu::cli {

// Applies a YAML file of flag settings (Flags::preset, so the command line overrides them): a mapping from
// flag names (dashes or underscores) to a value, or to a list of values for repeatable flags. CLI11 reads
// TOML and INI config files only; this is the adapter for YAML, the format the rest of the project's
// configuration uses. E.g.
//   pod: pod128
//   activation_delay_ms: 250
//   allocation: [team-a=0, team-b=1]
// Errors name the file, and the line or key at fault. An empty file sets nothing.
Status applyConfigFile(Flags& flags, const std::string& path);

}  // namespace ipu::cli
