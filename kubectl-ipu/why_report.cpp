#include "kubectl-ipu/why_report.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "api/ipuquota.h"
#include "api/job_lifecycle.h"
#include "common/json_access.h"
#include "common/time_format.h"
#include "kubectl-ipu/fit_report.h"
#include "kubectl-ipu/terminal_map.h"
#include "vipu/partition_planner.h"

namespace ipu::kubectl_ipu {
namespace {

// A listable job's deadline: status.startTime + spec.activeDeadlineSeconds.
struct Deadline {
  std::int64_t seconds = 0;
  std::optional<Clock::WallTime> endsBy;
};
std::map<std::string, Deadline> deadlinesByUid(const std::vector<Json>& jobs) {
  std::map<std::string, Deadline> deadlines;
  for (const Json& job : jobs) {
    const Json& seconds = member(member(job, "spec"), "activeDeadlineSeconds");
    if (!seconds.is_number_integer()) continue;
    Deadline deadline{seconds.get<std::int64_t>(), std::nullopt};
    if (auto started = parseTime(stringMember(member(job, "status"), "startTime"))) {
      deadline.endsBy = *started + std::chrono::seconds(deadline.seconds);
    }
    deadlines[stringMember(member(job, "metadata"), "uid")] = deadline;
  }
  return deadlines;
}

ControllerFit fitOn(const api::IpuPodStatus& pod, const WhyReport& report, const VisibleJobs& visible,
                    const std::map<std::string, Deadline>& deadlines, Clock::WallTime now) {
  ControllerFit fit;
  fit.controller = pod.controller;
  fit.freeIpus = pod.freeIpus;
  fit.totalIpus = pod.totalIpus;
  fit.largestFreeBlock = pod.largestFreeBlock;
  fit.readError = pod.readError;
  auto topology = vipu::Topology::create(pod.cluster, static_cast<std::uint32_t>(std::max(pod.ilds, 0)),
                                         static_cast<std::uint32_t>(std::max(pod.ildSize, 0)));
  if (!topology) {
    if (fit.readError.empty()) fit.readError = "topology not read yet";
    return fit;
  }
  const auto size = static_cast<std::uint32_t>(std::max(report.ipusPerInstance, 0));
  fit.largestPossible = static_cast<int>(topology->maxPartitionSize());
  fit.neverFits = size > topology->maxPartitionSize();
  const PodMapView view = podMapViewOf(pod, visible);
  vipu::IpuSet taken(topology->totalIpus());
  for (std::uint32_t ipu = 0; ipu < view.holderOfIpu.size() && ipu < topology->totalIpus(); ++ipu) {
    if (view.holderOfIpu[ipu] >= 0) taken.insert(ipu);
  }
  if (size == 0 || !vipu::isPowerOfTwo(size)) return fit;
  const vipu::PartitionPlanner planner(*topology);
  fit.freeBlocks = static_cast<int>(planner.summarize(taken, size).freeBlocksOfRequestedSize);
  if (fit.neverFits || fit.freeBlocks >= report.instances) return fit;
  // The aligned block with the fewest IPUs held: the one whose holders free it soonest, by count.
  std::uint32_t best = 0;
  int bestHeld = -1;
  for (std::uint32_t start = 0; start + size <= topology->totalIpus(); start += size) {
    int held = 0;
    for (std::uint32_t ipu = start; ipu < start + size; ++ipu) held += taken.contains(ipu) ? 1 : 0;
    if (held > 0 && (bestHeld < 0 || held < bestHeld)) {
      best = start;
      bestHeld = held;
    }
  }
  if (bestHeld < 0) return fit;
  fit.blockIpus = std::to_string(best) + "-" + std::to_string(best + size - 1);
  std::map<int, int> inBlock;  // holder index -> IPUs
  for (std::uint32_t ipu = best; ipu < best + size; ++ipu) {
    if (view.holderOfIpu[ipu] >= 0) ++inBlock[view.holderOfIpu[ipu]];
  }
  for (const auto& [index, ipus] : inBlock) {
    const MapHolder& holder = view.holders[static_cast<std::size_t>(index)];
    BlockHolder entry{holder.label, ipus, std::nullopt, std::nullopt, std::nullopt};
    if (holder.since) entry.heldFor = now - *holder.since;
    const std::string& uid = pod.holders[static_cast<std::size_t>(index)].jobUid;
    if (const auto deadline = deadlines.find(uid); holder.job && deadline != deadlines.end()) {
      entry.deadlineSeconds = deadline->second.seconds;
      entry.endsBy = deadline->second.endsBy;
    }
    fit.blockHolders.push_back(std::move(entry));
  }
  return fit;
}

QuotaCheck checkQuota(const Json& quota, const WhyReport& report, bool holdsIpus) {
  QuotaCheck check;
  check.name = stringMember(member(quota, "metadata"), "name");
  const api::IpuQuotaStatus counts = api::parseIpuQuotaStatus(member(quota, "status"));
  check.heldIpus = counts.usedIpus + counts.reservedIpus;
  check.admittedJobs = counts.admittedJobs;
  auto spec = api::parseIpuQuotaSpec(member(quota, "spec"));
  if (!spec) {
    check.blocks.push_back(
        {QuotaBlock::Kind::kUnreadable, "its spec does not parse: " + spec.error().message});
    return check;
  }
  check.maxIpus = spec->maxIpus;
  check.maxJobs = spec->maxJobs;
  check.maxPriority = spec->maxPriority;
  if (holdsIpus) return check;
  const std::int64_t need = std::int64_t{report.instances} * report.ipusPerInstance;
  if (need > check.maxIpus) {
    check.blocks.push_back({QuotaBlock::Kind::kNeverUnderMaxIpus,
                            "the job's " + std::to_string(need) + " IPUs exceed maxIPUs " +
                                std::to_string(check.maxIpus) + ": it can never run under this quota"});
  } else if (check.heldIpus + need > check.maxIpus) {
    check.blocks.push_back({QuotaBlock::Kind::kNoRoomUnderMaxIpus,
                            "the job needs " + std::to_string(need) + " IPUs and " +
                                std::to_string(std::max<std::int64_t>(0, check.maxIpus - check.heldIpus)) +
                                " are left under maxIPUs " + std::to_string(check.maxIpus)});
  }
  if (check.maxJobs && check.admittedJobs >= *check.maxJobs) {
    check.blocks.push_back({QuotaBlock::Kind::kMaxJobs, plural(check.admittedJobs, "job is", "jobs are") +
                                                            " admitted, maxJobs is " +
                                                            std::to_string(*check.maxJobs)});
  }
  if (check.maxPriority && report.priority > *check.maxPriority) {
    check.blocks.push_back({QuotaBlock::Kind::kMaxPriority, "priority " + std::to_string(report.priority) +
                                                                " is above maxPriority " +
                                                                std::to_string(*check.maxPriority)});
  }
  return check;
}

std::string holderText(const BlockHolder& holder, Clock::WallTime now) {
  std::string text = holder.label + " holds " + plural(holder.ipusInBlock, "IPU", "IPUs") + " of it";
  if (holder.heldFor) text += ", for " + formatElapsed(*holder.heldFor);
  if (holder.deadlineSeconds) {
    text += " (deadline " + formatElapsed(std::chrono::seconds(*holder.deadlineSeconds));
    if (holder.endsBy)
      text += ", ends by " + formatTime(*holder.endsBy) + ", in " + formatElapsed(*holder.endsBy - now);
    text += ")";
  } else if (holder.label != kHiddenJobLabel) {
    text += " (no deadline)";
  }
  return text;
}

void suggest(WhyReport& report, Clock::WallTime now) {
  const int size = report.ipusPerInstance;
  for (const QuotaCheck& quota : report.quotas) {
    for (const QuotaBlock& block : quota.blocks) {
      switch (block.kind) {
        case QuotaBlock::Kind::kNeverUnderMaxIpus:
          report.unblock.push_back(
              "a cluster admin raises IPUQuota " + quota.name + "'s maxIPUs to at least " +
              std::to_string(std::int64_t{report.instances} * size) + ", or the job asks for fewer IPUs");
          break;
        case QuotaBlock::Kind::kNoRoomUnderMaxIpus:
          report.unblock.push_back("the namespace's running jobs give back IPUs (IPUQuota " + quota.name +
                                   ")");
          break;
        case QuotaBlock::Kind::kMaxJobs:
          report.unblock.push_back("one of the namespace's admitted jobs ends (IPUQuota " + quota.name +
                                   " maxJobs)");
          break;
        case QuotaBlock::Kind::kMaxPriority:
          report.unblock.push_back("spec.priority lowered to " + std::to_string(*quota.maxPriority) +
                                   " or less, or a cluster admin raises maxPriority");
          break;
        case QuotaBlock::Kind::kUnreadable:
          report.unblock.push_back("a cluster admin fixes IPUQuota " + quota.name);
          break;
      }
    }
  }
  bool anyFits = false;
  for (const ControllerFit& fit : report.controllers)
    anyFits = anyFits || (!fit.neverFits && fit.readError.empty());
  for (const ControllerFit& fit : report.controllers) {
    if (!fit.readError.empty()) continue;
    if (fit.neverFits) {
      if (!anyFits) {
        report.unblock.push_back("ipusPerJobInstance of at most " + std::to_string(fit.largestPossible) +
                                 ": " + fit.controller + " can never make a partition of " +
                                 std::to_string(size) + " IPUs");
      }
      continue;
    }
    if (fit.freeBlocks >= report.instances || fit.blockIpus.empty()) continue;
    std::string text =
        "needs " +
        plural(report.instances - fit.freeBlocks, "more free aligned block", "more free aligned blocks") +
        " of " + std::to_string(size) + " IPUs on " + fit.controller + "; the nearest, IPUs " +
        fit.blockIpus + ", is held: ";
    // The block is free by the last of its holders' deadlines, when every holder has one the user can read.
    bool everyDeadlineKnown = true;
    Clock::WallTime freeBy = now;
    for (std::size_t i = 0; i < fit.blockHolders.size(); ++i) {
      if (i > 0) text += "; ";
      text += holderText(fit.blockHolders[i], now);
      const auto& endsBy = fit.blockHolders[i].endsBy;
      everyDeadlineKnown = everyDeadlineKnown && endsBy.has_value();
      if (endsBy) freeBy = std::max(freeBy, *endsBy);
    }
    if (everyDeadlineKnown) text += ". Free by " + formatTime(freeBy) + " at the latest, by their deadlines";
    report.unblock.push_back(text);
  }
  if (report.reason == "WaitingInQueue" && report.position && *report.position > 1) {
    report.unblock.push_back(plural(*report.position - 1, "job ahead of it is", "jobs ahead of it are") +
                             " admitted or leave the queue");
  }
}

}  // namespace

WhyReport whyOf(const Json& job, const std::vector<api::IpuPodStatus>& pods, const std::vector<Json>& quotas,
                const std::vector<Json>& visibleJobs, Clock::WallTime now) {
  WhyReport report;
  const Json& metadata = member(job, "metadata");
  report.ns = stringMember(metadata, "namespace");
  report.name = stringMember(metadata, "name");
  const api::IpuJobStatus status = api::parseIpuJobStatus(member(job, "status"));
  report.phase = status.phase.empty() ? "Pending" : status.phase;
  report.message = status.lastMessage;
  report.position = status.queuePosition;
  if (const api::Condition* admitted = status.condition("Admitted"); admitted && !admitted->isTrue()) {
    report.reason = admitted->reason;
  }
  for (const auto& condition : {"Failed", "Succeeded"}) {
    if (const api::Condition* ended = status.condition(condition); ended && ended->isTrue())
      report.reason = ended->reason;
  }
  if (auto spec = api::parseIpuJobSpec(member(job, "spec"))) {
    report.instances = spec->jobInstances;
    report.ipusPerInstance = spec->ipusPerJobInstance;
    report.priority = spec->priority;
    report.pinnedController = api::pinnedVipuController(*spec);
  }
  for (const api::PartitionRecord& record : status.heldPartitions()) {
    report.held.push_back(record.controller + ": " + record.id + " (" + std::to_string(record.size) +
                          " IPUs, " + record.ipus + ", " + record.state + ")");
  }
  const bool waiting =
      report.held.empty() && !api::isTerminalPhase(report.phase) && report.phase != "Suspended";
  if (!waiting) return report;
  const VisibleJobs visible = visibleJobsOf(visibleJobs);
  const auto deadlines = deadlinesByUid(visibleJobs);
  for (const api::IpuPodStatus& pod : pods) {
    if (!report.pinnedController.empty() && pod.controller != report.pinnedController) continue;
    report.controllers.push_back(fitOn(pod, report, visible, deadlines, now));
  }
  for (const Json& quota : quotas) report.quotas.push_back(checkQuota(quota, report, false));
  suggest(report, now);
  return report;
}

std::string renderWhy(const WhyReport& report) {
  std::ostringstream out;
  out << report.ns << "/" << report.name << ": " << report.phase;
  if (!report.reason.empty()) out << " (" << report.reason << ")";
  if (report.position) out << ", position " << *report.position << " in the queue";
  out << '\n';
  if (!report.message.empty()) out << "  " << report.message << '\n';
  out << "needs    " << report.instances << " x " << report.ipusPerInstance << " IPUs ("
      << report.instances * report.ipusPerInstance << "), on "
      << (report.pinnedController.empty() ? "any V-IPU controller" : report.pinnedController) << '\n';
  for (const std::string& held : report.held) out << "holds    " << held << '\n';
  for (const ControllerFit& fit : report.controllers) {
    out << "free     " << fit.controller << ": ";
    if (!fit.readError.empty() && fit.totalIpus == 0) {
      out << "not known (" << fit.readError << ")\n";
      continue;
    }
    out << fit.freeIpus << " of " << fit.totalIpus << " IPUs, largest free aligned block "
        << fit.largestFreeBlock;
    if (fit.neverFits) {
      out << "; never a partition of " << report.ipusPerInstance << " (at most " << fit.largestPossible
          << ")";
    } else {
      out << "; " << plural(fit.freeBlocks, "free block", "free blocks") << " of " << report.ipusPerInstance;
    }
    if (!fit.readError.empty()) out << " (last read failed: " << fit.readError << ")";
    out << '\n';
  }
  for (const QuotaCheck& quota : report.quotas) {
    out << "quota    " << quota.name << ": " << quota.heldIpus << " of " << quota.maxIpus << " IPUs held, "
        << quota.admittedJobs << " job(s) admitted"
        << (quota.maxJobs ? " of " + std::to_string(*quota.maxJobs) : "") << '\n';
    for (const QuotaBlock& block : quota.blocks) out << "         holds it back: " << block.text << '\n';
  }
  for (const std::string& step : report.unblock) out << "to run   " << step << '\n';
  if (report.estimate) {
    out << "starts   ";
    if (report.estimate->kind == controllers::StartEstimate::Kind::kStartsBy) {
      out << "by " << estimateText(*report.estimate, report.now)
          << ", if the jobs before it run to their deadlines and none comes ahead of it\n";
    } else {
      out << report.estimate->why << '\n';
    }
  }
  return out.str();
}

Json toJson(const WhyReport& report) {
  Json json{{"namespace", report.ns},
            {"name", report.name},
            {"phase", report.phase},
            {"reason", report.reason},
            {"message", report.message},
            {"instances", report.instances},
            {"ipusPerInstance", report.ipusPerInstance},
            {"holds", report.held},
            {"controllers", Json::array()},
            {"quotas", Json::array()},
            {"unblock", report.unblock}};
  if (report.position) json["position"] = *report.position;
  if (report.estimate) json["estimate"] = estimateJson(*report.estimate);
  for (const ControllerFit& fit : report.controllers) {
    Json entry{{"controller", fit.controller},       {"freeIPUs", fit.freeIpus},
               {"totalIPUs", fit.totalIpus},         {"largestFreeBlock", fit.largestFreeBlock},
               {"freeBlocksOfSize", fit.freeBlocks}, {"neverFits", fit.neverFits}};
    if (!fit.blockIpus.empty()) entry["nearestBlock"] = fit.blockIpus;
    if (!fit.readError.empty()) entry["readError"] = fit.readError;
    json["controllers"].push_back(entry);
  }
  for (const QuotaCheck& quota : report.quotas) {
    Json blocks = Json::array();
    for (const QuotaBlock& block : quota.blocks) blocks.push_back(block.text);
    json["quotas"].push_back({{"name", quota.name},
                              {"heldIPUs", quota.heldIpus},
                              {"maxIPUs", quota.maxIpus},
                              {"admittedJobs", quota.admittedJobs},
                              {"holdsItBack", blocks}});
  }
  return json;
}

}  // namespace ipu::kubectl_ipu
