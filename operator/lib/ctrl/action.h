#pragma once

#include <optional>

#include "common/clock.h"

namespace ipu::ctrl {

// What a successful reconcile asks of its controller (kube-rs's Action). Reconcile is level-triggered: any
// change to the object or to what it owns queues it again, so "done" means "until something changes".
struct Action {
  // nullopt: wait for a change; a duration: look again after it even if nothing changes (polls, deadlines).
  std::optional<Clock::Duration> requeueAfter;

  static Action awaitChange() { return {}; }
  static Action requeue(Clock::Duration after) { return {after}; }
  // Again at once (through the queue, so other keys are not starved): the pass wrote a step of a sequence.
  static Action requeueNow() { return {Clock::Duration::zero()}; }

  bool operator==(const Action&) const = default;
};

// What the controller does after a failed reconcile (kube-rs's error_policy; controller-runtime's
// TerminalError). An error that retrying cannot heal (RetryClass::kTerminal) must not back off forever: the
// object waits for a change instead (an edit, or a change of what it owns).
enum class Retry {
  kWithBackoff,  // re-queue with the per-key exponential backoff
  kAfterChange,  // no retry: the next change of the object (or its children) queues it again
};

// The default policy: terminal errors wait for a change, everything else backs off.
Retry defaultRetry(const Error& error);

}  // namespace ipu::ctrl
