#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/clock.h"

// Where an IPUJob is in its life, read from the object as a cache has it. Admission, the quota controller
// and the IPUJob reconciler all ask these questions; the answers live here, once.
namespace ipu::api {

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

// status.phase ("" before the first status write).
std::string phaseOf(const nlohmann::json& job);

// Not being deleted and not finished.
bool isAlive(const nlohmann::json& job);

// The controller a job belongs to, as Job, JobSet and MPIJob say it: spec.managedBy, or the operator's
// default name for a job without it. An operator acts only on jobs whose manager is its --controller-name;
// MultiKueue's name marks a job that Kueue dispatches to another cluster.
inline constexpr const char* kDefaultControllerName = "graphcore.ai/ipu-operator";
inline constexpr const char* kMultiKueueControllerName = "kueue.x-k8s.io/multikueue";
std::string managerOf(const nlohmann::json& job);

// A job Kueue queues (status.kueue names its Workload): Kueue's quota applies to it, never an IPUQuota.
bool queuedByKueue(const nlohmann::json& job);

// True for a job that waits for the operator's admission: alive, not finished, not suspended, no partitions
// recorded, and, for a job Kueue queues, admitted by Kueue or waiting for the operator's placement check
// (status.kueue.admitted or awaitingPlacement).
bool waitsForAdmission(const nlohmann::json& job);

// spec.activeDeadlineSeconds when it is a positive integer (how long the job may hold IPUs once admitted).
std::optional<std::int64_t> activeDeadlineOf(const nlohmann::json& job);

// When an admitted job gives its IPUs back at the latest: its start (status.startTime, set at admission) plus
// spec.activeDeadlineSeconds, or the end of its interactive time (status.interactive.expiresAt), whichever
// is first; nullopt when neither is known.
std::optional<Clock::WallTime> latestEndOf(const nlohmann::json& job);

}  // namespace ipu::api
