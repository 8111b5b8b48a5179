#include "admission/start_estimate.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace ipu::controllers {
namespace {

using Kind = StartEstimate::Kind;

// The play of the plan forward in time: the inputs as they change, and what each holder counts against its
// namespace's quota until it ends.
class Play {
 public:
  Play(const PlanInputs& inputs, Clock::WallTime now, const EstimateLimits& limits)
      : inputs_(inputs), now_(now), limits_(limits) {
    for (const ControllerInputs& controller : inputs_.controllers) {
      for (const Occupant& occupant : controller.occupants)
        count(occupant.uid, occupant.ns, occupant.ipus.size());
    }
    for (const Reservation& reservation : inputs_.reservations) {
      count(reservation.uid, reservation.ns,
            std::uint64_t{reservation.instances} * reservation.ipusPerInstance);
    }
  }

  PlanInputs& inputs() { return inputs_; }

  // When IPUs held so come back at the latest, the operator's stopping of the job included.
  std::optional<Clock::WallTime> endOf(const std::optional<Clock::WallTime>& endsBy,
                                       const std::optional<std::int64_t>& runsForSeconds) const {
    if (endsBy) return *endsBy + limits_.releaseAllowance;
    if (runsForSeconds) return now_ + std::chrono::seconds(*runsForSeconds) + limits_.releaseAllowance;
    return std::nullopt;
  }

  // The request, admitted at `at` on the decision's placements, now holds them until its deadline.
  void admit(const AdmissionRequest& request, const AdmissionDecision& decision, Clock::WallTime at) {
    Occupant occupant;
    occupant.ns = request.ns;
    occupant.uid = "queued:" + request.key;
    if (request.activeDeadlineSeconds)
      occupant.endsBy = at + std::chrono::seconds(*request.activeDeadlineSeconds);
    for (const vipu::InstancePlacement& placement : decision.placements) {
      for (std::uint32_t ipu = placement.block.first; ipu < placement.block.end(); ++ipu)
        occupant.ipus.push_back(ipu);
    }
    count(occupant.uid, occupant.ns, occupant.ipus.size());
    if (inputs_.quotas) {
      NamespaceUsage& usage = inputs_.quotas->usage[request.ns];
      usage.runningIpus += occupant.ipus.size();
      ++usage.admittedJobs;
    }
    for (ControllerInputs& controller : inputs_.controllers) {
      if (controller.name == decision.controller) controller.occupants.push_back(std::move(occupant));
    }
  }

  // The next time IPUs come back; nullopt when nothing held has a known end.
  std::optional<Clock::WallTime> nextEnd() const {
    std::optional<Clock::WallTime> next;
    const auto consider = [&](std::optional<Clock::WallTime> end) {
      if (end && (!next || *end < *next)) next = end;
    };
    for (const ControllerInputs& controller : inputs_.controllers) {
      for (const Occupant& occupant : controller.occupants)
        consider(endOf(occupant.endsBy, occupant.runsForSeconds));
    }
    for (const Reservation& reservation : inputs_.reservations)
      consider(endOf(reservation.endsBy, std::nullopt));
    return next;
  }

  // Everything that has ended by `at` gives its IPUs, and its quota use, back.
  void releaseUntil(Clock::WallTime at) {
    const auto ended = [&](const std::optional<Clock::WallTime>& end) { return end && *end <= at; };
    for (ControllerInputs& controller : inputs_.controllers) {
      std::erase_if(controller.occupants, [&](const Occupant& occupant) {
        if (!ended(endOf(occupant.endsBy, occupant.runsForSeconds))) return false;
        release(occupant.uid);
        return true;
      });
    }
    std::erase_if(inputs_.reservations, [&](const Reservation& reservation) {
      if (!ended(endOf(reservation.endsBy, std::nullopt))) return false;
      release(reservation.uid);
      return true;
    });
  }

  // Why nothing more comes back: the holders left, none with a known end.
  std::string whyUnknown() const {
    std::set<std::string> jobs;
    int partitions = 0;
    for (const ControllerInputs& controller : inputs_.controllers) {
      for (const Occupant& occupant : controller.occupants) {
        if (occupant.uid.empty()) {
          ++partitions;
        } else {
          jobs.insert(occupant.uid);
        }
      }
    }
    for (const Reservation& reservation : inputs_.reservations) jobs.insert(reservation.uid);
    std::string why = "not known: ";
    if (!jobs.empty()) {
      why += std::to_string(jobs.size()) + (jobs.size() == 1 ? " job that holds" : " jobs that hold") +
             " IPUs or will hold them first declare" + (jobs.size() == 1 ? "s" : "") +
             " no activeDeadlineSeconds";
    }
    if (partitions > 0) {
      why += std::string(jobs.empty() ? "" : ", and ") + std::to_string(partitions) +
             (partitions == 1 ? " partition no job holds has" : " partitions no job holds have") + " no end";
    }
    return why;
  }

 private:
  struct Held {
    std::string ns;
    std::uint64_t ipus = 0;
  };
  void count(const std::string& uid, const std::string& ns, std::uint64_t ipus) {
    if (uid.empty()) return;
    Held& held = held_[uid];
    held.ns = ns;
    held.ipus += ipus;
  }
  void release(const std::string& uid) {
    if (uid.empty() || !inputs_.quotas || !released_.insert(uid).second) return;
    const auto held = held_.find(uid);
    if (held == held_.end()) return;
    const auto usage = inputs_.quotas->usage.find(held->second.ns);
    if (usage == inputs_.quotas->usage.end()) return;
    NamespaceUsage& use = usage->second;
    std::uint64_t left = held->second.ipus;
    const std::uint64_t fromRunning = std::min(left, use.runningIpus);
    use.runningIpus -= fromRunning;
    left -= fromRunning;
    use.reservedIpus -= std::min(left, use.reservedIpus);
    if (use.admittedJobs > 0) --use.admittedJobs;
  }

  PlanInputs inputs_;
  Clock::WallTime now_;
  EstimateLimits limits_;
  std::map<std::string, Held> held_;  // by uid
  std::set<std::string> released_;
};

}  // namespace

std::map<std::string, StartEstimate> estimateStarts(const PlanInputs& inputs, Clock::WallTime now,
                                                    const EstimateLimits& limits) {
  std::map<std::string, StartEstimate> estimates;
  Play play(inputs, now, limits);
  Clock::WallTime at = now;
  for (std::size_t plans = 0; !play.inputs().queue.empty(); ++plans) {
    if (plans == limits.maxPlans) {
      for (const AdmissionRequest& request : play.inputs().queue) {
        estimates[request.key] = {Kind::kUnknown, {}, "not known: the queue is too long to play forward"};
      }
      break;
    }
    const auto decisions = planFrom(play.inputs());
    std::vector<AdmissionRequest> waiting;
    for (AdmissionRequest& request : play.inputs().queue) {
      const AdmissionDecision& decision = decisions.at(request.key);
      if (decision.kind == AdmissionDecision::Kind::kAdmit) {
        estimates[request.key] = {Kind::kStartsBy, at, {}};
        play.admit(request, decision, at);
      } else if (decision.kind == AdmissionDecision::Kind::kNeverFits) {
        estimates[request.key] = {Kind::kNever, {}, decision.message};
      } else if (decision.position == 0) {
        // Out of line: nothing ending lets it in, only a change of its quota (or of the job).
        estimates[request.key] = {Kind::kUnknown, {}, "not known: " + decision.message};
      } else {
        waiting.push_back(std::move(request));
      }
    }
    play.inputs().queue = std::move(waiting);
    if (play.inputs().queue.empty()) break;
    const auto next = play.nextEnd();
    if (!next) {
      const std::string why = play.whyUnknown();
      for (const AdmissionRequest& request : play.inputs().queue)
        estimates[request.key] = {Kind::kUnknown, {}, why};
      break;
    }
    at = std::max(at, *next);
    play.releaseUntil(at);
  }
  return estimates;
}

}  // namespace ipu::controllers
