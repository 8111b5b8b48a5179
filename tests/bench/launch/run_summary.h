#pragma once

// How the launch benchmarks state a set of timings: min, median and max beside every run.
#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::testing {

inline nlohmann::json minMedianMax(std::vector<double> values) {
  if (values.empty()) return {{"runs", nlohmann::json::array()}};
  std::sort(values.begin(), values.end());
  return {{"min", values.front()},
          {"median", values[values.size() / 2]},
          {"max", values.back()},
          {"runs", values}};
}

}  // namespace ipu::testing
