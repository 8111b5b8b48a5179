#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob_status.h"
#include "common/clock.h"
#include "common/json_access.h"
#include "common/time_format.h"
#include "ipujob/job_status.h"
#include "ipujob/worker_pod.h"
#include "kube/store.h"

namespace ipu::controllers {

// One reconcile of one IPUJob: the object as the cache has it, its status as read and as this pass will
// leave it. Steps change `status`; the reconciler writes the difference as one patch at the end of the pass.
struct JobPass {
  JobPass(const Json& job, Clock::WallTime passTime)
      : object(job),
        key(kube::objectKey(job)),
        generation(member(member(job, "metadata"), "generation").is_number_integer()
                       ? job["metadata"]["generation"].get<int64_t>()
                       : 0),
        observed(api::parseIpuJobStatus(member(job, "status"))),
        status(observed),
        now(passTime) {
    status.selector =
        std::string(kJobNameLabel) + "=" + jobLabelValue(stringMember(member(job, "metadata"), "name"));
  }

  void setPhase(const std::string& phase, const std::string& reason, const std::string& message) {
    controllers::setPhase(status, {phase, reason, message}, generation, formatTime(now));
    phaseReason = reason;
  }
  int attempt() const { return status.restartCount.value_or(0); }
  bool holdsPartitions() const { return !status.heldPartitions().empty(); }

  const Json& object;
  const std::string key;
  const int64_t generation;
  const api::IpuJobStatus observed;
  api::IpuJobStatus status;
  const Clock::WallTime now;
  // Write only if the job is still the version this pass read (a decision that must be made once: an
  // admission, a restart). The API server answers 409 Conflict to a write based on a stale read.
  bool conditional = false;
  // This pass admitted the job (its admission is in flight until the partitions exist).
  bool admitted = false;
  // This pass only saw progress (workers starting): no decision, no new phase; its write may wait a little
  // to be folded into the next (ProgressWrites).
  bool progressOnly = false;
  std::string phaseReason;                    // of the last setPhase: the Event's reason
  const char* failpointAfterWrite = nullptr;  // crash tests: a decision recorded, nothing done about it yet
};

}  // namespace ipu::controllers
