#pragma once

#include <optional>
#include <string>

#include "admission/admitter.h"
#include "api/ipujob.h"
#include "common/result.h"
#include "ipujob/job_pass.h"
#include "ipujob/reconciler_options.h"
#include "ipujob/step_outcome.h"
#include "kube/event_recorder.h"

namespace ipu::controllers {

// The job's side of admission: it asks the Admitter (which owns the decision and the reservation) for its
// decision, claims its namespace's IPUQuota at the API server, and records the result in status: partition
// ids of an admission (before any partition exists), or why and where it waits in the queue.
class AdmissionSteps {
 public:
  AdmissionSteps(Admitter& admitter, kube::EventRecorder& events, const ReconcilerOptions& options)
      : admitter_(admitter), events_(events), options_(options) {}

  // waiting -> admitted (a Decision::kAdmitted outcome), queued with its position, or never fits.
  StepOutcome admit(JobPass& pass, const api::IpuJob& job);
  // The pass could not record what admit() decided: nothing is promised.
  void notRecorded(const JobPass& pass) { admitter_.end(pass.key, ReservationEnd::kNotRecorded); }
  // The job holds no IPUs any more and cannot be admitted as it is (finished, suspended): its quota ledger
  // entry goes, once its stored status shows nothing held.
  Status releaseQuota(const JobPass& pass);
  // A template its worker pods cannot be built from, or that asks for more than the namespace's worker pod
  // profile, ends the job here, before it is admitted or holds anything (or is queued in Kueue): true when it
  // did.
  bool refusedTemplate(JobPass& pass, const api::IpuJob& job);

 private:
  // Claims the namespace's quota for an admitted job: nullopt when claimed (or no quota applies), else why it
  // waits.
  Result<std::optional<std::string>> claimQuota(const JobPass& pass, const api::IpuJob& job);
  void recordAdmission(JobPass& pass, const api::IpuJob& job, const Admission& admission);
  StepOutcome waitInQueue(JobPass& pass, const api::IpuJob& job, const AdmissionDecision& decision);
  // status.startEstimate from the admitter's estimate, changed at most once per kEstimateRewrite.
  void updateStartEstimate(JobPass& pass);
  static constexpr Clock::Duration kEstimateRewrite = std::chrono::minutes(1);
  // Events on how the job's instances start: a launcher that will not run, one found in the worker command,
  // or a command that hides what it runs.
  void tellHowInstancesStart(const JobPass& pass, const api::IpuJobSpec& spec);

  Admitter& admitter_;
  kube::EventRecorder& events_;
  const ReconcilerOptions& options_;
};

}  // namespace ipu::controllers
