#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "common/clock.h"
#include "common/json_access.h"
#include "common/result.h"
#include "common/time_format.h"
#include "ctrl/action.h"
#include "ipujob/job_status.h"
#include "ipujob/worker_pod.h"
#include "kube/store.h"

namespace ipu::controllers {

// One reconcile of one IPUJob: the object as the cache has it, read once into the API types (its identity,
// its spec parsed or why it does not parse), and its status as read and as this pass will leave it. Steps
// change `status`; the reconciler writes the difference as one patch at the end of the pass, as the steps'
// outcome (StepOutcome) says.
struct JobPass {
  JobPass(const Json& job, Clock::WallTime passTime)
      : object(job),
        key(kube::objectKey(job)),
        identity(api::identityOf(job)),
        generation(member(member(job, "metadata"), "generation").is_number_integer()
                       ? job["metadata"]["generation"].get<int64_t>()
                       : 0),
        resourceVersion(stringMember(member(job, "metadata"), "resourceVersion")),
        parsed(api::parseIpuJob(job)),
        observed(api::parseIpuJobStatus(member(job, "status"))),
        status(observed),
        now(passTime) {
    status.selector = std::string(kJobNameLabel) + "=" + jobLabelValue(identity.name);
  }

  // Moves the status to a phase; the reason is remembered for the Event that tells the change.
  void setPhase(const std::string& phase, const std::string& reason, const std::string& message) {
    controllers::setPhase(status, {phase, reason, message}, generation, formatTime(now));
    phaseReason = reason;
  }
  // The verdict first: finished() then stops the workers still running, releases the partitions and applies
  // cleanPodPolicy and TTL, whichever process gets there.
  ctrl::Action fail(const std::string& reason, const std::string& message) {
    setPhase(kPhaseFailed, reason, message);
    status.currentReplicas = 0;
    status.completionTime = formatTime(now);
    return ctrl::Action::requeueNow();
  }
  int attempt() const { return status.restartCount.value_or(0); }
  bool holdsPartitions() const { return !status.heldPartitions().empty(); }
  // The spec as parsed; where the job does not parse, its spec alone, or else the defaults (a finished job is
  // cleaned up either way).
  api::IpuJobSpec specOrDefaults() const {
    if (parsed) return parsed->spec;
    auto spec = api::parseIpuJobSpec(member(object, "spec"));
    return spec ? *spec : api::IpuJobSpec{};
  }

  const Json& object;
  const std::string key;
  const api::ObjectIdentity identity;
  const int64_t generation;
  const std::string resourceVersion;
  const Result<api::IpuJob> parsed;  // the job with its spec checked, or why it does not parse
  const api::IpuJobStatus observed;
  api::IpuJobStatus status;
  const Clock::WallTime now;
  std::string phaseReason;  // of this pass's last setPhase: the reason its Event gives
};

}  // namespace ipu::controllers
