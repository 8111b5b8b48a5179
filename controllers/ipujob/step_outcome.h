#pragma once

#include <string>

#include "common/result.h"
#include "ctrl/action.h"

namespace ipu::controllers {

using ctrl::Action;

// What one step of a reconcile pass decided, as a value (controller-runtime's reconcile.Result and
// TerminalError, kube-rs's Action). The step leaves the status it wants in the pass (JobPass::status); the
// pass then writes it as the outcome says and does what `next` says. Nothing is signalled through flags on
// the pass or through error codes: a step that waits says so (waitFor), a decision says which it is.
struct StepOutcome {
  // A decision made once. Its status write goes only if the job is still the version the pass read (the API
  // server answers 409 to a stale one), and a crash test can stop the process right after it is recorded.
  enum class Decision {
    kNone,
    kAdmitted,        // partition ids recorded: the job's admission holds a reservation until they exist
    kRestartDecided,  // restartCount raised, phase Restarting
    kRestarted,       // the old attempt's pods are gone and its partitions reset: the new attempt starts
    kReadmitted,      // a failed job's edited spec goes back to admission
    kRuntimeSecretRecorded,  // the runtime Secret's generated name, before any pod refers to it
  };

  // Implicit: most steps answer with an Action (nothing decided, write what changed) or an Error (retried
  // with backoff; what the step found out is still written).
  StepOutcome(Action action) : next(action) {}
  StepOutcome(Error error) : next(std::move(error)) {}
  StepOutcome(Result<Action> result) : next(std::move(result)) {}

  // A decision recorded by this pass's status write.
  static StepOutcome decided(Decision decision, Action action) {
    StepOutcome outcome(action);
    outcome.decision = decision;
    return outcome;
  }
  // Only progress (workers starting): no decision, no new phase, so the write may wait a little to be folded
  // into the next one (ProgressWrites).
  static StepOutcome progress(Action action) {
    StepOutcome outcome(action);
    outcome.progressOnly = true;
    return outcome;
  }

  bool conditional() const { return decision != Decision::kNone; }
  // The crash-test point right after the decision is written (nullptr: none).
  const char* failpointAfterWrite() const;

  Result<Action> next;
  Decision decision = Decision::kNone;
  bool progressOnly = false;
};

// Something only another party can clear (a child's name or a partition id still held by an earlier job of
// the same name): not an error, so no backoff; the job says what it waits for and looks again soon.
struct Blocked {
  std::string message;
};

}  // namespace ipu::controllers
