#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::controllers {

using Json = nlohmann::json;

// Phases of an IPUJob as status.phase shows them.
inline constexpr const char* kPhasePending = "Pending";
inline constexpr const char* kPhaseQueued = "Queued";
inline constexpr const char* kPhaseCreating = "Creating";
inline constexpr const char* kPhaseRunning = "Running";
inline constexpr const char* kPhaseRestarting =
    "Restarting";  // replacing every worker after a restart decision
inline constexpr const char* kPhaseSucceeded = "Succeeded";
inline constexpr const char* kPhaseFailed = "Failed";
inline constexpr const char* kPhaseSuspended = "Suspended";

bool isTerminalPhase(const std::string& phase);

// The states of a recorded partition (status.partitions[].state): its id is written (Planned) before
// CreatePartition, it is Active once PS_ACTIVE, Released after RemovePartition.
inline constexpr const char* kPartitionPlanned = "Planned";
inline constexpr const char* kPartitionActive = "Active";
inline constexpr const char* kPartitionReleased = "Released";

// status.phase ("" before the first status write).
std::string phaseOf(const Json& job);
// status.partitions as recorded (an empty array when there are none).
Json recordedPartitions(const Json& job);
// The recorded partitions the job still holds: every one not Released.
std::vector<Json> heldPartitions(const Json& job);

// One metav1.Condition, without lastTransitionTime (setCondition decides that).
struct Condition {
  std::string type;
  bool status = false;
  std::string reason;
  std::string message;
  int64_t observedGeneration = 0;
};

// `conditions` (a metav1.Condition array, possibly null) with `condition` set. lastTransitionTime changes
// only when the status flips, so a repeated reconcile writes the same array. Pure.
Json setCondition(const Json& conditions, const Condition& condition, const std::string& now);

// The Ready/Admitted/Succeeded/Failed condition set that goes with a phase; the types users and tools wait on
// (`kubectl wait --for=condition=Succeeded`).
Json conditionsForPhase(const Json& conditions, const std::string& phase, const std::string& reason,
                        const std::string& message, int64_t generation, const std::string& now);

}  // namespace ipu::controllers
