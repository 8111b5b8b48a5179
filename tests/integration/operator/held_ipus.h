// IPUs a job holds as its stored status says: the size of each partition record that is neither Released
// nor Abandoned (what IPUQuota counts against the namespace).
#pragma once

#include <nlohmann/json.hpp>

namespace ipu::testing {

inline bool isHeldRecord(const nlohmann::json& record) {
  const std::string state = record.value("state", "");
  return state != "Released" && state != "Abandoned";
}

inline int heldIpus(const nlohmann::json& job) {
  int held = 0;
  const nlohmann::json& status = job.value("status", nlohmann::json::object());
  for (const nlohmann::json& record : status.value("partitions", nlohmann::json::array())) {
    if (isHeldRecord(record)) held += record.value("size", 0);
  }
  return held;
}

}  // namespace ipu::testing
