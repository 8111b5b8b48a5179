#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>

#include "common/clock.h"
#include "ctrl/delayed_keys.h"
#include "ctrl/rate_limiter.h"

namespace ipu::ctrl {

// The queue between event handlers and reconcile workers, with client-go's workqueue semantics
// (util/workqueue: queue.go, delaying_queue.go, rate_limiting_queue.go). Keys are "namespace/name".
//
//  - De-duplicating: a key waiting in the queue is there once, however often it was added.
//  - One worker per key: get() never hands out a key that is still being processed. Adding a key while it
//    is processed marks it dirty; done() then queues it again, once, so no change is ever missed.
//  - Delaying: addAfter() holds a key until its time on the injected Clock; for one key the earliest time
//    wins. There is no timer thread: get() itself waits for the next due key, so a FakeClock drives it.
//  - Rate-limited: addRateLimited() delays a key by the RateLimiter's verdict; forget() resets it.
//
// One deliberate difference from client-go: after shutDown(), get() returns nullopt at once instead of
// first handing out what is still queued. Reconcile is level-triggered and the API server holds all
// state, so dropped keys are found again by the next process's initial list, and a stopping (or
// deposed) operator starts no new work.
//
// Thread-safe. Shut the queue down and join the workers before destroying it.
class WorkQueue {
 public:
  using Key = std::string;

  // A snapshot of where keys are, for metrics and tests.
  struct Depth {
    std::size_t queued = 0;      // ready for a worker: len()
    std::size_t processing = 0;  // handed out by get(), not yet done()
    std::size_t delayed = 0;     // waiting for their addAfter() time

    bool operator==(const Depth&) const = default;
  };

  // Rate-limited by client-go's default controller limiter measured on `clock`.
  explicit WorkQueue(Clock& clock = Clock::real());
  WorkQueue(Clock& clock, RateLimiterPtr rateLimiter);

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `key` unless it is already queued (merged) or being processed (marked dirty for done()).
  // Ignored after shutdown, as are the other adds.
  void add(const Key& key);
  // Queues `key` once `delay` has passed on the clock; a delay of zero or less is add().
  void addAfter(const Key& key, Clock::Duration delay);
  // addAfter(key, rateLimiter.when(key)): the retry path after a failed reconcile.
  void addRateLimited(const Key& key);
  // Resets the rate limiter's memory of `key`: call after it was processed successfully.
  void forget(const Key& key);
  int numRequeues(const Key& key) const;

  // Blocks until a key is ready, then hands it to the caller, who must call done(key) when finished.
  // nullopt once the queue is shut down.
  std::optional<Key> get();
  // Ends the processing of `key`; queues it again if it was added in the meantime.
  void done(const Key& key);

  // Stops the queue: further adds are ignored, queued and delayed keys are dropped, every blocked and
  // future get() returns nullopt. Keys already handed out may still be done().
  void shutDown();
  // shutDown(), then waits until every key handed out has been done(). Must not be called from a worker
  // that holds a key, or it waits for itself.
  void shutDownWithDrain();
  bool shuttingDown() const;

  // Keys ready for a worker (delayed keys whose time has come included).
  std::size_t len() const;
  Depth depth() const;

 private:
  // Returns true if `key` went onto queue_ (a worker needs waking).
  bool addLocked(const Key& key);
  // Moves delayed keys whose time has come onto the queue; returns how many went on.
  std::size_t promoteReadyLocked();
  void shutDownLocked();
  Depth depthLocked() const;

  Clock& clock_;
  const RateLimiterPtr rateLimiter_;

  mutable std::mutex mutex_;
  std::condition_variable_any keysAvailable_;  // get() waits here (through the clock, for delayed keys)
  std::condition_variable drained_;            // shutDownWithDrain() waits here for processing_ to empty
  std::deque<Key> queue_;                      // ready keys in order; each also in dirty_
  std::unordered_set<Key> dirty_;       // keys that need processing: queued, or re-added while processing
  std::unordered_set<Key> processing_;  // keys handed out by get() and not yet done()
  DelayedKeys delayed_;
  bool shuttingDown_ = false;
};

}  // namespace ipu::ctrl
