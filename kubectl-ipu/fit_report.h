#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/plan_inputs.h"
#include "admission/start_estimate.h"
#include "common/clock.h"

namespace ipu::kubectl_ipu {

using Json = nlohmann::json;

// `kubectl ipu fit`: for jobs not submitted yet, whether each can ever run on this cluster and under the
// namespace's quota, whether it would start now, and otherwise its place in the queue and when it starts at
// the latest. The operator's own plan and start estimate (controllers/admission), run read-only on the
// IPUQueue it publishes, with the jobs added as if created now, one second apart in file order, each after
// every job already queued with its priority.

// A job to fit: what it asks for, or why it cannot be read.
struct FitRequest {
  std::string label;  // its name, or "--ipus 16 --instances 2"
  std::optional<controllers::AdmissionRequest> request;
  std::string invalid;  // when request is nullopt
};

// The IPUJobs of a file's documents, in order; other kinds and specs the operator would refuse are
// FitRequests with the reason. A document naming another namespace than `ns` is refused (one namespace's
// quota at a time).
std::vector<FitRequest> fitRequestsOf(const std::vector<Json>& documents, const std::string& ns);
// A job of `instances` partitions of `ipus` IPUs.
FitRequest fitRequestOf(std::uint32_t ipus, std::uint32_t instances, const std::string& ns);

// The user's namespace as the plugin reads it: the uids of its IPUJobs (to find it among the IPUQueue's
// anonymised namespaces) and its IPUQuotas (nullopt when they may not be read: the published quota stands).
struct OwnNamespace {
  std::string ns;
  std::set<std::string> jobUids;
  std::optional<std::vector<Json>> quotas;
};

struct FitOutcome {
  enum class Verdict { kNow, kQueued, kNever, kInvalid };
  std::string label;
  Verdict verdict = Verdict::kInvalid;
  std::uint32_t instances = 0;
  std::uint32_t ipusPerInstance = 0;
  std::string controller;  // kNow: where
  int position = 0;        // kQueued: 1 = next in line
  std::string reason;      // kQueued, kNever: the condition reason the job would get
  std::string message;     // for people
  std::optional<controllers::StartEstimate> estimate;  // kNow, kQueued
};

// Pure: the outcomes of `requests`, in order.
std::vector<FitOutcome> fitOf(controllers::PlanInputs inputs, const OwnNamespace& own,
                              const std::vector<FitRequest>& requests, Clock::WallTime now);

std::string renderFit(const std::vector<FitOutcome>& outcomes, int width, Clock::WallTime now);
Json toJson(const std::vector<FitOutcome>& outcomes);
// The start estimate of a job waiting in the published queue (by its uid); nullopt when it is not waiting.
std::optional<controllers::StartEstimate> publishedEstimateOf(const controllers::PlanInputs& inputs,
                                                              const std::string& jobUid, Clock::WallTime now);

// {"startsBy": RFC 3339} or {"unknown": why}: an estimate in `-o json` (fit and why).
Json estimateJson(const controllers::StartEstimate& estimate);

// "starts by 2026-11-28T05:10:00Z (in 1h05m)", "starts now", "start not known: <why>", "never".
std::string estimateText(const controllers::StartEstimate& estimate, Clock::WallTime now);

}  // namespace ipu::kubectl_ipu
