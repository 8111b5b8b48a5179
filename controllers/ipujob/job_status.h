#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "api/job_lifecycle.h"

namespace ipu::controllers {

using Json = nlohmann::json;

using api::heldPartitionsOf;
using api::isTerminalPhase;
using api::kPartitionAbandoned;
using api::kPartitionActive;
using api::kPartitionPlanned;
using api::kPartitionReleased;
using api::kPhaseCreating;
using api::kPhaseFailed;
using api::kPhasePending;
using api::kPhaseQueued;
using api::kPhaseRestarting;
using api::kPhaseRunning;
using api::kPhaseSucceeded;
using api::kPhaseSuspended;
using api::phaseOf;

// How the spec differs from the shape the job's held partitions were admitted with ("jobInstances 2 -> 1,
// ipusPerJobInstance 4 -> 8"); nullopt when it matches or nothing is held. A status without admittedShape
// (written by an older version) is judged by its partitions: their count and size. Pure.
std::optional<std::string> shapeDrift(const api::IpuJobStatus& status, const api::IpuJobSpec& spec);

// Graphcore's word for a phase, as STATUS (status.launcherStatus) shows it.
std::string launcherStatusFor(const std::string& phase);

// A phase and why, for people (message) and tools (reason: a stable CamelCase word).
struct PhaseChange {
  std::string phase;
  std::string reason;
  std::string message;
};

// Moves `status` to a phase: phase, launcherStatus, lastMessage, observedGeneration and the condition set
// that goes with it (Admitted, Ready, and Succeeded/Failed for the end; the types `kubectl wait
// --for=condition=...` uses). queuePosition is cleared: only a waiting job has one, and its caller sets it. A
// repeated change gives the same status (condition transition times move only when a condition flips). Pure.
void setPhase(api::IpuJobStatus& status, const PhaseChange& change, int64_t generation,
              const std::string& now);

}  // namespace ipu::controllers
