#include "kubectl-ipu/fit_report.h"

#include <utility>

#include "api/ipujob.h"
#include "api/ipuquota.h"
#include "common/json_access.h"
#include "common/time_format.h"
#include "kubectl-ipu/terminal_map.h"
#include "kubectl-ipu/text_table.h"

namespace ipu::kubectl_ipu {
namespace {

using controllers::AdmissionDecision;
using controllers::StartEstimate;
using Verdict = FitOutcome::Verdict;

FitRequest refused(std::string label, std::string why) {
  return {std::move(label), std::nullopt, std::move(why)};
}

// The namespace's id in the IPUQueue: the one its jobs are published under. A namespace with no job waiting
// or holding IPUs is not in it (nothing of it counts yet): it gets an id of its own.
std::string namespaceIdOf(const controllers::PlanInputs& inputs, const OwnNamespace& own) {
  const auto ours = [&](const std::string& uid) { return !uid.empty() && own.jobUids.contains(uid); };
  for (const auto& request : inputs.queue) {
    if (ours(request.uid)) return request.ns;
  }
  for (const auto& controller : inputs.controllers) {
    for (const auto& occupant : controller.occupants) {
      if (ours(occupant.uid)) return occupant.ns;
    }
  }
  for (const auto& reservation : inputs.reservations) {
    if (ours(reservation.uid)) return reservation.ns;
  }
  return "this namespace";
}

// The namespace's IPUQuotas as read by the user replace the published, anonymised ones: same values, with the
// names the messages give.
void applyOwnQuotas(controllers::QuotaRules& rules, const std::string& id, const OwnNamespace& own) {
  if (!own.quotas) return;
  std::vector<api::IpuQuota> quotas;
  std::string invalid;
  for (const Json& object : *own.quotas) {
    auto quota = api::parseIpuQuota(object);
    if (quota) {
      quotas.push_back(std::move(*quota));
    } else if (invalid.empty()) {
      invalid = "IPUQuota " + own.ns + "/" + stringMember(member(object, "metadata"), "name") +
                " cannot be read: " + quota.error().message;
    }
  }
  rules.quotas.erase(id);
  auto combined = controllers::namespaceQuotas(quotas);
  if (auto found = combined.find(own.ns); found != combined.end())
    rules.quotas[id] = std::move(found->second);
  if (!invalid.empty()) rules.quotas[id].invalid = invalid;
}

std::string sizeText(const FitOutcome& outcome) {
  if (outcome.ipusPerInstance == 0) return "";
  return std::to_string(outcome.instances) + " x " + std::to_string(outcome.ipusPerInstance);
}

std::string verdictText(const FitOutcome& outcome) {
  switch (outcome.verdict) {
    case Verdict::kNow:
      return "now";
    case Verdict::kQueued:
      return "position " + std::to_string(outcome.position);
    case Verdict::kNever:
      return "never";
    case Verdict::kInvalid:
      return "invalid";
  }
  return "";
}

const char* verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNow:
      return "Now";
    case Verdict::kQueued:
      return "Queued";
    case Verdict::kNever:
      return "Never";
    case Verdict::kInvalid:
      return "Invalid";
  }
  return "";
}

}  // namespace

std::vector<FitRequest> fitRequestsOf(const std::vector<Json>& documents, const std::string& ns) {
  std::vector<FitRequest> requests;
  int index = 0;
  for (const Json& document : documents) {
    ++index;
    const Json& metadata = member(document, "metadata");
    std::string label = stringMember(metadata, "name");
    if (label.empty()) label = "document " + std::to_string(index);
    if (stringMember(document, "kind") != "IPUJob") {
      requests.push_back(refused(label, "not an IPUJob (kind " + stringMember(document, "kind") + ")"));
      continue;
    }
    const std::string docNs = stringMember(metadata, "namespace");
    if (!docNs.empty() && docNs != ns) {
      requests.push_back(refused(label, "in namespace " + docNs + ", not " + ns +
                                            ": fit plans one namespace at a time (-n " + docNs + ")"));
      continue;
    }
    Json job = document;
    job["metadata"]["namespace"] = ns;
    auto parsed = api::parseIpuJob(job);
    if (!parsed) {
      requests.push_back(refused(label, parsed.error().message));
      continue;
    }
    requests.push_back({label, controllers::admissionRequestOf(*parsed, ""), ""});
  }
  return requests;
}

FitRequest fitRequestOf(std::uint32_t ipus, std::uint32_t instances, const std::string& ns) {
  const std::string label = "--ipus " + std::to_string(ipus) + " --instances " + std::to_string(instances);
  if (ipus == 0 || (ipus & (ipus - 1)) != 0) {
    return refused(label,
                   "--ipus must be a power of two (a V-IPU partition's size), not " + std::to_string(ipus));
  }
  if (instances == 0) return refused(label, "--instances must be at least 1");
  controllers::AdmissionRequest request;
  request.ns = ns;
  request.instances = instances;
  request.ipusPerInstance = ipus;
  return {label, std::move(request), ""};
}

std::vector<FitOutcome> fitOf(controllers::PlanInputs inputs, const OwnNamespace& own,
                              const std::vector<FitRequest>& requests, Clock::WallTime now) {
  const std::string id = namespaceIdOf(inputs, own);
  if (inputs.quotas) applyOwnQuotas(*inputs.quotas, id, own);
  std::vector<std::string> keys(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!requests[i].request) continue;
    controllers::AdmissionRequest request = *requests[i].request;
    keys[i] = "fit/" + std::to_string(i);
    request.key = keys[i];
    request.ns = id;
    request.uid.clear();
    // Created now, in file order: after every queued job of its priority, one second apart.
    request.creationTimestamp = formatTime(now + std::chrono::seconds(i + 1));
    inputs.queue.push_back(std::move(request));
  }
  const auto decisions = controllers::planFrom(inputs);
  const auto estimates = controllers::estimateStarts(inputs, now);

  std::vector<FitOutcome> outcomes;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    FitOutcome outcome;
    outcome.label = requests[i].label;
    if (!requests[i].request) {
      outcome.message = requests[i].invalid;
      outcomes.push_back(std::move(outcome));
      continue;
    }
    outcome.instances = requests[i].request->instances;
    outcome.ipusPerInstance = requests[i].request->ipusPerInstance;
    const AdmissionDecision& decision = decisions.at(keys[i]);
    outcome.reason = decision.reason;
    outcome.message = decision.message;
    switch (decision.kind) {
      case AdmissionDecision::Kind::kAdmit:
        outcome.verdict = Verdict::kNow;
        outcome.controller = decision.controller;
        outcome.reason.clear();
        outcome.message = "on " + decision.controller;
        break;
      case AdmissionDecision::Kind::kNeverFits:
        outcome.verdict = Verdict::kNever;
        break;
      case AdmissionDecision::Kind::kWait:
        // Out of line (position 0): only a change of the quota lets it run.
        outcome.verdict = decision.position > 0 ? Verdict::kQueued : Verdict::kNever;
        outcome.position = decision.position;
        break;
    }
    if (outcome.verdict == Verdict::kNow || outcome.verdict == Verdict::kQueued) {
      if (const auto estimate = estimates.find(keys[i]); estimate != estimates.end())
        outcome.estimate = estimate->second;
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

std::optional<StartEstimate> publishedEstimateOf(const controllers::PlanInputs& inputs,
                                                 const std::string& jobUid, Clock::WallTime now) {
  for (const auto& request : inputs.queue) {
    if (jobUid.empty() || request.uid != jobUid) continue;
    const auto estimates = controllers::estimateStarts(inputs, now);
    if (const auto found = estimates.find(request.key); found != estimates.end()) return found->second;
  }
  return std::nullopt;
}

Json estimateJson(const StartEstimate& estimate) {
  if (estimate.kind == StartEstimate::Kind::kStartsBy) return {{"startsBy", formatTime(estimate.startsBy)}};
  return {{"unknown", estimate.why}};
}

std::string estimateText(const StartEstimate& estimate, Clock::WallTime now) {
  switch (estimate.kind) {
    case StartEstimate::Kind::kStartsBy:
      if (estimate.startsBy <= now) return "now";
      return formatTime(estimate.startsBy) + " (in " + formatElapsed(estimate.startsBy - now) + ")";
    case StartEstimate::Kind::kUnknown:
      return "unknown";
    case StartEstimate::Kind::kNever:
      return "never";
  }
  return "";
}

std::string renderFit(const std::vector<FitOutcome>& outcomes, int width, Clock::WallTime now) {
  // The table gives each job's answer; the lines under it why, in full (messages are too long for a column).
  std::vector<std::vector<std::string>> rows;
  std::string details;
  for (const FitOutcome& outcome : outcomes) {
    rows.push_back({outcome.label, sizeText(outcome), verdictText(outcome),
                    outcome.estimate ? estimateText(*outcome.estimate, now) : "", outcome.reason});
    std::string why = outcome.message;
    if (outcome.estimate && outcome.estimate->kind == StartEstimate::Kind::kUnknown)
      why += (why.empty() ? "start " : "; start ") + outcome.estimate->why;
    if (outcome.verdict != Verdict::kNow && !why.empty()) details += outcome.label + ": " + why + "\n";
  }
  std::string text = renderTable({"JOB", "IPUS", "ADMITTED", "STARTS BY", "REASON"}, rows, width);
  if (!details.empty()) text += "\n" + details;
  return text;
}

Json toJson(const std::vector<FitOutcome>& outcomes) {
  Json jobs = Json::array();
  for (const FitOutcome& outcome : outcomes) {
    Json entry{
        {"job", outcome.label}, {"verdict", verdictName(outcome.verdict)}, {"message", outcome.message}};
    if (outcome.ipusPerInstance > 0) {
      entry["instances"] = outcome.instances;
      entry["ipusPerInstance"] = outcome.ipusPerInstance;
    }
    if (!outcome.controller.empty()) entry["controller"] = outcome.controller;
    if (outcome.position > 0) entry["position"] = outcome.position;
    if (!outcome.reason.empty()) entry["reason"] = outcome.reason;
    if (outcome.estimate) entry["estimate"] = estimateJson(*outcome.estimate);
    jobs.push_back(std::move(entry));
  }
  return {{"jobs", std::move(jobs)}};
}

}  // namespace ipu::kubectl_ipu
