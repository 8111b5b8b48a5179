#pragma once

#include <string>

namespace ipu::bench {

// The sum of every sample of the counter `name` (all its label sets) in a Prometheus text exposition; 0 when
// it has none. Pure.
double counterTotal(const std::string& exposition, const std::string& name);

}  // namespace ipu::bench
