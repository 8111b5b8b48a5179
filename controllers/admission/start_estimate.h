#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "admission/plan_inputs.h"
#include "common/clock.h"

namespace ipu::controllers {

// When a waiting job starts at the latest, worked out by playing the admission plan forward: every job that
// holds IPUs gives them back at its deadline (its start plus spec.activeDeadlineSeconds, or the end of its
// interactive time), plus the time the operator takes to stop it and remove its partitions; each time IPUs
// come back, the same plan the operator runs (planFrom) admits what now fits, and those jobs hold their IPUs
// until their own deadlines. A job's estimate is the time the plan admits it.
//
// It is an upper bound as long as no job comes ahead of it (a higher priority, or a namespace with a smaller
// share) and the cluster keeps its shape. A job ending before its deadline usually lets others start sooner,
// but may also change the order in which the queue is admitted, as any greedy schedule can. When the play
// reaches a point where only IPUs with no known end would let the job in (a holder without a deadline, a
// partition made outside the operator), the estimate is unknown, and says so; so it is for a job that only a
// change of its quota can let run.
struct StartEstimate {
  enum class Kind { kStartsBy, kUnknown, kNever };
  Kind kind = Kind::kUnknown;
  Clock::WallTime startsBy{};  // kStartsBy
  std::string why;             // kUnknown: what is not known; kNever: why it can never run
};

struct EstimateLimits {
  // What the operator takes, after a deadline, to stop the job and give its IPUs back (added to every end).
  Clock::Duration releaseAllowance = std::chrono::seconds(15);
  // The plans played at most: a queue that needs more gets "unknown" for the jobs not reached.
  std::size_t maxPlans = 200;
};

// An estimate for every job of inputs.queue, by key. Pure and deterministic.
std::map<std::string, StartEstimate> estimateStarts(const PlanInputs& inputs, Clock::WallTime now,
                                                    const EstimateLimits& limits = {});

}  // namespace ipu::controllers
